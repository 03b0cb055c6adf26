//! Values and the heap objects they point to.
//!
//! A [`Value`] is 16 bytes and `Copy`: scalars inline, everything else a
//! shared reference into the per-execution arena ([`crate::heap::Heap`]).
//! There is no garbage collector and no reference counting: objects live
//! until the arena is dropped at the end of the execution. Mutable objects
//! (lists, dicts, cells, iterators) use interior mutability and carry the
//! frozen flag and the count of live iterators that starlark-go checks
//! before every mutation.

use crate::builtins::BuiltinFn;
use crate::capabilities::{Capability, Namespace};
use crate::dict::DictMap;
use crate::error::{Error, Result};
use bumpalo::collections::Vec as BumpVec;
use num_bigint::BigInt;
use std::cell::{Cell, RefCell};

/// A Starlark value.
///
/// The tag is a whole word (`repr(u64)`), so that every payload sits in
/// the second word and a value is two words with no padding between them:
/// a copy of a value of unknown kind is then two word moves, where a byte
/// tag had the compiler copy the seven bytes after it on their own (a
/// `bool` payload lived there).
#[derive(Clone, Copy)]
#[repr(u64)]
pub enum Value<'h> {
    None,
    Bool(bool),
    /// An int in the i64 range: the fast path of all int arithmetic.
    Int(i64),
    /// An int outside the i64 range (never holds a value that fits i64).
    BigInt(&'h BigIntObj<'h>),
    Float(f64),
    Str(&'h StrObj<'h>),
    Bytes(&'h BytesObj<'h>),
    List(&'h ListObj<'h>),
    Tuple(&'h TupleObj<'h>),
    Dict(&'h DictObj<'h>),
    Range(&'h RangeObj),
    Function(&'h FunctionObj<'h>),
    Builtin(&'static BuiltinFn),
    BoundMethod(&'h BoundMethodObj<'h>),
    /// A built-in module value (`json`, `math`).
    Module(&'static crate::builtins::ModuleDef),
    /// A capability namespace (`records` in `records.lookup`).
    Namespace(&'h Namespace),
    /// A callable capability (`records.lookup`).
    Capability(&'h Capability),
    /// An element view of a string or bytes (`s.elems()`, `s.codepoints()`,
    /// ...): iterable only.
    Elems(&'h ElemsObj<'h>),
    /// Internal: a captured variable's cell. Never visible to programs.
    Cell(&'h CellObj<'h>),
    /// Internal: an iterator of a `for` loop. Never visible to programs.
    Iter(&'h IterObj<'h>),
    /// Internal: the content of a variable not yet assigned.
    Unbound,
}

const _: () = assert!(std::mem::size_of::<Value<'static>>() == 16);
const _: () = assert!(std::mem::size_of::<Option<Value<'static>>>() == 16);
const _: () = assert!(std::mem::size_of::<crate::error::Result<Value<'static>>>() == 16);
const _: () = assert!(std::mem::size_of::<DictObj<'static>>() == 64);

impl<'h> Value<'h> {
    /// The name `type(x)` returns.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Range(_) => "range",
            Value::Elems(e) => e.kind.type_name(),
            Value::Function(_) => "function",
            Value::Builtin(_) | Value::BoundMethod(_) => "builtin_function_or_method",
            Value::Module(_) => "module",
            Value::Namespace(_) => "namespace",
            Value::Capability(_) => "capability",
            Value::Cell(_) => "cell",
            Value::Iter(_) => "iterator",
            Value::Unbound => "unbound",
        }
    }

    /// Starlark truthiness, with the test of a bool (what a branch almost
    /// always tests) inlined into the dispatch loops.
    #[inline(always)]
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            v => v.truth(),
        }
    }

    /// Starlark truthiness.
    pub fn truth(&self) -> bool {
        match *self {
            Value::None | Value::Unbound => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::BigInt(_) => true,
            Value::Float(f) => f != 0.0,
            Value::Str(s) => !s.text.is_empty(),
            Value::Bytes(b) => !b.bytes.is_empty(),
            Value::List(l) => !l.items.borrow().is_empty(),
            Value::Tuple(t) => !t.items.is_empty(),
            Value::Dict(d) => !d.is_empty(),
            Value::Range(r) => !r.is_empty(),
            _ => true,
        }
    }

    /// The value's tag word, which tells its kind: for the method caches
    /// of call sites, which compare it whole.
    #[inline(always)]
    pub fn tag(&self) -> u64 {
        // SAFETY: under `repr(u64)` a value is a `repr(C)` union of
        // `repr(C)` structs that each begin with the `u64` tag, so its
        // first word is the tag, always initialized.
        unsafe { *(self as *const Value<'h>).cast::<u64>() }
    }

    /// The text of a string that is valid UTF-8 (names, keys).
    pub fn as_str(&self) -> Option<&'h str> {
        match *self {
            Value::Str(s) => std::str::from_utf8(s.text).ok(),
            _ => None,
        }
    }
}

/// An arbitrary-precision int outside the i64 range, stored in the arena as
/// base-2^32 digits (least significant first).
pub struct BigIntObj<'h> {
    pub negative: bool,
    pub digits: &'h [u32],
}

impl BigIntObj<'_> {
    /// A heap-owned copy for arithmetic (dropped after the operation).
    pub fn to_bigint(&self) -> BigInt {
        let sign = if self.negative {
            num_bigint::Sign::Minus
        } else {
            num_bigint::Sign::Plus
        };
        BigInt::from_slice(sign, self.digits)
    }
}

/// An immutable string: any bytes, as in starlark-go (usually UTF-8 text,
/// but indexing and slicing can cut a character into its bytes).
pub struct StrObj<'h> {
    pub text: &'h [u8],
    /// The text's dict-key hash once computed ([`crate::hash`]), with bit
    /// 32 set; 0 before. A string used as a key is hashed once, however
    /// often it is looked up.
    pub hash: Cell<u64>,
}

impl<'h> StrObj<'h> {
    /// A string object for `text`, its hash not yet computed.
    #[inline]
    pub fn new(text: &'h [u8]) -> StrObj<'h> {
        StrObj {
            text,
            hash: Cell::new(0),
        }
    }

    /// Whether the two strings have the same text: the same object (the
    /// module's constants are one object per text), or texts of one length that compare equal — short ones (most dict
    /// keys) with a few word loads in place rather than a `memcmp` call,
    /// and with differing kept hashes ruling out the rest.
    #[inline(always)]
    pub fn same_text(&self, other: &StrObj<'_>) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        let (a, b) = (self.text, other.text);
        if a.len() != b.len() {
            return false;
        }
        let (ha, hb) = (self.hash.get(), other.hash.get());
        if ha != 0 && hb != 0 && ha != hb {
            return false;
        }
        short_bytes_eq(a, b)
    }
}

/// Equality of two byte strings of equal length, the short ones by
/// overlapping word loads.
#[inline(always)]
fn short_bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    debug_assert_eq!(n, b.len());
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    let half = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap());
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

impl StrObj<'_> {
    /// The layout of a string's block: the object, then its `len` bytes of
    /// text ([`crate::heap::Heap::str`] makes one, and the collector's
    /// copy). `None` past what a layout can describe.
    #[inline]
    pub fn block_layout(len: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::from_size_align(
            std::mem::size_of::<StrObj>().checked_add(len)?,
            std::mem::align_of::<StrObj>(),
        )
        .ok()
    }
}

impl TupleObj<'_> {
    /// The layout of a tuple's block: the object, then its `n` items
    /// ([`crate::heap::Heap::tuple`] makes one, and the collector's copy).
    /// `None` past what a layout can describe.
    #[inline]
    pub fn block_layout(n: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::from_size_align(
            std::mem::size_of::<TupleObj>()
                .checked_add(n.checked_mul(std::mem::size_of::<Value>())?)?,
            std::mem::align_of::<TupleObj>().max(std::mem::align_of::<Value>()),
        )
        .ok()
    }
}

