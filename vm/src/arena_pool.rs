//! Arenas kept between executions, so that a host running many programs
//! reuses memory it has already touched.
//!
//! An execution allocates everything in one bumpalo arena and frees it all
//! at the end. Fresh memory is expensive: the kernel must find and zero
//! every page on its first touch, and on a virtual machine the host may
//! have to back it first, which measured here about 2.5 ns per byte,
//! more than a program's own work on records and strings. So the arena of
//! a finished execution is reset (bumpalo keeps its newest chunk, the
//! largest, and frees the others) and kept for the next one, in a small
//! process-wide pool bounded by [`SPARE_BYTES`] and [`SPARE_ARENAS`] (over
//! a bound, the smallest arenas are given up first: a large one is the
//! costly one to fault in again); an arena that grew past one chunk is
//! kept as one chunk of its whole size. A program that needs
//! more than the kept chunk grows the arena as before, and the next
//! execution after it starts with a chunk of all it used.
//!
//! Nothing of one execution is visible to the next: every value is written
//! before it is read, and the budget charges each execution from zero.

use bumpalo::Bump;
use std::ops::Deref;
use std::sync::Mutex;

/// The most bytes of arena chunks kept between executions, in all.
pub const SPARE_BYTES: usize = 64 << 20;

/// The most arenas kept between executions.
pub const SPARE_ARENAS: usize = 4;

/// A pool of arenas kept between executions.
pub struct Pool {
    /// The arenas kept, ordered by size, the largest last.
    spare: Mutex<Vec<Bump>>,
    max_bytes: usize,
    max_arenas: usize,
}

/// The process's pool.
pub static POOL: Pool = Pool::new(SPARE_BYTES, SPARE_ARENAS);

impl Pool {
    pub const fn new(max_bytes: usize, max_arenas: usize) -> Pool {
        Pool {
            spare: Mutex::new(Vec::new()),
            max_bytes,
            max_arenas,
        }
    }

    fn spare(&self) -> std::sync::MutexGuard<'_, Vec<Bump>> {
        // A panic cannot leave the list inconsistent: it is changed only
        // by a single push, pop or insert.
        self.spare.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The arena of one execution: a kept one when there is one (the
    /// largest), else a new one of `capacity` bytes.
    pub fn take(&self, capacity: usize) -> Arena<'_> {
        let kept = self.spare().pop();
        Arena {
            bump: Some(kept.unwrap_or_else(|| Bump::with_capacity(capacity))),
            pool: self,
        }
    }

    /// An arena to own: a kept one when there is one (the largest), else a
    /// new one of `capacity` bytes. Hand it back with [`Pool::give_back`].
    pub(crate) fn take_bump(&self, capacity: usize) -> Bump {
        let kept = self.spare().pop();
        kept.unwrap_or_else(|| Bump::with_capacity(capacity))
    }

    /// Resets `bump` and keeps it when there is room. An arena that grew
    /// past one chunk is kept as one chunk of its whole size instead: a
    /// reset keeps only the newest chunk (about half of it), so the next
    /// execution of the same size would grow it again, into memory the
    /// allocator may have given back to the system meanwhile, and fault
    /// that in again; one chunk of the whole size is faulted in once, by
    /// the first execution that uses it, and stays.
    pub(crate) fn give_back(&self, mut bump: Bump) {
        let used = bump.allocated_bytes();
        bump.reset();
        if bump.allocated_bytes() < used && used <= self.max_bytes {
            drop(bump);
            bump = Bump::with_capacity(used);
        }
        let bytes = bump.allocated_bytes();
        if bytes > self.max_bytes {
            // Too large to keep: its chunk goes back to the system
            // allocator.
            return;
        }
        let mut spare = self.spare();
        let at = spare.partition_point(|b| b.allocated_bytes() <= bytes);
        spare.insert(at, bump);
        // Over a bound, the smallest arenas go first: a large one is the
        // costly one to fault in again. They are dropped after the lock.
        let mut evicted = Vec::new();
        while spare.len() > self.max_arenas || kept_bytes(&spare) > self.max_bytes {
            evicted.push(spare.remove(0));
        }
        drop(spare);
        drop(evicted);
    }

