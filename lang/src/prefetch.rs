//! Prefetching for walks that outrun the cache: the resolver's walk of a
//! large program's tree, which the parser wrote long before (see
//! `resolve::PREFETCH_FROM`). A prefetch is only a hint to the processor:
//! a wrong address costs a wasted load, never a fault.

/// Asks the processor to start loading the syntax tree of a statement: the
/// nodes of `stmt`, which the arena allocated (downward) after those of the
/// statement before it, `prev`, lie between the two. Anything else there is
/// loaded in vain, which is harmless; a gap that is not that (the two in
/// different chunks of the arena) is skipped when inverted or too large.
pub(crate) fn prefetch_between<T, U>(stmt: &T, prev: &U) {
    const MAX: usize = 64 << 10;
    let lo = stmt as *const T as usize;
    let hi = prev as *const U as usize;
    if hi <= lo || hi - lo > MAX {
        return;
    }
    let mut p = lo;
    while p < hi {
        prefetch(p as *const u8);
        p += 64;
    }
}

/// Asks the processor to start loading the cache line at `p`.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(p as *const i8)
    };
}
