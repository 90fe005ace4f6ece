//! Sorted, disjoint byte ranges [lo, hi): the receiver's out-of-order data
//! and the sender's SACK scoreboard are both kept this way.

/// Add [lo, hi) to `v`, merging every range it touches or overlaps.
pub fn insert(v: &mut Vec<(u64, u64)>, lo: u64, hi: u64) {
    if hi <= lo {
        return;
    }
    let i = v.partition_point(|r| r.1 < lo);
    let mut j = i;
    let (mut lo, mut hi) = (lo, hi);
    while j < v.len() && v[j].0 <= hi {
        lo = lo.min(v[j].0);
        hi = hi.max(v[j].1);
        j += 1;
    }
    // The list stays tiny in practice, so the shift is cheap.
    v.splice(i..j, std::iter::once((lo, hi)));
}

#[cfg(test)]
mod tests {
    #[test]
    fn merges_touching_and_overlapping() {
        let mut v = Vec::new();
        super::insert(&mut v, 10, 20);
        super::insert(&mut v, 30, 40);
        super::insert(&mut v, 20, 30);
        assert_eq!(v, vec![(10, 40)]);
        super::insert(&mut v, 50, 60);
        super::insert(&mut v, 5, 12);
        assert_eq!(v, vec![(5, 40), (50, 60)]);
    }
}
