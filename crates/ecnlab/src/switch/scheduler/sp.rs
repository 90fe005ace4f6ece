//! Strict priority: queue 0 is the highest; a lower queue sends only when
//! every higher one is empty.

pub struct Sp;

impl Sp {
    #[inline]
    pub fn select(&self, nonempty: u64) -> usize {
        debug_assert!(nonempty != 0);
        nonempty.trailing_zeros() as usize
    }
}
