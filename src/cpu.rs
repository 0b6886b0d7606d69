//! Hints to the processor: no effect on what is computed, only on when memory arrives.

/// Asks the processor to bring the cache lines of a `T` at `at` (its first and its last byte:
/// a value may straddle two lines) ahead of a read. The address is never read: it may be
/// dangling or past an allocation (a prefetch never faults). No effect but on x86_64.
#[inline(always)]
pub(crate) fn prefetch<T>(at: *const T) {
    let first = at.cast::<i8>();
    let last = first.wrapping_add(std::mem::size_of::<T>().max(1) - 1);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86_64 baseline, and a prefetch reads nothing and never
    // faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(first);
        _mm_prefetch::<_MM_HINT_T0>(last);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (first, last);
}
