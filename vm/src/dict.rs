//! The insertion-ordered hash table behind dicts.
//!
//! Entries are kept in insertion order in an arena vector; removal leaves a
//! dead entry that iteration skips and that a rebuild squeezes out. Small
//! tables are searched linearly (compare the cached hash first); larger
//! ones get an open-addressing index of entry positions. Keys are compared
//! with Starlark equality and hashed with [`crate::hash::hash_in`], so `1` and
//! `1.0` are the same key.

use crate::budget::Budget;
use crate::error::{Error, LimitKind, Result};
use crate::heap::Heap;
use crate::ops;
use crate::value::{StrObj, Value};
use std::alloc::Layout;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ptr::NonNull;

/// Tables up to this many entries have no index.
const LINEAR_MAX: usize = 8;
const EMPTY: u32 = u32::MAX;
/// Estimated nanoseconds per entry and per index slot of a pass over the
/// whole table (an optimized build).
const PASS_NS_PER_SLOT: u128 = 4;

// `Heap::dict` places the entries right after the dict object.
const _: () =
    assert!(std::mem::align_of::<Entry>() <= std::mem::align_of::<crate::value::DictObj>());

#[derive(Clone, Copy)]
struct Entry<'h> {
    key: Value<'h>,
    value: Value<'h>,
    hash: u32,
    live: bool,
}

/// Starlark equality of two keys, with the common kinds (ints, strings)
/// compared in place; the work of comparing long tuples is charged to
/// `budget`.
#[inline]
fn key_eq<'h>(budget: &Budget, a: Value<'h>, b: Value<'h>) -> Result<bool> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x == y),
        (Value::Str(x), Value::Str(y)) => Ok(x.same_text(y)),
        _ => ops::equals_in(budget, a, b),
    }
}

/// Whether entry key `e` equals the int `i`: an int of the same value, or
/// a float or big int equal to it (`1 == 1.0`); no other kind equals an
/// int.
#[inline(always)]
fn int_key_eq(budget: &Budget, e: Value<'_>, i: i64) -> bool {
    match e {
        Value::Int(j) => i == j,
        // Comparing two numbers cannot fail.
        Value::Float(_) | Value::BigInt(_) => {
            ops::equals_in(budget, e, Value::Int(i)).unwrap_or(false)
        }
        _ => false,
    }
}

/// An insertion-ordered map from hashable values to values.
///
/// 48 bytes, so that a [`crate::value::DictObj`] is 64, one cache line:
/// the entries and the index are arena blocks held by pointer with `u32`
/// lengths (entry positions are `u32` in the index anyway), not vectors
/// that each keep a reference to the arena. A program that touches many
/// records loads each dict's header once per lookup, and the header's
/// size is much of what it waits for.
pub struct DictMap<'h> {
    /// The arena and budget it grows through (a [`Heap`]'s, kept as its
    /// two words: a dict object is one cache line).
    bump: &'h bumpalo::Bump,
    budget: &'h crate::budget::Budget,
    /// `len` entries in a block of room for `cap` (dangling while `cap`
    /// is 0).
    entries: NonNull<Entry<'h>>,
    /// Positions into the entries (`index_len` slots, a power of two), or
    /// none (`index_len` 0, dangling) while the table is small.
    index: NonNull<u32>,
    len: u32,
    cap: u32,
    live: u32,
    index_len: u32,
    _arena: PhantomData<&'h mut [Entry<'h>]>,
}

