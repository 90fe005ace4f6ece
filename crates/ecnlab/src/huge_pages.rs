//! Large runs in huge pages: once a run is built, the process's large
//! anonymous memory (the C heap, where most of a fabric's state sits in
//! many blocks, and the big blocks glibc maps on their own: the ports, the
//! packet arena, the flows, the event wheel) is asked to be backed by 2 MB
//! pages (`madvise(MADV_HUGEPAGE)`), and what is already touched is
//! collapsed into them (MADV_COLLAPSE, Linux 6.1 and later; older kernels
//! leave it to khugepaged). The advice stays with the memory as it grows.
//!
//! Why: a fat-tree of k = 32 keeps about 100 MB of state that every event
//! reads at random. In 4 KB pages that is some 25,000 pages, far more than
//! a core's TLB holds, so most packet hops also pay a page walk. Linux
//! backs such memory with huge pages by itself only where transparent huge
//! pages are "always"; many machines (this one) have "madvise", where a
//! program must ask. Measured before writing this with glibc's own switch
//! (GLIBC_TUNABLES=glibc.malloc.hugetlb=1): k = 32 about 4% faster.
//!
//! Only when the run's memory is large (`LARGE`): small runs have nothing
//! to gain and collapsing costs about 2 ms a megabyte. `ECNLAB_HUGE_PAGES=0`
//! turns it off (to measure it). Where the kernel has no transparent huge
//! pages, or they are "never", madvise fails and nothing changes. It
//! changes how memory is backed, never its contents: outputs cannot depend
//! on it. Nothing here runs per packet.

/// A 2 MB page.
const HUGE: usize = 2 << 20;
/// Mappings smaller than this are left alone (two huge pages: at least
/// one whole page lies inside wherever it starts).
const MAPPING_MIN: usize = 2 * HUGE;
/// Nothing is done unless the mappings advised hold this much in all.
const LARGE: usize = 16 << 20;

/// madvise(2) on [start, start + len), mapped memory of this process:
/// huge pages from now on, and the pages already touched collapsed.
/// A kernel that cannot refuses, which changes nothing.
#[cfg(target_os = "linux")]
fn huge(start: usize, len: usize) {
    /// linux/mman.h (not in every libc's bindings).
    const MADV_COLLAPSE: libc::c_int = 25;
    // SAFETY: the range is mapped memory of this process (read from
    // /proc/self/maps); madvise changes its backing only.
    unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        libc::madvise(start as *mut libc::c_void, len, MADV_COLLAPSE);
    }
}

#[cfg(not(target_os = "linux"))]
fn huge(_start: usize, _len: usize) {}

/// The whole 2 MB pages of the process's private, writable, anonymous
/// mappings (and its heap) of at least `MAPPING_MIN`, from /proc/self/maps.
fn large_mappings(maps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { continue };
        let path = f.nth(3).unwrap_or("");
        if perms != "rw-p" || !(path.is_empty() || path == "[heap]") {
            continue;
        }
        let mut ends = range.split('-').map(|x| usize::from_str_radix(x, 16));
        let (Some(Ok(a)), Some(Ok(b))) = (ends.next(), ends.next()) else { continue };
        let (start, end) = (a.next_multiple_of(HUGE), b & !(HUGE - 1));
        if b - a >= MAPPING_MIN && end > start {
            out.push((start, end - start));
        }
    }
    out
}

/// After a run is built (both engines call it): huge pages for its large
/// memory, if it has enough (see the module's doc).
pub fn advise_large_run() {
    if std::env::var("ECNLAB_HUGE_PAGES").is_ok_and(|v| v == "0") {
        return;
    }
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return };
    let big = large_mappings(&maps);
    if big.iter().map(|&(_, len)| len).sum::<usize>() >= LARGE {
        for (start, len) in big {
            huge(start, len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which lines of /proc/self/maps are advised: private writable
    /// anonymous mappings and the heap of at least 4 MB, rounded inwards
    /// to whole 2 MB pages; not files, stacks, read-only or shared ones.
    #[test]
    fn only_large_private_anonymous_memory_is_advised() {
        let maps = "\
00400000-00a00000 r-xp 00000000 08:01 123 /usr/bin/x
01000000-03100000 rw-p 00000000 00:00 0 [heap]
7f0000100000-7f0000900000 rw-p 00000000 00:00 0
7f0001000000-7f0001200000 rw-p 00000000 00:00 0
7f0002000000-7f0003000000 rw-s 00000000 00:05 9 /dev/shm/x
7f0004000000-7f0005000000 rw-p 00000000 08:01 77 /data/file
7ffc00000000-7ffc00800000 rw-p 00000000 00:00 0 [stack]
";
        let got = large_mappings(maps);
        assert_eq!(got, vec![(0x0100_0000, 0x0200_0000), (0x7f00_0020_0000, 0x0060_0000)]);
    }

    /// The advice leaves memory as it was.
    #[test]
    fn advised_memory_keeps_its_contents() {
        let v: Vec<u64> = (0..(8u64 << 17)).map(|i| i * 7).collect();
        advise_large_run();
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 7));
    }
}
