//! The collector: the values a program can still reach are copied out of
//! the arena they were made in into a fresh one, and the old arena is
//! given back whole.
//!
//! An execution's values live in one [`Space`]: a bumpalo arena at a
//! stable address whose contents a collection replaces. Allocation stays a
//! bump of a pointer; a collection, run only at a safe point of the
//! interpreter ([`crate::interp`]: between two instructions of the general
//! loop, with no builtin on the Rust stack), copies every object reachable
//! from the roots into a new arena — objects reachable through other
//! objects by [`Copier`], the roots as the [`Roots`] of the thread
//! enumerate them — then swaps the new arena in and drops the old one, so
//! that memory follows what the program keeps, not what it has made (or,
//! when it kept little and is small, keeps it emptied for the next
//! collection to copy into: a loop that makes garbage reuses two arenas'
//! pages).
//!
//! What makes this sound:
//!
//! - **Only the space moves.** The program's syntax tree, code and
//!   constants live in another arena, the capability tree and builtins in
//!   the host's memory or in statics; none of them refers to the space (a
//!   constant is never a mutable value), so only objects and slices whose
//!   address lies in the space's chunks are copied, and everything else is
//!   left where it is.
//! - **Sharing and cycles survive.** Each object is copied once (a map
//!   from old to new addresses); a mutable object (list, dict, cell) is
//!   copied first with its old contents and fixed through its interior
//!   mutability afterwards, so a cycle through it ends; an immutable one
//!   (tuple, function, bound method, element view, loop iterator) is built
//!   after its parts, walked with an explicit stack, never by recursion.
//! - **Roots are a type.** [`Roots::trace`] is implemented by the thread
//!   over an exhaustive destructuring of its fields, so a field added to it
//!   does not compile until it is classified; a safe point is reached only
//!   where no Rust frame below the loop holds a value of the space.
//! - **Identity hashes are redone.** Functions, bound methods, cells and
//!   iterators hash by address; a dict whose keys include one is rehashed
//!   in place after its keys moved.
//!
//! Objects that refer to nothing (strings, bytes, big ints, ranges) are
//! tenured: copied once into an arena of their own, which the collections
//! after it leave in place, until a full one (see [`Tenured`]).
//!
//! The `gc-stress` feature collects at every safe point and overwrites the
//! old arena before giving it back (or keeping it for the next copy), so
//! that a root missed anywhere reads garbage at once (and fails under
//! AddressSanitizer or a test) instead of reading a stale but intact copy.

use crate::heap::Heap;
use crate::large::LargeBlocks;
use crate::value::*;
use bumpalo::collections::Vec as BumpVec;
use bumpalo::Bump;
use std::alloc::Layout;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::mem::size_of;

/// The arena of an execution's values, at a stable address: every
/// [`Heap`] of the execution and every growing list or dict refers to the
/// arena through it, so that a collection can replace the arena under
/// them.
pub struct Space {
    bump: UnsafeCell<Bump>,
    /// The arena a collection gave up, emptied but with its pages kept
    /// (see [`SPARE_MAX`]): the next collection copies into it.
    spare: Cell<Option<Spare>>,
    /// Objects the last collection copied.
    copied: Cell<usize>,
    /// The storage of large lists, outside the arena (see
    /// [`crate::large`]).
    pub(crate) large: LargeBlocks,
    /// Strings, bytes, big ints and ranges that survived a collection
    /// (see [`Tenured`]).
    tenured: Tenured,
}

/// The objects of a space that refer to nothing (strings, bytes, big
/// ints, ranges) and survived a collection: a collection moves them out
/// of the arena into an arena of their own, where the next collections
/// leave them (they hold no value that could move, so nothing in them
/// needs fixing), until a full collection copies them again with
/// everything else. A program that keeps many strings (lines, records'
/// fields) copies them once, not at every collection; only its lists,
/// dicts and other containers are copied again. One arena per collection
/// that moved some, so that one that gives up drops its own.
#[derive(Default)]
struct Tenured {
    arenas: RefCell<Vec<Bump>>,
    /// Bytes of the objects in them, counted as the heap charges them
    /// (those no longer reachable included, until a full collection).
    bytes: Cell<usize>,
    /// What the last full collection left of them.
    after_full: Cell<usize>,
}

/// Tenured bytes a program may gain past twice what the last full
/// collection kept before the next collection is full.
const TENURED_SLACK: usize = 4 << 20;

/// Tenured arenas (collections that moved objects there) before the next
/// collection is full.
const TENURED_ARENAS: usize = 64;

/// An emptied arena kept by a [`Space`], with the part of its chunk that
/// was touched (resident), to release when it is given up.
struct Spare {
    bump: Bump,
    touched: (usize, usize),
}

impl Spare {
    /// Gives the arena up, its touched pages released first.
    fn release(self) {
        release(self.touched.0, self.touched.1);
    }
}

// Every byte of a `Bump` is inside a `Cell` (its current chunk and its
// allocation limit), which is what lets `Space::swap` replace the whole
// value while shared references to it exist. Checked by size: a field
// outside the cells would grow it.
const _: () = assert!(
    size_of::<Bump>()
        == size_of::<Cell<std::ptr::NonNull<u8>>>() + size_of::<Cell<Option<usize>>>()
);

impl Space {
    /// A space allocating in `bump`.
    pub fn new(bump: Bump) -> Space {
        Space {
            bump: UnsafeCell::new(bump),
            spare: Cell::new(None),
            copied: Cell::new(0),
            large: LargeBlocks::default(),
            tenured: Tenured::default(),
        }
    }

    /// The arena values are allocated in now.
    #[inline(always)]
    pub fn bump(&self) -> &Bump {
        // SAFETY: the arena is replaced only by `swap`, through the cell's
        // pointer, and every byte of a `Bump` is interior-mutable, so a
        // shared reference to it may be held across that replacement (it
        // then sees the new arena).
        unsafe { &*self.bump.get() }
    }

    /// Whether the next collection copies the tenured objects too: when
    /// there are none yet, when they have grown past twice what the last full collection kept (and
    /// [`TENURED_SLACK`]), when they are in many arenas, and when the heap
    /// has charged half its limit (near the limit, every collection finds
    /// all the garbage there is); under `gc-stress`, every other time.
    fn full_due(&self, heap_bytes: usize, max: usize) -> bool {
        let t = &self.tenured;
        if t.bytes.get() == 0 {
            // Nothing is tenured: a collection copies all there is either
            // way, and what it tenures is what a full one kept.
            return true;
        }
        if cfg!(feature = "gc-stress") {
            thread_local! {
                static TURN: Cell<u64> = const { Cell::new(0) };
            }
            return every_other(&TURN);
        }
        t.bytes.get()
            > t.after_full
                .get()
                .saturating_mul(2)
                .saturating_add(TENURED_SLACK)
            || t.arenas.borrow().len() >= TENURED_ARENAS
            || heap_bytes >= max / 2
    }

    /// Gives back the arena kept for the next collection to copy into,
    /// with its pages (for an execution about to wait).
    pub(crate) fn release_spare(&self) {
        if let Some(spare) = self.spare.take() {
            spare.release();
        }
    }

    /// Makes the space's next chunk a large one (see [`WIDE_CHUNK`]) when
    /// its chunks are all small: a program that has allocated
    /// [`crate::budget::WIDEN_AT`] bytes will likely allocate much more.
    pub(crate) fn widen(&self) {
        let bump = self.bump();
        if bump.allocated_bytes() >= WIDE_CHUNK {
            return;
        }
        // bumpalo makes each new chunk twice the size of the current one:
        // a block of half the large size, which nothing uses, is put in a
        // chunk of its own, so the next chunk is a large one. It is never
        // written (bumpalo's record of it lies after it), so it takes
        // address space, not memory, until the next collection drops it.
        let _ = bump.try_alloc_layout(
            Layout::from_size_align(WIDE_CHUNK / 2 - 64, 16).expect("a valid layout"),
        );
    }

    /// Puts `to` in place of the arena and returns the old one.
    ///
    /// # Safety
    /// No allocation of the old arena may be used after it is dropped:
    /// every reachable value must have been copied out of it.
    unsafe fn swap(&self, to: Bump) -> Bump {
        // SAFETY: the caller's contract; a `Bump` is all cells (see
        // `bump`), and no method of it is running (a collection runs
        // between two instructions).
        unsafe { std::ptr::replace(self.bump.get(), to) }
    }
}

impl Drop for Space {
    /// The arena goes back to the process's pool (see
    /// [`crate::arena_pool`]).
    fn drop(&mut self) {
        let bump = std::mem::take(self.bump.get_mut());
        crate::arena_pool::POOL.give_back(bump);
        self.release_spare();
        for arena in self.tenured.arenas.get_mut().drain(..) {
            give_back_pages(&arena);
        }
    }
}

