//! The per-execution heap: one bumpalo arena, charged before it grows.
//!
//! Every allocation a program causes goes through [`Heap`], which charges
//! the bytes to the [`Budget`] first and only then allocates, so a program
//! asking for `"x" * (1 << 40)` fails without allocating. Nothing is freed
//! until the arena is dropped with the execution.

use crate::budget::Budget;
use crate::dict::DictMap;
use crate::error::Result;
use crate::large::{is_large, LargeBlocks};
use crate::value::*;
use bumpalo::collections::Vec as BumpVec;
use bumpalo::Bump;
use num_bigint::BigInt;
use std::alloc::Layout;
use std::cell::{Cell, RefCell};
use std::mem::{align_of, size_of};

// A tuple's items follow its object in one block (see [`Heap::tuple`]).
const _: () = assert!(size_of::<TupleObj>().is_multiple_of(align_of::<Value>()));

/// What text of `len` bytes takes in the arena: objects are 8-byte
/// aligned, so the bytes before the next one round up to a multiple of 8.
#[inline]
fn text_bytes(len: usize) -> usize {
    len.saturating_add(7) & !7
}

/// Allocation in the arena of one execution, charged to its budget.
#[derive(Clone, Copy)]
pub struct Heap<'h> {
    pub bump: &'h Bump,
    pub budget: &'h Budget,
    /// Where large lists' storage goes, for a heap over a collected
    /// space (see [`crate::large`]); without it, in the arena.
    large: Option<&'h LargeBlocks>,
}

