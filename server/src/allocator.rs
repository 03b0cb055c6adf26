//! The binary's memory allocator: mimalloc for ordinary blocks, and a
//! mapping of its own, advised for transparent huge pages, for each large
//! block.
//!
//! A program's heap lives in one arena per execution whose chunks double
//! as it grows, so a program that builds a large list or dict spends much
//! of its time in page faults when the kernel backs its memory with 4 KiB
//! pages (one fault per 4 KiB, about 1 µs each on a virtual machine). Huge
//! pages take one fault per 2 MiB. They must not reach the rest of the
//! process, though: in mimalloc's small-object segments a huge page stays
//! resident as long as any object on it lives, which took the peak memory
//! of a program at its 32 MiB heap budget past the budget plus 32 MiB.
//!
//! So mimalloc is built without its own requests for huge pages (its
//! `no_thp` feature; by default it advises them on every arena it maps),
//! [`limit_huge_pages`] turns transparent huge pages off for the process
//! except where they are asked for (`PR_THP_DISABLE_EXCEPT_ADVISED`,
//! Linux 6.18; older kernels turn them off entirely, and then every block
//! has 4 KiB pages), and [`Allocator`] asks for them on blocks of at least
//! [`LARGE`] bytes (about 2 MiB) only,
//! each in its own mapping that is unmapped when the block is freed. Such
//! a block is filled from one end (an arena chunk from its top, a vector
//! from its start), so at most one partly used 2 MiB page of each is
//! resident beyond what it holds; the unused capacity of a vector is never
//! touched and never resident. Growing a large block remaps its pages
//! instead of copying them.
//!
//! Which end is filled first decides where a block lies in its mapping
//! (a whole number of huge pages, so a block of another size leaves part
//! of one unused). A vector, filled from its start, lies at the mapping's
//! start. An arena chunk, filled from its top down, lies at the mapping's
//! end ([`at_top`]): at its start, the first byte written would fault in
//! a huge page of which only the part below the chunk's top is used, up
//! to 2 MiB resident for nothing in every chunk whose size is not a
//! multiple of 2 MiB (a to-space sized to what a collection copies, a
//! chunk sized to one large block). Only the huge pages such a chunk
//! covers at least half of are advised; the part of one below it keeps
//! 4 KiB pages, which its last allocations fault in one by one.

use mimalloc::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};

/// The smallest block that gets its own mapping: 2 MiB less a page, so
/// that an arena chunk of 2 MiB (which asks for a whole number of pages
/// less the few bytes a general allocator keeps per block) is one.
pub const LARGE: usize = (2 << 20) - 4096;

/// The size of a transparent huge page (x86-64, and arm64 with 4 KiB
/// base pages); mappings are whole multiples of it, which the kernel
/// aligns to it.
const HUGE_PAGE: usize = 2 << 20;

/// The binary's global allocator (see the module documentation).
pub struct Allocator;

/// Whether a block of `layout` is one of the large ones: big enough, and
/// aligned no more strictly than a page.
#[inline]
fn is_large(layout: Layout) -> bool {
    layout.size() >= LARGE && layout.align() <= 4096
}

/// The length of the mapping of a large block of `size` bytes.
#[inline]
fn mapped_len(size: usize) -> usize {
    size.div_ceil(HUGE_PAGE) * HUGE_PAGE
}

/// Whether a large block of `layout` is an arena chunk, which bumpalo
/// fills from its top down: bumpalo aligns its chunks to 16 bytes, which
/// no vector or string of the program asks for (a value is aligned to 8).
#[inline]
fn at_top(layout: Layout) -> bool {
    layout.align() == 16
}

/// Where a large block of `layout` starts in its mapping: at the start,
/// or so that it ends within 16 bytes of the mapping's end ([`at_top`]),
/// at a multiple of 16.
#[inline]
fn offset(layout: Layout) -> usize {
    if at_top(layout) {
        (mapped_len(layout.size()) - layout.size()) & !15
    } else {
        0
    }
}