/// The size of a large chunk of the space: 2 MiB, which the binary's
/// allocator maps on its own with transparent huge pages (one page fault
/// per chunk instead of one per 4 KiB, and fewer TLB misses).
pub(crate) const WIDE_CHUNK: usize = 2 << 20;

/// What holds the roots of a collection: the interpreter's thread.
pub(crate) trait Roots<'h> {
    /// Passes every value the holder keeps (functions and iterators as
    /// values of their kind) to `visit`, which may replace it. The order
    /// is the same on every call while the holder does not change: a
    /// collection visits the roots twice, once to copy what they reach and
    /// once, when the whole copy succeeded, to store the copies.
    fn each_root(&mut self, visit: &mut dyn FnMut(&mut Value<'h>));
}

/// What one collection did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collected {
    /// The reachable objects were copied and the old arena given back.
    Done {
        /// Bytes of the objects kept, counted as the heap charges them:
        /// those copied, and the tenured ones (see [`Tenured`]).
        live: usize,
        /// Of `live`, the bytes the next collection copies again (or
        /// traces, for a large list's block) unless it is full: all but
        /// the tenured objects.
        young: usize,
        /// Objects copied.
        objects: usize,
        /// Bytes of bookkeeping the copy needed besides (see
        /// [`Budget::collection_room`](crate::budget::Budget::collection_room)).
        bookkeeping: usize,
    },
    /// The copy would not fit in the heap limit beside the old arena (with
    /// its bookkeeping): nothing changed, and the program goes on in the
    /// old arena.
    NoRoom,
    /// More than three quarters of what the values were charged is still
    /// reachable (found by [`mark`]): nothing was copied or changed, and
    /// the next collection is due later (see
    /// [`Budget::collection_deferred`](crate::budget::Budget::collection_deferred)).
    Deferred,
}

thread_local! {
    static COLLECTIONS: Cell<u64> = const { Cell::new(0) };
}

/// Collections run so far on the calling thread (an execution runs on the
/// thread that resumes it): for tests that must know a collection
/// happened while a value was held where they put it.
pub fn collections_on_this_thread() -> u64 {
    COLLECTIONS.with(Cell::get)
}

/// Copies the objects reachable from `roots` out of `space` into a fresh
/// arena, swaps it in and gives the old one back. `heap` is the heap over
/// `space` (the copied lists and dicts grow through it).
///
/// The copy is made before anything is changed: the old objects are only
/// read, and the roots are replaced only once everything they reach has
/// been copied. So a collection can give up half way and leave the
/// program as it was: when the copy and its bookkeeping would take the
/// charged heap past its limit (memory stays within the budget: the old
/// arena is charged already, so a program can keep about half its budget
/// and still be collected), and when the deadline passes or the execution
/// is cancelled (a collection looks at the clock as it goes: copying a
/// large heap takes tens of milliseconds), which is then the error.
///
/// # Safety
/// Must run where every value of the space that will be used again is
/// reachable from `roots` (a safe point of the interpreter).
pub(crate) unsafe fn collect<'h>(
    space: &'h Space,
    heap: Heap<'h>,
    roots: &mut dyn Roots<'h>,
    values: usize,
) -> crate::error::Result<Collected> {
    let budget = heap.budget;
    budget.check_time()?;
    let full = space.full_due(budget.heap_bytes(), budget.limits.max_heap_bytes);
    let mut from: Vec<(usize, usize)> = Vec::new();
    // SAFETY: no allocation happens in the space (or its tenured arenas)
    // while the chunks are listed.
    for (ptr, len) in unsafe { space.bump().iter_allocated_chunks_raw() } {
        from.push((ptr as usize, ptr as usize + len));
    }
    // A full collection copies the tenured objects too; the others leave
    // them where they are, outside `from`.
    let all_values = values;
    let values = if full {
        for arena in space.tenured.arenas.borrow().iter() {
            // SAFETY: as above.
            for (ptr, len) in unsafe { arena.iter_allocated_chunks_raw() } {
                from.push((ptr as usize, ptr as usize + len));
            }
        }
        values
    } else {
        values.saturating_sub(space.tenured.bytes.get())
    };
    let from = Chunks::new(from);
    // The table of copied objects is made as large as their number needs
    // at once: found by the mark, else twice as many as the last
    // collection copied (the heap has grown by twice what it kept since).
    let mut expected = space.copied.get().saturating_mul(2);
    // Most of the space still reachable (more than three quarters of what
    // the values were charged): a copy would free little and cost much (it
    // is as large as what is kept, in fresh pages); the collection is put
    // off instead, when the budget allows. Marking only reads.
    if budget.worth_marking() {
        let limit = budget.probe_limit(values);
        // Once more than three quarters are found reachable the answer is
        // known (put off, if the budget allows): the mark stops there
        // instead of finding the rest. Under `gc-stress`, every other
        // collection that could be put off is made, and marks find
        // everything.
        let three_quarters = values.saturating_mul(3) / 4;
        let mostly = if cfg!(feature = "gc-stress") {
            usize::MAX
        } else {
            three_quarters
        };
        let m = mark(&from, budget, roots, limit, mostly)?;
        if let Some(Marked {
            bytes: kept,
            leaves,
            objects,
        }) = m
        {
            expected = objects;
            if kept - leaves > limit {
                budget.probe_gave_up();
                return Ok(Collected::Deferred);
            }
            // A mark past `mostly` stopped there, having found a part of
            // what is reachable: whether a copy of it still fits later is
            // judged by the most it can be, all the values.
            let reachable = if kept > mostly {
                kept.max(values)
            } else {
                kept
            };
            if kept > three_quarters && !stress_copies() && budget.collection_deferred(reachable) {
                return Ok(Collected::Deferred);
            }
        }
    }
    let used: usize = from.ranges.iter().map(|(a, b)| b - a).sum();
    // The copy and its bookkeeping must fit beside the old arena.
    let room = budget.collection_room();
    // Room for the copy and what the program allocates until the next
    // collection, as a rule, in one chunk (its untouched pages cost
    // nothing): a small arena can then be kept as the spare and copied
    // into again (see `keep_spare`). A kept arena is taken when its chunk
    // is that large.
    let capacity = used
        .saturating_add(used / 4)
        .clamp(4 << 10, room.max(4 << 10));
    let to = match space.spare.take() {
        Some(spare) if spare.bump.allocated_bytes() >= used => spare.bump,
        other => {
            if let Some(spare) = other {
                spare.release();
            }
            Bump::with_capacity(capacity)
        }
    };
    // The objects this collection tenures (see `Tenured`).
    let tenure = Bump::new();
    let scratch = Bump::new();
    let mut copier = Copier {
        from,
        to: &to,
        tenure: &tenure,
        space: space.bump(),
        large: &space.large,
        large_lists: Vec::new(),
        large_live: 0,
        heap,
        // A table of more than about a sixth of the room starts small
        // instead, and the copy stops when its growth no longer fits.
        moved: Forwarding::new(
            &scratch,
            if expected.saturating_mul(256) <= room {
                expected
            } else {
                0
            },
        ),
        work: BumpVec::new_in(&scratch),
        parts: BumpVec::new_in(&scratch),
        forwarded_strs: BumpVec::new_in(&scratch),
        scratch: &scratch,
        rehash: Vec::new(),
        live: 0,
        tenured: 0,
        objects: 0,
        containers: 0,
        visits: 0,
        room,
        stopped: None,
    };
    let mut copies: Vec<Value<'h>> = Vec::new();
    roots.each_root(&mut |v| {
        let c = copier.value(*v);
        copies.push(c);
        copier.drain();
    });
    if let Some(stop) = copier.stopped.take() {
        // Nothing refers to the copy: it goes, and its pages with it; the
        // large blocks and the strings' hashes are as they were.
        space.large.unreach_all();
        copier.unforward_strs();
        drop(copier);
        give_back_pages(&to);
        drop(to);
        give_back_pages(&tenure);
        give_back_pages(&scratch);
        return match stop {
            Stop::NoRoom => Ok(Collected::NoRoom),
            Stop::Failed(e) => Err(e),
        };
    }
    copier.rewrite_large();
    let young = copier.live - copier.tenured + copier.large_live;
    let tenured_now = if full {
        copier.tenured
    } else {
        space.tenured.bytes.get() + copier.tenured
    };
    space.copied.set(copier.containers);
    let done = Collected::Done {
        live: young + tenured_now,
        young,
        objects: copier.objects,
        bookkeeping: copier.bookkeeping(),
    };
    let rehash = std::mem::take(&mut copier.rehash);
    drop(copier);
    give_back_pages(&scratch);
    drop(scratch);
    let mut next = copies.into_iter();
    roots.each_root(&mut |v| {
        if let Some(c) = next.next() {
            *v = c;
        }
    });
    // SAFETY: the roots and everything they reach now refer to the copies
    // in `to` and `tenure`, to tenured objects a collection that is not
    // full leaves, or to memory outside the space.
    let old = unsafe { space.swap(to) };
    let old_tenured = {
        let mut arenas = space.tenured.arenas.borrow_mut();
        let old = if full {
            std::mem::take(&mut *arenas)
        } else {
            Vec::new()
        };
        if tenure.allocated_bytes() > 0 {
            arenas.push(tenure);
        }
        old
    };
    space.tenured.bytes.set(tenured_now);
    if full {
        space.tenured.after_full.set(tenured_now);
    }
    // The lists of the old arena are gone: a block none of the copies
    // holds is garbage.
    space.large.sweep();
    if cfg!(feature = "gc-stress") {
        for arena in std::iter::once(&old).chain(&old_tenured) {
            // SAFETY: the chunks are the old arenas' own, and nothing
            // reads them again (the contract of `collect`).
            for (ptr, len) in unsafe { arena.iter_allocated_chunks_raw() } {
                // SAFETY: as above; `ptr` is valid for `len` bytes.
                unsafe { std::ptr::write_bytes(ptr, 0xdb, len) };
            }
        }
    }
    for arena in old_tenured {
        give_back_pages(&arena);
    }
    // When little is kept, the next collection comes soon (see
    // `Budget::collected`), and copies into the old arena's pages.
    if crate::budget::little_kept(young, all_values) {
        keep_spare(space, old);
    } else if !cfg!(feature = "gc-stress") {
        give_back_pages(&old);
    }
    COLLECTIONS.with(|n| n.set(n.get() + 1));
    for d in rehash {
        d.map.borrow_mut().rehash_identities();
    }
    Ok(done)
}

