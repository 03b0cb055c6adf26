//! Text forms of values: `str`, `repr`, float formatting and the `%`
//! operator on strings, all as starlark-go prints them.
//!
//! Floats follow Go's `strconv.FormatFloat` (`%g` with the shortest
//! round-trip digits, plus `.0` when the text would read as an int), strings
//! are quoted with double quotes and Go's escapes, and containers print
//! their elements' `repr`. Printing is bounded without cutting anything
//! short: a list or dict that contains itself prints `[...]`/`{...}` as in
//! starlark-go (only a cycle prints `...`), nesting of any depth is printed
//! in full from an explicit stack (no Rust recursion), the text may not
//! outgrow what is left of the heap budget and is charged to it, and the
//! deadline is checked as elements are written. Big ints are converted to decimal only when the estimated cost of
//! that quadratic conversion fits in the time left.

use crate::budget::{Budget, BYTES_PER_UNIT, ITEM_UNITS, WORK_BLOCK};
use crate::error::{Error, LimitKind, Result};
use crate::heap::Heap;
use crate::value::{BigIntObj, DictObj, ListObj, Value};
use rustc_hash::FxHashSet;
use std::fmt::Write as _;
use std::mem::size_of;

/// Ints with more 32-bit digits than this are converted to decimal only
/// after their cost is weighed against the time left.
const CHEAP_INT_DIGITS: usize = 256;

// ---------------------------------------------------------------------------
// Floats