/// An immutable byte string.
pub struct BytesObj<'h> {
    pub bytes: &'h [u8],
}

/// A mutable list.
pub struct ListObj<'h> {
    pub items: RefCell<BumpVec<'h, Value<'h>>>,
    pub frozen: Cell<bool>,
    /// Live `for` loops over this list.
    pub iterating: Cell<u32>,
}

impl<'h> ListObj<'h> {
    /// Fails unless the list may be mutated now; `verb` completes
    /// starlark-go's text (`append to`, `insert into`, `clear`, ...).
    pub fn check_mutable(&self, verb: &str) -> Result<()> {
        if self.frozen.get() {
            return Err(Error::msg(format!("cannot {verb} frozen list")));
        }
        if self.iterating.get() > 0 {
            return Err(Error::msg(format!("cannot {verb} list during iteration")));
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.items.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.borrow().is_empty()
    }

    pub fn get(&self, i: usize) -> Option<Value<'h>> {
        self.items.borrow().get(i).copied()
    }
}

/// An immutable tuple.
pub struct TupleObj<'h> {
    pub items: &'h [Value<'h>],
}

/// A mutable, insertion-ordered dict: one cache line (see
/// [`DictMap`]).
pub struct DictObj<'h> {
    pub map: RefCell<DictMap<'h>>,
    pub frozen: Cell<bool>,
    pub iterating: Cell<u32>,
}

