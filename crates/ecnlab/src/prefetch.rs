//! A hint to start loading memory that the next event will touch, so its
//! cache misses overlap the current event's work instead of following it.
//! At the scale of the papers' leaf-spine runs most per-hop reads (the
//! packet, the port it came from) miss the cache. A no-op off x86-64.

#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch only hints the cache; it reads nothing and
        // cannot fault, and SSE is part of every x86-64 target.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(r as *const T as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// `prefetch` every cache line of `*r` (for structs of a few lines).
#[inline(always)]
pub fn prefetch_all<T>(r: &T) {
    let base = r as *const T as *const u8;
    let mut off = 0;
    while off < std::mem::size_of::<T>() {
        // SAFETY: `off` stays inside `*r`.
        prefetch(unsafe { &*base.add(off) });
        off += 64;
    }
}