/// The decimal digits and exponent of the shortest text that reads back
/// as `f` (finite, non-negative): `f = 0.d1d2d3... * 10^point`.
fn shortest_digits(f: f64) -> (Vec<u8>, i32) {
    // Rust's `{:e}` gives the shortest round-trip digits, like Go's
    // FormatFloat with precision -1.
    let s = format!("{f:e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mant.bytes().filter(|b| b.is_ascii_digit()).collect();
    // When `f` lies exactly halfway between two shortest candidates, Rust
    // takes the upper one and Go the even one. Two candidates of n digits
    // both read back as `f` only when n is at least 16.
    if digits.len() >= 16 && digits.last().is_some_and(|d| (d - b'0') % 2 == 1) {
        let point = exp + 1;
        if halfway_below(f, &digits, point) {
            if let Some(d) = digits.last_mut() {
                *d -= 1;
            }
        }
    }
    (digits, exp + 1)
}

/// Whether `f` (finite, positive) is exactly halfway between the decimal
/// `0.digits * 10^point` and the one a unit lower in its last digit, and
/// that lower one reads back as `f` too.
fn halfway_below(f: f64, digits: &[u8], point: i32) -> bool {
    use num_bigint::BigUint;
    let bits = f.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // f = m * 2^q
    let (m, q) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    let mut d = BigUint::from(0u32);
    for &c in digits {
        d = d * 10u32 + u32::from(c - b'0');
    }
    // 2f == (2d - 1) * 10^t, with t the exponent of the last digit.
    let t = point - digits.len() as i32;
    let mut lhs = BigUint::from(m) * 2u32;
    let mut rhs = d * 2u32 - 1u32;
    if q >= 0 {
        lhs <<= q as usize;
    } else {
        rhs <<= (-q) as usize;
    }
    let ten = BigUint::from(10u32);
    if t >= 0 {
        rhs *= ten.pow(t as u32);
    } else {
        lhs *= ten.pow((-t) as u32);
    }
    if lhs != rhs {
        return false;
    }
    let mut lower: String = digits.iter().map(|&c| c as char).collect();
    lower.pop();
    lower.push((digits[digits.len() - 1] - 1) as char);
    format!("{lower}e{t}").parse::<f64>() == Ok(f)
}

/// Writes `mantissa e±XX` as Go does: the exponent has a sign and at least
/// two digits.
fn push_exponent(out: &mut String, exp: i32, upper: bool) {
    out.push(if upper { 'E' } else { 'e' });
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    let _ = write!(out, "{e}");
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)` for a finite `f`.
fn write_go_g(out: &mut String, f: f64, upper: bool) {
    if f.is_sign_negative() {
        out.push('-');
    }
    let (digits, point) = shortest_digits(f.abs());
    let exp = point - 1;
    // With the shortest precision Go switches to %e at exponent 6 (the
    // precision of %g's default), whatever the digit count.
    if !(-4..6).contains(&exp) {
        out.push(digits[0] as char);
        if digits.len() > 1 {
            out.push('.');
            out.extend(digits[1..].iter().map(|&d| d as char));
        }
        push_exponent(out, exp, upper);
        return;
    }
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.extend(digits.iter().map(|&d| d as char));
    } else {
        let point = point as usize;
        if point >= digits.len() {
            out.extend(digits.iter().map(|&d| d as char));
            out.extend(std::iter::repeat_n('0', point - digits.len()));
        } else {
            out.extend(digits[..point].iter().map(|&d| d as char));
            out.push('.');
            out.extend(digits[point..].iter().map(|&d| d as char));
        }
    }
}

/// Writes a float in starlark-go's style for the conversion `conv`, which is
/// one of `g G e E f F` (`%g` is what `str` uses).
pub fn write_float(out: &mut String, f: f64, conv: u8) {
    if f.is_nan() {
        out.push_str("nan");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "+inf" } else { "-inf" });
        return;
    }
    match conv {
        b'g' | b'G' => {
            let start = out.len();
            let upper = conv == b'G';
            write_go_g(out, f, upper);
            let text = &out[start..];
            let e = if upper { 'E' } else { 'e' };
            if !text.contains(e) && !text.contains('.') {
                out.push_str(".0");
            }
        }
        b'e' | b'E' => {
            let s = format!("{f:.6e}");
            let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
            out.push_str(mant);
            push_exponent(out, exp.parse().unwrap_or(0), conv == b'E');
        }
        b'f' => {
            // A nonzero multiple of 1/64 (1.5, 2.25, 3.0, ...) has at most
            // six decimals, so its exact digits are the integer part and
            // the 64ths times 15625; anything else takes the general
            // (exact, much slower) formatting.
            let m = f * 64.0;
            if f != 0.0 && m.fract() == 0.0 && m.abs() < 9.0e15 {
                let m = m as i64;
                let (q, r) = (m.unsigned_abs() / 64, m.unsigned_abs() % 64);
                if m < 0 {
                    out.push('-');
                }
                out.push_str(itoa::Buffer::new().format(q));
                out.push('.');
                let mut buf = itoa::Buffer::new();
                let frac = buf.format(r * 15625);
                for _ in frac.len()..6 {
                    out.push('0');
                }
                out.push_str(frac);
            } else {
                let _ = write!(out, "{f:.6}");
            }
        }
        _ => {
            // Go's FormatFloat answers an unknown verb (here 'F', which
            // starlark-go passes through) with '%' and the verb.
            out.push('%');
            out.push(conv as char);
        }
    }
}

/// `str(f)` as starlark-go prints it: `1.0`, `1e+06`, `0.30000000000000004`,
/// `+inf`, `nan`, `-0.0`.
pub fn float_str(f: f64) -> String {
    let mut s = String::new();
    write_float(&mut s, f, b'g');
    s
}

// ---------------------------------------------------------------------------
// Ints

/// Fails unless converting an int of `digits` 32-bit digits to decimal fits
/// in the time left. The conversion is quadratic in the digit count.
pub fn check_int_text_cost(digits: usize, budget: &Budget) -> Result<()> {
    if digits <= CHEAP_INT_DIGITS {
        return Ok(());
    }
    // About 2 ns per (64-bit word)^2 / 2 step of repeated division.
    let words = digits.div_ceil(2) as u128;
    budget.admit_work(words * words)
}

/// Writes a big int in decimal after weighing the cost of the conversion.
pub fn write_bigint(out: &mut String, b: &BigIntObj<'_>, budget: &Budget) -> Result<()> {
    check_int_text_cost(b.digits.len(), budget)?;
    let _ = write!(out, "{}", b.to_bigint());
    if b.digits.len() > CHEAP_INT_DIGITS {
        budget.check_time()?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Strings

/// Whether Go's `strconv.IsPrint` holds for `c`: letters, marks, numbers,
/// punctuation, symbols and the ASCII space. Without Unicode category tables
/// this approximates "not printable" by the control, format, separator,
/// private-use and noncharacter code points, which are the ones that occur.
fn is_go_printable(c: char) -> bool {
    let r = c as u32;
    if r < 0x80 {
        return (0x20..0x7f).contains(&r);
    }
    if c.is_control() {
        return false;
    }
    const NOT_PRINT: &[(u32, u32)] = &[
        (0x00A0, 0x00A0),
        (0x00AD, 0x00AD),
        (0x0600, 0x0605),
        (0x061C, 0x061C),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x0890, 0x0891),
        (0x08E2, 0x08E2),
        (0x1680, 0x1680),
        (0x180E, 0x180E),
        (0x2000, 0x200F),
        (0x2028, 0x202F),
        (0x205F, 0x2064),
        (0x2066, 0x206F),
        (0x3000, 0x3000),
        (0xD800, 0xF8FF),
        (0xFDD0, 0xFDEF),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x1343F),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0000, 0xE0FFF),
        (0xF0000, 0x10FFFF),
    ];
    if r & 0xFFFE == 0xFFFE {
        return false;
    }
    !NOT_PRINT.iter().any(|&(lo, hi)| (lo..=hi).contains(&r))
}

/// Quotes `s` as starlark-go's `repr` does: double quotes, Go escapes,
/// invalid UTF-8 bytes as `\xXX`; with `bytes`, a `b` prefix.
pub fn write_quoted(out: &mut String, s: &[u8], bytes: bool) {
    if bytes {
        out.push('b');
    }
    out.push('"');
    write_escaped(out, s);
    out.push('"');
}

/// [`write_quoted`] with the work charged to `budget`: a long `s` is
/// escaped block by block, each block charged before it is written.
pub fn write_quoted_in(out: &mut String, s: &[u8], bytes: bool, budget: &Budget) -> Result<()> {
    if s.len() <= WORK_BLOCK {
        write_quoted(out, s, bytes);
        return Ok(());
    }
    if bytes {
        out.push('b');
    }
    out.push('"');
    let mut rest = s;
    while !rest.is_empty() {
        // A cut before a byte that is not a continuation byte splits no
        // valid UTF-8 sequence; no valid sequence has more than three
        // continuation bytes, so a cut after three of them splits none
        // either (escaping goes byte by byte outside valid sequences).
        let mut cut = rest.len().min(WORK_BLOCK);
        let limit = rest.len().min(cut + 3);
        while cut < limit && rest[cut] & 0xc0 == 0x80 {
            cut += 1;
        }
        let (block, tail) = rest.split_at(cut);
        // Escaping goes a character at a time: a unit per byte.
        budget.charge_work(block.len() as u64)?;
        write_escaped(out, block);
        rest = tail;
    }
    out.push('"');
    Ok(())
}

/// The text between the quotes of [`write_quoted`].
fn write_escaped(out: &mut String, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' | '\\' => {
                    out.push('\\');
                    out.push(c);
                }
                _ if is_go_printable(c) => out.push(c),
                '\x07' => out.push_str("\\a"),
                '\x08' => out.push_str("\\b"),
                '\x0c' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\x0b' => out.push_str("\\v"),
                _ => {
                    let r = c as u32;
                    if r < 0x20 || r == 0x7f {
                        out.push_str("\\x");
                        out.push(HEX[(r >> 4) as usize] as char);
                        out.push(HEX[(r & 0xf) as usize] as char);
                    } else if r < 0x10000 {
                        let _ = write!(out, "\\u{r:04x}");
                    } else {
                        let _ = write!(out, "\\U{r:08x}");
                    }
                }
            }
        }
        for &b in chunk.invalid() {
            out.push_str("\\x");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        }
    }
}

// ---------------------------------------------------------------------------
// repr and str

/// A container being printed, and how far.
enum Open<'v> {
    List {
        list: &'v ListObj<'v>,
        next: usize,
    },
    Tuple {
        items: &'v [Value<'v>],
        next: usize,
    },
    Dict {
        dict: &'v DictObj<'v>,
        next: usize,
        /// Whether an entry was written.
        any: bool,
        /// The value of the entry whose key was just written.
        pending: Option<Value<'v>>,
    },
}

/// What one level of the cycle path costs at most: its address in the
/// path and in the set of deep entries.
const PATH_ENTRY_BYTES: usize = 32;

/// Containers on the printing path checked by a scan; deeper ones go to a
/// set, so a value nested a million deep prints in linear time.
const SCANNED_PATH: usize = 32;

/// The state of one printing: the open containers (an explicit stack, so
/// depth costs no Rust stack), the lists and dicts among them (for
/// cycles), the elements written (for deadline checks), the room left for
/// the text, and the budget.
struct Printer<'b, 'v> {
    budget: &'b Budget,
    open: Vec<Open<'v>>,
    /// The lists and dicts being printed, outermost first: the first
    /// [`SCANNED_PATH`] here, the rest in `deep_path` as well.
    path: Vec<*const ()>,
    deep_path: FxHashSet<*const ()>,
    /// The output length up to which the bytes written are charged as work.
    charged_len: usize,
    /// The text written so far, apart from its unfinished end in `out`.
    pieces: TextPieces,
    /// Bytes of Rust memory the open-container stack and the path may
    /// hold, charged to the heap budget.
    charged_stack: usize,
}

impl<'b, 'v> Printer<'b, 'v> {
    fn new(budget: &'b Budget, out: &str) -> Printer<'b, 'v> {
        Printer {
            budget,
            open: Vec::new(),
            path: Vec::new(),
            deep_path: FxHashSet::default(),
            charged_len: out.len(),
            pieces: TextPieces::new(out, budget.heap_left()),
            charged_stack: 0,
        }
    }

    /// Charges the element about to be written and the bytes written since
    /// the last charge, so a few huge elements count as much as many small
    /// ones.
    fn tick(&mut self, out: &mut String) -> Result<()> {
        if self.pieces.due(out) {
            self.charge_output(out, 0)?;
            self.pieces.spill(out)?;
            self.charged_len = out.len();
        }
        self.charge_output(out, ITEM_UNITS)
    }

    /// Charges `extra` units and the bytes written since the last charge.
    fn charge_output(&mut self, out: &str, extra: u64) -> Result<()> {
        let units = out.len().saturating_sub(self.charged_len) / BYTES_PER_UNIT;
        self.charged_len += units * BYTES_PER_UNIT;
        self.budget.charge_work(extra + units as u64)
    }

    fn on_path(&self, id: *const ()) -> bool {
        self.path[..self.path.len().min(SCANNED_PATH)].contains(&id)
            || (self.path.len() > SCANNED_PATH && self.deep_path.contains(&id))
    }

    /// Opens a list or dict unless it is already being printed (a cycle).
    fn enter(&mut self, id: *const (), frame: Open<'v>) -> Result<bool> {
        if self.on_path(id) {
            return Ok(false);
        }
        if self.path.len() >= SCANNED_PATH {
            self.deep_path.insert(id);
        }
        self.path.push(id);
        self.push(frame)?;
        Ok(true)
    }

    /// Pushes an open container, charging the growth of the stack (and of
    /// the path beside it) to the heap budget: a deep value needs a stack
    /// as deep as the value.
    fn push(&mut self, frame: Open<'v>) -> Result<()> {
        let len = self.open.len();
        if len == self.open.capacity() {
            let cap = len.saturating_mul(2).max(8);
            let bytes = cap.saturating_mul(size_of::<Open<'_>>() + PATH_ENTRY_BYTES);
            if bytes > self.charged_stack {
                self.budget.charge_heap(bytes - self.charged_stack)?;
                self.charged_stack = bytes;
            }
            self.open.reserve_exact(cap - len);
        }
        self.open.push(frame);
        Ok(())
    }

    /// Closes the innermost container.
    fn close(&mut self, out: &mut String) {
        let Some(frame) = self.open.pop() else { return };
        match frame {
            Open::List { .. } | Open::Dict { .. } => {
                if let Some(id) = self.path.pop() {
                    if self.path.len() >= SCANNED_PATH {
                        self.deep_path.remove(&id);
                    }
                }
                out.push(if matches!(frame, Open::List { .. }) {
                    ']'
                } else {
                    '}'
                });
            }
            Open::Tuple { items, .. } => {
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
        }
    }

    /// Writes `v` and everything in it.
    fn write(&mut self, out: &mut String, v: Value<'v>) -> Result<()> {
        let depth = self.open.len();
        self.value(out, v)?;
        while self.open.len() > depth {
            let next = match self.open.last_mut() {
                Some(Open::List { list, next }) => {
                    let x = list.get(*next);
                    if x.is_some() && *next > 0 {
                        out.push_str(", ");
                    }
                    *next += 1;
                    x
                }
                Some(Open::Tuple { items, next }) => {
                    let x = items.get(*next).copied();
                    if x.is_some() && *next > 0 {
                        out.push_str(", ");
                    }
                    *next += 1;
                    x
                }
                Some(Open::Dict {
                    dict,
                    next,
                    any,
                    pending,
                }) => {
                    if let Some(x) = pending.take() {
                        out.push_str(": ");
                        Some(x)
                    } else {
                        let map = dict.map.borrow();
                        let mut found = None;
                        while let Some(entry) = map.entry_at(*next) {
                            *next += 1;
                            if let Some(kx) = entry {
                                found = Some(kx);
                                break;
                            }
                        }
                        found.map(|(k, x)| {
                            if *any {
                                out.push_str(", ");
                            }
                            *any = true;
                            *pending = Some(x);
                            k
                        })
                    }
                }
                None => None,
            };
            match next {
                Some(x) => self.value(out, x)?,
                None => self.close(out),
            }
        }
        Ok(())
    }
    /// Writes a scalar, or opens a container (its elements are written by
    /// [`Printer::write`]).
    fn value(&mut self, out: &mut String, v: Value<'v>) -> Result<()> {
        self.tick(out)?;
        match v {
            Value::None => out.push_str("None"),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Int(i) => out.push_str(itoa::Buffer::new().format(i)),
            Value::BigInt(b) => write_bigint(out, b, self.budget)?,
            Value::Float(f) => write_float(out, f, b'g'),
            Value::Str(s) => write_quoted_in(out, s.text, false, self.budget)?,
            Value::Bytes(b) => write_quoted_in(out, b.bytes, true, self.budget)?,
            Value::List(l) => {
                out.push('[');
                let id = l as *const _ as *const ();
                if !self.enter(id, Open::List { list: l, next: 0 })? {
                    out.push_str("...]");
                }
            }
            Value::Tuple(t) => {
                // Tuples cannot contain themselves: not on the cycle path.
                out.push('(');
                self.push(Open::Tuple {
                    items: t.items,
                    next: 0,
                })?;
            }
            Value::Dict(d) => {
                out.push('{');
                let id = d as *const _ as *const ();
                let frame = Open::Dict {
                    dict: d,
                    next: 0,
                    any: false,
                    pending: None,
                };
                if !self.enter(id, frame)? {
                    out.push_str("...}");
                }
            }
            Value::Elems(e) => {
                // The source is a string or bytes: a scalar.
                self.value(out, e.source)?;
                let _ = write!(out, ".{}()", e.kind.method());
            }
            Value::Range(r) => {
                if r.step != 1 {
                    let _ = write!(out, "range({}, {}, {})", r.start, r.stop, r.step);
                } else if r.start != 0 {
                    let _ = write!(out, "range({}, {})", r.start, r.stop);
                } else {
                    let _ = write!(out, "range({})", r.stop);
                }
            }
            Value::Function(f) => {
                let _ = write!(out, "<function {}>", f.code.name);
            }
            Value::Builtin(b) => {
                let _ = write!(out, "<built-in function {}>", b.name);
            }
            Value::BoundMethod(m) => {
                let _ = write!(
                    out,
                    "<built-in method {} of {} value>",
                    m.method.name,
                    m.receiver.type_name()
                );
            }
            Value::Module(m) => {
                let _ = write!(out, "<module \"{}\">", m.name);
            }
            Value::Namespace(n) => {
                let _ = write!(out, "<namespace {}>", n.path);
            }
            Value::Capability(c) => {
                let _ = write!(out, "<capability {}>", c.name);
            }
            Value::Cell(_) => out.push_str("<cell>"),
            Value::Iter(_) => out.push_str("<iterator>"),
            Value::Unbound => out.push_str("<unbound>"),
        }
        Ok(())
    }
}

/// Appends `repr(v)` to `out`. The text may take what is left of the heap
/// budget, and is charged to it: whoever keeps it copies it into the heap,
/// so text and copy together stay within the budget (and may then give the
/// text's charge back with [`Budget::release_heap`]).
pub fn write_repr(out: &mut String, v: Value<'_>, budget: &Budget) -> Result<()> {
    print_repr(out, v, budget)?.join_into_string(out);
    Ok(())
}

/// Prints `repr(v)` after the text in `out`, charged as [`write_repr`]
/// says, and returns the text's pieces: a long text is moved out of `out`
/// as it is written, so that no buffer ever grows to its size by doubling.
fn print_repr(out: &mut String, v: Value<'_>, budget: &Budget) -> Result<TextPieces> {
    let mut p = Printer::new(budget, out);
    let written = p.write(out, v);
    // The stack is freed here, whatever happened.
    budget.release_heap(p.charged_stack);
    written?;
    // The last element's text, which no later element's tick charged.
    p.charge_output(out, 0)?;
    p.pieces.check(out)?;
    budget.charge_heap(p.pieces.len(out))?;
    Ok(p.pieces)
}

/// Bytes of text after which a long printed text is moved out of its
/// growing buffer into a piece of its own.
const PIECE_BYTES: usize = 1 << 16;

/// A long text being written, as the pieces finished so far: its
/// unfinished end is the part of a `String` after `start`. The pieces are
/// joined once, into a buffer of the exact size (or straight into the
/// heap), so no buffer grows by doubling to the text's size: with the
/// system allocator keeping freed blocks, every doubling step would stay
/// resident, about twice the text beyond the copy that is kept.
pub(crate) struct TextPieces {
    start: usize,
    done: Vec<Box<str>>,
    done_len: usize,
    /// The length of the text this writing may reach.
    max_len: usize,
    /// The buffer length past which [`TextPieces::spill`] is due.
    spill_at: usize,
}

impl TextPieces {
    /// The text written after the current end of `out`, which may reach
    /// `max_len` bytes.
    pub(crate) fn new(out: &str, max_len: usize) -> TextPieces {
        let start = out.len();
        TextPieces {
            start,
            done: Vec::new(),
            done_len: 0,
            max_len,
            spill_at: start.saturating_add(PIECE_BYTES.min(max_len)),
        }
    }

    /// Whether [`TextPieces::spill`] is due (one comparison per element).
    #[inline]
    pub(crate) fn due(&self, out: &str) -> bool {
        out.len() > self.spill_at
    }

    /// The length of the text written so far.
    pub(crate) fn len(&self, out: &str) -> usize {
        self.done_len + (out.len() - self.start)
    }

    /// Fails when the text has outgrown its limit.
    pub(crate) fn check(&self, out: &str) -> Result<()> {
        if self.len(out) > self.max_len {
            return Err(Error::limit(LimitKind::HeapBytes));
        }
        Ok(())
    }

    /// Checks the limit, then moves the unfinished end of `out` into a
    /// piece of its own.
    #[cold]
    #[inline(never)]
    pub(crate) fn spill(&mut self, out: &mut String) -> Result<()> {
        self.check(out)?;
        let piece: Box<str> = out[self.start..].into();
        self.done_len += piece.len();
        self.done.push(piece);
        out.truncate(self.start);
        let room = self.max_len - self.done_len;
        self.spill_at = self.start.saturating_add(PIECE_BYTES.min(room));
        Ok(())
    }

    /// Leaves the whole text in `out`, in a buffer grown once.
    pub(crate) fn join_into_string(self, out: &mut String) {
        if self.done.is_empty() {
            return;
        }
        let end = out.split_off(self.start);
        out.reserve_exact(self.done_len + end.len());
        for piece in self.done {
            out.push_str(&piece);
        }
        out.push_str(&end);
    }

    /// Appends the whole text, with `out` after `start`, to `dest`, grown
    /// once.
    pub(crate) fn join_into_bytes(self, out: &str, dest: &mut Vec<u8>) {
        dest.reserve_exact(self.done_len + (out.len() - self.start));
        for piece in self.done {
            dest.extend_from_slice(piece.as_bytes());
        }
        dest.extend_from_slice(&out.as_bytes()[self.start..]);
    }

    /// The whole text as a string value, copied straight into the heap
    /// (the copy is charged; the pieces are freed as they are copied).
    pub(crate) fn into_value<'h>(self, out: &str, heap: Heap<'h>) -> Result<Value<'h>> {
        let mut buf = heap.string_builder(self.len(out))?;
        for piece in self.done {
            buf.push_str(&*piece);
        }
        buf.push_str(&out[self.start..]);
        heap.finish_str(buf)
    }
}

/// Appends `str(v)` to `out`: a string's own bytes, otherwise its `repr`,
/// charged to the heap budget like [`write_repr`].
pub fn write_str(out: &mut Vec<u8>, v: Value<'_>, budget: &Budget) -> Result<()> {
    match v {
        Value::Str(s) => {
            budget.charge_heap(s.text.len())?;
            budget.charge_bytes(s.text.len())?;
            out.extend_from_slice(s.text);
            Ok(())
        }
        _ => write_repr_bytes(out, v, budget),
    }
}

/// [`write_repr`] onto bytes.
pub fn write_repr_bytes(out: &mut Vec<u8>, v: Value<'_>, budget: &Budget) -> Result<()> {
    if let Value::Int(i) = v {
        // What printing one int costs, charged as the printer charges it:
        // the element, the bytes written, and the text against the heap.
        let mut digits = itoa::Buffer::new();
        let text = digits.format(i);
        budget.charge_work(ITEM_UNITS)?;
        budget.charge_work((text.len() / BYTES_PER_UNIT) as u64)?;
        budget.charge_heap(text.len())?;
        out.extend_from_slice(text.as_bytes());
        return Ok(());
    }
    let mut s = String::new();
    print_repr(&mut s, v, budget)?.join_into_bytes(&s, out);
    Ok(())
}

/// `repr(v)` as a new Rust string, charged to the heap budget as
/// [`write_repr`] says (the unit tests'; programs get a repr through
/// [`repr_value`]).
#[cfg(test)]
pub fn repr(v: Value<'_>, budget: &Budget) -> Result<String> {
    let mut s = String::new();
    write_repr(&mut s, v, budget)?;
    Ok(s)
}

/// `repr(v)` as a string value: the text is charged while it is built and
/// copied, and its charge given back once the copy is made.
pub fn repr_value<'h>(heap: Heap<'h>, v: Value<'h>) -> Result<Value<'h>> {
    let mut s = String::new();
    let pieces = print_repr(&mut s, v, heap.budget)?;
    let len = pieces.len(&s);
    let copy = pieces.into_value(&s, heap);
    heap.budget.release_heap(len);
    copy
}

// ---------------------------------------------------------------------------
// The % operator

/// Text being formatted before it is copied into the heap is written into
/// one buffer per thread, reused, so that formatting a short string
/// allocates nothing but its copy in the heap; a buffer grown past this
/// many bytes is freed after use instead of kept.
const KEPT_BUFFER_BYTES: usize = 1 << 14;

thread_local! {
    static TEXT_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Runs `f` with the thread's empty text buffer (see
/// [`KEPT_BUFFER_BYTES`]; a nested call gets a new buffer).
pub(crate) fn with_text_buffer<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    let mut buf = TEXT_BUFFER.with(std::cell::Cell::take);
    buf.clear();
    let result = f(&mut buf);
    if buf.capacity() <= KEPT_BUFFER_BYTES {
        TEXT_BUFFER.with(|b| b.set(buf));
    }
    result
}

/// Appends a small int in the radix of `%d %o %x %X`, sign first.
fn write_small_int_radix(out: &mut Vec<u8>, i: i64, conv: u8) {
    let (shift, digits): (u32, &[u8; 16]) = match conv {
        b'o' => (3, b"0123456789abcdef"),
        b'x' => (4, b"0123456789abcdef"),
        b'X' => (4, b"0123456789ABCDEF"),
        _ => {
            out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
            return;
        }
    };
    // 64 bits in octal take 22 digits.
    let mut buf = [0u8; 22];
    let mut at = buf.len();
    let mut n = i.unsigned_abs();
    let mask = (1u64 << shift) - 1;
    loop {
        at -= 1;
        buf[at] = digits[(n & mask) as usize];
        n >>= shift;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[at..]);
}

/// Appends a big int in the radix of `%d %o %x %X`, sign first.
fn write_bigint_radix(
    out: &mut Vec<u8>,
    b: &BigIntObj<'_>,
    conv: u8,
    budget: &Budget,
) -> Result<()> {
    if conv == b'd' || conv == b'i' {
        let mut s = String::new();
        write_bigint(&mut s, b, budget)?;
        out.extend_from_slice(s.as_bytes());
    } else {
        // Power-of-two radices convert in linear time.
        let n = b.to_bigint();
        let radix = if conv == b'o' { 8 } else { 16 };
        let mut s = n.to_str_radix(radix);
        if conv == b'X' {
            s.make_ascii_uppercase();
        }
        out.extend_from_slice(s.as_bytes());
    }
    Ok(())
}

/// `format % args`: starlark-go's string interpolation with the
/// conversions `s r d i o x X e E f F g G c %` and `%(key)s` keys; no flags,
/// widths or precisions.
pub fn percent<'h>(heap: Heap<'h>, format: &[u8], args: Value<'h>) -> Result<Value<'h>> {
    if let Some(v) = percent_short(heap, format, args) {
        return v;
    }
    with_text_buffer(|out| percent_into(out, heap, format, args))
}

/// The longest text [`ShortText`] holds.
pub(crate) const SHORT_TEXT: usize = 256;

/// A short text written on the stack (by `format`'s short path), then
/// copied into the heap once: the strings and ints of a
/// template's fields. Every write fails (`None`) once the text would be
/// longer than [`SHORT_TEXT`] bytes, and the caller takes its general path.
///
/// The buffer is left unwritten beyond the text: zeroing it would cost a
/// `memset` per interpolation. (It comes last, under `repr(C)`: with the
/// zeroed counts beside it, LLVM merged all three into one `memset`.)
#[repr(C)]
pub(crate) struct ShortText {
    len: usize,
    /// The bytes of string values written (see [`ShortText::finish`]).
    copied: usize,
    /// The text is `buf[..len]`.
    buf: std::mem::MaybeUninit<[u8; SHORT_TEXT]>,
}

impl ShortText {
    #[inline]
    pub(crate) fn new() -> ShortText {
        ShortText {
            len: 0,
            copied: 0,
            buf: std::mem::MaybeUninit::uninit(),
        }
    }

    /// Appends literal bytes.
    #[inline]
    pub(crate) fn push(&mut self, b: &[u8]) -> Option<()> {
        if b.len() > SHORT_TEXT - self.len {
            return None;
        }
        // SAFETY: `len + b.len() <= SHORT_TEXT` (checked above), so the
        // bytes fit the buffer after the text; `b` cannot overlap it.
        unsafe {
            crate::text::copy_short(
                b.as_ptr(),
                self.buf.as_mut_ptr().cast::<u8>().add(self.len),
                b.len(),
            );
        }
        self.len += b.len();
        Some(())
    }

    /// Appends the text `%s`, `%d` and `{}` write for a string or an int;
    /// `None` for any other value.
    #[inline]
    pub(crate) fn push_value(&mut self, v: Value<'_>) -> Option<()> {
        match v {
            Value::Int(i) => self.push(itoa::Buffer::new().format(i).as_bytes()),
            Value::Str(s) => {
                self.copied += s.text.len();
                self.push(s.text)
            }
            _ => None,
        }
    }

    /// The text written so far.
    #[inline]
    fn text(&self) -> &[u8] {
        // SAFETY: `buf[..len]` has been written (every `push` writes the
        // bytes before it counts them).
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.len) }
    }

    /// The text as a string value: the template's `template_len` bytes and
    /// the strings copied charged as work (as [`percent_short`] charges),
    /// the text to the heap.
    pub(crate) fn finish<'h>(&self, heap: Heap<'h>, template_len: usize) -> Result<Value<'h>> {
        heap.budget.charge_bytes(template_len + self.copied)?;
        heap.str(self.text())
    }
}

/// Conversions [`percent_short`] takes at most.
pub(crate) const SHORT_ARGS: usize = 8;
/// Pieces (literal runs, `%%`, values) [`percent_short`] takes at most.
pub(crate) const SHORT_PARTS: usize = 24;

/// The commonest interpolations (`"user%d" % i`, `"%s: %d" % (k, n)`):
/// only `%s`, `%d` and `%%`, of strings and ints (`%d` of ints only), at
/// most [`SHORT_ARGS`] of them and [`SHORT_TEXT`] bytes of text. The
/// pieces of the text (literal runs of the format, the texts of the
/// values) are noted, then copied once, straight into the new string. The
/// text is the one [`percent_into`] writes, charged as [`ShortText`]
/// charges. `None` for everything else, errors included: [`percent_into`]
/// decides.
#[inline]
fn percent_short<'h>(heap: Heap<'h>, format: &[u8], args: Value<'h>) -> Option<Result<Value<'h>>> {
    let items = match &args {
        Value::Tuple(t) => t.items,
        a => std::slice::from_ref(a),
    };
    if items.len() > SHORT_ARGS {
        return None;
    }
    let mut ints = [itoa::Buffer::new(); SHORT_ARGS];
    let mut ints = ints.iter_mut();
    let mut parts: [std::mem::MaybeUninit<&[u8]>; SHORT_PARTS] =
        [std::mem::MaybeUninit::uninit(); SHORT_PARTS];
    let mut m = 0;
    let mut len = 0usize;
    let mut copied = 0usize;
    let mut k = 0;
    let mut rest = format;
    macro_rules! part {
        ($b:expr) => {{
            let b: &[u8] = $b;
            *parts.get_mut(m)? = std::mem::MaybeUninit::new(b);
            m += 1;
            len += b.len();
        }};
    }
    loop {
        // Formats are short: a byte loop finds a `%` in the first few
        // bytes for less than a call.
        let found = if rest.len() <= 16 {
            rest.iter().position(|&c| c == b'%')
        } else {
            crate::text::find_byte(b'%', rest)
        };
        let Some(j) = found else {
            break;
        };
        if j > 0 {
            part!(&rest[..j]);
        }
        let conv = *rest.get(j + 1)?;
        rest = &rest[j + 2..];
        match (conv, items.get(k)) {
            (b'%', _) => part!(b"%"),
            (b'd' | b's', Some(&Value::Int(i))) => {
                part!(ints.next()?.format(i).as_bytes());
                k += 1;
            }
            (b's', Some(&Value::Str(s))) => {
                copied += s.text.len();
                part!(s.text);
                k += 1;
            }
            _ => return None,
        }
    }
    if !rest.is_empty() {
        part!(rest);
    }
    if k != items.len() || len > SHORT_TEXT {
        return None;
    }
    // SAFETY: the first `m` parts were written above.
    let parts = unsafe { std::slice::from_raw_parts(parts.as_ptr().cast::<&[u8]>(), m) };
    Some(
        heap.budget
            .charge_bytes(format.len() + copied)
            .and_then(|()| heap.str_of_parts(parts)),
    )
}

/// [`percent`], with `out` to write the text in before it is copied into
/// the heap.
fn percent_into<'h>(
    out: &mut Vec<u8>,
    heap: Heap<'h>,
    format: &[u8],
    args: Value<'h>,
) -> Result<Value<'h>> {
    let budget = heap.budget;
    let nargs = match args {
        Value::Tuple(t) => t.items.len(),
        _ => 1,
    };
    // Room for the usual short conversions, so the text rarely regrows.
    out.reserve(format.len().saturating_add(16 * nargs.min(64)));
    // The text of a float, reused by every conversion.
    let mut scratch = String::new();
    let mut index = 0usize;
    // What `%s` and `%r` charged for the text they wrote, given back once
    // the text is copied into the heap.
    let mut text_charged = 0usize;
    let mut rest = format;
    loop {
        if out.len() > budget.limits.max_heap_bytes {
            return Err(Error::limit(LimitKind::HeapBytes));
        }
        // memchr over the rest of the format; what it read is charged.
        let found = crate::text::find_byte(b'%', rest);
        budget.charge_bytes(found.map_or(rest.len(), |i| i + 1))?;
        let Some(i) = found else {
            out.extend_from_slice(rest);
            break;
        };
        out.extend_from_slice(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix(b"%") {
            out.push(b'%');
            rest = r;
            continue;
        }
        let arg = if let Some(r) = rest.strip_prefix(b"(") {
            let Some(j) = crate::text::find_byte(b')', r) else {
                return Err(Error::msg("incomplete format key"));
            };
            let key = &r[..j];
            let Value::Dict(d) = args else {
                return Err(Error::msg("format requires a mapping"));
            };
            // Lookup errors cannot happen for a string key; like
            // starlark-go, any would read as "not found".
            let found = d.map.borrow().get(heap.str(key)?).ok().flatten();
            let Some(v) = found else {
                return Err(Error::msg(format!(
                    "key not found: {}",
                    crate::text::lossy(key)
                )));
            };
            rest = &r[j + 1..];
            v
        } else {
            if index >= nargs {
                return Err(Error::msg("not enough arguments for format string"));
            }
            match args {
                Value::Tuple(t) => t.items[index],
                _ => args,
            }
        };
        // The conversion is one byte (Go shows a non-ASCII one as the
        // character of that code).
        let Some(&conv) = rest.first() else {
            return Err(Error::msg("incomplete format"));
        };
        let conv = conv as char;
        match conv {
            's' | 'r' => {
                let before = out.len();
                if conv == 's' {
                    write_str(out, arg, budget)?;
                } else {
                    write_repr_bytes(out, arg, budget)?;
                }
                text_charged += out.len() - before;
            }
            'd' | 'i' | 'o' | 'x' | 'X' => {
                if let Value::Int(i) = arg {
                    write_small_int_radix(out, i, conv as u8);
                    rest = &rest[1..];
                    index += 1;
                    continue;
                }
                let n = crate::ops::number_to_int(heap, arg).map_err(|e| {
                    let msg = e.message().unwrap_or_default().to_string();
                    Error::msg(format!("%{conv} format requires integer: {msg}"))
                })?;
                match n {
                    Value::Int(i) => write_small_int_radix(out, i, conv as u8),
                    Value::BigInt(b) => write_bigint_radix(out, b, conv as u8, budget)?,
                    _ => {}
                }
            }
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
                let Some(f) = crate::ops::as_float(arg) else {
                    return Err(Error::msg(format!(
                        "%{conv} format requires float, not {}",
                        arg.type_name()
                    )));
                };
                scratch.clear();
                write_float(&mut scratch, f, conv as u8);
                out.extend_from_slice(scratch.as_bytes());
            }
            'c' => match arg {
                Value::Int(_) | Value::BigInt(_) => {
                    let code = match arg {
                        Value::Int(i) if (0..=0x10FFFF).contains(&i) => Some(i as u32),
                        _ => None,
                    };
                    let Some(code) = code else {
                        let mut msg =
                            String::from("%c format requires a valid Unicode code point, got ");
                        write_repr(&mut msg, arg, budget)?;
                        return Err(Error::msg(msg));
                    };
                    // Surrogates are not chars; Go writes U+FFFD for them.
                    let c = char::from_u32(code).unwrap_or('\u{FFFD}');
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                Value::Str(s) => match crate::text::decode(s.text) {
                    // One character (an invalid byte is U+FFFD, written so).
                    (c, n) if n > 0 && n == s.text.len() => {
                        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes())
                    }
                    _ => return Err(Error::msg("%c format requires a single-character string")),
                },
                _ => {
                    return Err(Error::msg(format!(
                        "%c format requires int or single-character string, not {}",
                        arg.type_name()
                    )))
                }
            },
            '%' => out.push(b'%'),
            _ => return Err(Error::msg(format!("unknown conversion %{conv}"))),
        }
        rest = &rest[1..];
        index += 1;
    }
    // The reference (starlark-ref) makes no exception for a mapping here:
    // `"abc" % {}` fails like `"abc" % 1`.
    if index < nargs {
        return Err(Error::msg("too many arguments for format string"));
    }
    if out.len() > budget.limits.max_heap_bytes {
        return Err(Error::limit(LimitKind::HeapBytes));
    }
    let copy = heap.str(&*out);
    budget.release_heap(text_charged);
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Limits;
    use bumpalo::Bump;
    use std::time::Instant;

    fn budget() -> Budget {
        Budget::new(Limits::default(), Instant::now(), None)
    }

    /// Quoting a long text block by block writes exactly what quoting it
    /// whole writes, whatever characters (or invalid bytes) the block cuts
    /// fall among.
    #[test]
    fn quoting_in_blocks_matches_quoting_whole() {
        let mut noise = Vec::with_capacity(20_000);
        let mut x: u32 = 12_345;
        for _ in 0..20_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            noise.push((x >> 16) as u8);
        }
        let texts: Vec<Vec<u8>> = vec![
            format!("a{}", "😀".repeat(3000)).into_bytes(),
            format!("ab{}", "é\n".repeat(5000)).into_bytes(),
            [
                &b"xyz"[..],
                &[0xe2, 0x82, 0x80, 0x80, 0x80, 0x80].repeat(3000),
            ]
            .concat(),
            noise,
        ];
        let b = budget();
        for t in &texts {
            for shift in 0..4 {
                let s = &t[shift..];
                for bytes in [false, true] {
                    let mut whole = String::new();
                    write_quoted(&mut whole, s, bytes);
                    let mut blocks = String::new();
                    write_quoted_in(&mut blocks, s, bytes, &b).unwrap();
                    assert_eq!(blocks, whole);
                }
            }
        }
    }

    /// `%f` of multiples of 1/64 (printed by the shortcut) and of other
    /// floats (the general path) gives exactly the general formatting.
    #[test]
    fn percent_f_shortcut_matches_the_general_formatting() {
        let mut samples: Vec<f64> = (-70_000..70_000).map(|k| k as f64 / 64.0).collect();
        samples.extend([
            0.1,
            -0.1,
            1e-7,
            123456.789,
            -0.0,
            0.0,
            8.9e15 / 64.0,
            9.1e15 / 64.0,
            -((1u64 << 52) as f64) / 64.0,
            1e300,
        ]);
        for f in samples {
            let mut out = String::new();
            write_float(&mut out, f, b'f');
            assert_eq!(out, format!("{f:.6}"), "{f:e}");
        }
    }

    /// `str(f)` under starlark-ref for each float.
    #[test]
    fn float_str_matches_starlark_go() {
        let table: &[(f64, &str)] = &[
            (1e6, "1e+06"),
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1e-7, "1e-07"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "1e+20"),
            (123456789.0, "1.23456789e+08"),
            (1.5e300, "1.5e+300"),
            (f64::INFINITY, "+inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (1e16, "1e+16"),
            (1e15, "1e+15"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (100.0, "100.0"),
            (2.5e-5, "2.5e-05"),
            (-1.25e22, "-1.25e+22"),
            (0.5, "0.5"),
            (123456.0, "123456.0"),
            (1234567.0, "1.234567e+06"),
            (0.001, "0.001"),
            (3.25159, "3.25159"),
            (-2.5, "-2.5"),
            (1e100, "1e+100"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0 / 3.0, "0.6666666666666666"),
            (10.0, "10.0"),
            (0.1, "0.1"),
            (999999.0, "999999.0"),
            (1.5e-10, "1.5e-10"),
            (65536.0, "65536.0"),
            (9007199254740992.0, "9.007199254740992e+15"),
            (-1e-300, "-1e-300"),
            (1.0e-4 * 3.0, "0.00030000000000000003"),
            (4.35, "4.35"),
            (1e22, "1e+22"),
            (1e23, "1e+23"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (100000.0, "100000.0"),
            (0.000123456789, "0.000123456789"),
            (1180591620717411303424.0, "1.1805916207174113e+21"),
        ];
        for &(f, want) in table {
            assert_eq!(float_str(f), want, "str({f:?})");
        }
    }

    #[test]
    fn float_conversions_e_f_g() {
        let conv = |f: f64, c: u8| {
            let mut s = String::new();
            write_float(&mut s, f, c);
            s
        };
        let e = [
            (0.5078125, "5.078125e-01"),
            (0.0, "0.000000e+00"),
            (-0.0, "-0.000000e+00"),
            (1e-300, "1.000000e-300"),
            (123.456, "1.234560e+02"),
            (2.5, "2.500000e+00"),
            (1e100, "1.000000e+100"),
        ];
        for (f, want) in e {
            assert_eq!(conv(f, b'e'), want);
        }
        assert_eq!(conv(12345.678, b'E'), "1.234568E+04");
        let f = [
            (0.5078125, "0.507812"),
            (2.5, "2.500000"),
            (-0.0, "-0.000000"),
            (1e-7, "0.000000"),
            (123.4567895, "123.456789"),
            (1e20, "100000000000000000000.000000"),
        ];
        for (x, want) in f {
            assert_eq!(conv(x, b'f'), want);
        }
        assert_eq!(conv(1.5, b'F'), "%F");
        assert_eq!(conv(f64::NAN, b'F'), "nan");
        assert_eq!(conv(f64::INFINITY, b'e'), "+inf");
        assert_eq!(conv(1e6, b'g'), "1e+06");
        assert_eq!(conv(1e-5, b'G'), "1E-05");
        assert_eq!(conv(1e20, b'G'), "1E+20");
        assert_eq!(conv(2.0, b'G'), "2.0");
    }

    #[test]
    fn quoting_follows_go() {
        let q = |s: &[u8], b: bool| {
            let mut out = String::new();
            write_quoted(&mut out, s, b);
            out
        };
        assert_eq!(q("a\"b\n\x01é".as_bytes(), false), r#""a\"b\n\x01é""#);
        assert_eq!(q(b"\x7f\t\r\\'", false), r#""\x7f\t\r\\'""#);
        assert_eq!(q(b"a\"b\n\x01\xff", true), r#"b"a\"b\n\x01\xff""#);
        assert_eq!(
            q("\u{a0}\u{200b}\u{7}\u{b}".as_bytes(), false),
            r#""\u00a0\u200b\a\v""#
        );
        assert_eq!(q("\u{F0000}😀".as_bytes(), false), "\"\\U000f0000😀\"");
    }

    #[test]
    fn repr_of_values_and_cycles() {
        let bump = Bump::new();
        let b = budget();
        let heap = Heap::new(&bump, &b);
        let one = Value::Int(1);
        let t1 = heap.tuple(&[one]).unwrap();
        let t2 = heap.tuple(&[one, Value::Float(2.0)]).unwrap();
        let empty = heap.tuple(&[]).unwrap();
        let s = heap.str("a").unwrap();
        let l = heap
            .list(&[t1, t2, empty, s, Value::None, Value::Bool(true)])
            .unwrap();
        assert_eq!(
            repr(l, &b).unwrap(),
            r#"[(1,), (1, 2.0), (), "a", None, True]"#
        );
        let d = heap.dict(2).unwrap();
        d.map.borrow_mut().insert(s, l).unwrap();
        d.map
            .borrow_mut()
            .insert(Value::Int(2), Value::Dict(d))
            .unwrap();
        assert_eq!(
            repr(Value::Dict(d), &b).unwrap(),
            r#"{"a": [(1,), (1, 2.0), (), "a", None, True], 2: {...}}"#
        );
        // a = [1]; a.append(a)
        let a = heap.list(&[one]).unwrap();
        if let Value::List(lo) = a {
            lo.items.borrow_mut().push(a);
        }
        assert_eq!(repr(a, &b).unwrap(), "[1, [...]]");
        let t = heap.tuple(&[a, Value::Int(2)]).unwrap();
        assert_eq!(repr(t, &b).unwrap(), "([1, [...]], 2)");
        let pair = heap.list(&[a, a]).unwrap();
        assert_eq!(repr(pair, &b).unwrap(), "[[1, [...]], [1, [...]]]");
        let mut out = Vec::new();
        write_str(&mut out, s, &b).unwrap();
        write_str(&mut out, t1, &b).unwrap();
        assert_eq!(out, b"a(1,)");
        let r = heap
            .alloc(crate::value::RangeObj {
                start: 0,
                stop: 10,
                step: 2,
            })
            .unwrap();
        assert_eq!(repr(Value::Range(r), &b).unwrap(), "range(0, 10, 2)");
        let r = heap
            .alloc(crate::value::RangeObj {
                start: 1,
                stop: 5,
                step: 1,
            })
            .unwrap();
        assert_eq!(repr(Value::Range(r), &b).unwrap(), "range(1, 5)");
        let r = heap
            .alloc(crate::value::RangeObj {
                start: 0,
                stop: 5,
                step: 1,
            })
            .unwrap();
        assert_eq!(repr(Value::Range(r), &b).unwrap(), "range(5)");
        let big = heap.int(num_bigint::BigInt::from(1) << 70).unwrap();
        assert_eq!(repr(big, &b).unwrap(), "1180591620717411303424");
        let bytes = heap.bytes(b"ab").unwrap();
        assert_eq!(repr(bytes, &b).unwrap(), r#"b"ab""#);
    }

    #[test]
    fn deep_nesting_prints_in_full() {
        let bump = Bump::new();
        let b = budget();
        let heap = Heap::new(&bump, &b);
        let mut v = Value::Int(1);
        let mut d = heap.dict(0).unwrap();
        for i in 0..100_000 {
            v = if i % 3 == 0 {
                heap.tuple(&[v]).unwrap()
            } else {
                heap.list(&[v]).unwrap()
            };
            let outer = heap.dict(1).unwrap();
            let k = heap.str("k").unwrap();
            outer.map.borrow_mut().insert(k, Value::Dict(d)).unwrap();
            d = outer;
        }
        let s = repr(v, &b).unwrap();
        let mut want: String = (0..100_000)
            .rev()
            .map(|i| if i % 3 == 0 { '(' } else { '[' })
            .collect();
        want.push('1');
        for i in 0..100_000 {
            want.push_str(if i % 3 == 0 { ",)" } else { "]" });
        }
        assert_eq!(s.len(), 1 + 2 * 100_000 + 100_000usize.div_ceil(3));
        assert!(s == want);
        assert!(!s.contains("..."));
        let s = repr(Value::Dict(d), &b).unwrap();
        assert_eq!(
            s,
            format!("{}{{}}{}", "{\"k\": ".repeat(100_000), "}".repeat(100_000))
        );
    }

    #[test]
    fn only_cycles_print_dots() {
        let bump = Bump::new();
        let b = budget();
        let heap = Heap::new(&bump, &b);
        // f = [1]; g = (f, [f, (f,)]); f.append(g): tuples are not on the
        // cycle path, as in starlark-go.
        let Value::List(f) = heap.list(&[Value::Int(1)]).unwrap() else {
            unreachable!()
        };
        let inner = heap.tuple(&[Value::List(f)]).unwrap();
        let l2 = heap.list(&[Value::List(f), inner]).unwrap();
        let g = heap.tuple(&[Value::List(f), l2]).unwrap();
        f.items.borrow_mut().push(g);
        assert_eq!(
            repr(Value::List(f), &b).unwrap(),
            "[1, ([...], [[...], ([...],)])]"
        );
        assert_eq!(
            repr(g, &b).unwrap(),
            "([1, ([...], [[...], ([...],)])], [[1, ([...], [...])], ([1, ([...], [...])],)])"
        );
        let e = heap.dict(1).unwrap();
        let k = heap.str("k").unwrap();
        e.map.borrow_mut().insert(k, Value::Dict(e)).unwrap();
        assert_eq!(repr(Value::Dict(e), &b).unwrap(), r#"{"k": {...}}"#);
    }

    #[test]
    fn output_is_bounded_by_the_heap_limit() {
        let bump = Bump::new();
        let b = Budget::new(
            Limits {
                max_heap_bytes: 1 << 16,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        let heap = Heap::new(&bump, &b);
        let s = heap.str(&"x".repeat(1000)).unwrap();
        let l = heap.list(&[s; 100]).unwrap();
        assert!(repr(l, &b).is_err());
    }

    /// A text longer than a piece is joined from its pieces in order, after
    /// whatever the buffer held, by every way of keeping it; its charge
    /// is given back once the heap holds the copy.
    #[test]
    fn long_text_is_joined_from_pieces() {
        let bump = Bump::new();
        let b = budget();
        let heap = Heap::new(&bump, &b);
        let items: Vec<Value<'_>> = (0..300_000).map(Value::Int).collect();
        let l = heap.list(&items).unwrap();
        let mut want = String::from("[");
        for i in 0..300_000 {
            if i > 0 {
                want.push_str(", ");
            }
            want.push_str(&i.to_string());
        }
        want.push(']');
        assert!(want.len() > 3 * PIECE_BYTES);

        let charged = b.heap_bytes();
        let v = repr_value(heap, l).unwrap();
        assert_eq!(v.as_str(), Some(want.as_str()));
        // The copy and its string object stay charged, the text does not.
        let copy = want.len().div_ceil(8) * 8;
        assert!(b.heap_bytes() - charged < copy + 64, "{}", b.heap_bytes());

        let mut out = String::from("prefix ");
        write_repr(&mut out, l, &b).unwrap();
        assert_eq!(out, format!("prefix {want}"));

        let mut bytes = b"bytes ".to_vec();
        write_repr_bytes(&mut bytes, l, &b).unwrap();
        assert_eq!(bytes, format!("bytes {want}").into_bytes());
    }

    fn pct<'h>(heap: Heap<'h>, f: &str, arg: Value<'h>) -> std::result::Result<String, String> {
        match percent(heap, f.as_bytes(), arg) {
            Ok(v) => Ok(v.as_str().unwrap_or_default().to_string()),
            Err(e) => Err(e.message().unwrap_or("limit").to_string()),
        }
    }

    #[test]
    fn small_ints_in_every_radix_match_rusts_formatting() {
        let bump = Bump::new();
        let b = budget();
        let heap = Heap::new(&bump, &b);
        for n in [
            0,
            1,
            -1,
            7,
            8,
            -8,
            15,
            16,
            255,
            -256,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let m = n.unsigned_abs();
            let sign = if n < 0 { "-" } else { "" };
            let want = [
                ("%d", n.to_string()),
                ("%i", n.to_string()),
                ("%o", format!("{sign}{m:o}")),
                ("%x", format!("{sign}{m:x}")),
                ("%X", format!("{sign}{m:X}")),
                ("%s", n.to_string()),
                ("%r", n.to_string()),
            ];
            for (f, text) in want {
                assert_eq!(pct(heap, f, Value::Int(n)), Ok(text), "{f} {n}");
            }
        }
    }

    #[test]
    fn an_int_is_charged_as_the_printer_charges_it() {
        // The shortcut for an int's repr charges what printing it as an
        // element charges: the text against the heap, and work.
        for n in [0, -12345, i64::MIN] {
            let (fast, slow) = (budget(), budget());
            let mut out = Vec::new();
            write_repr_bytes(&mut out, Value::Int(n), &fast).unwrap();
            let mut text = String::new();
            print_repr(&mut text, Value::Int(n), &slow)
                .unwrap()
                .join_into_string(&mut text);
            assert_eq!(out, text.as_bytes());
            assert_eq!(fast.heap_bytes(), slow.heap_bytes());
            assert_eq!(fast.work_charged(), slow.work_charged());
        }
        // With no room left for its text, it fails as printing does.
        let limits = Limits {
            max_heap_bytes: 3,
            ..Limits::default()
        };
        let small = Budget::new(limits, Instant::now(), None);
        let err = write_repr_bytes(&mut Vec::new(), Value::Int(-12345), &small).unwrap_err();
        assert!(matches!(
            err.kind(),
            crate::error::ErrorKind::Limit(LimitKind::HeapBytes)
        ));
    }

    #[test]
    fn percent_formatting() {
        let bump = Bump::new();
        let b = budget();
        let heap = Heap::new(&bump, &b);
        let i = Value::Int;
        let f = Value::Float;
        assert_eq!(pct(heap, "%d", f(3.7)), Ok("3".into()));
        assert_eq!(pct(heap, "%x", i(-255)), Ok("-ff".into()));
        assert_eq!(pct(heap, "%X", i(255)), Ok("FF".into()));
        assert_eq!(pct(heap, "%o", i(-8)), Ok("-10".into()));
        assert_eq!(pct(heap, "%e", i(1)), Ok("1.000000e+00".into()));
        assert_eq!(pct(heap, "%g", f(1.0)), Ok("1.0".into()));
        assert_eq!(pct(heap, "%G", f(1e6)), Ok("1E+06".into()));
        assert_eq!(pct(heap, "%F", f(1.5)), Ok("%F".into()));
        assert_eq!(pct(heap, "%c", i(65)), Ok("A".into()));
        assert_eq!(pct(heap, "%c", i(0xD800)), Ok("\u{FFFD}".into()));
        let e_acute = heap.str("é").unwrap();
        assert_eq!(pct(heap, "%c", e_acute), Ok("é".into()));
        let x = heap.str("x").unwrap();
        assert_eq!(
            pct(heap, "%r|%s", heap.tuple(&[x, x]).unwrap()),
            Ok("\"x\"|x".into())
        );
        assert_eq!(pct(heap, "%%", heap.tuple(&[]).unwrap()), Ok("%".into()));
        let big = heap.int(num_bigint::BigInt::from(1) << 70).unwrap();
        assert_eq!(pct(heap, "%x", big), Ok("400000000000000000".into()));
        assert_eq!(pct(heap, "%d", big), Ok("1180591620717411303424".into()));
        assert_eq!(pct(heap, "%e", big), Ok("1.180592e+21".into()));
        let l = heap.list(&[i(1), i(2)]).unwrap();
        assert_eq!(pct(heap, "%s", l), Ok("[1, 2]".into()));
        let d = heap.dict(1).unwrap();
        let a = heap.str("a").unwrap();
        d.map.borrow_mut().insert(a, i(2)).unwrap();
        let dv = Value::Dict(d);
        assert_eq!(pct(heap, "%(a)d %(a)r", dv), Ok("2 2".into()));
        assert_eq!(pct(heap, "%s", dv), Ok("{\"a\": 2}".into()));
        assert_eq!(
            pct(heap, "abc", dv),
            Err("too many arguments for format string".into())
        );

        let errs: &[(&str, Value<'_>, &str)] = &[
            (
                "%c",
                heap.str("ab").unwrap(),
                "%c format requires a single-character string",
            ),
            (
                "%c",
                i(-1),
                "%c format requires a valid Unicode code point, got -1",
            ),
            (
                "%c",
                f(1.5),
                "%c format requires int or single-character string, not float",
            ),
            (
                "%s %s",
                heap.tuple(&[i(1)]).unwrap(),
                "not enough arguments for format string",
            ),
            (
                "%s",
                heap.tuple(&[i(1), i(2)]).unwrap(),
                "too many arguments for format string",
            ),
            ("%(b)s", dv, "key not found: b"),
            ("%(a)s %s", dv, "not enough arguments for format string"),
            ("%(a)s", l, "format requires a mapping"),
            ("%z", i(1), "unknown conversion %z"),
            ("%5d", i(1), "unknown conversion %5"),
            ("%", i(1), "incomplete format"),
            ("%(a", dv, "incomplete format key"),
            (
                "%d",
                x,
                "%d format requires integer: cannot convert string to int",
            ),
            (
                "%d",
                Value::Bool(true),
                "%d format requires integer: cannot convert bool to int",
            ),
            (
                "%d",
                f(f64::INFINITY),
                "%d format requires integer: cannot convert float infinity to integer",
            ),
            ("%e", x, "%e format requires float, not string"),
            ("abc", i(1), "too many arguments for format string"),
        ];
        for &(fmt, arg, want) in errs {
            assert_eq!(pct(heap, fmt, arg), Err(want.to_string()), "{fmt}");
        }
    }
}