impl<'h> Heap<'h> {
    /// A heap allocating everything in `bump`.
    pub fn new(bump: &'h Bump, budget: &'h Budget) -> Heap<'h> {
        Heap {
            bump,
            budget,
            large: None,
        }
    }

    /// A heap over `space`, large lists' storage in its large blocks.
    pub fn in_space(space: &'h crate::gc::Space, budget: &'h Budget) -> Heap<'h> {
        Heap {
            bump: space.bump(),
            budget,
            large: Some(&space.large),
        }
    }

    /// Charges `bytes` before an allocation of that size.
    #[inline]
    pub fn charge(&self, bytes: usize) -> Result<()> {
        self.budget.charge_heap(bytes)
    }

    /// Moves `v` into the arena.
    #[inline]
    pub fn alloc<T>(&self, v: T) -> Result<&'h T> {
        self.charge(size_of::<T>())?;
        Ok(self.bump.alloc(v))
    }

    /// A string value holding a copy of `s` (text or any bytes).
    #[inline]
    pub fn str<S: AsRef<[u8]> + ?Sized>(&self, s: &S) -> Result<Value<'h>> {
        self.str_of_parts(&[s.as_ref()])
    }

    /// A string value holding the concatenation of `parts`, charged like
    /// [`Heap::str`] of the whole text.
    #[inline]
    pub fn str_of_parts(&self, parts: &[&[u8]]) -> Result<Value<'h>> {
        let len = parts.iter().fold(0usize, |n, p| n.saturating_add(p.len()));
        self.charge(text_bytes(len).saturating_add(size_of::<StrObj>()))?;
        Ok(self.str_block(parts, len))
    }

    /// A string of the `len` bytes of `parts`, already charged. The object
    /// and its text are one arena block (the text right after the object):
    /// a new string is one allocation and one copy per part. (Out of
    /// line: written into its callers, it made them slower.)
    #[inline(never)]
    fn str_block(&self, parts: &[&[u8]], len: usize) -> Value<'h> {
        self.str_block_inline(parts, len)
    }

    /// [`Heap::str_block`] written where it is called: for `concat`, whose
    /// two parts are then copied without a loop over them.
    #[inline(always)]
    fn str_block_inline(&self, parts: &[&[u8]], len: usize) -> Value<'h> {
        // SAFETY: the parts are `len` bytes in all, written one after the
        // other from the text's start.
        unsafe {
            self.str_filled(len, |mut at| {
                for p in parts {
                    crate::text::copy_short(p.as_ptr(), at, p.len());
                    at = at.add(p.len());
                }
            })
        }
    }

    /// A string of `len` bytes, already charged, that `fill` writes given
    /// where the text starts: the object and its text are one arena block.
    ///
    /// # Safety
    /// `fill` must write exactly the `len` bytes from the pointer it gets.
    #[inline(always)]
    unsafe fn str_filled(&self, len: usize, fill: impl FnOnce(*mut u8)) -> Value<'h> {
        // A charged `len` is far below `isize::MAX`, so the layout is
        // valid.
        let layout = StrObj::block_layout(len).expect("a charged string fits a layout");
        let block = self.bump.alloc_layout(layout).as_ptr();
        // SAFETY: `block` is a fresh arena allocation of `layout`: room for
        // the object (aligned for it) and `len` bytes after it, which
        // `fill` writes (the caller vouches) before anything reads them.
        // The arena lives for `'h` and never moves or frees a block before
        // it is dropped.
        unsafe {
            let text = block.add(size_of::<StrObj>());
            fill(text);
            let obj = block.cast::<StrObj<'h>>();
            obj.write(StrObj::new(std::slice::from_raw_parts(text, len)));
            Value::Str(&*obj)
        }
    }

    /// A string of the bytes of `s`, each mapped by `f` (`upper()` and
    /// `lower()` of a short ASCII text), charged like [`Heap::str`] of
    /// `s`: one block written in one pass.
    #[inline]
    pub fn str_mapped(&self, s: &[u8], f: impl Fn(u8) -> u8) -> Result<Value<'h>> {
        self.charge(text_bytes(s.len()).saturating_add(size_of::<StrObj>()))?;
        // SAFETY: exactly `s.len()` bytes are written from the text's start.
        Ok(unsafe {
            self.str_filled(s.len(), |at| {
                for (i, &b) in s.iter().enumerate() {
                    *at.add(i) = f(b);
                }
            })
        })
    }

    /// `s` with the `old_len` bytes at each of `at` (ascending, not
    /// overlapping, within `s`) replaced by `new`, charged like
    /// [`Heap::str_of_parts`] of the pieces: one block written in one
    /// pass. Positions that break that order are an internal error.
    #[inline]
    pub fn str_replaced(
        &self,
        s: &[u8],
        at: &[usize],
        old_len: usize,
        new: &[u8],
    ) -> Result<Value<'h>> {
        let mut last = 0usize;
        for &i in at {
            if i < last || i.checked_add(old_len).is_none_or(|end| end > s.len()) {
                return Err(crate::error::Error::msg("internal error: replaced pieces"));
            }
            last = i + old_len;
        }
        // No overflow: the pieces of `s` are at most `s.len()` bytes, and
        // `new` is counted saturating.
        let kept = s.len() - at.len() * old_len;
        let len = kept.saturating_add(at.len().saturating_mul(new.len()));
        self.charge(text_bytes(len).saturating_add(size_of::<StrObj>()))?;
        // SAFETY: the pieces of `s` between the matches (checked above to
        // be ascending, apart and within `s`) are `kept` bytes, and `new`
        // once per match the rest of `len`, written in order from the
        // text's start.
        Ok(unsafe {
            self.str_filled(len, |mut out| {
                let mut last = 0;
                for &i in at {
                    crate::text::copy_short(s.as_ptr().add(last), out, i - last);
                    out = out.add(i - last);
                    crate::text::copy_short(new.as_ptr(), out, new.len());
                    out = out.add(new.len());
                    last = i + old_len;
                }
                crate::text::copy_short(s.as_ptr().add(last), out, s.len() - last);
            })
        })
    }

    /// `str(i)`: [`Heap::str_around_int`] with nothing around.
    #[inline(never)]
    pub fn str_of_int(&self, i: i64) -> Result<Value<'h>> {
        self.str_around_int(b"", i, b"")
    }

    /// The string `pre`, the decimal text of `i`, `post` — `str(i)` and
    /// `"r%d" % i` — with the digits written where they go, charged like
    /// [`Heap::str_of_parts`] of the three.
    #[inline(always)]
    pub fn str_around_int(&self, pre: &[u8], i: i64, post: &[u8]) -> Result<Value<'h>> {
        let (neg, u) = (i < 0, i.unsigned_abs());
        let digits = crate::text::decimal_len(u) + usize::from(neg);
        let len = pre.len() + digits + post.len();
        self.charge(text_bytes(len).saturating_add(size_of::<StrObj>()))?;
        // SAFETY: `pre`, the sign, the digits and `post` are `len` bytes,
        // written in order from the text's start.
        Ok(unsafe {
            self.str_filled(len, |at| {
                crate::text::copy_short(pre.as_ptr(), at, pre.len());
                let at = at.add(pre.len());
                if neg {
                    *at = b'-';
                }
                let end = at.add(digits);
                crate::text::write_decimal(u, end);
                crate::text::copy_short(post.as_ptr(), end, post.len());
            })
        })
    }

    /// A string value holding `a` followed by `b`, charged like a builder
    /// of their total length plus the string object.
    pub fn concat(&self, a: &[u8], b: &[u8]) -> Result<Value<'h>> {
        let total = a.len().saturating_add(b.len());
        self.charge(text_bytes(total).saturating_add(size_of::<StrObj>()))?;
        if total > 1024 {
            self.budget.charge_bytes(total)?;
        }
        Ok(self.str_block_inline(&[a, b], total))
    }

    /// A string value for bytes that already live in the arena.
    #[inline]
    pub fn str_in_arena<S: AsRef<[u8]> + ?Sized>(&self, text: &'h S) -> Result<Value<'h>> {
        self.charge(size_of::<StrObj>())?;
        Ok(Value::Str(self.bump.alloc(StrObj::new(text.as_ref()))))
    }

    /// A string builder of `capacity` bytes, charged up front.
    pub fn string_builder(&self, capacity: usize) -> Result<StrBuf<'h>> {
        self.charge(text_bytes(capacity))?;
        Ok(StrBuf(BumpVec::with_capacity_in(capacity, self.bump)))
    }

    /// Finishes a builder made by [`Heap::string_builder`].
    pub fn finish_str(&self, s: StrBuf<'h>) -> Result<Value<'h>> {
        self.str_in_arena(s.0.into_bump_slice())
    }

    /// A bytes value holding a copy of `b`.
    pub fn bytes(&self, b: &[u8]) -> Result<Value<'h>> {
        self.charge(text_bytes(b.len()) + size_of::<BytesObj>())?;
        let bytes = self.bump.alloc_slice_copy(b);
        Ok(Value::Bytes(self.bump.alloc(BytesObj { bytes })))
    }

    /// A tuple holding a copy of `items`.
    pub fn tuple(&self, items: &[Value<'h>]) -> Result<Value<'h>> {
        self.charge(size_of_val(items) + size_of::<TupleObj>())?;
        let n = items.len();
        // The object and its items are one arena block, the items right
        // after the object: a tuple is one allocation. A charged `n` is
        // far below `isize::MAX` bytes, so the layout is valid.
        let layout = TupleObj::block_layout(n).expect("a charged tuple fits a layout");
        let block = self.bump.alloc_layout(layout).as_ptr();
        // SAFETY: `block` is a fresh arena allocation of `layout`: the
        // object at its start, then room for `n` values (aligned: the
        // object's size is a multiple of the values' alignment), written
        // before anything reads them. The arena lives for `'h` and never
        // moves or frees a block before it is dropped.
        unsafe {
            let data = block.add(size_of::<TupleObj>()).cast::<Value<'h>>();
            if n <= 4 {
                for (i, v) in items.iter().enumerate() {
                    data.add(i).write(*v);
                }
            } else {
                std::ptr::copy_nonoverlapping(items.as_ptr(), data, n);
            }
            let obj = block.cast::<TupleObj<'h>>();
            obj.write(TupleObj {
                items: std::slice::from_raw_parts(data, n),
            });
            Ok(Value::Tuple(&*obj))
        }
    }

    /// A list of `n` tuples of `width` items each, whose items `fill`
    /// writes into one flat block, row after row. Charged as `n` tuples
    /// and the list, but allocated as three blocks (the items, the tuple
    /// objects, the list's storage) rather than two per tuple: for
    /// `enumerate`, `zip` and `dict.items`, which make one tuple per item.
    pub fn tuple_list(
        &self,
        n: usize,
        width: usize,
        fill: impl FnOnce(&mut [Value<'h>]) -> Result<()>,
    ) -> Result<Value<'h>> {
        let per = width
            .saturating_mul(size_of::<Value>())
            .saturating_add(size_of::<TupleObj>());
        self.charge(n.saturating_mul(per))?;
        let flat = self.bump.alloc_slice_fill_copy(n * width, Value::None);
        fill(flat)?;
        let flat: &'h [Value<'h>] = flat;
        let tuples: &'h [TupleObj<'h>] =
            self.bump.alloc_slice_fill_iter((0..n).map(|i| TupleObj {
                items: &flat[i * width..(i + 1) * width],
            }));
        let mut out = self.vec_with_capacity(n)?;
        out.extend(tuples.iter().map(Value::Tuple));
        self.list_from_vec(out)
    }

    /// An element view over `source` holding `items`, a vector made by
    /// [`Heap::vec_with_capacity`] (and so charged already): it becomes the
    /// view's elements in place, with no second copy — a copy of millions
    /// of values is work the deadline could not interrupt.
    pub fn elems(
        &self,
        source: Value<'h>,
        kind: ElemsKind,
        items: BumpVec<'h, Value<'h>>,
    ) -> Result<Value<'h>> {
        self.charge(size_of::<ElemsObj>())?;
        let items: &'h [Value<'h>] = items.into_bump_slice();
        Ok(Value::Elems(self.bump.alloc(ElemsObj {
            source,
            kind,
            items,
        })))
    }

    /// A list holding a copy of `items`.
    pub fn list(&self, items: &[Value<'h>]) -> Result<Value<'h>> {
        // One charge for the items and the list object.
        self.charge(size_of_val(items).saturating_add(size_of::<ListObj>()))?;
        let mut v = match self.large_vec(items.len()) {
            Some(v) => v,
            None => BumpVec::with_capacity_in(items.len(), self.bump),
        };
        v.extend_from_slice(items);
        Ok(self.list_object(v))
    }

    /// An empty list storage with room for `cap` values in a large block
    /// of its own, when it is large enough (see [`crate::large`]) and the
    /// heap has large blocks; already charged.
    /// The test is inlined where a list is made; the block is made out of
    /// line ([`Heap::large_block`]), since most lists are small.
    #[inline(always)]
    fn large_vec(&self, cap: usize) -> Option<BumpVec<'h, Value<'h>>> {
        if !is_large(cap.saturating_mul(size_of::<Value>())) {
            return None;
        }
        self.large_block(cap)
    }

    /// [`Heap::large_vec`] of a large `cap`.
    #[cold]
    #[inline(never)]
    fn large_block(&self, cap: usize) -> Option<BumpVec<'h, Value<'h>>> {
        let p = self.large?.alloc(cap)?;
        // SAFETY: `p` is a block of room for `cap` values, which only this
        // vector refers to; bumpalo never frees it (it is not the arena's),
        // and the list's growth frees it through `Heap::grow_to` or a
        // collection once no list holds it.
        Some(unsafe { BumpVec::from_raw_parts_in(p, 0, cap, self.bump) })
    }

    /// A list taking over `items`, whose storage is already charged.
    pub fn list_from_vec(&self, items: BumpVec<'h, Value<'h>>) -> Result<Value<'h>> {
        self.charge(size_of::<ListObj>())?;
        Ok(self.list_object(items))
    }

    /// A list object over `items`, its object already charged.
    fn list_object(&self, items: BumpVec<'h, Value<'h>>) -> Value<'h> {
        Value::List(self.bump.alloc(ListObj {
            items: RefCell::new(items),
            frozen: Cell::new(false),
            iterating: Cell::new(0),
        }))
    }

    /// An empty value vector with room for `n` values, charged.
    pub fn vec_with_capacity(&self, n: usize) -> Result<BumpVec<'h, Value<'h>>> {
        self.charge(n.saturating_mul(size_of::<Value>()))?;
        Ok(BumpVec::with_capacity_in(n, self.bump))
    }

    /// Makes room for `extra` more values in `v`, charging any growth. The
    /// whole new block is charged before it is made; when the arena grew
    /// the old block in place (it was the newest allocation of its chunk),
    /// the old block's charge is given back, for it is part of the new one.
    pub fn reserve(&self, v: &mut BumpVec<'h, Value<'h>>, extra: usize) -> Result<()> {
        let need = v.len().saturating_add(extra);
        if need > v.capacity() {
            let new_cap = need.max(v.capacity().saturating_mul(2)).max(4);
            self.grow_to(v, new_cap)?;
        }
        Ok(())
    }

    /// Gives `v`, a list's storage, a capacity of `cap` values (more than
    /// it has), charged as [`Heap::reserve`] says: in a large block of its
    /// own when that large ([`crate::large`]), the one it outgrew freed at
    /// once when it was one.
    fn grow_to(&self, v: &mut BumpVec<'h, Value<'h>>, cap: usize) -> Result<()> {
        self.charge(cap.saturating_mul(size_of::<Value>()))?;
        if let Some(mut bigger) = self.large_vec(cap) {
            bigger.extend_from_slice(v);
            let old = std::mem::replace(v, bigger);
            if let Some(large) = self.large {
                let p = old.as_ptr();
                // Dropping the vector frees nothing that is not the
                // arena's newest block (bumpalo's rule).
                drop(old);
                large.free(p);
            }
            return Ok(());
        }
        v.reserve_exact(cap - v.len());
        Ok(())
    }

    /// Gives `list`, when it is an empty list that never had room (a
    /// comprehension's, just made), room for as many values as `over` has
    /// (a list, tuple, dict or range): the comprehension appends one per
    /// element, and its list is then made once, at its size, instead of
    /// growing by doubling through blocks the arena keeps until the next
    /// collection. Nothing is done when that room would take more than
    /// half of what the heap may still charge (the list grows as it goes,
    /// and collections can run meanwhile).
    ///
    /// Room of a large list's size is a block of its own (see
    /// [`crate::large`]). Other room is given only where the arena would
    /// put it anyway: in its current chunk, or in the next, which is as
    /// large as all before it (chunks double). A block larger than that
    /// would be a chunk of its own, and the chunks after it would no
    /// longer be whole huge pages (see [`crate::gc::Space::widen`]; the
    /// binary maps each large chunk on its own, and advises huge pages
    /// only where a chunk covers at least half of one), so that the
    /// program would take more page faults (`markdown`: 1,115 instead of
    /// 744).
    pub fn presize(&self, list: Value<'h>, over: Value<'h>) {
        let Value::List(l) = list else { return };
        let n = match over {
            Value::List(x) => x.len(),
            Value::Tuple(t) => t.items.len(),
            Value::Dict(d) => d.len(),
            Value::Range(r) => usize::try_from(r.len()).unwrap_or(usize::MAX),
            _ => return,
        };
        let mut items = l.items.borrow_mut();
        if n == 0 || items.capacity() != 0 {
            return;
        }
        let bytes = n.saturating_mul(size_of::<Value>());
        let own_block = self.large.is_some() && is_large(bytes);
        if !own_block && bytes > self.bump.chunk_capacity() && bytes > self.bump.allocated_bytes() {
            return;
        }
        if bytes > self.budget.heap_left() / 2 {
            return;
        }
        // The charge fits: checked above.
        let _ = self.grow_to(&mut items, n);
    }

    /// Appends `x` to `v`, charging any growth.
    #[inline]
    pub fn push(&self, v: &mut BumpVec<'h, Value<'h>>, x: Value<'h>) -> Result<()> {
        let len = v.len();
        if len == v.capacity() {
            return self.push_growing(v, x);
        }
        // SAFETY: `len` is below the capacity, so the slot is allocated, and
        // it is written before the length covers it. (bumpalo's `push`
        // stays out of line and tests the capacity again.)
        unsafe {
            v.as_mut_ptr().add(len).write(x);
            v.set_len(len + 1);
        }
        Ok(())
    }

    /// [`Heap::push`] onto a full vector: grows it first.
    #[cold]
    #[inline(never)]
    fn push_growing(&self, v: &mut BumpVec<'h, Value<'h>>, x: Value<'h>) -> Result<()> {
        self.reserve(v, 1)?;
        v.push(x);
        Ok(())
    }

    /// An empty dict with room for `n` entries.
    #[inline]
    pub fn dict(&self, n: usize) -> Result<&'h DictObj<'h>> {
        // One charge for the object and its entries, and one block for
        // both, the entries right after the object: a record display makes
        // one of these per record, and a lookup reads the object and then
        // the entries.
        let entries = DictMap::entries_bytes(n);
        self.charge(size_of::<DictObj>().saturating_add(entries))?;
        // A charged size fits a layout.
        let layout = Layout::from_size_align(size_of::<DictObj>() + entries, align_of::<DictObj>())
            .expect("a charged dict fits a layout");
        let block = self.bump.alloc_layout(layout);
        // SAFETY: the block has room for the object (aligned for it, and
        // the entries, whose alignment is at most the object's) followed by
        // `n` entries, which the map owns; the arena keeps it for `'h`.
        unsafe {
            let obj = block.cast::<DictObj<'h>>();
            let map = DictMap::over(*self, block.add(size_of::<DictObj>()), n);
            obj.as_ptr().write(DictObj::new(map));
            Ok(&*obj.as_ptr())
        }
    }

    /// A dict over `map`, whose storage is already charged.
    pub fn dict_of(&self, map: DictMap<'h>) -> Result<&'h DictObj<'h>> {
        self.alloc(DictObj::new(map))
    }

    /// An int value: small when it fits i64, big otherwise.
    pub fn int(&self, v: BigInt) -> Result<Value<'h>> {
        use num_traits::ToPrimitive;
        if let Some(i) = v.to_i64() {
            return Ok(Value::Int(i));
        }
        let (sign, digits) = v.to_u32_digits();
        self.charge(digits.len() * 4 + size_of::<BigIntObj>())?;
        let digits = self.bump.alloc_slice_copy(&digits);
        Ok(Value::BigInt(self.bump.alloc(BigIntObj {
            negative: sign == num_bigint::Sign::Minus,
            digits,
        })))
    }

    /// A cell holding `v`.
    pub fn cell(&self, v: Value<'h>) -> Result<&'h CellObj<'h>> {
        self.alloc(CellObj {
            value: Cell::new(v),
        })
    }
}

