//! The insertion-ordered hash table behind dicts.
//!
//! Entries are kept in insertion order in an arena vector; removal leaves a
//! dead entry that iteration skips and that a rebuild squeezes out. Small
//! tables are searched linearly (compare the cached hash first); larger
//! ones get an open-addressing index of entry positions. Keys are compared
//! with Starlark equality and hashed with [`crate::hash::hash_in`], so `1` and
//! `1.0` are the same key.

use crate::budget::Budget;
use crate::error::Result;
use crate::heap::Heap;
use crate::ops;
use crate::value::{StrObj, Value};
use bumpalo::collections::Vec as BumpVec;
use std::mem::size_of;

/// Tables up to this many entries have no index.
const LINEAR_MAX: usize = 8;
const EMPTY: u32 = u32::MAX;
/// Estimated nanoseconds per entry and per index slot of a pass over the
/// whole table (an optimized build).
const PASS_NS_PER_SLOT: u128 = 4;

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
pub struct DictMap<'h> {
    heap: Heap<'h>,
    entries: BumpVec<'h, Entry<'h>>,
    /// Positions into `entries` (power-of-two length), or empty while the
    /// table is small.
    index: BumpVec<'h, u32>,
    live: usize,
}

impl<'h> DictMap<'h> {
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
        DictMap {
            heap,
            entries: BumpVec::with_capacity_in(n, heap.bump),
            index: BumpVec::new_in(heap.bump),
            live: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The position of the live entry with hash `hash` whose key `eq`
    /// accepts: a scan of a small table, a probe of the index otherwise.
    #[inline(always)]
    fn probe(&self, hash: u32, eq: impl Fn(Value<'h>) -> bool) -> Option<usize> {
        if self.index.is_empty() {
            for (i, e) in self.entries.iter().enumerate() {
                if e.hash == hash && e.live && eq(e.key) {
                    return Some(i);
                }
            }
            return None;
        }
        let mask = self.index.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let pos = self.index[slot];
            if pos == EMPTY {
                return None;
            }
            let e = &self.entries[pos as usize];
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
        let budget = self.heap.budget;
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
        if self.index.is_empty() {
            for (i, e) in self.entries.iter().enumerate() {
                if e.live && e.hash == hash && key_eq(self.heap.budget, e.key, key)? {
                    return Ok(Some(i));
                }
            }
            return Ok(None);
        }
        let mask = self.index.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let pos = self.index[slot];
            if pos == EMPTY {
                return Ok(None);
            }
            let e = &self.entries[pos as usize];
            if e.live && e.hash == hash && key_eq(self.heap.budget, e.key, key)? {
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
        if self.index.is_empty() {
            // A loop of its own: `Iterator::position` is not inlined into
            // the dispatch loops.
            let mut i = 0;
            while i < self.entries.len() {
                if hit(&self.entries[i]) {
                    return Some(i);
                }
                i += 1;
            }
            return None;
        }
        let mask = self.index.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let pos = *self.index.get(slot)?;
            let e = self.entries.get(pos as usize)?;
            if hit(e) {
                return Some(pos as usize);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The value of the string key `k` (see
    /// [`DictMap::entry_of_hashed_str`]; `None` leaves the lookup to
    /// [`DictMap::get`]).
    #[inline(always)]
    pub fn get_hashed_str(&self, k: &StrObj<'h>) -> Option<&Value<'h>> {
        let i = self.entry_of_hashed_str(k)?;
        Some(&self.entries[i].value)
    }

    /// Sets the value of the string key `k` when it is present (see
    /// [`DictMap::entry_of_hashed_str`]); `false` leaves the store to
    /// [`DictMap::insert`].
    #[inline(always)]
    pub fn set_hashed_str(&mut self, k: &StrObj<'h>, value: Value<'h>) -> bool {
        match self.entry_of_hashed_str(k) {
            Some(i) => {
                self.entries[i].value = value;
                true
            }
            None => false,
        }
    }

    /// The value for `key`. Fails if `key` is unhashable.
    #[inline(always)]
    pub fn get(&self, key: Value<'h>) -> Result<Option<Value<'h>>> {
        Ok(self.position(key)?.map(|i| self.entries[i].value))
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
            Value::Str(k) if self.index.is_empty() => {
                if k.hash.get() != 0 {
                    // Hashed already (a constant, a key read from a dict):
                    // the kept hashes rule out the other entries.
                    return self.find(key, k.hash.get() as u32);
                }
                if k.text.len() > 64 {
                    // At most one full comparison per entry of equal length.
                    self.heap.budget.charge_bytes(k.text.len())?;
                }
                for (i, e) in self.entries.iter().enumerate() {
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
        self.find(key, crate::hash::hash_in(self.heap.budget, key)?)
    }

    /// Sets `key` to `value`; a new key goes last. Returns whether the key
    /// was new.
    pub fn insert(&mut self, key: Value<'h>, value: Value<'h>) -> Result<bool> {
        let hash = crate::hash::hash_in(self.heap.budget, key)?;
        if let Some(i) = self.find(key, hash)? {
            self.entries[i].value = value;
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
        let n = self.entries.len();
        if h == 0 || n == self.entries.capacity() || n >= LINEAR_MAX {
            return false;
        }
        self.entries.push(Entry {
            key: Value::Str(k),
            value,
            hash: h as u32,
            live: true,
        });
        self.live += 1;
        true
    }

    /// Adds `key`, known not to be present, last.
    pub fn push_new(&mut self, key: Value<'h>, value: Value<'h>) -> Result<()> {
        let hash = crate::hash::hash_in(self.heap.budget, key)?;
        debug_assert!(self.find(key, hash)?.is_none(), "the key is new");
        self.push(key, value, hash)
    }

    /// Adds an entry for a key not present.
    #[inline(always)]
    fn push(&mut self, key: Value<'h>, value: Value<'h>, hash: u32) -> Result<()> {
        if self.entries.len() == self.entries.capacity() {
            // The whole new block is charged: the arena keeps the old one
            // when it cannot grow it in place.
            let extra = self.entries.capacity().max(4);
            let new_cap = self.entries.capacity().saturating_add(extra);
            self.heap
                .charge(new_cap.saturating_mul(size_of::<Entry>()))?;
            self.entries.reserve_exact(extra);
        }
        let pos = self.entries.len();
        self.entries.push(Entry {
            key,
            value,
            hash,
            live: true,
        });
        self.live += 1;
        if self.entries.len() > LINEAR_MAX {
            if self.entries.len() * 2 > self.index.len() {
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
        let v = self.entries[i].value;
        self.entries[i].live = false;
        self.live -= 1;
        let dead = self.entries.len() - self.live;
        if dead > LINEAR_MAX && dead > self.live {
            self.compact()?;
        }
        Ok(Some(v))
    }

    /// Removes and returns the first entry in insertion order. The dead
    /// entries skipped on the way (up to half the table) are charged as
    /// work.
    pub fn pop_first(&mut self) -> Result<Option<(Value<'h>, Value<'h>)>> {
        let Some(i) = self.entries.iter().position(|e| e.live) else {
            return Ok(None);
        };
        self.heap.budget.charge_work(i as u64)?;
        let e = self.entries[i];
        self.remove(e.key)?;
        Ok(Some((e.key, e.value)))
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
        self.live = 0;
    }

    /// The `i`-th position of the entry vector, for iteration: `None` past
    /// the end, `Some(None)` for a dead entry.
    pub fn entry_at(&self, i: usize) -> Option<Option<(Value<'h>, Value<'h>)>> {
        self.entries
            .get(i)
            .map(|e| if e.live { Some((e.key, e.value)) } else { None })
    }

    /// Live entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Value<'h>, Value<'h>)> + '_ {
        self.entries
            .iter()
            .filter(|e| e.live)
            .map(|e| (e.key, e.value))
    }

    /// A copy of the table, whose values are then replaced one by one with
    /// [`DictMap::set_value_at`]: the keys' hashes and index are copied
    /// rather than computed. For rows of host data, which mostly repeat
    /// one set of keys.
    pub fn copy_keys(&self) -> Result<DictMap<'h>> {
        let n = self.entries.len();
        self.heap.charge(n.saturating_mul(size_of::<Entry>()))?;
        let mut entries = BumpVec::with_capacity_in(n, self.heap.bump);
        entries.extend_from_slice(&self.entries);
        let mut index = BumpVec::new_in(self.heap.bump);
        if !self.index.is_empty() {
            self.heap
                .charge(self.index.len().saturating_mul(size_of::<u32>()))?;
            index.extend_from_slice(&self.index);
        }
        Ok(DictMap {
            heap: self.heap,
            entries,
            index,
            live: self.live,
        })
    }

    /// Sets the value at position `i` of the entry vector (insertion
    /// order, removed entries included: with none removed, the `i`-th
    /// key). The position must be in range.
    pub fn set_value_at(&mut self, i: usize, value: Value<'h>) {
        self.entries[i].value = value;
    }

    /// Whether every entry is live and its key is the string `keys`
    /// yields at its position (and `keys` yields no more).
    pub fn has_str_keys<'k>(&self, mut keys: impl ExactSizeIterator<Item = &'k str>) -> bool {
        self.live == self.entries.len()
            && keys.len() == self.live
            && self.entries.iter().all(|e| match (e.key, keys.next()) {
                (Value::Str(k), Some(t)) => k.text == t.as_bytes(),
                _ => false,
            })
    }

    fn index_insert(&mut self, pos: usize, hash: u32) {
        let mask = self.index.len() - 1;
        let mut slot = hash as usize & mask;
        while self.index[slot] != EMPTY {
            slot = (slot + 1) & mask;
        }
        self.index[slot] = pos as u32;
    }

    /// Admits one uninterruptible pass over `slots` entries and index
    /// slots (a rebuild of the index, a compaction) when it can end before
    /// the deadline; a small table's pass is too short to ask.
    fn admit_pass(&self, slots: usize) -> Result<()> {
        if slots < 1 << 16 {
            return Ok(());
        }
        self.heap
            .budget
            .admit_pass(slots as u128 * PASS_NS_PER_SLOT)
    }

    /// Builds the index anew over the live entries, twice their number of
    /// slots (one uninterruptible pass: see [`DictMap::admit_pass`]).
    fn rebuild_index(&mut self) -> Result<()> {
        let size = (self.entries.len() * 2).next_power_of_two().max(16);
        self.admit_pass(self.entries.len() + size)?;
        self.heap.charge(size * size_of::<u32>())?;
        let mut index = BumpVec::with_capacity_in(size, self.heap.bump);
        index.resize(size, EMPTY);
        self.index = index;
        for i in 0..self.entries.len() {
            if self.entries[i].live {
                let hash = self.entries[i].hash;
                self.index_insert(i, hash);
            }
        }
        Ok(())
    }

    /// Squeezes out the dead entries. One uninterruptible pass over the
    /// table: admitted only when it can end before the deadline.
    fn compact(&mut self) -> Result<()> {
        self.admit_pass(self.entries.len() + self.index.len())?;
        self.entries.retain(|e| e.live);
        if self.entries.len() > LINEAR_MAX {
            self.rebuild_index()
        } else {
            self.index.clear();
            Ok(())
        }
    }
}