/// The most bytes of chunks an arena may have to be kept as a space's
/// spare after a collection; a larger one gives its pages back.
const SPARE_MAX: usize = 4 << 20;

/// Keeps `old`, the arena a collection copied out of, as the space's
/// spare when it is small enough: its newest (largest) chunk stays with
/// its pages, and the next collection copies into it, so that a program
/// that makes garbage cycles between two arenas whose pages are already
/// the process's instead of faulting in fresh ones. The others give their
/// pages back.
fn keep_spare(space: &Space, mut old: Bump) {
    if old.allocated_bytes() > SPARE_MAX {
        give_back_pages(&old);
        return;
    }
    // SAFETY: nothing allocates in `old`; the newest chunk comes first.
    let chunks: Vec<(usize, usize)> = unsafe { old.iter_allocated_chunks_raw() }
        .map(|(p, l)| (p as usize, l))
        .collect();
    for &(ptr, len) in chunks.iter().skip(1) {
        release(ptr, len);
    }
    old.reset();
    let touched = chunks.first().copied().unwrap_or((0, 0));
    space.spare.set(Some(Spare { bump: old, touched }));
}

/// Hands the pages of `arena`'s allocations back to the system before it
/// is dropped. glibc's allocator maps a large block on its own and unmaps
/// it when freed, but raises that size each time such a block is freed
/// (up to 32 MiB), and memory freed into a thread's heap is not returned;
/// so a dropped arena's chunks would soon stay resident after they are
/// freed, while the next arena's take fresh pages, and memory would follow
/// the arenas a program has had rather than the one it has. The pages
/// within each chunk's allocated part are released (`MADV_DONTNEED`: read
/// again, they are zero), which leaves the allocator's own records (before
/// a chunk) and bumpalo's (after its allocations) as they are.
fn give_back_pages(arena: &Bump) {
    // SAFETY: the chunks are listed while nothing allocates in `arena`.
    for (ptr, len) in unsafe { arena.iter_allocated_chunks_raw() } {
        release(ptr as usize, len);
    }
}

/// Releases the whole pages of `ptr..ptr + len`, allocations of an arena
/// that nothing reads again (`MADV_DONTNEED`: read again, they are zero).
fn release(ptr: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = ptr.next_multiple_of(PAGE);
        let end = (ptr + len) & !(PAGE - 1);
        if end > start {
            // SAFETY: `start..end` lies within an arena's allocations,
            // which nothing reads again; pages released this way read as
            // zero if touched again.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Why a collection gave up.
enum Stop {
    /// The copy would not fit in the heap limit.
    NoRoom,
    /// The deadline passed or the execution was cancelled.
    Failed(crate::error::Error),
}

/// Where each copied object went: an open-addressing table from old to new
/// addresses, kept in an arena of its own (`scratch`) so that the
/// collection gives its pages back with the rest when it ends (a table in
/// the allocator's heap would stay resident after it is freed).
struct Forwarding<'s> {
    scratch: &'s Bump,
    /// `(old, new)` pairs; an old address of 0 is a free slot. Never more
    /// than 3/4 full.
    slots: &'s mut [(usize, usize)],
    len: usize,
    /// Bytes of all the tables made, the outgrown ones included.
    bytes: usize,
}

impl<'s> Forwarding<'s> {
    /// An empty table with room for `expected` objects (at least 768).
    fn new(scratch: &'s Bump, expected: usize) -> Forwarding<'s> {
        let slots = expected
            .saturating_mul(4)
            .div_ceil(3)
            .saturating_add(1)
            .max(1024)
            .checked_next_power_of_two()
            .unwrap_or(1024);
        Forwarding {
            scratch,
            slots: scratch.alloc_slice_fill_copy(slots, (0, 0)),
            len: 0,
            bytes: slots * size_of::<(usize, usize)>(),
        }
    }

    /// The slot of `old`, or the free one where it would go.
    fn slot(slots: &[(usize, usize)], old: usize) -> usize {
        let mask = slots.len() - 1;
        // Objects are 8-byte aligned: the low bits carry nothing.
        let mut i = ((old >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) & mask;
        while slots[i].0 != 0 && slots[i].0 != old {
            i = (i + 1) & mask;
        }
        i
    }

    fn get(&self, old: usize) -> Option<usize> {
        let (k, v) = self.slots[Self::slot(self.slots, old)];
        (k == old).then_some(v)
    }

    /// Whether the next insertion makes a new table.
    fn full(&self) -> bool {
        (self.len + 1) * 4 > self.slots.len() * 3
    }

    /// Bytes the next insertion may take: the table it grows into.
    fn next_bytes(&self) -> usize {
        if self.full() {
            self.slots.len() * 2 * size_of::<(usize, usize)>()
        } else {
            0
        }
    }

    fn insert(&mut self, old: usize, new: usize) {
        if self.full() {
            self.bytes += self.slots.len() * 2 * size_of::<(usize, usize)>();
            let grown = self
                .scratch
                .alloc_slice_fill_copy(self.slots.len() * 2, (0usize, 0usize));
            for &(k, v) in self.slots.iter() {
                if k != 0 {
                    grown[Self::slot(grown, k)] = (k, v);
                }
            }
            self.slots = grown;
        }
        let i = Self::slot(self.slots, old);
        if self.slots[i].0 == 0 {
            self.len += 1;
        }
        self.slots[i] = (old, new);
    }
}

/// The state of one collection: where the old arena is, the new one, and
/// which objects have been copied.
pub(crate) struct Copier<'h, 'c> {
    /// The old arena's allocated ranges, sorted.
    from: Chunks,
    to: &'c Bump,
    /// Where the objects that refer to nothing go (see [`Tenured`]).
    tenure: &'c Bump,
    /// The space, which lists and dicts keep for their growth.
    space: &'h Bump,
    /// The space's large blocks: a list holding one keeps it (see
    /// [`crate::large`]).
    large: &'h LargeBlocks,
    /// The copies of lists whose storage is a large block, still holding
    /// the old values: rewritten once the whole copy has succeeded.
    large_lists: Vec<&'h ListObj<'h>>,
    /// Bytes of the large blocks the copies hold: kept, as charged, but
    /// taking no room in the new arena.
    large_live: usize,
    heap: Heap<'h>,
    /// Old address to new address of every object copied but strings.
    moved: Forwarding<'c>,
    /// The strings copied, whose kept hash now says where (see
    /// [`FORWARDED`]): given their hashes back if the collection stops.
    forwarded_strs: BumpVec<'c, &'h StrObj<'h>>,
    /// Copied mutable objects whose contents are still (from the given
    /// position on) the old values: fixed depth first, so that this
    /// holds one entry per level of nesting, not one per object.
    work: BumpVec<'c, (Value<'h>, usize)>,
    /// The aggregates being copied after their parts, with the next part
    /// of each (see [`Copier::aggregate`]).
    parts: BumpVec<'c, (Value<'h>, usize)>,
    /// The arena of the bookkeeping (the table and the two stacks), given
    /// back when the collection ends.
    scratch: &'c Bump,
    /// Copied dicts with a key that hashes by address.
    rehash: Vec<&'h DictObj<'h>>,
    /// Bytes copied, counted as charged: into `to` and `tenure`.
    live: usize,
    /// Of `live`, the bytes copied into `tenure`.
    tenured: usize,
    objects: usize,
    /// Of `objects`, those copied into `to`, which the next collection
    /// copies again.
    containers: usize,
    visits: usize,
    /// Bytes the copy and its bookkeeping may take.
    room: usize,
    /// Why the collection stopped half way, once it has.
    stopped: Option<Stop>,
}

/// The bit of a string's kept hash that says the string was copied, the
/// rest being the copy's address: set in the old string during a
/// collection (a hash has bit 32 set and none above; an address is below
/// 2^63), read by the copier only, and undone ([`Copier::unforward_strs`])
/// when the collection stops, so that the program sees its strings as
/// they were. Strings are most of the objects a collection copies: this
/// spares them a lookup in the table (a cache miss in a large one).
const FORWARDED: u64 = 1 << 63;

/// The bit of a [`Copier::work`] position that marks a list whose storage
/// is a large block: it shares the block with the old list, so its values
/// are traced but not written until [`Copier::rewrite_large`].
const LARGE_ITEMS: usize = 1 << (usize::BITS - 1);

/// Values visited (each a copy, a lookup or an int passed over) between
/// two looks at the clock.
const CHECK_EVERY: usize = 4096;

/// A word-rounded size, as the heap charges text.
fn rounded(n: usize) -> usize {
    n.saturating_add(7) & !7
}

/// Whether `v` is copied only after its parts (an immutable object that
/// holds values).
fn is_aggregate(v: Value<'_>) -> bool {
    matches!(
        v,
        Value::Tuple(_)
            | Value::Function(_)
            | Value::BoundMethod(_)
            | Value::Elems(_)
            | Value::Iter(_)
    )
}

/// The `i`-th value an aggregate holds, if it has that many.
fn part<'h>(v: Value<'h>, i: usize) -> Option<Value<'h>> {
    match v {
        Value::Tuple(t) => t.items.get(i).copied(),
        Value::Elems(e) => match i {
            0 => Some(e.source),
            _ => e.items.get(i - 1).copied(),
        },
        Value::Function(f) => f
            .defaults
            .get(i)
            .copied()
            .or_else(|| f.freevars.get(i - f.defaults.len()).map(|c| Value::Cell(c))),
        Value::BoundMethod(m) => (i == 0).then_some(m.receiver),
        Value::Iter(it) => match it {
            IterObj::List { list, .. } => (i == 0).then_some(Value::List(list)),
            IterObj::Dict { dict, .. } => (i == 0).then_some(Value::Dict(dict)),
            IterObj::Tuple { items, .. } => items.get(i).copied(),
        },
        _ => None,
    }
}