/// The bytes of a string being built in the arena (strings hold any
/// bytes, as in starlark-go).
pub struct StrBuf<'h>(pub BumpVec<'h, u8>);

impl StrBuf<'_> {
    /// Appends text or bytes.
    #[inline]
    pub fn push_str<S: AsRef<[u8]> + ?Sized>(&mut self, s: &S) {
        self.0.extend_from_slice_copy(s.as_ref());
    }

    /// Appends the UTF-8 encoding of `c`.
    #[inline]
    pub fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Budget, Limits};
    use std::time::Instant;

    #[test]
    fn str_replaced_writes_the_pieces_and_refuses_positions_out_of_order() {
        let bump = Bump::new();
        let budget = Budget::new(Limits::default(), Instant::now(), None);
        let heap = Heap::new(&bump, &budget);
        let text = |v: Value<'_>| match v {
            Value::Str(s) => String::from_utf8(s.text.to_vec()).unwrap(),
            _ => panic!("not a string"),
        };
        let s = b"https://svc.internal/h";
        let before = budget.heap_bytes();
        let r = heap.str_replaced(s, &[0], 8, b"").unwrap();
        assert_eq!(text(r), "svc.internal/h");
        // Charged as a string of its text: the text in words and the object.
        assert_eq!(budget.heap_bytes() - before, 16 + size_of::<StrObj>());
        assert_eq!(
            text(heap.str_replaced(b"a.b.c", &[1, 3], 1, b"--").unwrap()),
            "a--b--c"
        );
        assert_eq!(
            text(heap.str_replaced(b"abc", &[], 2, b"x").unwrap()),
            "abc"
        );
        assert_eq!(text(heap.str_replaced(b"aa", &[0, 1], 1, b"").unwrap()), "");
        for bad in [&[3usize][..], &[1, 0], &[0, 1], &[usize::MAX]] {
            assert!(heap.str_replaced(b"abcd", bad, 2, b"x").is_err(), "{bad:?}");
        }
    }

    /// `range(n)`, made in `heap`.
    fn range_of<'h>(heap: Heap<'h>, n: i64) -> Value<'h> {
        Value::Range(
            heap.alloc(RangeObj {
                start: 0,
                stop: n,
                step: 1,
            })
            .unwrap(),
        )
    }

    fn capacity(list: Value<'_>) -> usize {
        match list {
            Value::List(l) => l.items.borrow().capacity(),
            _ => panic!("not a list"),
        }
    }

    #[test]
    fn a_comprehension_list_gets_room_for_what_it_iterates_at_once() {
        // Room for all of them in the arena's chunk.
        let bump = Bump::with_capacity(64 << 10);
        let budget = Budget::new(Limits::default(), Instant::now(), None);
        let heap = Heap::new(&bump, &budget);
        let range = |n: i64| range_of(heap, n);
        let three = heap
            .list(&[Value::Int(1), Value::Int(2), Value::Int(3)])
            .unwrap();
        let pair = heap.tuple(&[Value::None, Value::None]).unwrap();
        for (over, n) in [(range(1000), 1000), (three, 3), (pair, 2)] {
            let l = heap.list_from_vec(BumpVec::new_in(&bump)).unwrap();
            let before = budget.heap_bytes();
            heap.presize(l, over);
            assert_eq!(capacity(l), n);
            // Charged as a block of that many values.
            assert_eq!(budget.heap_bytes() - before, n * size_of::<Value>());
        }
        // Not a list that has room already, not an empty iterable, not an
        // iterable of no known length, not a target that is no list.
        let grown = heap.list(&[Value::None]).unwrap();
        heap.presize(grown, range(100));
        assert_eq!(capacity(grown), 1);
        for over in [range(0), Value::None] {
            let l = heap.list_from_vec(BumpVec::new_in(&bump)).unwrap();
            heap.presize(l, over);
            assert_eq!(capacity(l), 0);
        }
        heap.presize(Value::None, range(10));
        // Not past half of what the heap may still charge: the list grows
        // as it goes instead.
        let l = heap.list_from_vec(BumpVec::new_in(&bump)).unwrap();
        let n = budget.heap_left() / size_of::<Value>() / 2 + 1;
        heap.presize(l, range(n as i64));
        assert_eq!(capacity(l), 0);
    }

    #[test]
    fn a_large_comprehension_list_gets_a_block_of_its_own() {
        let space = crate::gc::Space::new(Bump::new());
        let budget = Budget::new(Limits::default(), Instant::now(), None);
        let heap = Heap::in_space(&space, &budget);
        let range = |n: i64| range_of(heap, n);
        // 1.6 MB: a block outside the arena, of exactly that room.
        let over = range(100_000);
        let l = heap.list_from_vec(BumpVec::new_in(heap.bump)).unwrap();
        heap.presize(l, over);
        assert_eq!(capacity(l), 100_000);
        let Value::List(obj) = l else { unreachable!() };
        assert!(space.large.holds(obj.items.borrow().as_ptr()));
        // 320 KB, more than the arena's chunks and less than a large list
        // (but for `gc-stress`'s): left to grow instead.
        let l = heap.list_from_vec(BumpVec::new_in(heap.bump)).unwrap();
        heap.presize(l, range(20_000));
        let want = if cfg!(feature = "gc-stress") {
            20_000
        } else {
            0
        };
        assert_eq!(capacity(l), want);
    }
}