impl<'h> DictMap<'h> {
    /// The heap the map grows through.
    #[inline]
    fn heap(&self) -> Heap<'h> {
        Heap::new(self.bump, self.budget)
    }

    pub fn with_capacity(heap: Heap<'h>, n: usize) -> Result<DictMap<'h>> {
        heap.charge(Self::entries_bytes(n))?;
        Ok(Self::with_capacity_charged(heap, n))
    }

    /// The bytes [`DictMap::with_capacity`] charges for `n` entries.
    #[inline]
    pub fn entries_bytes(n: usize) -> usize {
        n.saturating_mul(size_of::<Entry>())
    }

    /// [`DictMap::with_capacity`] whose [`DictMap::entries_bytes`] are
    /// already charged.
    #[inline]
    pub fn with_capacity_charged(heap: Heap<'h>, n: usize) -> DictMap<'h> {
        // A charged capacity is far below `u32::MAX` entries (40 bytes
        // each) under any heap limit a machine could back.
        let entries = if n == 0 {
            NonNull::dangling()
        } else {
            heap.bump
                .alloc_layout(Layout::array::<Entry>(n).expect("a charged table fits a layout"))
                .cast()
        };
        // SAFETY: `entries` is a fresh block of room for `n` entries.
        unsafe { Self::over(heap, entries, n) }
    }

    /// An empty map whose entries go in `entries`, a block of room for
    /// `cap` of them that the map owns from now on (or dangling, with
    /// `cap` 0): [`Heap::dict`] places it right after the dict's header.
    ///
    /// # Safety
    /// `entries` must be valid for writes of `cap` entries for `'h`, and
    /// used by nothing else.
    #[inline]
    pub(crate) unsafe fn over(heap: Heap<'h>, entries: NonNull<u8>, cap: usize) -> DictMap<'h> {
        DictMap {
            bump: heap.bump,
            budget: heap.budget,
            entries: entries.cast(),
            index: NonNull::dangling(),
            len: 0,
            cap: u32::try_from(cap).unwrap_or(u32::MAX),
            live: 0,
            index_len: 0,
            _arena: PhantomData,
        }
    }

    /// The entries, live and dead, in insertion order.
    #[inline(always)]
    fn entries(&self) -> &[Entry<'h>] {
        // SAFETY: the first `len` entries of the block are written.
        unsafe { std::slice::from_raw_parts(self.entries.as_ptr(), self.len as usize) }
    }

    #[inline(always)]
    fn entries_mut(&mut self) -> &mut [Entry<'h>] {
        // SAFETY: as in `entries`; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.entries.as_ptr(), self.len as usize) }
    }

    /// The index slots (empty while the table is small).
    #[inline(always)]
    fn index(&self) -> &[u32] {
        // SAFETY: the index block holds `index_len` written slots.
        unsafe { std::slice::from_raw_parts(self.index.as_ptr(), self.index_len as usize) }
    }

    #[inline(always)]
    fn index_mut(&mut self) -> &mut [u32] {
        // SAFETY: as in `index`; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.index.as_ptr(), self.index_len as usize) }
    }

    /// Appends `e` to the entries, which have room for it.
    #[inline(always)]
    fn push_entry(&mut self, e: Entry<'h>) {
        debug_assert!(self.len < self.cap);
        // SAFETY: `len < cap`, so the slot is inside the block.
        unsafe { self.entries.as_ptr().add(self.len as usize).write(e) };
        self.len += 1;
    }

    /// A block of `n` arena slots of `T`, uncharged (the caller charges).
    fn block<T>(&self, n: usize) -> Result<NonNull<T>> {
        // Past `u32::MAX` positions the index could not name an entry.
        if n >= EMPTY as usize {
            return Err(Error::limit(LimitKind::HeapBytes));
        }
        let layout = Layout::array::<T>(n).map_err(|_| Error::limit(LimitKind::HeapBytes))?;
        Ok(self.heap().bump.alloc_layout(layout).cast())
    }

    pub fn len(&self) -> usize {
        self.live as usize
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The position of the live entry with hash `hash` whose key `eq`
    /// accepts: a scan of a small table, a probe of the index otherwise.
    #[inline(always)]
    fn probe(&self, hash: u32, eq: impl Fn(Value<'h>) -> bool) -> Option<usize> {
        if self.index_len == 0 {
            for (i, e) in self.entries().iter().enumerate() {
                if e.hash == hash && e.live && eq(e.key) {
                    return Some(i);
                }
            }
            return None;
        }
        let mask = self.index_len as usize - 1;
        let mut slot = hash as usize & mask;
        loop {
            let pos = self.index()[slot];
            if pos == EMPTY {
                return None;
            }
            let e = &self.entries()[pos as usize];
            if e.live && e.hash == hash && eq(e.key) {
                return Some(pos as usize);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Position of `key`, whose hash is `hash`, in `entries`: ints and
    /// strings in place, other keys out of line.
    #[inline(always)]
    fn find(&self, key: Value<'h>, hash: u32) -> Result<Option<usize>> {
        let budget = self.heap().budget;
        match key {
            Value::Str(k) => {
                if k.text.len() > 64 {
                    // At most one full comparison (equal hashes, equal
                    // lengths) per lookup, in practice.
                    budget.charge_bytes(k.text.len())?;
                }
                Ok(self.probe(hash, |e| matches!(e, Value::Str(s) if s.same_text(k))))
            }
            Value::Int(i) => Ok(self.probe(hash, |e| int_key_eq(budget, e, i))),
            _ => self.find_other(key, hash),
        }
    }

    /// [`DictMap::find`] of a key other than an int or a string.
    #[inline(never)]
    fn find_other(&self, key: Value<'h>, hash: u32) -> Result<Option<usize>> {
        if self.index_len == 0 {
            for (i, e) in self.entries().iter().enumerate() {
                if e.live && e.hash == hash && key_eq(self.heap().budget, e.key, key)? {
                    return Ok(Some(i));
                }
            }
            return Ok(None);
        }
        let mask = self.index_len as usize - 1;
        let mut slot = hash as usize & mask;
        loop {
            let pos = self.index()[slot];
            if pos == EMPTY {
                return Ok(None);
            }
            let e = &self.entries()[pos as usize];
            if e.live && e.hash == hash && key_eq(self.heap().budget, e.key, key)? {
                return Ok(Some(pos as usize));
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The entry of the string key `k`, when `k` is hashed already (a
    /// constant, a key read from a dict) and short (a comparison is then
    /// never charged): the common case of `d["name"]`, kept small enough
    /// to inline into the dispatch loops. `None` when the key is absent or
    /// not such a key — [`DictMap::position`] decides those.
    #[inline(always)]
    fn entry_of_hashed_str(&self, k: &StrObj<'h>) -> Option<usize> {
        let h = k.hash.get();
        if h == 0 || k.text.len() > 64 {
            return None;
        }
        let hash = h as u32;
        let hit = |e: &Entry<'h>| {
            e.hash == hash
                && e.live
                && matches!(e.key, Value::Str(s) if std::ptr::eq(s, k) || s.same_text(k))
        };
        if self.index_len == 0 {
            // A loop of its own: `Iterator::position` is not inlined into
            // the dispatch loops.
            let mut i = 0;
            while i < self.entries().len() {
                if hit(&self.entries()[i]) {
                    return Some(i);
                }
                i += 1;
            }
            return None;
        }
        let mask = self.index_len as usize - 1;
        let mut slot = hash as usize & mask;
        loop {
            let pos = *self.index().get(slot)?;
            let e = self.entries().get(pos as usize)?;
            if hit(e) {
                return Some(pos as usize);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// [`DictMap::entry_of_hashed_str`] that first looks at the entry
    /// position `hint` names, where the key was found at this point of the
    /// program before (records built alike hold their keys in one order),
    /// and notes the position found otherwise. The hint is a guess: the
    /// entry there is used only when it is live and its key is `k` itself
    /// (the module's one object for a literal) or a string of its text.
    #[inline(always)]
    fn entry_of_str_hinted(&self, k: &StrObj<'h>, hint: &Cell<u32>) -> Option<usize> {
        let at = hint.get() as usize;
        if let Some(e) = self.entries().get(at) {
            if e.live
                && matches!(e.key, Value::Str(s) if std::ptr::eq(s, k)
                    || (e.hash == k.hash.get() as u32 && s.same_text(k)))
            {
                return Some(at);
            }
        }
        let i = self.entry_of_hashed_str(k)?;
        hint.set(i as u32);
        Some(i)
    }

    /// The value of the string key `k` (see
    /// [`DictMap::entry_of_str_hinted`]; `None` leaves the lookup to
    /// [`DictMap::get`]).
    #[inline(always)]
    pub fn get_str_hinted(&self, k: &StrObj<'h>, hint: &Cell<u32>) -> Option<&Value<'h>> {
        let i = self.entry_of_str_hinted(k, hint)?;
        // SAFETY: a position found is that of an entry (below `len`).
        Some(unsafe { &self.entries().get_unchecked(i).value })
    }

    /// The value of the string key `k` (see
    /// [`DictMap::entry_of_hashed_str`]; `None` leaves the lookup to
    /// [`DictMap::get`]).
    #[inline(always)]
    pub fn get_hashed_str(&self, k: &StrObj<'h>) -> Option<&Value<'h>> {
        let i = self.entry_of_hashed_str(k)?;
        Some(&self.entries()[i].value)
    }

    /// Sets the value of the string key `k` when it is present, found by
    /// [`DictMap::entry_of_str_hinted`] with `hint`, or else by
    /// [`DictMap::entry_of_hashed_str`]; `false` leaves the store to
    /// [`DictMap::insert`].
    #[inline(always)]
    pub fn set_present_str(
        &mut self,
        k: &StrObj<'h>,
        value: Value<'h>,
        hint: Option<&Cell<u32>>,
    ) -> bool {
        let at = match hint {
            Some(hint) => self.entry_of_str_hinted(k, hint),
            None => self.entry_of_hashed_str(k),
        };
        match at {
            Some(i) => {
                // SAFETY: a position found is that of an entry (below
                // `len`).
                unsafe { self.entries_mut().get_unchecked_mut(i).value = value };
                true
            }
            None => false,
        }
    }

    /// The value for `key`. Fails if `key` is unhashable.
    #[inline(always)]
    pub fn get(&self, key: Value<'h>) -> Result<Option<Value<'h>>> {
        Ok(self.position(key)?.map(|i| self.entries()[i].value))
    }

    /// Whether `key` is present, when it is an int or a short string (see
    /// [`DictMap::entry_of_hashed_str`]; a string not yet hashed is hashed
    /// first, which a lookup of it would do anyway), found in place for
    /// the dispatch loops; `None` leaves it to [`DictMap::contains`].
    #[inline(always)]
    pub fn contains_in_place(&self, key: Value<'h>) -> Option<bool> {
        match key {
            Value::Str(k) if k.text.len() <= 64 => {
                if k.hash.get() == 0 {
                    crate::hash::hash_in(self.heap().budget, key).ok()?;
                }
                Some(self.entry_of_hashed_str(k).is_some())
            }
            Value::Int(i) => {
                let budget = self.heap().budget;
                let hash = crate::hash::hash_i64(i);
                Some(self.probe(hash, |e| int_key_eq(budget, e, i)).is_some())
            }
            _ => None,
        }
    }

    /// Whether `key` is present. Fails if `key` is unhashable.
    #[inline(always)]
    pub fn contains(&self, key: Value<'h>) -> Result<bool> {
        Ok(self.position(key)?.is_some())
    }

    /// The entry position of `key`. A string key in a table small enough
    /// to be scanned is found by its text alone, without hashing it (a
    /// string equals only a string of the same text, and comparing a few
    /// short texts costs less than the hash); any other lookup hashes the
    /// key, which fails if it is unhashable.
    #[inline(always)]
    fn position(&self, key: Value<'h>) -> Result<Option<usize>> {
        match key {
            Value::Str(k) if self.index_len == 0 => {
                if k.hash.get() != 0 {
                    // Hashed already (a constant, a key read from a dict):
                    // the kept hashes rule out the other entries.
                    return self.find(key, k.hash.get() as u32);
                }
                if k.text.len() > 64 {
                    // At most one full comparison per entry of equal length.
                    self.heap().budget.charge_bytes(k.text.len())?;
                }
                for (i, e) in self.entries().iter().enumerate() {
                    if matches!(e.key, Value::Str(s) if e.live && s.same_text(k)) {
                        return Ok(Some(i));
                    }
                }
                Ok(None)
            }
            Value::Str(k) => match k.hash.get() {
                0 => self.position_hashing(key),
                h => self.find(key, h as u32),
            },
            Value::Int(i) => self.find(key, crate::hash::hash_i64(i)),
            _ => self.position_hashing(key),
        }
    }

    /// [`DictMap::position`] of a key to be hashed first.
    #[inline(never)]
    fn position_hashing(&self, key: Value<'h>) -> Result<Option<usize>> {
        self.find(key, crate::hash::hash_in(self.heap().budget, key)?)
    }

    /// Sets `key` to `value`; a new key goes last. Returns whether the key
    /// was new.
    pub fn insert(&mut self, key: Value<'h>, value: Value<'h>) -> Result<bool> {
        let hash = crate::hash::hash_in(self.heap().budget, key)?;
        if let Some(i) = self.find(key, hash)? {
            self.entries_mut()[i].value = value;
            return Ok(false);
        }
        self.push(key, value, hash)?;
        Ok(true)
    }

    /// Adds the string key `k`, known not to be present and hashed
    /// already, last, when the table is small and has room: the entries of
    /// a dict display of literal keys (`{"id": ..., "name": ...}`), kept
    /// small enough to inline into the dispatch loops. `false` leaves it
    /// to [`DictMap::push_new`].
    #[inline(always)]
    pub fn push_new_hashed_str(&mut self, k: &'h StrObj<'h>, value: Value<'h>) -> bool {
        let h = k.hash.get();
        let n = self.len as usize;
        if h == 0 || n == self.cap as usize || n >= LINEAR_MAX {
            return false;
        }
        self.push_entry(Entry {
            key: Value::Str(k),
            value,
            hash: h as u32,
            live: true,
        });
        self.live += 1;
        true
    }

    /// Fills an empty map with room for them with the distinct `keys`
    /// (at most [`LINEAR_MAX`], so no index), whose hashes are `hashes`,
    /// and `values`, as many: a record display's entries written in one
    /// pass, as adding each in turn would write them.
    #[inline(always)]
    pub fn fill_distinct(
        &mut self,
        keys: &[Value<'h>],
        hashes: &[u32],
        values: impl Iterator<Item = Value<'h>>,
    ) -> Result<()> {
        let n = keys.len();
        if self.len != 0 || n > self.cap as usize || n > LINEAR_MAX || hashes.len() != n {
            return Err(Error::msg("internal error: record table"));
        }
        let mut at = self.entries.as_ptr();
        for ((&key, &hash), value) in keys.iter().zip(hashes).zip(values) {
            // SAFETY: at most `n <= cap` slots are written, all inside the
            // block.
            unsafe {
                at.write(Entry {
                    key,
                    value,
                    hash,
                    live: true,
                });
                at = at.add(1);
            }
        }
        self.len = n as u32;
        self.live = n as u32;
        Ok(())
    }

    /// Adds `key`, known not to be present, last.
    pub fn push_new(&mut self, key: Value<'h>, value: Value<'h>) -> Result<()> {
        let hash = crate::hash::hash_in(self.heap().budget, key)?;
        debug_assert!(self.find(key, hash)?.is_none(), "the key is new");
        self.push(key, value, hash)
    }

    /// Adds an entry for a key not present.
    #[inline(always)]
    fn push(&mut self, key: Value<'h>, value: Value<'h>, hash: u32) -> Result<()> {
        if self.len == self.cap {
            // The whole new block is charged: the arena keeps the old one
            // when it cannot grow it in place.
            let extra = (self.cap as usize).max(4);
            let new_cap = (self.cap as usize).saturating_add(extra);
            self.heap()
                .charge(new_cap.saturating_mul(size_of::<Entry>()))?;
            let block = self.block::<Entry>(new_cap)?;
            // SAFETY: the new block has room for `new_cap > len` entries
            // and is distinct from the old one, whose `len` are written.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.entries.as_ptr(),
                    block.as_ptr(),
                    self.len as usize,
                )
            };
            self.entries = block;
            self.cap = new_cap as u32;
        }
        let pos = self.len as usize;
        self.push_entry(Entry {
            key,
            value,
            hash,
            live: true,
        });
        self.live += 1;
        if self.entries().len() > LINEAR_MAX {
            if self.entries().len() * 2 > self.index().len() {
                self.rebuild_index()?;
            } else {
                self.index_insert(pos, hash);
            }
        }
        Ok(())
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: Value<'h>) -> Result<Option<Value<'h>>> {
        let Some(i) = self.position(key)? else {
            return Ok(None);
        };
        let v = self.entries()[i].value;
        self.entries_mut()[i].live = false;
        self.live -= 1;
        let dead = (self.len - self.live) as usize;
        if dead > LINEAR_MAX && dead > self.live as usize {
            self.compact()?;
        }
        Ok(Some(v))
    }

    /// Removes and returns the first entry in insertion order. The dead
    /// entries skipped on the way (up to half the table) are charged as
    /// work.
    pub fn pop_first(&mut self) -> Result<Option<(Value<'h>, Value<'h>)>> {
        let Some(i) = self.entries().iter().position(|e| e.live) else {
            return Ok(None);
        };
        self.heap().budget.charge_work(i as u64)?;
        let e = self.entries()[i];
        self.remove(e.key)?;
        Ok(Some((e.key, e.value)))
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.index_len = 0;
        self.live = 0;
    }

    /// The `i`-th position of the entry vector, for iteration: `None` past
    /// the end, `Some(None)` for a dead entry.
    pub fn entry_at(&self, i: usize) -> Option<Option<(Value<'h>, Value<'h>)>> {
        self.entries()
            .get(i)
            .map(|e| if e.live { Some((e.key, e.value)) } else { None })
    }

    /// Live entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Value<'h>, Value<'h>)> + '_ {
        self.entries()
            .iter()
            .filter(|e| e.live)
            .map(|e| (e.key, e.value))
    }

    /// A copy of the table, whose values are then replaced one by one with
    /// [`DictMap::set_value_at`]: the keys' hashes and index are copied
    /// rather than computed. For rows of host data, which mostly repeat
    /// one set of keys.
    pub fn copy_keys(&self) -> Result<DictMap<'h>> {
        let n = self.len as usize;
        self.heap().charge(n.saturating_mul(size_of::<Entry>()))?;
        let mut map = DictMap::with_capacity_charged(self.heap(), n);
        // SAFETY: the new block has room for the `n` entries copied from
        // the old, a distinct block.
        unsafe { std::ptr::copy_nonoverlapping(self.entries.as_ptr(), map.entries.as_ptr(), n) };
        map.len = self.len;
        map.live = self.live;
        if self.index_len != 0 {
            let slots = self.index_len as usize;
            self.heap().charge(slots.saturating_mul(size_of::<u32>()))?;
            let index = self.block::<u32>(slots)?;
            // SAFETY: as above, for the index slots.
            unsafe { std::ptr::copy_nonoverlapping(self.index.as_ptr(), index.as_ptr(), slots) };
            map.index = index;
            map.index_len = self.index_len;
        }
        Ok(map)
    }

    /// A copy of the table in `to` (an arena that becomes the space of
    /// `heap`, which the copy then grows through), with the same entries at
    /// the same positions (loop iterators and lookup hints hold positions)
    /// and the same index and capacity; and the bytes it takes, counted as
    /// charged. Its
    /// keys and values are still the old ones: the collector replaces them
    /// with [`DictMap::set_entry_at`].
    pub(crate) fn relocated(&self, to: &bumpalo::Bump, heap: Heap<'h>) -> (DictMap<'h>, usize) {
        let n = self.len as usize;
        let mut map = DictMap {
            bump: heap.bump,
            budget: heap.budget,
            entries: NonNull::dangling(),
            index: NonNull::dangling(),
            len: self.len,
            cap: self.cap,
            live: self.live,
            index_len: self.index_len,
            _arena: PhantomData,
        };
        let cap = self.cap as usize;
        if cap != 0 {
            // The capacity is kept: a dict being built goes on growing as
            // it was charged.
            let block = to
                .alloc_layout(Layout::array::<Entry>(cap).expect("a table that exists fits"))
                .cast::<Entry<'h>>();
            // SAFETY: the block has room for `cap >= len` entries; the
            // first `len` are copied from the old, distinct block.
            unsafe { std::ptr::copy_nonoverlapping(self.entries.as_ptr(), block.as_ptr(), n) };
            map.entries = block;
        }
        if self.index_len != 0 {
            map.index = NonNull::from(to.alloc_slice_copy(self.index())).cast();
        }
        (map, self.relocated_bytes())
    }

    /// The bytes [`DictMap::relocated`] takes.
    pub(crate) fn relocated_bytes(&self) -> usize {
        self.cap as usize * size_of::<Entry>() + self.index_len as usize * size_of::<u32>()
    }

    /// Sets the key and value of the live entry at position `i` (the
    /// collector's copies of them).
    pub(crate) fn set_entry_at(&mut self, i: usize, key: Value<'h>, value: Value<'h>) {
        let e = &mut self.entries_mut()[i];
        e.key = key;
        e.value = value;
    }

    /// Clears the key and value of the removed entry at position `i`, so
    /// that it keeps nothing alive.
    pub(crate) fn clear_dead_at(&mut self, i: usize) {
        let e = &mut self.entries_mut()[i];
        e.key = Value::None;
        e.value = Value::None;
    }

    /// Whether a live key hashes by an object's address (then
    /// [`DictMap::rehash_identities`] is due once the objects moved).
    pub(crate) fn has_identity_keys(&self) -> bool {
        self.entries()
            .iter()
            .any(|e| e.live && crate::gc::hashes_by_address(e.key))
    }

    /// Hashes again the keys that hash by an object's address (after the
    /// collector moved the objects) and rebuilds the index in place.
    pub(crate) fn rehash_identities(&mut self) {
        for e in self.entries_mut() {
            if e.live && crate::gc::hashes_by_address(e.key) {
                // A key in the table was hashable when it was put there,
                // and its hash needs no budget.
                e.hash = crate::hash::hash_again(e.key);
            }
        }
        if self.index_len != 0 {
            self.index_mut().fill(EMPTY);
            for i in 0..self.entries().len() {
                if self.entries()[i].live {
                    let hash = self.entries()[i].hash;
                    self.index_insert(i, hash);
                }
            }
        }
    }

    /// Sets the value at position `i` of the entry vector (insertion
    /// order, removed entries included: with none removed, the `i`-th
    /// key). The position must be in range.
    pub fn set_value_at(&mut self, i: usize, value: Value<'h>) {
        self.entries_mut()[i].value = value;
    }

    /// Whether every entry is live and its key is the string `keys`
    /// yields at its position (and `keys` yields no more).
    pub fn has_str_keys<'k>(&self, mut keys: impl ExactSizeIterator<Item = &'k str>) -> bool {
        self.live == self.len
            && keys.len() == self.live as usize
            && self.entries().iter().all(|e| match (e.key, keys.next()) {
                (Value::Str(k), Some(t)) => k.text == t.as_bytes(),
                _ => false,
            })
    }

    fn index_insert(&mut self, pos: usize, hash: u32) {
        let mask = self.index_len as usize - 1;
        let mut slot = hash as usize & mask;
        while self.index()[slot] != EMPTY {
            slot = (slot + 1) & mask;
        }
        self.index_mut()[slot] = pos as u32;
    }

    /// Admits one uninterruptible pass over `slots` entries and index
    /// slots (a rebuild of the index, a compaction) when it can end before
    /// the deadline; a small table's pass is too short to ask.
    fn admit_pass(&self, slots: usize) -> Result<()> {
        if slots < 1 << 16 {
            return Ok(());
        }
        self.heap()
            .budget
            .admit_pass(slots as u128 * PASS_NS_PER_SLOT)
    }

    /// Builds the index anew over the live entries, twice their number of
    /// slots (one uninterruptible pass: see [`DictMap::admit_pass`]).
    fn rebuild_index(&mut self) -> Result<()> {
        let size = (self.entries().len() * 2).next_power_of_two().max(16);
        self.admit_pass(self.entries().len() + size)?;
        self.heap().charge(size * size_of::<u32>())?;
        let index = self.block::<u32>(size)?;
        // SAFETY: the block has room for `size` slots, all written here.
        unsafe { std::slice::from_raw_parts_mut(index.as_ptr(), size).fill(EMPTY) };
        self.index = index;
        self.index_len = size as u32;
        for i in 0..self.entries().len() {
            if self.entries()[i].live {
                let hash = self.entries()[i].hash;
                self.index_insert(i, hash);
            }
        }
        Ok(())
    }

    /// Squeezes out the dead entries. One uninterruptible pass over the
    /// table: admitted only when it can end before the deadline.
    fn compact(&mut self) -> Result<()> {
        self.admit_pass(self.entries().len() + self.index().len())?;
        let mut kept = 0;
        for i in 0..self.len as usize {
            let e = self.entries()[i];
            if e.live {
                self.entries_mut()[kept] = e;
                kept += 1;
            }
        }
        self.len = kept as u32;
        if self.entries().len() > LINEAR_MAX {
            self.rebuild_index()
        } else {
            self.index_len = 0;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Budget, Limits};
    use bumpalo::Bump;
    use std::time::Instant;

    /// A hint is only a guess: out of range, naming another key, naming a
    /// removed entry, or stale after the table is rebuilt, it is checked
    /// and corrected; a key of the same text but another object is found
    /// at the hinted entry.
    #[test]
    fn hints_are_checked_before_use() {
        let bump = Bump::new();
        let budget = Budget::new(Limits::default(), Instant::now(), None);
        let heap = Heap::new(&bump, &budget);
        let key = |t: &'static str| -> &StrObj<'_> {
            let k = bump.alloc(StrObj::new(t.as_bytes()));
            crate::hash::hash_in(&budget, Value::Str(k)).unwrap();
            k
        };
        let (id, name, score) = (key("id"), key("name"), key("score"));
        let mut m = DictMap::with_capacity(heap, 4).unwrap();
        for (i, k) in [id, name, score].into_iter().enumerate() {
            m.insert(Value::Str(k), Value::Int(i as i64)).unwrap();
        }
        let get = |m: &DictMap<'_>, k, hint: &Cell<u32>| match m.get_str_hinted(k, hint) {
            Some(Value::Int(v)) => Some(*v),
            _ => None,
        };
        // Out of range, then right.
        let hint = Cell::new(7);
        assert_eq!(get(&m, score, &hint), Some(2));
        assert_eq!(hint.get(), 2);
        assert_eq!(get(&m, score, &hint), Some(2));
        // Naming another key.
        assert_eq!(get(&m, id, &hint), Some(0));
        assert_eq!(hint.get(), 0);
        // The same text in another object, at the hinted entry.
        let other_id = key("id");
        assert!(!std::ptr::eq(other_id, id));
        assert_eq!(get(&m, other_id, &hint), Some(0));
        // A removed entry: absent, and the hint does not resurrect it.
        m.remove(Value::Str(id)).unwrap();
        assert_eq!(get(&m, id, &hint), None);
        assert!(!m.set_present_str(id, Value::Int(9), Some(&hint)));
        // Re-added last; many more keys make the table indexed.
        m.insert(Value::Str(id), Value::Int(5)).unwrap();
        assert_eq!(get(&m, id, &hint), Some(5));
        assert_eq!(hint.get(), 3);
        for i in 0..20 {
            let k = bump.alloc(StrObj::new(format!("k{i}").into_bytes().leak()));
            m.insert(Value::Str(k), Value::Int(100 + i)).unwrap();
        }
        m.remove(Value::Str(name)).unwrap();
        assert_eq!(get(&m, id, &hint), Some(5));
        assert!(m.set_present_str(id, Value::Int(6), Some(&hint)));
        assert!(matches!(
            m.get(Value::Str(id)).unwrap(),
            Some(Value::Int(6))
        ));
        assert_eq!(get(&m, name, &Cell::new(1)), None);
    }
}