// SAFETY: every block is served by exactly one of mimalloc and the
// mapping functions, and which one is decided by its layout alone
// (`is_large`), which `GlobalAlloc`'s callers pass back unchanged on
// `dealloc` and `realloc` (with `realloc`'s new size for the block it
// returns, whose kind `realloc` decides by the same test).
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_large(layout) {
            map_block(layout)
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { MiMalloc.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_large(layout) {
            // A fresh anonymous mapping reads as zeros.
            map_block(layout)
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { MiMalloc.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_large(layout) {
            // SAFETY: `ptr` is the block `place` put at this offset in a
            // mapping of this length made by `map` or `remap` (the
            // caller's contract and the test above).
            unsafe { unmap(ptr.sub(offset(layout)), mapped_len(layout.size())) }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { MiMalloc.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `GlobalAlloc::realloc`'s contract makes this a valid
        // layout (non-zero size that does not overflow at this alignment).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (is_large(layout), is_large(new_layout)) {
            // SAFETY: the caller's contract, passed on.
            (false, false) => unsafe { MiMalloc.realloc(ptr, layout, new_size) },
            // SAFETY: `ptr` is a mapping of the old length (as in
            // `dealloc`), the block at its start.
            (true, true) if !at_top(layout) => unsafe {
                remap(ptr, mapped_len(layout.size()), mapped_len(new_size))
            },
            // Between the two kinds, or a block at the top of its mapping
            // (which moves within it as it grows): a new block, the
            // contents copied.
            _ => {
                // SAFETY: `new_layout` is valid (above).
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks hold at least the smaller size
                    // and are distinct; the old one is freed with its own
                    // layout.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

/// A large block of `layout` in a mapping of its own (see [`offset`]),
/// advised for huge pages where it covers them whole, or null.
fn map_block(layout: Layout) -> *mut u8 {
    let len = mapped_len(layout.size());
    let off = offset(layout);
    let p = map(len);
    if p.is_null() {
        return p;
    }
    // The huge page the block starts in is advised when the block covers
    // at least half of it (a chunk a few bytes short of 2 MiB covers it
    // all but its allocator's record).
    let advised = if off % HUGE_PAGE <= HUGE_PAGE / 2 {
        off - off % HUGE_PAGE
    } else {
        off.next_multiple_of(HUGE_PAGE)
    };
    if advised < len {
        // SAFETY: `advised < len`, inside the mapping.
        advise_huge(unsafe { p.add(advised) }, len - advised);
    }
    // SAFETY: the offset is less than the mapping's length, which is at
    // least the block's size beyond it (`offset`).
    unsafe { p.add(off) }
}

/// A new anonymous mapping of `len` bytes, or null.
#[cfg(target_os = "linux")]
fn map(len: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping at an address of the kernel's
    // choice touches no existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    p.cast()
}

/// Advises huge pages for part of a mapping; the advice is only a hint,
/// and a kernel without it leaves 4 KiB pages.
#[cfg(target_os = "linux")]
fn advise_huge(p: *mut u8, len: usize) {
    // SAFETY: `p..p + len` is in a mapping of ours; advice changes no
    // contents.
    unsafe {
        libc::madvise(p.cast(), len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_: *mut u8, _: usize) {}

/// Unmaps a mapping made by [`map`] or [`remap`].
///
/// # Safety
///
/// `p..p + len` is such a mapping, and nothing uses it any more.
#[cfg(target_os = "linux")]
unsafe fn unmap(p: *mut u8, len: usize) {
    // SAFETY: by the contract above. A failure leaves the pages mapped,
    // which loses memory but never corrupts it.
    unsafe {
        libc::munmap(p.cast(), len);
    }
}

/// Resizes a mapping made by [`map`] or [`remap`], moving its pages
/// (never copying them) when it cannot grow in place; null on failure,
/// with the old mapping left as it was.
///
/// # Safety
///
/// `p..p + old` is such a mapping.
#[cfg(target_os = "linux")]
unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
    if old == new {
        return p;
    }
    // SAFETY: by the contract above; with MREMAP_MAYMOVE the kernel picks
    // any new address, and the mapping keeps its huge page advice.
    let q = unsafe { libc::mremap(p.cast(), old, new, libc::MREMAP_MAYMOVE) };
    if q == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    q.cast()
}

#[cfg(not(target_os = "linux"))]
fn map(len: usize) -> *mut u8 {
    // SAFETY: a valid layout of a non-zero size.
    unsafe { std::alloc::alloc(Layout::from_size_align_unchecked(len, HUGE_PAGE)) }
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(p: *mut u8, len: usize) {
    // SAFETY: made by `map` or `remap` with this length.
    unsafe { std::alloc::dealloc(p, Layout::from_size_align_unchecked(len, HUGE_PAGE)) }
}

#[cfg(not(target_os = "linux"))]
unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
    // SAFETY: made by `map` or `remap` with the old length.
    unsafe { std::alloc::realloc(p, Layout::from_size_align_unchecked(old, HUGE_PAGE), new) }
}

/// `PR_THP_DISABLE_EXCEPT_ADVISED` (Linux 6.18): with `PR_SET_THP_DISABLE`,
/// huge pages stay on for memory advised for them.
#[cfg(target_os = "linux")]
const PR_THP_DISABLE_EXCEPT_ADVISED: libc::c_ulong = 1 << 1;

/// Turns transparent huge pages off for this process except for the large
/// blocks of [`Allocator`] (on kernels before 6.18: off entirely). Returns
/// whether the large blocks may have them.
#[cfg(target_os = "linux")]
pub fn limit_huge_pages() -> bool {
    // SAFETY: prctl with PR_SET_THP_DISABLE takes integer arguments only
    // and changes nothing but the process's huge page policy (the kernel
    // checks it at each page fault, so it covers what mimalloc already
    // reserved); a kernel without the flag refuses it with EINVAL.
    unsafe {
        if libc::prctl(
            libc::PR_SET_THP_DISABLE,
            1 as libc::c_ulong,
            PR_THP_DISABLE_EXCEPT_ADVISED,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        ) == 0
        {
            return true;
        }
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    false
}

#[cfg(not(target_os = "linux"))]
pub fn limit_huge_pages() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of block and every transition between the kinds keeps
    /// its contents.
    #[test]
    fn blocks_of_both_kinds_keep_their_contents_through_realloc() {
        let a = Allocator;
        let sizes = [
            64,
            LARGE - 8,
            LARGE,
            LARGE + 1,
            3 * LARGE + 12345,
            5 * LARGE,
            100,
        ];
        // SAFETY: each block is used within its current layout's size,
        // reallocated and freed with the layout it was made with.
        unsafe {
            let mut layout = Layout::from_size_align(16, 8).unwrap();
            let mut p = a.alloc(layout);
            assert!(!p.is_null());
            std::ptr::write_bytes(p, 0xA5, 16);
            let mut filled = 16;
            for &size in &sizes {
                p = a.realloc(p, layout, size);
                assert!(!p.is_null(), "realloc to {size}");
                let kept = filled.min(size);
                let bytes = std::slice::from_raw_parts(p, kept);
                assert!(bytes.iter().all(|&b| b == 0xA5), "contents after {size}");
                std::ptr::write_bytes(p, 0xA5, size);
                filled = size;
                layout = Layout::from_size_align(size, 8).unwrap();
            }
            a.dealloc(p, layout);
        }
    }

    /// An arena chunk (aligned to 16) of a size that is no whole number of
    /// huge pages ends at its mapping's end, a vector at its start; both
    /// keep their contents through realloc, in either direction.
    #[test]
    fn a_chunk_lies_at_the_top_of_its_mapping_and_a_vector_at_the_bottom() {
        let a = Allocator;
        for size in [LARGE + 4096, 3 * HUGE_PAGE + 12_352, 5 * HUGE_PAGE - 80] {
            // SAFETY: each block is written within its size, reallocated
            // and freed with the layout it was made with.
            unsafe {
                let chunk = Layout::from_size_align(size, 16).unwrap();
                let p = a.alloc_zeroed(chunk);
                assert!(!p.is_null());
                let end = p as usize + size;
                assert_eq!(p as usize % 16, 0);
                assert!(end.next_multiple_of(HUGE_PAGE) - end < 16, "{size}");
                let bytes = std::slice::from_raw_parts_mut(p, size);
                assert!(bytes.iter().all(|&b| b == 0));
                bytes.fill(0x5A);
                let q = a.realloc(p, chunk, size + HUGE_PAGE);
                assert!(!q.is_null());
                assert!(std::slice::from_raw_parts(q, size)
                    .iter()
                    .all(|&b| b == 0x5A));
                let grown = Layout::from_size_align(size + HUGE_PAGE, 16).unwrap();
                let r = a.realloc(q, grown, 100);
                assert!(std::slice::from_raw_parts(r, 100)
                    .iter()
                    .all(|&b| b == 0x5A));
                a.dealloc(r, Layout::from_size_align(100, 16).unwrap());

                let vector = Layout::from_size_align(size, 8).unwrap();
                let v = a.alloc(vector);
                assert_eq!(v as usize % HUGE_PAGE, 0, "{size}");
                std::ptr::write_bytes(v, 0x33, size);
                a.dealloc(v, vector);
            }
        }
    }

    #[test]
    fn large_blocks_are_zeroed_and_page_aligned() {
        let a = Allocator;
        let layout = Layout::from_size_align(LARGE + 4096, 4096).unwrap();
        // SAFETY: the block is read within its size and freed with its
        // layout.
        unsafe {
            let p = a.alloc_zeroed(layout);
            assert!(!p.is_null());
            assert_eq!(p as usize % 4096, 0);
            let bytes = std::slice::from_raw_parts(p, layout.size());
            assert!(bytes.iter().all(|&b| b == 0));
            a.dealloc(p, layout);
        }
    }

    #[test]
    fn only_big_blocks_of_page_alignment_are_large() {
        assert!(!is_large(Layout::from_size_align(LARGE - 1, 8).unwrap()));
        assert!(is_large(Layout::from_size_align(LARGE, 8).unwrap()));
        assert!(!is_large(Layout::from_size_align(LARGE, 8192).unwrap()));
        assert_eq!(mapped_len(LARGE), HUGE_PAGE);
        assert_eq!(mapped_len(HUGE_PAGE), HUGE_PAGE);
        assert_eq!(mapped_len(HUGE_PAGE + 1), 2 * HUGE_PAGE);
    }
}