impl<'h> DictObj<'h> {
    /// A dict, neither frozen nor being iterated, over `map`.
    pub fn new(map: DictMap<'h>) -> DictObj<'h> {
        DictObj {
            map: RefCell::new(map),
            frozen: Cell::new(false),
            iterating: Cell::new(0),
        }
    }

    pub fn len(&self) -> usize {
        self.map.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.borrow().is_empty()
    }

    /// Fails unless the dict may be mutated now; `verb` as for lists.
    pub fn check_mutable(&self, verb: &str) -> Result<()> {
        if self.frozen.get() {
            return Err(Error::msg(format!("cannot {verb} frozen hash table")));
        }
        if self.iterating.get() > 0 {
            return Err(Error::msg(format!(
                "cannot {verb} hash table during iteration"
            )));
        }
        Ok(())
    }
}

/// `range(start, stop, step)`.
pub struct RangeObj {
    pub start: i64,
    pub stop: i64,
    pub step: i64,
}

impl RangeObj {
    pub fn len(&self) -> i64 {
        let (start, stop, step) = (self.start as i128, self.stop as i128, self.step as i128);
        let n = if step > 0 {
            if start < stop {
                (stop - start + step - 1) / step
            } else {
                0
            }
        } else if start > stop {
            (start - stop - step - 1) / (-step)
        } else {
            0
        };
        n as i64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The i-th element, for 0 <= i < len.
    pub fn at(&self, i: i64) -> i64 {
        self.start + i * self.step
    }
}

/// Which element view a [`ElemsObj`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemsKind {
    StrElems,
    StrElemOrds,
    StrCodepoints,
    StrCodepointOrds,
    BytesElems,
}

impl ElemsKind {
    pub fn type_name(self) -> &'static str {
        match self {
            ElemsKind::StrElems | ElemsKind::StrElemOrds => "string.elems",
            ElemsKind::StrCodepoints | ElemsKind::StrCodepointOrds => "string.codepoints",
            ElemsKind::BytesElems => "bytes.elems",
        }
    }

    /// The method that made the view, for `repr`.
    pub fn method(self) -> &'static str {
        match self {
            ElemsKind::StrElems | ElemsKind::BytesElems => "elems",
            ElemsKind::StrElemOrds => "elem_ords",
            ElemsKind::StrCodepoints => "codepoints",
            ElemsKind::StrCodepointOrds => "codepoint_ords",
        }
    }
}

/// An element view: the string or bytes it came from, and its elements
/// (computed when the view is made).
pub struct ElemsObj<'h> {
    pub source: Value<'h>,
    pub kind: ElemsKind,
    pub items: &'h [Value<'h>],
}

/// A Starlark function: compiled code plus its defaults and captured cells.
pub struct FunctionObj<'h> {
    pub code: &'h crate::opcode::Code<'h>,
    /// Default values of the optional parameters, in parameter order.
    pub defaults: &'h [Value<'h>],
    /// Cells of the free variables, in `Code::freevars` order.
    pub freevars: &'h [&'h CellObj<'h>],
}

/// A method bound to its receiver (`x.append`).
pub struct BoundMethodObj<'h> {
    pub receiver: Value<'h>,
    pub method: &'static BuiltinFn,
}

/// A cell holding a captured variable.
pub struct CellObj<'h> {
    pub value: Cell<Value<'h>>,
}

/// The state of a `for` loop's iteration.
/// (A range is iterated in the loop's registers instead: see
/// [`crate::opcode::Instr::IterStart`].)
pub enum IterObj<'h> {
    List {
        list: &'h ListObj<'h>,
        index: Cell<usize>,
    },
    Tuple {
        items: &'h [Value<'h>],
        index: Cell<usize>,
    },
    Dict {
        dict: &'h DictObj<'h>,
        index: Cell<usize>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_sees_every_byte_at_every_length() {
        for n in 0..40usize {
            let base: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            let copy = base.clone();
            let (a, b) = (StrObj::new(&base), StrObj::new(&copy));
            assert!(a.same_text(&b) && a.same_text(&a), "length {n}");
            for i in 0..n {
                let mut other = base.clone();
                other[i] ^= 0x20;
                assert!(!a.same_text(&StrObj::new(&other)), "length {n}, byte {i}");
            }
            let longer: Vec<u8> = base.iter().copied().chain([b'z']).collect();
            assert!(!a.same_text(&StrObj::new(&longer)));
            // A prefix of the same bytes is not the same text.
            if n > 0 {
                assert!(!a.same_text(&StrObj::new(&base[..n - 1])));
            }
        }
    }

    #[test]
    fn kept_hashes_decide_only_when_they_differ() {
        let (x, y) = (StrObj::new(b"key"), StrObj::new(b"key"));
        x.hash.set(1 << 32 | 7);
        y.hash.set(1 << 32 | 7);
        assert!(x.same_text(&y));
        let z = StrObj::new(b"kez");
        z.hash.set(1 << 32 | 7);
        assert!(!x.same_text(&z), "equal hashes, different text");
        let w = StrObj::new(b"key");
        w.hash.set(1 << 32 | 9);
        assert!(
            !x.same_text(&w),
            "differing kept hashes mean differing texts"
        );
    }
}