/// The address of the object `v` refers to, for those that live in an
/// arena.
fn address(v: Value<'_>) -> Option<usize> {
    fn at<T>(r: &T) -> Option<usize> {
        Some(r as *const T as usize)
    }
    match v {
        Value::None
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Builtin(_)
        | Value::Module(_)
        | Value::Unbound => None,
        Value::BigInt(r) => at(r),
        Value::Str(r) => at(r),
        Value::Bytes(r) => at(r),
        Value::List(r) => at(r),
        Value::Tuple(r) => at(r),
        Value::Dict(r) => at(r),
        Value::Range(r) => at(r),
        Value::Function(r) => at(r),
        Value::BoundMethod(r) => at(r),
        Value::Namespace(r) => at(r),
        Value::Capability(r) => at(r),
        Value::Elems(r) => at(r),
        Value::Cell(r) => at(r),
        Value::Iter(r) => at(r),
    }
}

/// The same kind of value as `like`, referring to the object at `addr`
/// (a copy of the object `like` refers to).
///
/// # Safety
/// `addr` must be the address of a live object of `like`'s kind.
unsafe fn retag<'h>(like: Value<'h>, addr: usize) -> Value<'h> {
    // SAFETY: the caller's contract, for each kind.
    unsafe {
        match like {
            Value::BigInt(_) => Value::BigInt(&*(addr as *const BigIntObj<'h>)),
            Value::Str(_) => Value::Str(&*(addr as *const StrObj<'h>)),
            Value::Bytes(_) => Value::Bytes(&*(addr as *const BytesObj<'h>)),
            Value::List(_) => Value::List(&*(addr as *const ListObj<'h>)),
            Value::Tuple(_) => Value::Tuple(&*(addr as *const TupleObj<'h>)),
            Value::Dict(_) => Value::Dict(&*(addr as *const DictObj<'h>)),
            Value::Range(_) => Value::Range(&*(addr as *const RangeObj)),
            Value::Function(_) => Value::Function(&*(addr as *const FunctionObj<'h>)),
            Value::BoundMethod(_) => Value::BoundMethod(&*(addr as *const BoundMethodObj<'h>)),
            Value::Elems(_) => Value::Elems(&*(addr as *const ElemsObj<'h>)),
            Value::Cell(_) => Value::Cell(&*(addr as *const CellObj<'h>)),
            Value::Iter(_) => Value::Iter(&*(addr as *const IterObj<'h>)),
            other => other,
        }
    }
}

impl<'h> Copier<'h, '_> {
    /// Whether `addr` lies in the old arena.
    fn in_from(&self, addr: usize) -> bool {
        self.from.find(addr).is_some()
    }

    /// Whether `v` refers to an object of the old arena not yet copied.
    fn pending(&self, v: Value<'h>) -> bool {
        address(v).is_some_and(|a| self.in_from(a) && self.forwarded(v, a).is_none())
    }

    /// The value that replaces `v`: `v` itself when it refers to nothing
    /// in the old arena, else (the copy of) its object in the new one.
    fn value(&mut self, v: Value<'h>) -> Value<'h> {
        self.tick();
        let Some(addr) = address(v) else {
            return v;
        };
        if !self.in_from(addr) || self.stopped.is_some() {
            return v;
        }
        if let Some(new) = self.forwarded(v, addr) {
            // SAFETY: `new` is the copy of the object at `addr`, of its kind.
            return unsafe { retag(v, new) };
        }
        if is_aggregate(v) {
            self.aggregate(v)
        } else {
            let new = self.copy_one(v);
            self.copied(v, new);
            new
        }
    }

    /// Counts a value visited, and looks at the clock every
    /// [`CHECK_EVERY`] of them.
    #[inline]
    fn tick(&mut self) {
        self.visits += 1;
        if self.visits.is_multiple_of(CHECK_EVERY) {
            if let Err(e) = self.heap.budget.check_time() {
                self.stopped = Some(Stop::Failed(e));
            }
        }
    }

    /// Counts `n` values passed over without a copy or a lookup, looking
    /// at the clock as [`Copier::tick`] does.
    fn pass_over(&mut self, n: usize) {
        let before = self.visits / CHECK_EVERY;
        self.visits += n;
        if self.visits / CHECK_EVERY != before {
            if let Err(e) = self.heap.budget.check_time() {
                self.stopped = Some(Stop::Failed(e));
            }
        }
    }

    /// Whether a copy of the object `v` refers to still fits in the room
    /// of the collection, checked before it is made (one list's storage
    /// can be most of a heap); when not, the collection stops.
    fn fits(&mut self, v: Value<'h>) -> bool {
        let bytes = match v {
            // Storage in a large block is not copied.
            Value::List(l) if self.large.holds(l.items.borrow().as_ptr()) => size_of::<ListObj>(),
            _ => object_bytes(v),
        };
        let bookkeeping =
            self.bookkeeping() + self.moved.next_bytes() + self.forwarded_strs_next_bytes();
        let fits = self.live.saturating_add(bytes).saturating_add(bookkeeping) <= self.room;
        if !fits {
            self.stopped = Some(Stop::NoRoom);
        }
        fits
    }

    /// Bytes of the collection's bookkeeping: the tables of copied objects
    /// and the two stacks (twice their capacity: each kept what it
    /// outgrew).
    fn bookkeeping(&self) -> usize {
        let stacks = (self.work.capacity() + self.parts.capacity()) * size_of::<(Value, usize)>();
        self.moved.bytes + 2 * stacks + 2 * self.forwarded_strs.capacity() * size_of::<usize>()
    }

    /// Bytes the next string recorded in `forwarded_strs` may take: the
    /// room its vector grows by.
    fn forwarded_strs_next_bytes(&self) -> usize {
        let (len, cap) = (self.forwarded_strs.len(), self.forwarded_strs.capacity());
        if len == cap {
            cap.max(4) * size_of::<usize>()
        } else {
            0
        }
    }

    /// Where the object of the old arena that `v` (at `addr`) refers to
    /// was copied, if it was: a string says so itself (see
    /// [`FORWARDED`]), another object through the table.
    fn forwarded(&self, v: Value<'h>, addr: usize) -> Option<usize> {
        match v {
            Value::Str(s) => {
                let h = s.hash.get();
                (h & FORWARDED != 0).then_some((h & !FORWARDED) as usize)
            }
            _ => self.moved.get(addr),
        }
    }

    /// Records that the object `old` refers to was copied as `new` (a
    /// collection that has stopped records nothing: its copies are
    /// dropped).
    fn copied(&mut self, old: Value<'h>, new: Value<'h>) {
        if self.stopped.is_some() {
            return;
        }
        match (old, address(old), address(new)) {
            (Value::Str(s), _, Some(n)) => {
                s.hash.set(FORWARDED | n as u64);
                self.forwarded_strs.push(s);
            }
            (_, Some(o), Some(n)) => self.moved.insert(o, n),
            _ => {}
        }
        self.objects += 1;
        if !matches!(
            new,
            Value::Str(_) | Value::Bytes(_) | Value::BigInt(_) | Value::Range(_)
        ) {
            self.containers += 1;
        }
    }

    /// Copies the aggregate `root` after its parts, depth first with an
    /// explicit stack (aggregates nest without bound, and only through
    /// each other: a cycle always passes a mutable object, which is
    /// copied at once).
    fn aggregate(&mut self, root: Value<'h>) -> Value<'h> {
        let mut stack = std::mem::replace(&mut self.parts, BumpVec::new_in(self.scratch));
        stack.clear();
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            if let Some(p) = part(v, i) {
                top.1 += 1;
                self.tick();
                if self.stopped.is_some() {
                    break;
                }
                if is_aggregate(p) && self.pending(p) {
                    stack.push((p, 0));
                }
                continue;
            }
            stack.pop();
            let new = self.copy_one(v);
            if self.stopped.is_some() {
                break;
            }
            self.copied(v, new);
        }
        self.parts = stack;
        let addr = address(root).expect("an aggregate is an object");
        match self.moved.get(addr) {
            // SAFETY: the root was copied last, of its kind.
            Some(new) => unsafe { retag(root, new) },
            // The collection stopped before the root was copied.
            None => root,
        }
    }

    /// A copy in the new arena of a slice of values, each replaced by
    /// [`Copier::value`] of it; a slice outside the old arena is kept.
    fn slice(&mut self, items: &'h [Value<'h>]) -> &'h [Value<'h>] {
        if items.is_empty() || !self.in_from(items.as_ptr() as usize) {
            return items;
        }
        self.live += size_of_val(items);
        let out = self
            .to
            .alloc_layout(Layout::for_value(items))
            .cast::<Value<'h>>()
            .as_ptr();
        for (i, &v) in items.iter().enumerate() {
            let copy = self.value(v);
            if self.stopped.is_some() {
                // The copy is given up: nothing will read this block.
                return items;
            }
            // SAFETY: `out` has room for `items.len()` values.
            unsafe { out.add(i).write(copy) };
        }
        // SAFETY: all `items.len()` values were written; the new arena
        // becomes the space, which lives for `'h`.
        unsafe { std::slice::from_raw_parts(out, items.len()) }
    }

    /// Copies `len` bytes from `src` to `dst` a megabyte at a time,
    /// looking at the clock between pieces (a single list or string can
    /// be most of a heap: copying it, and faulting in its pages, can take
    /// longer than the deadline allows). Returns whether all were copied;
    /// when the clock stopped the collection, they were not.
    ///
    /// # Safety
    /// `src` must be valid for reads and `dst` for writes of `len` bytes,
    /// and the two must not overlap.
    unsafe fn copy_in_pieces(&mut self, src: *const u8, dst: *mut u8, len: usize) -> bool {
        const PIECE: usize = 1 << 20;
        let mut done = 0;
        while done < len {
            let n = (len - done).min(PIECE);
            // SAFETY: the caller's contract; `done + n <= len`.
            unsafe { std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), n) };
            done += n;
            if done < len {
                if let Err(e) = self.heap.budget.check_time() {
                    self.stopped = Some(Stop::Failed(e));
                    return false;
                }
            }
        }
        true
    }

    /// Moves `obj` into the new arena, counting `bytes`.
    fn put<T>(&mut self, obj: T, bytes: usize) -> &'h T {
        self.live += bytes;
        let r: &T = self.to.alloc(obj);
        // SAFETY: the new arena becomes the space, which lives for `'h`.
        unsafe { &*(r as *const T) }
    }

    /// Moves `obj`, which refers to nothing that moves, into the tenured
    /// arena, counting `bytes`.
    fn put_tenured<T>(&mut self, obj: T, bytes: usize) -> &'h T {
        self.live += bytes;
        self.tenured += bytes;
        let r: &T = self.tenure.alloc(obj);
        // SAFETY: the tenured arena becomes the space's, which lives for
        // `'h`.
        unsafe { &*(r as *const T) }
    }

    /// Bytes copied into the tenured arena, counted as charged, living
    /// for `'h`.
    fn bytes(&mut self, b: &'h [u8]) -> &'h [u8] {
        self.live += rounded(b.len());
        self.tenured += rounded(b.len());
        let out: &[u8] = self.tenure.alloc_slice_copy(b);
        // SAFETY: the tenured arena becomes the space's, which lives for
        // `'h`.
        unsafe { &*(out as *const [u8]) }
    }

    /// A copy of the object `v` refers to. Leaves are copied whole; a
    /// mutable object with its old contents (fixed by [`Copier::drain`]);
    /// an aggregate with its parts, which are copied already.
    fn copy_one(&mut self, v: Value<'h>) -> Value<'h> {
        if self.stopped.is_some() || !self.fits(v) {
            return v;
        }
        match v {
            Value::Str(s) => Value::Str(self.string(s)),
            Value::Bytes(b) => {
                let bytes = self.bytes(b.bytes);
                Value::Bytes(self.put_tenured(BytesObj { bytes }, size_of::<BytesObj>()))
            }
            Value::BigInt(b) => {
                self.live += b.digits.len() * 4;
                self.tenured += b.digits.len() * 4;
                let digits: &[u32] = self.tenure.alloc_slice_copy(b.digits);
                // SAFETY: the tenured arena becomes the space's, which
                // lives for `'h`.
                let digits = unsafe { &*(digits as *const [u32]) };
                Value::BigInt(self.put_tenured(
                    BigIntObj {
                        negative: b.negative,
                        digits,
                    },
                    size_of::<BigIntObj>(),
                ))
            }
            Value::Range(r) => Value::Range(self.put_tenured(
                RangeObj {
                    start: r.start,
                    stop: r.stop,
                    step: r.step,
                },
                size_of::<RangeObj>(),
            )),
            Value::List(l) => {
                let items = l.items.borrow();
                // The capacity is kept: a list being built goes on growing
                // by doubling, as it was charged.
                let cap = items.capacity();
                // Storage of its own (see `crate::large`) is kept where it
                // is, shared by the copy; its values are traced now and
                // rewritten once the copy has succeeded (`rewrite_large`).
                let shared = cap > 0 && self.large.reach(items.as_ptr());
                let vec = if shared {
                    self.large_live += cap * size_of::<Value>();
                    // SAFETY: the block holds the `len` values of room for
                    // `cap`; the old list is never used again once the
                    // copy succeeds, and if it does not, the copy is
                    // dropped unused (and no vector's drop frees a block).
                    unsafe {
                        BumpVec::from_raw_parts_in(
                            items.as_ptr() as *mut Value<'h>,
                            items.len(),
                            cap,
                            self.space,
                        )
                    }
                } else if cap == 0 {
                    BumpVec::new_in(self.space)
                } else {
                    self.live += cap * size_of::<Value>();
                    let storage = self
                        .to
                        .alloc_layout(Layout::array::<Value>(cap).expect("a list that exists fits"))
                        .cast::<Value<'h>>()
                        .as_ptr();
                    let (from, bytes) = (items.as_ptr().cast::<u8>(), size_of_val(&items[..]));
                    // SAFETY: the old storage holds the `len` values; the
                    // new block has room for them, apart from it.
                    if !unsafe { self.copy_in_pieces(from, storage.cast(), bytes) } {
                        return v;
                    }
                    // SAFETY: `storage` is a block of the new arena of room
                    // for `cap` values, its first `len` written above; it
                    // becomes the space's (the arena the vector then grows
                    // in) before the list is used again.
                    unsafe { BumpVec::from_raw_parts_in(storage, items.len(), cap, self.space) }
                };
                drop(items);
                let new = self.put(
                    ListObj {
                        items: RefCell::new(vec),
                        frozen: Cell::new(l.frozen.get()),
                        iterating: Cell::new(l.iterating.get()),
                    },
                    size_of::<ListObj>(),
                );
                if shared {
                    self.large_lists.push(new);
                }
                let from = if shared { LARGE_ITEMS } else { 0 };
                self.work.push((Value::List(new), from));
                Value::List(new)
            }
            Value::Dict(d) => {
                let (map, bytes) = d.map.borrow().relocated(self.to, self.heap);
                let new = self.put(
                    DictObj {
                        map: RefCell::new(map),
                        frozen: Cell::new(d.frozen.get()),
                        iterating: Cell::new(d.iterating.get()),
                    },
                    size_of::<DictObj>() + bytes,
                );
                self.work.push((Value::Dict(new), 0));
                Value::Dict(new)
            }
            Value::Cell(c) => {
                let new = self.put(
                    CellObj {
                        value: Cell::new(c.value.get()),
                    },
                    size_of::<CellObj>(),
                );
                self.work.push((Value::Cell(new), 0));
                Value::Cell(new)
            }
            Value::Tuple(t) => Value::Tuple(self.tuple(t.items)),
            Value::Elems(e) => {
                let source = self.value(e.source);
                let items = self.slice(e.items);
                Value::Elems(self.put(
                    ElemsObj {
                        source,
                        kind: e.kind,
                        items,
                    },
                    size_of::<ElemsObj>(),
                ))
            }
            Value::Function(f) => {
                let defaults = self.slice(f.defaults);
                let freevars =
                    if f.freevars.is_empty() || !self.in_from(f.freevars.as_ptr() as usize) {
                        f.freevars
                    } else {
                        self.live += size_of_val(f.freevars);
                        let out: &mut [&CellObj<'h>] = self.to.alloc_slice_copy(f.freevars);
                        for c in out.iter_mut() {
                            if let Value::Cell(n) = self.value(Value::Cell(c)) {
                                *c = n;
                            }
                        }
                        // SAFETY: the new arena becomes the space, which lives
                        // for `'h`.
                        unsafe { &*(out as *const [&'h CellObj<'h>]) }
                    };
                Value::Function(self.put(
                    FunctionObj {
                        code: f.code,
                        defaults,
                        freevars,
                    },
                    size_of::<FunctionObj>(),
                ))
            }
            Value::BoundMethod(m) => {
                let receiver = self.value(m.receiver);
                Value::BoundMethod(self.put(
                    BoundMethodObj {
                        receiver,
                        method: m.method,
                    },
                    size_of::<BoundMethodObj>(),
                ))
            }
            Value::Iter(it) => {
                let new = match it {
                    IterObj::List { list, index } => IterObj::List {
                        list: match self.value(Value::List(list)) {
                            Value::List(l) => l,
                            _ => list,
                        },
                        index: Cell::new(index.get()),
                    },
                    IterObj::Dict { dict, index } => IterObj::Dict {
                        dict: match self.value(Value::Dict(dict)) {
                            Value::Dict(d) => d,
                            _ => dict,
                        },
                        index: Cell::new(index.get()),
                    },
                    IterObj::Tuple { items, index } => IterObj::Tuple {
                        items: self.slice(items),
                        index: Cell::new(index.get()),
                    },
                };
                Value::Iter(self.put(new, size_of::<IterObj>()))
            }
            other => other,
        }
    }

    /// A copy of a string in the tenured arena, its text right after it
    /// (as [`Heap::str`] makes one), keeping its computed hash.
    fn string(&mut self, s: &'h StrObj<'h>) -> &'h StrObj<'h> {
        let len = s.text.len();
        self.live += rounded(len) + size_of::<StrObj>();
        self.tenured += rounded(len) + size_of::<StrObj>();
        let layout = StrObj::block_layout(len).expect("a string that exists fits a layout");
        let block = self.tenure.alloc_layout(layout).as_ptr();
        // SAFETY: `block` is a fresh allocation with room for the object
        // and `len` bytes after it, apart from the old text.
        let text = unsafe { block.add(size_of::<StrObj>()) };
        // SAFETY: as above.
        if !unsafe { self.copy_in_pieces(s.text.as_ptr(), text, len) } {
            // The copy is given up: the old string stands in.
            return s;
        }
        // SAFETY: the text is written before the object that refers to
        // it, and nothing is written after a reference is made. The
        // tenured arena becomes the space's, which lives for `'h`.
        unsafe {
            let obj = block.cast::<StrObj<'h>>();
            obj.write(StrObj {
                text: std::slice::from_raw_parts(text, len),
                hash: Cell::new(s.hash.get()),
            });
            &*obj
        }
    }

    /// A copy of a tuple whose items are copied already, the items right
    /// after the object (as [`Heap::tuple`] makes one).
    fn tuple(&mut self, items: &'h [Value<'h>]) -> &'h TupleObj<'h> {
        let n = items.len();
        self.live += size_of::<TupleObj>() + size_of_val(items);
        let layout = TupleObj::block_layout(n).expect("a tuple that exists fits a layout");
        let block = self.to.alloc_layout(layout).as_ptr();
        // SAFETY: `block` has room for the object and `n` values after it
        // (aligned: the object's size is a multiple of a value's
        // alignment); the items are written before the object that refers
        // to them. The new arena becomes the space, which lives for `'h`.
        unsafe {
            let data = block.add(size_of::<TupleObj>()).cast::<Value<'h>>();
            for (i, &v) in items.iter().enumerate() {
                data.add(i).write(self.value(v));
            }
            let obj = block.cast::<TupleObj<'h>>();
            obj.write(TupleObj {
                items: std::slice::from_raw_parts(data, n),
            });
            &*obj
        }
    }

    /// Gives the strings copied by a collection that stopped their hashes
    /// back (kept by their copies).
    fn unforward_strs(&mut self) {
        for s in self.forwarded_strs.drain(..) {
            let copy = (s.hash.get() & !FORWARDED) as *const StrObj<'h>;
            // SAFETY: a forwarded string's hash holds the address of its
            // copy, a string of the new or the tenured arena, which still
            // exist (they are dropped after this).
            s.hash.set(unsafe { (*copy).hash.get() });
        }
    }

    /// Rewrites the values of the lists whose storage is a large block
    /// (shared with the old lists) to their copies, once the whole copy
    /// has succeeded: every value of the old arena in them was traced by
    /// [`Copier::drain`], so its copy is in the table.
    fn rewrite_large(&mut self) {
        for l in std::mem::take(&mut self.large_lists) {
            for x in l.items.borrow_mut().iter_mut() {
                let Some(a) = address(*x) else { continue };
                if self.in_from(a) {
                    let new = self.forwarded(*x, a).expect("a traced value was copied");
                    // SAFETY: `new` is the copy of the object at `a`, of
                    // its kind.
                    *x = unsafe { retag(*x, new) };
                }
            }
        }
    }

    /// Fixes the contents of the copied mutable objects until none is left
    /// (fixing one may copy more), one value at a time, the newest object
    /// first.
    fn drain(&mut self) {
        while let Some(&mut (v, ref mut at)) = self.work.last_mut() {
            if self.stopped.is_some() {
                self.work.clear();
                return;
            }
            let i = *at;
            *at += 1;
            match v {
                Value::List(l) => {
                    // A list in a large block is only traced (see
                    // `LARGE_ITEMS`).
                    let raw = i;
                    let (i, shared) = (i & !LARGE_ITEMS, i & LARGE_ITEMS != 0);
                    // The values that refer to nothing in the old arena
                    // (numbers, tenured strings) stay as they are: passed
                    // over in one go, up to the next that is copied.
                    let (i, item) = {
                        let items = l.items.borrow();
                        let rest = items.get(i..).unwrap_or_default();
                        let skip = rest
                            .iter()
                            .position(|&x| address(x).is_some_and(|a| self.in_from(a)))
                            .unwrap_or(rest.len());
                        (i + skip, rest.get(skip).copied())
                    };
                    self.pass_over(i - (raw & !LARGE_ITEMS));
                    match item {
                        Some(x) => {
                            if let Some(top) = self.work.last_mut() {
                                top.1 = (i + 1) | (raw & LARGE_ITEMS);
                            }
                            let y = self.value(x);
                            if !shared {
                                l.items.borrow_mut()[i] = y;
                            }
                        }
                        None => {
                            self.work.pop();
                        }
                    }
                }
                Value::Dict(d) => {
                    let entry = d.map.borrow().entry_at(i);
                    match entry {
                        Some(Some((k, x))) => {
                            let (k, x) = (self.value(k), self.value(x));
                            d.map.borrow_mut().set_entry_at(i, k, x);
                        }
                        // A removed entry keeps nothing alive.
                        Some(None) => d.map.borrow_mut().clear_dead_at(i),
                        None => {
                            self.work.pop();
                            if d.map.borrow().has_identity_keys() {
                                self.rehash.push(d);
                            }
                        }
                    }
                }
                Value::Cell(c) => {
                    self.work.pop();
                    c.value.set(self.value(c.value.get()));
                }
                _ => {
                    self.work.pop();
                }
            }
        }
    }
}

/// The bytes a copy of the object `v` refers to takes, with what it owns
/// (a list's or dict's storage, a tuple's items, a string's text), as
/// the heap charges them.
fn object_bytes(v: Value<'_>) -> usize {
    let slice = |n: usize| n * size_of::<Value>();
    match v {
        Value::Str(s) => rounded(s.text.len()) + size_of::<StrObj>(),
        Value::Bytes(b) => rounded(b.bytes.len()) + size_of::<BytesObj>(),
        Value::BigInt(b) => b.digits.len() * 4 + size_of::<BigIntObj>(),
        Value::Range(_) => size_of::<RangeObj>(),
        Value::List(l) => slice(l.items.borrow().capacity()) + size_of::<ListObj>(),
        Value::Dict(d) => d.map.borrow().relocated_bytes() + size_of::<DictObj>(),
        Value::Tuple(t) => slice(t.items.len()) + size_of::<TupleObj>(),
        Value::Elems(e) => slice(e.items.len()) + size_of::<ElemsObj>(),
        Value::Function(f) => {
            slice(f.defaults.len()) + size_of_val(f.freevars) + size_of::<FunctionObj>()
        }
        Value::Iter(IterObj::Tuple { items, .. }) => slice(items.len()) + size_of::<IterObj>(),
        _ => 64,
    }
}

/// Under `gc-stress`, every other collection that could be put off is
/// made anyway, so that both ways are run often.
fn stress_copies() -> bool {
    thread_local! {
        static CHANCES: Cell<u64> = const { Cell::new(0) };
    }
    cfg!(feature = "gc-stress") && every_other(&CHANCES)
}

/// True on every second call counted by `turn` (the second, the fourth,
/// ...): the `gc-stress` feature's alternations.
fn every_other(turn: &'static std::thread::LocalKey<Cell<u64>>) -> bool {
    turn.with(|n| {
        let t = n.get();
        n.set(t + 1);
        t % 2 == 1
    })
}

/// What a [`mark`] found reachable.
struct Marked {
    /// Bytes of the objects, counted as the heap charges them.
    bytes: usize,
    /// Of `bytes`, those of objects that refer to nothing (strings,
    /// bytes, big ints, ranges), which a copy tenures.
    leaves: usize,
    /// The objects but those of `leaves` (the ones a copy enters in its
    /// table).
    objects: usize,
}

/// The chunks a collection copies (or a mark looks) out of: their
/// address ranges, sorted, and tables from each [`GRANULE`] of memory
/// near them to the chunk that covers it, so that finding an address's
/// chunk (done for every value a collection meets) is a load or two
/// instead of a binary search of the chunks.
///
/// The chunks lie in a few regions of the address space far apart (the
/// allocator's small blocks, the system's mappings for large ones): each
/// run of chunks within [`MAX_GRANULES`] of the first has a table of its
/// own, and a table spans at most about twice the granules its chunks
/// cover.
struct Chunks {
    ranges: Vec<(usize, usize)>,
    regions: Vec<Region>,
}

/// Granules of the memory from `base` (a granule number): per granule, 0
/// when no chunk covers it, else one more than the index of the chunk
/// that does, or [`Chunks::SHARED`] when several do.
struct Region {
    base: usize,
    /// The granules its chunks cover (some twice, when they share one).
    covered: usize,
    table: Vec<u32>,
}

/// Granules of 1 MiB: the arena's chunks are mostly 2 MiB and larger,
/// so a granule is mostly within one of them.
const GRANULE: u32 = 20;

/// The most granules a region's table spans (256 KiB of table, 64 GiB
/// of addresses).
const MAX_GRANULES: usize = 1 << 16;

impl Chunks {
    const SHARED: u32 = u32::MAX;

    fn new(mut ranges: Vec<(usize, usize)>) -> Chunks {
        ranges.sort_unstable();
        let mut regions: Vec<Region> = Vec::new();
        for (i, &(start, end)) in ranges.iter().enumerate() {
            let (first, last) = (start >> GRANULE, (end - 1) >> GRANULE);
            let granules = last - first + 1;
            // A region's table spans at most twice the granules its chunks
            // cover, and a little: the tables stay small however the
            // chunks are spread.
            let region = match regions.last_mut() {
                Some(r)
                    if last - r.base < MAX_GRANULES
                        && last - r.base < 2 * (r.covered + granules) + 1024 =>
                {
                    r
                }
                _ => {
                    regions.push(Region {
                        base: first,
                        covered: 0,
                        table: Vec::new(),
                    });
                    regions.last_mut().expect("just pushed")
                }
            };
            region.covered += granules;
            if region.table.len() <= last - region.base {
                region.table.resize(last - region.base + 1, 0);
            }
            for g in first..=last {
                let entry = &mut region.table[g - region.base];
                *entry = if *entry == 0 {
                    i as u32 + 1
                } else {
                    Self::SHARED
                };
            }
        }
        Chunks { ranges, regions }
    }

    /// The index in `ranges` of the chunk that holds `addr`, if any.
    #[inline]
    fn find(&self, addr: usize) -> Option<usize> {
        let g = addr >> GRANULE;
        let entry = self
            .regions
            .iter()
            .find_map(|r| r.table.get(g.wrapping_sub(r.base)))?;
        let i = match *entry {
            0 => return None,
            Self::SHARED => self
                .ranges
                .partition_point(|&(start, _)| start <= addr)
                .checked_sub(1)?,
            chunk => chunk as usize - 1,
        };
        let (start, end) = self.ranges[i];
        (start <= addr && addr < end).then_some(i)
    }
}

/// Finds the bytes of the objects of the space (`from`, its chunks,
/// sorted) that `roots` still reach, without copying or changing
/// anything: a bit per 8 bytes of the chunks, and an explicit stack.
/// It stops early, with what it found so far, once more than `limit`
/// bytes of containers or more than `mostly` bytes in all are found.
/// `None` when its bitmap would not fit in the budget's room for a
/// collection; fails when the deadline passes or the execution is
/// cancelled (it looks at the clock every [`CHECK_EVERY`] objects), and
/// then nothing has changed either.
fn mark<'h>(
    from: &Chunks,
    budget: &crate::budget::Budget,
    roots: &mut dyn Roots<'h>,
    limit: usize,
    mostly: usize,
) -> crate::error::Result<Option<Marked>> {
    let mut first = Vec::with_capacity(from.ranges.len());
    let mut words = 0;
    for &(start, end) in &from.ranges {
        first.push(words * 64);
        words += (end - start).div_ceil(8).div_ceil(64);
    }
    if words * 8 > budget.collection_room() {
        return Ok(None);
    }
    let mut m = Marking {
        from,
        first,
        bits: vec![0u64; words],
        stack: Vec::new(),
        found: Marked {
            bytes: 0,
            leaves: 0,
            objects: 0,
        },
    };
    let mut popped = 0usize;
    let mut failed = None;
    // Only what a copy copies again at the next collection counts against
    // `limit`: what it tenures is copied once.
    let over =
        |m: &Marking<'_, 'h>| m.found.bytes - m.found.leaves > limit || m.found.bytes > mostly;
    roots.each_root(&mut |root| {
        if failed.is_some() || over(&m) {
            return;
        }
        m.visit(*root);
        while let Some(v) = m.stack.pop() {
            if over(&m) {
                m.stack.clear();
                return;
            }
            popped += 1;
            if popped.is_multiple_of(CHECK_EVERY) {
                if let Err(e) = budget.check_time() {
                    failed = Some(e);
                    m.stack.clear();
                    return;
                }
            }
            match v {
                Value::List(l) => {
                    let items = l.items.borrow();
                    for &x in items.iter() {
                        m.visit(x);
                    }
                }
                Value::Dict(d) => {
                    let map = d.map.borrow();
                    for (k, x) in map.iter() {
                        m.visit(k);
                        m.visit(x);
                    }
                }
                Value::Cell(c) => m.visit(c.value.get()),
                _ if is_aggregate(v) => {
                    let mut i = 0;
                    while let Some(p) = part(v, i) {
                        m.visit(p);
                        i += 1;
                    }
                }
                _ => {}
            }
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(Some(m.found)),
    }
}

/// The state of a [`mark`]: a bit per 8 bytes of the chunks (`first`:
/// each chunk's first bit), the containers marked but not yet looked
/// into, and what was found so far.
struct Marking<'c, 'h> {
    from: &'c Chunks,
    first: Vec<usize>,
    bits: Vec<u64>,
    stack: Vec<Value<'h>>,
    found: Marked,
}

impl<'h> Marking<'_, 'h> {
    /// Marks the object `v` refers to, when it lies in the chunks and is
    /// not marked yet: counts its bytes, and stacks it when it refers to
    /// others.
    #[inline(always)]
    fn visit(&mut self, v: Value<'h>) {
        let Some(a) = address(v) else { return };
        let Some(i) = self.from.find(a) else { return };
        let bit = self.first[i] + (a - self.from.ranges[i].0) / 8;
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        if self.bits[word] & mask != 0 {
            return;
        }
        self.bits[word] |= mask;
        let bytes = object_bytes(v);
        self.found.bytes += bytes;
        if matches!(v, Value::List(_) | Value::Dict(_) | Value::Cell(_)) || is_aggregate(v) {
            self.found.objects += 1;
            self.stack.push(v);
        } else {
            // A string, bytes, big int or range refers to nothing.
            self.found.leaves += bytes;
        }
    }
}

/// Whether `v`, as a dict key, hashes by the address of an object
/// (itself, or an item of a tuple at any depth: walked without recursion).
pub(crate) fn hashes_by_address(v: Value<'_>) -> bool {
    let items = match v {
        Value::Function(_) | Value::BoundMethod(_) | Value::Cell(_) | Value::Iter(_) => {
            return true
        }
        Value::Tuple(t) => t.items,
        _ => return false,
    };
    let mut stack = items.to_vec();
    while let Some(v) = stack.pop() {
        match v {
            Value::Function(_) | Value::BoundMethod(_) | Value::Cell(_) | Value::Iter(_) => {
                return true
            }
            Value::Tuple(t) => stack.extend_from_slice(t.items),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Chunks::find` must answer: the chunk of `ranges` (sorted,
    /// disjoint) that holds `addr`, by a linear look.
    fn holder(ranges: &[(usize, usize)], addr: usize) -> Option<usize> {
        ranges
            .iter()
            .position(|&(start, end)| start <= addr && addr < end)
    }

    #[test]
    fn chunks_find_the_chunk_of_every_address_near_and_far() {
        const MIB: usize = 1 << 20;
        let far = 0x7f00_0000_0000;
        // Small chunks sharing granules, a chunk that ends where the next
        // begins, chunks of several MiB, gaps inside a granule, and a
        // second region too far away for one table.
        let ranges = vec![
            (far + 5 * MIB, far + 9 * MIB + 24),
            (0x2000_0000_0000 + 0x100, 0x2000_0000_0000 + 0x900),
            (0x2000_0000_0000 + 0x900, 0x2000_0000_0000 + 0x1000),
            (0x2000_0000_0000 + 0x4000, 0x2000_0000_0000 + 0x5000),
            (0x2000_0000_0000 + 3 * MIB - 8, 0x2000_0000_0000 + 5 * MIB),
            (far, far + 2 * MIB),
            (far + 2 * MIB + 64, far + 4 * MIB),
        ];
        let chunks = Chunks::new(ranges);
        assert!(chunks.regions.len() >= 2);
        let sorted = chunks.ranges.clone();
        let mut probes = vec![0, 8, usize::MAX, usize::MAX - 7, far - 1];
        for &(start, end) in &sorted {
            for a in [
                start - 8,
                start - 1,
                start,
                start + 8,
                end - 8,
                end - 1,
                end,
                end + 8,
            ] {
                probes.push(a);
            }
            probes.push(start + (end - start) / 2);
        }
        for g in 0..12 {
            probes.push(far + g * MIB + 16);
            probes.push(0x2000_0000_0000 + g * MIB + 16);
        }
        for a in probes {
            assert_eq!(chunks.find(a), holder(&sorted, a), "address {a:#x}");
        }
        // Small chunks gigabytes apart (within one table's reach): tables
        // of their own, not one spanning the gaps.
        let spread: Vec<(usize, usize)> = (0..3)
            .map(|i| {
                (
                    0x1000_0000_0000 + i * (10 << 30),
                    0x1000_0000_0000 + i * (10 << 30) + 4096,
                )
            })
            .collect();
        let chunks = Chunks::new(spread.clone());
        let entries: usize = chunks.regions.iter().map(|r| r.table.len()).sum();
        assert!(entries <= 3, "{entries} entries");
        for &(start, end) in &spread {
            for a in [start - 1, start, end - 1, end] {
                assert_eq!(chunks.find(a), holder(&spread, a), "address {a:#x}");
            }
        }
        let empty = Chunks::new(Vec::new());
        assert_eq!(empty.find(0x1000), None);
    }

    /// Roots held in a vector.
    struct Held<'h>(Vec<Value<'h>>);

    impl<'h> Roots<'h> for Held<'h> {
        fn each_root(&mut self, visit: &mut dyn FnMut(&mut Value<'h>)) {
            for v in &mut self.0 {
                visit(v);
            }
        }
    }

    #[test]
    fn a_mark_finds_all_that_is_reachable_or_stops_once_past_its_bounds() {
        let bump = Bump::new();
        let budget = crate::budget::Budget::new(
            crate::budget::Limits::default(),
            std::time::Instant::now(),
            None,
        );
        let heap = Heap::new(&bump, &budget);
        // 200 lists of a string and a list each, all reachable; garbage
        // between them.
        let mut rows = Vec::new();
        for i in 0..200 {
            let name = heap.str(&format!("row-{i}")).expect("a string");
            heap.str("garbage, never reachable").expect("a string");
            let inner = heap.list(&[Value::Int(i)]).expect("a list");
            rows.push(heap.list(&[name, inner]).expect("a list"));
        }
        let row_bytes = object_bytes(rows[0]);
        let inner_bytes = {
            let Value::List(l) = rows[0] else {
                unreachable!()
            };
            object_bytes(l.items.borrow()[1])
        };
        let name_bytes = {
            let Value::List(l) = rows[0] else {
                unreachable!()
            };
            object_bytes(l.items.borrow()[0])
        };
        let all = 200 * (row_bytes + inner_bytes + name_bytes);
        // SAFETY: nothing allocates in the arena while its chunks are listed.
        let from = Chunks::new(
            unsafe { bump.iter_allocated_chunks_raw() }
                .map(|(p, l)| (p as usize, p as usize + l))
                .collect(),
        );
        let mut roots = Held(rows);
        let found = mark(&from, &budget, &mut roots, usize::MAX, usize::MAX)
            .expect("in time")
            .expect("room");
        assert_eq!(found.bytes, all);
        assert_eq!(found.leaves, 200 * name_bytes);
        assert_eq!(found.objects, 400);
        // Past `mostly` bytes in all, it stops: at most the objects one
        // container's visit adds beyond the bound.
        let mostly = all / 2;
        let part = mark(&from, &budget, &mut roots, usize::MAX, mostly)
            .expect("in time")
            .expect("room");
        assert!(part.bytes > mostly, "{} of {all}", part.bytes);
        assert!(
            part.bytes <= mostly + row_bytes + inner_bytes + name_bytes,
            "{} of {all}",
            part.bytes
        );
        // Past `limit` bytes of containers, likewise.
        let limit = 10 * row_bytes;
        let part = mark(&from, &budget, &mut roots, limit, usize::MAX)
            .expect("in time")
            .expect("room");
        assert!(part.bytes - part.leaves > limit);
        assert!(part.bytes - part.leaves <= limit + row_bytes + inner_bytes);
    }

    #[test]
    fn an_arena_copied_out_of_is_kept_emptied_when_small_and_given_back_on_release() {
        let space = Space::new(Bump::new());
        // Two chunks: the spare keeps the newest, the larger, emptied.
        let old = Bump::with_capacity(64 << 10);
        for _ in 0..300 {
            old.alloc([7u64; 64]);
        }
        // SAFETY: nothing allocates in `old` while its chunks are listed.
        let chunks = unsafe { old.iter_allocated_chunks_raw() }.count();
        assert!(chunks >= 2, "{chunks} chunks");
        // SAFETY: as above.
        let newest = unsafe { old.iter_allocated_chunks_raw() }
            .next()
            .map(|(p, l)| (p as usize, l))
            .expect("a chunk");
        keep_spare(&space, old);
        let spare = space.spare.take().expect("kept");
        assert_eq!(spare.touched, newest);
        // SAFETY: nothing allocates in the spare while it is listed.
        assert_eq!(unsafe { spare.bump.iter_allocated_chunks_raw() }.count(), 1);
        // It takes allocations again, from the end of the part that was
        // touched (bumpalo fills a chunk downwards): so `touched`, which
        // a release gives back, is the chunk it kept, not a freed one.
        let x = spare.bump.alloc(5u64);
        assert_eq!(*x, 5);
        let at = x as *const u64 as usize;
        assert!(
            (spare.touched.0..spare.touched.0 + spare.touched.1).contains(&at),
            "{at:#x} outside {:?}",
            spare.touched
        );
        space.spare.set(Some(spare));
        space.release_spare();
        assert!(space.spare.take().is_none());

        // An arena of more than SPARE_MAX bytes of chunks is given back.
        let big = Bump::with_capacity(SPARE_MAX + (64 << 10));
        big.alloc(1u8);
        keep_spare(&space, big);
        assert!(space.spare.take().is_none());
    }
}
