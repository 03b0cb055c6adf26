//! The storage of large lists: blocks outside the arena, which a
//! collection never copies, and frees once no list holds them.
//!
//! A list whose storage reaches [`LARGE_LIST_BYTES`] gets a block of its
//! own from the system allocator ([`LargeBlocks::alloc`]), registered with
//! the space. Growing it takes a new block and frees the old one at once
//! (nothing else refers to a list's storage), so a list built by
//! appending leaves no outgrown blocks behind it in the arena; and a
//! collection that finds the list reachable copies its small object but
//! keeps the block where it is, rewriting the values in it only once the
//! whole copy has succeeded (so that a collection can still give up and
//! leave everything as it was). A block no reachable list holds is freed
//! when the collection ends. So a program that keeps a few large lists is
//! collected at the cost of its small objects, and its peak memory is not
//! doubled by a copy of them.
//!
//! A list's storage is a bumpalo vector over the space's arena whichever
//! memory it is in: bumpalo never frees memory it did not allocate (its
//! `dealloc` rewinds only the arena's newest allocation), and grows such a
//! vector by copying it into the arena, so a large block only ever leaves
//! a list through [`crate::heap::Heap`]'s growth or a collection.

use crate::value::Value;
use rustc_hash::FxHashMap;
use std::alloc::Layout;
use std::cell::RefCell;

/// The least storage, in bytes, that a list gets as a block of its own:
/// 1 MiB (65,536 values). A block comes from the system allocator, which
/// faults smaller ones in 4 KiB at a time where the arena's large chunks
/// take 2 MiB pages: at 64 KiB, `helpers` (lists of 320 KB) took 15% more
/// page faults and 4% more time. Under `gc-stress`, 4 KiB (256 values): every suite run under it then
/// moves lists between the arena and blocks, and collects them, all the
/// time.
pub const LARGE_LIST_BYTES: usize = if cfg!(feature = "gc-stress") {
    4096
} else {
    1 << 20
};

/// The large blocks of one space, by address: each block's layout, and
/// whether the collection under way found a list holding it.
#[derive(Default)]
pub struct LargeBlocks {
    blocks: RefCell<FxHashMap<usize, Block>>,
}

struct Block {
    layout: Layout,
    reached: bool,
}

impl LargeBlocks {
    /// A block with room for `cap` values, or `None` when the system has
    /// no memory for it (the caller then grows the list in the arena).
    pub fn alloc<'h>(&self, cap: usize) -> Option<*mut Value<'h>> {
        let layout = Layout::array::<Value<'h>>(cap).ok()?;
        if layout.size() == 0 {
            return None;
        }
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return None;
        }
        self.blocks.borrow_mut().insert(
            p as usize,
            Block {
                layout,
                reached: false,
            },
        );
        Some(p.cast())
    }

    /// Whether `p` is the start of one of the blocks.
    pub fn holds(&self, p: *const Value<'_>) -> bool {
        self.blocks.borrow().contains_key(&(p as usize))
    }

    /// Frees the block at `p`, which nothing refers to any more (a list
    /// that outgrew it), if it is one of the blocks.
    pub fn free(&self, p: *const Value<'_>) {
        let block = self.blocks.borrow_mut().remove(&(p as usize));
        if let Some(b) = block {
            // SAFETY: the block was allocated with this layout and is
            // freed once, now that it has left the table.
            unsafe { release(p as *mut u8, b.layout) };
        }
    }

    /// Records that a list the collection copies holds the block at `p`;
    /// returns whether `p` is one of the blocks.
    pub(crate) fn reach(&self, p: *const Value<'_>) -> bool {
        match self.blocks.borrow_mut().get_mut(&(p as usize)) {
            Some(b) => {
                b.reached = true;
                true
            }
            None => false,
        }
    }

    /// Forgets what a collection that gave up had found.
    pub(crate) fn unreach_all(&self) {
        for b in self.blocks.borrow_mut().values_mut() {
            b.reached = false;
        }
    }

    /// Frees the blocks no list the collection copied holds, once the
    /// copy has replaced the old arena (no list of which can be used
    /// again), and forgets what was found for the next collection.
    /// Returns the bytes freed.
    pub(crate) fn sweep(&self) -> usize {
        let mut freed = 0;
        self.blocks.borrow_mut().retain(|&p, b| {
            if b.reached {
                b.reached = false;
                return true;
            }
            freed += b.layout.size();
            // SAFETY: no reachable list holds the block, and nothing else
            // refers to a list's storage; it leaves the table here.
            unsafe { release(p as *mut u8, b.layout) };
            false
        });
        freed
    }

    /// Bytes of all the blocks.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.blocks.borrow().values().map(|b| b.layout.size()).sum()
    }
}

impl Drop for LargeBlocks {
    fn drop(&mut self) {
        for (p, b) in self.blocks.get_mut().drain() {
            // SAFETY: the space's values are gone with it.
            unsafe { release(p as *mut u8, b.layout) };
        }
    }
}

/// Frees a block; under `gc-stress` overwrites it first, so that a list
/// that still used it would read garbage at once.
///
/// # Safety
/// `p` was allocated with `layout` and nothing uses it again.
unsafe fn release(p: *mut u8, layout: Layout) {
    if cfg!(feature = "gc-stress") {
        // SAFETY: the caller's contract; the block is `layout.size()`
        // bytes.
        unsafe { std::ptr::write_bytes(p, 0xdb, layout.size()) };
    }
    // SAFETY: the caller's contract.
    unsafe { std::alloc::dealloc(p, layout) };
}

/// Whether `bytes` of a list's storage are large enough for a block of
/// their own.
pub fn is_large(bytes: usize) -> bool {
    bytes >= LARGE_LIST_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn blocks_are_kept_while_reached_and_freed_otherwise() {
        let large = LargeBlocks::default();
        let a = large.alloc(10_000).unwrap();
        let b = large.alloc(20_000).unwrap();
        assert!(large.holds(a) && large.holds(b));
        assert_eq!(large.bytes(), 30_000 * size_of::<Value>());
        assert!(large.reach(a));
        assert!(!large.reach(std::ptr::null()));
        assert_eq!(large.sweep(), 20_000 * size_of::<Value>());
        assert!(large.holds(a) && !large.holds(b));
        // The marks are forgotten after each collection: an unreached
        // block goes at the next.
        large.reach(a);
        large.unreach_all();
        assert_eq!(large.sweep(), 10_000 * size_of::<Value>());
        assert_eq!(large.bytes(), 0);
        let c = large.alloc(5).unwrap();
        large.free(c);
        assert!(!large.holds(c));
        large.free(c);
        assert!(large.alloc(0).is_none());
    }
}
