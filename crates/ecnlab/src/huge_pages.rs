//! The engine's allocator: the system's, except that a large block (the
//! ports, the packet arena, the flows, the event wheel of a large fabric)
//! is asked to be backed by 2 MB pages (`madvise(MADV_HUGEPAGE)`) before
//! anything touches it.
//!
//! Why: a fat-tree of k = 32 keeps about 100 MB of state that every event
//! reads at random. In 4 KB pages that is some 25,000 pages, far more than
//! a core's TLB holds, so most packet hops also pay a page walk. Linux
//! backs such memory with huge pages by itself only where transparent huge
//! pages are "always"; many machines (this one) have "madvise", where a
//! program must ask. Measured with glibc's own switch for it
//! (GLIBC_TUNABLES=glibc.malloc.hugetlb=1) before writing this: k = 32
//! about 4% faster, k = 8 1-2%.
//!
//! Only blocks of at least `HUGE_MIN` are advised (a huge page for a small
//! Vec would waste memory), and only their whole 2 MB pages. Where the
//! kernel has no transparent huge pages, or they are "never", madvise
//! fails and nothing changes. Nothing here runs per packet: the engine
//! allocates its large blocks when it builds a run.
//!
//! Each binary and the Python extension installs it (`#[global_allocator]`
//! in their roots); `advise_heap` covers the many smaller blocks.

use std::alloc::{GlobalAlloc, Layout, System};

/// A 2 MB page.
const HUGE: usize = 2 << 20;
/// The smallest block advised: two huge pages, so that at least one whole
/// page lies inside it wherever it starts.
const HUGE_MIN: usize = 2 * HUGE;

pub struct HugePages;

/// madvise(2) on [start, start + len), mapped memory of this process:
/// huge pages from now on, and with `collapse` for the pages already
/// touched too. It changes how the memory is backed, never its contents;
/// a kernel that cannot (no THP, "never", before 6.1) refuses, which
/// changes nothing.
#[cfg(target_os = "linux")]
fn huge(start: usize, len: usize, collapse: bool) {
    /// linux/mman.h (not in every libc's bindings).
    const MADV_COLLAPSE: libc::c_int = 25;
    // SAFETY: see above; the callers pass ranges they own.
    unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        if collapse {
            libc::madvise(start as *mut libc::c_void, len, MADV_COLLAPSE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn huge(_start: usize, _len: usize, _collapse: bool) {}

/// Ask for huge pages on the whole 2 MB pages of [p, p + size).
fn advise(p: *mut u8, size: usize) {
    if p.is_null() || size < HUGE_MIN {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE);
    let end = (p as usize + size) & !(HUGE - 1);
    if end > start {
        // The range lies inside a block this allocator just handed out.
        huge(start, end - start, false);
    }
}

// SAFETY: every call goes to `System` with the same arguments; `advise`
// touches no memory.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        advise(q, new_size);
        q
    }
}

/// The heap's state below this stays in small pages: too little to miss
/// the TLB, and collapsing costs about 2 ms a megabyte.
const HEAP_MIN: usize = 16 << 20;

/// After a large run is built: most of its state sits in the C heap
/// (glibc's brk area, where blocks under its mmap threshold go, which
/// `HugePages` cannot advise piece by piece), so ask for huge pages on the
/// heap's whole 2 MB pages and collapse the ones already touched
/// (MADV_COLLAPSE, Linux 6.1 and later; older kernels leave them to
/// khugepaged). The heap keeps the advice as it grows. Measured on a k = 32
/// fat-tree (5,000 flows, 34 MB of heap after the build, 70 ms to
/// collapse): 4-5% faster; k = 8 unchanged. `ECNLAB_HUGE_PAGES=0` turns it
/// off (to measure it). Outputs never depend on it.
pub fn advise_heap() {
    if std::env::var("ECNLAB_HUGE_PAGES").is_ok_and(|v| v == "0") {
        return;
    }
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return };
    for line in maps.lines().filter(|l| l.ends_with("[heap]")) {
        let mut ends = line.split(' ').next().unwrap_or("").split('-').map(|x| usize::from_str_radix(x, 16));
        let (Some(Ok(a)), Some(Ok(b))) = (ends.next(), ends.next()) else { continue };
        let (start, end) = (a.next_multiple_of(HUGE), b & !(HUGE - 1));
        if end >= start + HEAP_MIN {
            huge(start, end - start, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks keep their contents through alloc, realloc (growing past
    /// the threshold) and dealloc, and the heap's advice changes nothing
    /// they hold: advice is about backing, never data.
    #[test]
    fn advised_blocks_keep_their_contents() {
        let a = HugePages;
        let small = Layout::from_size_align(1 << 20, 64).unwrap();
        unsafe {
            let p = a.alloc(small) as *mut u64;
            assert!(!p.is_null());
            for i in 0..(1 << 17) {
                *p.add(i) = i as u64 * 7;
            }
            let q = a.realloc(p as *mut u8, small, 12 << 20) as *mut u64;
            assert!(!q.is_null());
            for i in (1 << 17)..(12 << 17) {
                *q.add(i) = i as u64 * 7;
            }
            advise_heap();
            assert!((0..(12 << 17)).all(|i| *q.add(i) == i as u64 * 7));
            a.dealloc(q as *mut u8, Layout::from_size_align(12 << 20, 64).unwrap());
        }
    }
}