    /// The bytes of arena chunks kept now.
    #[cfg(test)]
    pub fn spare_bytes(&self) -> usize {
        kept_bytes(&self.spare())
    }

    /// The arenas kept now.
    #[cfg(test)]
    pub fn spare_arenas(&self) -> usize {
        self.spare().len()
    }
}

/// The bytes of the chunks of `arenas` (after a reset, one chunk each).
fn kept_bytes(arenas: &[Bump]) -> usize {
    arenas.iter().map(Bump::allocated_bytes).sum()
}

/// The arena of one execution. Dropping it gives it back to its pool.
pub struct Arena<'p> {
    bump: Option<Bump>,
    pool: &'p Pool,
}

impl Deref for Arena<'_> {
    type Target = Bump;

    fn deref(&self) -> &Bump {
        self.bump
            .as_ref()
            .expect("an arena is present until dropped")
    }
}

impl Drop for Arena<'_> {
    fn drop(&mut self) {
        if let Some(bump) = self.bump.take() {
            self.pool.give_back(bump);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_is_kept_reset_and_reused_and_the_pool_is_bounded() {
        let pool = Pool::new(64 << 20, 2);
        let big = {
            let a = pool.take(1024);
            // Grow it past its first chunk, to about 8 MiB.
            for _ in 0..64 {
                a.alloc_slice_fill_copy(128 << 10, 7u8);
            }
            a.allocated_bytes()
        };
        assert!(big > 8 << 20);
        let kept = pool.spare_bytes();
        // One chunk of all it used is kept.
        assert!(
            kept >= big && kept < big + (1 << 20),
            "kept {kept} of {big}"
        );
        let a = pool.take(1024);
        assert_eq!(a.allocated_bytes(), kept, "the kept arena is reused");
        assert_eq!((pool.spare_bytes(), pool.spare_arenas()), (0, 0));
        // Reset: it hands out its whole chunk again without growing.
        let x = a.alloc_slice_fill_copy(kept / 2, 0u8);
        assert!(x.iter().all(|b| *b == 0));
        assert_eq!(a.allocated_bytes(), kept);
        drop(a);
        assert_eq!((pool.spare_bytes(), pool.spare_arenas()), (kept, 1));
        // An arena over the bound in bytes is not kept (the one taken here
        // is the kept one, grown).
        {
            let a = pool.take(1024);
            a.alloc_slice_fill_copy(64 << 20, 1u8);
        }
        assert_eq!((pool.spare_bytes(), pool.spare_arenas()), (0, 0));
        // Nor more arenas than the bound in number.
        let taken: Vec<_> = (0..3).map(|_| pool.take(1024)).collect();
        drop(taken);
        assert_eq!(pool.spare_arenas(), 2);
        let small = pool.take(1024).allocated_bytes();
        assert!((1024..64 << 10).contains(&small));
    }

    #[test]
    fn over_a_bound_the_smallest_arenas_are_given_up_first() {
        let pool = Pool::new(10 << 20, 3);
        // Grown past its first chunk: kept as one chunk of all it used.
        let grow = |a: &Arena<'_>, mib: usize| {
            for _ in 0..mib {
                a.alloc_slice_fill_copy(1 << 20, 1u8);
            }
        };
        let (one, eight, four) = (pool.take(1024), pool.take(1024), pool.take(1024));
        grow(&one, 1);
        grow(&eight, 8);
        grow(&four, 4);
        drop(one);
        drop(eight);
        assert_eq!(pool.spare_arenas(), 2);
        // Over the byte bound: the 1 MiB one goes, then the 4 MiB one
        // itself, and the 8 MiB one stays.
        drop(four);
        assert_eq!(pool.spare_arenas(), 1);
        let kept = pool.spare_bytes();
        assert!(kept > 8 << 20 && kept <= 10 << 20, "kept {kept}");
        // Over the count bound, the smallest goes.
        let big = pool.take(1024);
        assert_eq!(big.allocated_bytes(), kept);
        let small: Vec<_> = (0..3).map(|_| pool.take(1024)).collect();
        drop(small);
        assert_eq!(pool.spare_arenas(), 3);
        drop(big);
        assert_eq!(pool.spare_arenas(), 3);
        assert!(pool.spare_bytes() > kept, "the large one stays");
    }
}
