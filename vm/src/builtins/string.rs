//! The methods of strings, and `bytes.elems`.
//!
//! Starlark strings are byte strings and index by byte, so positions
//! (`find`, `index`, the `start`/`end` arguments) are byte offsets, which
//! may fall inside a multi-byte character; searching, splitting and
//! comparing work on bytes. Methods that need characters decode as Go does
//! (see [`crate::text`]): an invalid byte is U+FFFD, which case mappings
//! write in its place, as Go's `strings.Map` does. Case mappings use
//! one-to-one (simple) mappings, as Go's `unicode.To*` do. Results that
//! are pieces of the receiver share its bytes instead of copying them.
//! Work that grows with the input is charged to the budget as it goes.
//!
//! `elems`, `codepoints`, `elem_ords` and `codepoint_ords` return element
//! views (`string.elems`, `string.codepoints`), iterable only, as in
//! starlark-go.

use super::args::{self, pos, positional};
use super::list::indices;
use super::{Args, BuiltinFn};
use crate::budget::WORK_CHECK_BYTES;
use crate::error::{Error, LimitKind, Result};
use crate::format;
use crate::interp::Thread;
use crate::text::{self, decode, decode_last, is_invalid, runes};
use crate::value::{ElemsKind, StrObj, Value};
use unicode_general_category::{get_general_category as category, GeneralCategory};

/// The methods of strings, sorted by name.
pub static METHODS: &[BuiltinFn] = &[
    method!("capitalize", capitalize),
    method!("codepoint_ords", codepoint_ords),
    method!("codepoints", codepoints),
    method!("count", count),
    method!("elem_ords", elem_ords),
    method!("elems", elems),
    method!("endswith", endswith),
    method!("find", find),
    method!("format", super::format_method::format),
    method!("index", index),
    method!("isalnum", isalnum),
    method!("isalpha", isalpha),
    method!("isdigit", isdigit),
    method!("islower", islower),
    method!("isspace", isspace),
    method!("istitle", istitle),
    method!("isupper", isupper),
    method!("join", join),
    method!("lower", lower),
    method!("lstrip", lstrip),
    method!("partition", partition),
    method!("removeprefix", removeprefix),
    method!("removesuffix", removesuffix),
    method!("replace", replace),
    method!("rfind", rfind),
    method!("rindex", rindex),
    method!("rpartition", rpartition),
    method!("rsplit", rsplit),
    method!("rstrip", rstrip),
    method!("split", split),
    method!("splitlines", splitlines),
    method!("startswith", startswith),
    method!("strip", strip),
    method!("title", title),
    method!("upper", upper),
];

/// The methods of bytes.
pub static BYTES_METHODS: &[BuiltinFn] = &[method!("elems", bytes_elems)];

type R<'h> = Result<Value<'h>>;

#[inline(always)]
pub(super) fn recv<'h>(a: &Args<'h, '_>) -> Result<&'h [u8]> {
    match a.recv() {
        Value::Str(s) => Ok(s.text),
        // The interpreter only binds string methods to strings.
        v => Err(super::receiver_error("string", v)),
    }
}

// ---------------------------------------------------------------------------
// Case

/// Go's one-to-one case mappings (`unicode.ToLower`/`ToUpper`/`ToTitle`,
/// UnicodeData's simple mappings). Rust's char mappings are the full
/// ones; they differ only where the full mapping is several characters,
/// handled by [`simple_exception`].
fn simple(mut it: impl Iterator<Item = char>, c: char, upper: bool) -> char {
    match (it.next(), it.next()) {
        (Some(m), None) => m,
        _ => simple_exception(c, upper),
    }
}

/// The simple mapping of a character whose full mapping is several
/// characters: `İ` lowers to `i`; the Greek letters with ypogegrammeni
/// (`ᾀ`) upper to their titlecase forms (`ᾈ`); everything else (`ß`,
/// `ŉ`, `ﬃ`, ...) has none and stays.
fn simple_exception(c: char, upper: bool) -> char {
    let u = c as u32;
    let mapped = match (upper, u) {
        (false, 0x130) => 0x69,
        (true, 0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7) => u + 8,
        (true, 0x1FB3 | 0x1FC3 | 0x1FF3) => u + 9,
        _ => u,
    };
    char::from_u32(mapped).unwrap_or(c)
}

fn to_lower(c: char) -> char {
    simple(c.to_lowercase(), c, false)
}

fn to_upper(c: char) -> char {
    simple(c.to_uppercase(), c, true)
}

/// Go's `unicode.ToTitle`: the uppercase mapping except for the digraphs
/// (`ǆ` -> `ǅ`) and Georgian Mkhedruli letters (no title mapping).
fn to_title(c: char) -> char {
    match c as u32 {
        0x1C4..=0x1C6 => '\u{1C5}',
        0x1C7..=0x1C9 => '\u{1C8}',
        0x1CA..=0x1CC => '\u{1CB}',
        0x1F1..=0x1F3 => '\u{1F2}',
        0x10D0..=0x10FA | 0x10FD..=0x10FF => c,
        _ => to_upper(c),
    }
}

/// starlark-go's `isCasedRune`: ASCII letters and anything whose simple
/// case-fold orbit has another member (`ß` folds with `ẞ`, which only maps
/// the other way).
fn is_cased(c: char) -> bool {
    c.is_ascii_alphabetic() || to_lower(c) != c || to_upper(c) != c || c == '\u{DF}'
}

/// Maps each character of `s` with `f` (given its index), an invalid
/// byte as U+FFFD, which every mapping keeps.
fn map_chars<'h>(th: &Thread<'h>, s: &[u8], mut f: impl FnMut(usize, char) -> char) -> R<'h> {
    // A simple mapping changes a character's length by at most 1 byte per
    // byte (e.g. 'ı' to 'I' shrinks; 'ſ' grows), so twice is a safe bound
    // for valid UTF-8; an invalid byte becomes 3.
    let factor = if std::str::from_utf8(s).is_ok() { 2 } else { 3 };
    let mut out = th.heap.string_builder(s.len().saturating_mul(factor))?;
    for (i, (_, n, c)) in runes(s).enumerate() {
        out.push(f(i, c));
        th.budget.charge_bytes(n)?;
    }
    th.heap.finish_str(out)
}

fn capitalize<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("capitalize", a, 0, 0)?;
    let s = recv(a)?;
    map_chars(th, s, |i, c| if i == 0 { to_title(c) } else { to_lower(c) })
}

/// `upper` or `lower` of an ASCII string: a copy of exactly its length,
/// mapped in place (the simple case mappings of ASCII letters are the ASCII
/// ones, and nothing else in ASCII changes), with the deadline checked
/// between blocks as [`map_chars`] checks it between characters.
fn map_ascii<'h>(th: &Thread<'h>, s: &[u8], upper: bool) -> R<'h> {
    if s.len() <= args::CHECK_EVERY {
        // One block: the new string written in one pass, no clock check.
        return if upper {
            th.heap.str_mapped(s, |b| b.to_ascii_uppercase())
        } else {
            th.heap.str_mapped(s, |b| b.to_ascii_lowercase())
        };
    }
    th.heap.charge(s.len())?;
    let text = th.heap.bump.alloc_slice_copy(s);
    let mut rest: &mut [u8] = &mut *text;
    loop {
        let (block, tail) = rest.split_at_mut(rest.len().min(args::CHECK_EVERY));
        if upper {
            block.make_ascii_uppercase();
        } else {
            block.make_ascii_lowercase();
        }
        rest = tail;
        if rest.is_empty() {
            break;
        }
        th.budget.check_time()?;
    }
    th.heap.str_in_arena(text)
}

/// Whether a byte of `s` passes `f`, scanned in blocks whose work is
/// charged (the deadline interrupts a scan of a long string).
fn any_byte(th: &Thread<'_>, s: &[u8], f: fn(&u8) -> bool) -> Result<bool> {
    for block in s.chunks(crate::budget::WORK_BLOCK) {
        th.budget.charge_bytes(block.len())?;
        if block.iter().any(f) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lower<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("lower", a, 0, 0)?;
    let s = recv(a)?;
    change_case(th, a.recv(), s, false)
}

fn upper<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("upper", a, 0, 0)?;
    let s = recv(a)?;
    change_case(th, a.recv(), s, true)
}

/// `recv.upper()` (or `lower()`) of the string `recv` whose text is `s`.
pub(crate) fn change_case<'h>(th: &Thread<'h>, recv: Value<'h>, s: &[u8], upper: bool) -> R<'h> {
    if s.is_ascii() {
        let other_case = if upper {
            u8::is_ascii_lowercase
        } else {
            u8::is_ascii_uppercase
        };
        if !any_byte(th, s, other_case)? {
            // Nothing to change: the string itself (strings are immutable).
            return Ok(recv);
        }
        return map_ascii(th, s, upper);
    }
    if upper {
        map_chars(th, s, |_, c| to_upper(c))
    } else {
        map_chars(th, s, |_, c| to_lower(c))
    }
}

fn title<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("title", a, 0, 0)?;
    let mut prev_cased = false;
    map_chars(th, recv(a)?, |_, c| {
        let r = if prev_cased { to_lower(c) } else { to_title(c) };
        prev_cased = is_cased(r);
        r
    })
}

fn all_chars<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, f: impl Fn(char) -> bool) -> R<'h> {
    positional(name, a, 0, 0)?;
    let s = recv(a)?;
    // An invalid byte is U+FFFD, which no predicate here accepts.
    for (_, n, c) in runes(s) {
        th.budget.charge_bytes(n)?;
        if !f(c) {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(!s.is_empty()))
}

/// Go's `unicode.IsDigit`: general category Nd (so `"²"` is not a digit).
fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && category(c) == GeneralCategory::DecimalNumber)
}

/// Go's `unicode.IsLetter`: general category L.
fn is_letter(c: char) -> bool {
    use GeneralCategory as G;
    c.is_ascii_alphabetic()
        || (!c.is_ascii()
            && matches!(
                category(c),
                G::UppercaseLetter
                    | G::LowercaseLetter
                    | G::TitlecaseLetter
                    | G::ModifierLetter
                    | G::OtherLetter
            ))
}

fn isalnum<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(th, a, "isalnum", |c| is_letter(c) || is_digit(c))
}

fn isalpha<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(th, a, "isalpha", is_letter)
}

fn isdigit<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(th, a, "isdigit", is_digit)
}

fn isspace<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(th, a, "isspace", char::is_whitespace)
}

fn islower<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("islower", a, 0, 0)?;
    let s = recv(a)?;
    Ok(Value::Bool(cased_and_fixed(th, s, to_lower)?))
}

/// starlark-go's `isCasedString(s) && s == map(s)`: an invalid byte makes
/// the mapping differ (it writes U+FFFD there).
fn cased_and_fixed(th: &Thread<'_>, s: &[u8], map: fn(char) -> char) -> Result<bool> {
    let mut cased = false;
    for (_, n, c) in runes(s) {
        th.budget.charge_bytes(n)?;
        if is_invalid(c, n) || map(c) != c {
            return Ok(false);
        }
        cased |= is_cased(c);
    }
    Ok(cased)
}

fn isupper<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("isupper", a, 0, 0)?;
    let s = recv(a)?;
    Ok(Value::Bool(cased_and_fixed(th, s, to_upper)?))
}

fn istitle<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("istitle", a, 0, 0)?;
    let s = recv(a)?;
    let (mut cased, mut prev_cased) = (false, false);
    for (_, n, c) in runes(s) {
        th.budget.charge_bytes(n)?;
        // As starlark-go: ASCII capitals and titlecase letters (Lt) start a
        // word, lowercase letters (Ll) continue one, and any other uppercase
        // letter (Lu, e.g. `É`) makes the string not a title.
        let cat = category(c);
        if c.is_ascii_uppercase() || cat == GeneralCategory::TitlecaseLetter {
            if prev_cased {
                return Ok(Value::Bool(false));
            }
            prev_cased = true;
            cased = true;
        } else if cat == GeneralCategory::LowercaseLetter {
            if !prev_cased {
                return Ok(Value::Bool(false));
            }
            prev_cased = true;
            cased = true;
        } else if cat == GeneralCategory::UppercaseLetter {
            return Ok(Value::Bool(false));
        } else {
            prev_cased = false;
        }
    }
    Ok(Value::Bool(cased))
}

// ---------------------------------------------------------------------------
// Searching

/// The optional start and end arguments `p[1]` and `p[2]` of method
/// `name` on a receiver of `len` bytes, as starlark-go's `indices` reads
/// them; all of it when both are absent.
#[inline(always)]
fn bounds(th: &Thread<'_>, p: &[Value<'_>], name: &str, len: usize) -> Result<(usize, usize)> {
    if p.len() < 2 {
        return Ok((0, len));
    }
    given_bounds(th, p, name, len)
}

/// [`bounds`] when a start is given.
#[inline(never)]
fn given_bounds(
    th: &Thread<'_>,
    p: &[Value<'_>],
    name: &str,
    len: usize,
) -> Result<(usize, usize)> {
    indices(th, p.get(1).copied(), p.get(2).copied(), len)
        .map_err(|e| e.prefixed(&format!("{name}: ")))
}

fn find_impl<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, last: bool, strict: bool) -> R<'h> {
    let p = positional(name, a, 1, 3)?;
    let sub = pos(name, p, 0, args::want_str)?.unwrap_or(b"");
    let s = recv(a)?;
    let (start, end) = bounds(th, p, name, s.len())?;
    let found = if start > end {
        // Go searches the empty slice: only "" is found, at `start`.
        sub.is_empty().then_some(start)
    } else if sub.is_empty() {
        Some(if last { end } else { start })
    } else {
        let part = &s[start..end];
        let i = if last {
            text::rfind(th.budget, part, sub)?
        } else {
            text::find(th.budget, part, sub)?
        };
        i.map(|i| i + start)
    };
    match found {
        Some(i) => Ok(Value::Int(i as i64)),
        None if strict => Err(Error::msg(format!("{name}: substring not found"))),
        None => Ok(Value::Int(-1)),
    }
}

fn find<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    find_impl(th, a, "find", false, false)
}

fn rfind<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    find_impl(th, a, "rfind", true, false)
}

fn index<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    find_impl(th, a, "index", false, true)
}

fn rindex<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    find_impl(th, a, "rindex", true, true)
}

fn count<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("count", a, 1, 3)?;
    let sub = pos("count", p, 0, args::want_str)?.unwrap_or(b"");
    let s = recv(a)?;
    let (start, end) = bounds(th, p, "count", s.len())?;
    if start >= end {
        return Ok(Value::Int(if sub.is_empty() { 1 } else { 0 }));
    }
    let part = &s[start..end];
    let n = if sub.is_empty() {
        // Go counts characters + 1, an invalid byte counting one.
        text::rune_count(part, th.budget)? + 1
    } else {
        text::count(th.budget, part, sub, usize::MAX)?
    };
    Ok(Value::Int(n as i64))
}

#[inline]
fn starts_ends<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, ends: bool) -> R<'h> {
    let p = positional(name, a, 1, 3)?;
    let s = recv(a)?;
    let (start, end) = bounds(th, p, name, s.len())?;
    let b = &s[start..end.max(start)];
    let test = |x: &[u8]| affix(th, b, x, ends);
    match p[0] {
        Value::Str(x) => Ok(Value::Bool(test(x.text)?)),
        Value::Tuple(t) => {
            for (i, x) in t.items.iter().enumerate() {
                let Value::Str(x) = x else {
                    return Err(Error::msg(format!(
                        "{name}: want string, got {}, for element {i}",
                        x.type_name()
                    )));
                };
                if test(x.text)? {
                    return Ok(Value::Bool(true));
                }
            }
            Ok(Value::Bool(false))
        }
        x => Err(Error::msg(format!(
            "{name}: got {}, want string or tuple of string",
            x.type_name()
        ))),
    }
}

/// Whether `s` starts (or `ends`) with `x`, whose bytes are charged.
#[inline(always)]
pub(crate) fn affix(th: &Thread<'_>, s: &[u8], x: &[u8], ends: bool) -> Result<bool> {
    th.budget.charge_bytes(x.len())?;
    Ok(if ends {
        s.ends_with(x)
    } else {
        s.starts_with(x)
    })
}

fn startswith<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    starts_ends(th, a, "startswith", false)
}

fn endswith<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    starts_ends(th, a, "endswith", true)
}

// ---------------------------------------------------------------------------
// Pieces

/// The characters of `strip`'s argument, each looked up in constant
/// (ASCII) or logarithmic time, so that stripping costs no more per
/// character however long the argument is. As Go's `Trim`, characters
/// compare decoded: an invalid byte in the set (U+FFFD) matches every
/// invalid byte of the receiver, and a U+FFFD.
struct CharSet<'h, 't> {
    th: &'t Thread<'h>,
    ascii: u128,
    /// The other characters, sorted; their Rust memory is charged to the
    /// heap while the set lives.
    other: Vec<char>,
}

impl<'h, 't> CharSet<'h, 't> {
    fn new(th: &'t Thread<'h>, chars: &[u8]) -> Result<CharSet<'h, 't>> {
        th.budget.charge_bytes(chars.len())?;
        let mut set = CharSet {
            th,
            ascii: 0,
            other: Vec::new(),
        };
        if !chars.is_ascii() {
            let n = text::rune_count(chars, th.budget)?;
            th.budget.charge_heap(n * size_of::<char>())?;
            set.other.reserve_exact(n);
        }
        for (_, _, c) in runes(chars) {
            if c.is_ascii() {
                set.ascii |= 1 << c as u32;
            } else {
                set.other.push(c);
            }
        }
        set.other.sort_unstable();
        Ok(set)
    }

    #[inline]
    fn contains(&self, c: char) -> bool {
        if c.is_ascii() {
            self.ascii & (1 << c as u32) != 0
        } else {
            self.other.binary_search(&c).is_ok()
        }
    }
}

impl Drop for CharSet<'_, '_> {
    fn drop(&mut self) {
        self.th
            .budget
            .release_heap(self.other.capacity() * size_of::<char>());
    }
}

/// The bounds of `s` without the characters at its ends for which `pred`
/// holds, each charged as it is passed.
fn trim(
    th: &Thread<'_>,
    s: &[u8],
    left: bool,
    right: bool,
    pred: impl Fn(char) -> bool,
) -> Result<(usize, usize)> {
    let (mut from, mut to) = (0, s.len());
    if left {
        while from < to {
            let (c, n) = decode(&s[from..to]);
            if !pred(c) {
                break;
            }
            th.budget.charge_bytes(n)?;
            from += n;
        }
    }
    if right {
        while from < to {
            let (c, n) = decode_last(&s[from..to]);
            if !pred(c) {
                break;
            }
            th.budget.charge_bytes(n)?;
            to -= n;
        }
    }
    Ok((from, to))
}

#[inline]
fn strip_impl<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, left: bool, right: bool) -> R<'h> {
    let p = positional(name, a, 0, 1)?;
    let chars = pos(name, p, 0, args::want_str)?.unwrap_or(b"");
    let s = recv(a)?;
    if chars.is_empty() {
        return strip_space(th, a.recv(), s, left, right);
    }
    let set = CharSet::new(th, chars)?;
    let (from, to) = trim(th, s, left, right, |c| set.contains(c))?;
    stripped(th, a.recv(), s, from, to)
}

/// `recv.strip()` (`lstrip()` with only `left`, `rstrip()` with only
/// `right`) of the string `recv` whose text is `s`: white space stripped.
#[inline]
pub(crate) fn strip_space<'h>(
    th: &Thread<'h>,
    recv: Value<'h>,
    s: &'h [u8],
    left: bool,
    right: bool,
) -> R<'h> {
    let (from, to) = trim_ascii_space(th, s, left, right)?;
    stripped(th, recv, s, from, to)
}

/// The string `recv` (whose text is `s`) cut to `s[from..to]`.
#[inline]
fn stripped<'h>(th: &Thread<'h>, recv: Value<'h>, s: &'h [u8], from: usize, to: usize) -> R<'h> {
    if (from, to) == (0, s.len()) {
        // Nothing stripped: the string itself (strings are immutable).
        return Ok(recv);
    }
    th.heap.str_in_arena(&s[from..to])
}

/// [`trim`] of white space, a byte at a time while the ends are ASCII
/// (where Go's and Rust's white space agree: `\t` to `\r` and the space),
/// by characters past them.
fn trim_ascii_space(th: &Thread<'_>, s: &[u8], left: bool, right: bool) -> Result<(usize, usize)> {
    // Scanned in blocks, each charged after it, so that the deadline
    // interrupts a long run of spaces.
    const BLOCK: usize = 4096;
    let space = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
    let (mut from, mut to) = (0, s.len());
    if s.len() <= BLOCK {
        // A short text (a field, a name): each end in one scan, charged
        // as one block each, as below.
        if left {
            while from < to && space(s[from]) {
                from += 1;
            }
            th.budget.charge_bytes(from)?;
        }
        if right {
            while to > from && space(s[to - 1]) {
                to -= 1;
            }
            th.budget.charge_bytes(s.len() - to)?;
        }
        let more_left = left && from < to && !s[from].is_ascii();
        let more_right = right && from < to && !s[to - 1].is_ascii();
        if !(more_left || more_right) {
            return Ok((from, to));
        }
        let (l, r) = trim(th, &s[from..to], more_left, more_right, char::is_whitespace)?;
        return Ok((from + l, from + r));
    }
    if left {
        loop {
            let start = from;
            let end = (from + BLOCK).min(to);
            while from < end && space(s[from]) {
                from += 1;
            }
            th.budget.charge_bytes(from - start)?;
            if from < end || from == to {
                break;
            }
        }
    }
    if right {
        loop {
            let start = to;
            let end = to.saturating_sub(BLOCK).max(from);
            while to > end && space(s[to - 1]) {
                to -= 1;
            }
            th.budget.charge_bytes(start - to)?;
            if to > end || to == from {
                break;
            }
        }
    }
    let (l, r) = trim(
        th,
        &s[from..to],
        left && from < to && !s[from].is_ascii(),
        right && from < to && !s[to - 1].is_ascii(),
        char::is_whitespace,
    )?;
    Ok((from + l, from + r))
}

fn strip<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    strip_impl(th, a, "strip", true, true)
}

fn lstrip<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    strip_impl(th, a, "lstrip", true, false)
}

fn rstrip<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    strip_impl(th, a, "rstrip", false, true)
}

fn partition_impl<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, last: bool) -> R<'h> {
    let p = positional(name, a, 1, 1)?;
    let sep = pos(name, p, 0, args::want_str)?.unwrap_or(b"");
    let s = recv(a)?;
    if sep.is_empty() {
        return Err(Error::msg(format!("{name}: empty separator")));
    }
    let heap = th.heap;
    let i = if last {
        text::rfind(th.budget, s, sep)?
    } else {
        text::find(th.budget, s, sep)?
    };
    let empty: &[u8] = b"";
    let parts = match i {
        Some(i) => [&s[..i], sep, &s[i + sep.len()..]],
        None if last => [empty, empty, s],
        None => [s, empty, empty],
    };
    let v = [
        heap.str_in_arena(parts[0])?,
        heap.str(parts[1])?,
        heap.str_in_arena(parts[2])?,
    ];
    heap.tuple(&v)
}

fn partition<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    partition_impl(th, a, "partition", false)
}

fn rpartition<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    partition_impl(th, a, "rpartition", true)
}

fn removeprefix<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("removeprefix", a, 1, 1)?;
    let x = pos("removeprefix", p, 0, args::want_str)?.unwrap_or(b"");
    let s = recv(a)?;
    th.budget.charge_bytes(x.len())?;
    th.heap.str_in_arena(s.strip_prefix(x).unwrap_or(s))
}

fn removesuffix<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("removesuffix", a, 1, 1)?;
    let x = pos("removesuffix", p, 0, args::want_str)?.unwrap_or(b"");
    let s = recv(a)?;
    th.budget.charge_bytes(x.len())?;
    th.heap.str_in_arena(s.strip_suffix(x).unwrap_or(s))
}

/// Matches of `replace` remembered from counting them.
const REMEMBERED_MATCHES: usize = 8;

fn replace<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("replace", a, 2, 3)?;
    let old = pos("replace", p, 0, args::want_str)?.unwrap_or(b"");
    let new = pos("replace", p, 1, args::want_str)?.unwrap_or(b"");
    let limit = pos("replace", p, 2, args::want_int)?.unwrap_or(-1);
    let s = recv(a)?;
    replace_text(
        th,
        s,
        old,
        new,
        usize::try_from(limit).unwrap_or(usize::MAX),
    )
}

/// `s.replace(old, new, limit)` of the text `s` (every match when `limit`
/// is `usize::MAX`).
pub(crate) fn replace_text<'h>(
    th: &Thread<'h>,
    s: &[u8],
    old: &[u8],
    new: &[u8],
    limit: usize,
) -> R<'h> {
    let budget = th.budget;
    if !old.is_empty() && limit == usize::MAX && s.len() <= SHORT_REPLACE {
        let mut at = [0usize; REMEMBERED_MATCHES];
        if let Some(k) = text::short_matches(s, old, &mut at) {
            return replace_short(th, s, old, new, &at[..k]);
        }
    }
    // Matches of a non-empty `old` are found twice: counted to charge the
    // result, then copied around. The first few are remembered, so a short
    // string is searched once.
    let mut first = [0usize; REMEMBERED_MATCHES];
    let matches = if old.is_empty() {
        text::rune_count(s, budget)?.saturating_add(1)
    } else {
        let mut k = 0;
        if limit > 0 {
            text::for_each_match(budget, s, old, |i| {
                if let Some(slot) = first.get_mut(k) {
                    *slot = i;
                }
                k += 1;
                Ok(k < limit)
            })?;
        }
        k
    }
    .min(limit);
    let size = (s.len() - matches * old.len()).saturating_add(matches.saturating_mul(new.len()));
    if size > budget.limits.max_heap_bytes {
        return Err(Error::limit(LimitKind::HeapBytes));
    }
    let mut out = th.heap.string_builder(size)?;
    if old.is_empty() {
        // Go's strings.Replace: `new` before each character (an invalid
        // byte is one) and at the end, `matches` times in all.
        let mut k = 0;
        for (at, n, _) in runes(s) {
            if k < matches {
                out.push_str(new);
                k += 1;
            }
            out.push_str(&s[at..at + n]);
            budget.charge_bytes(n + new.len())?;
        }
        if k < matches {
            out.push_str(new);
        }
    } else if matches > 0 {
        let mut last = 0;
        if matches <= REMEMBERED_MATCHES && s.len() <= WORK_CHECK_BYTES {
            // A short text: the copies up to the last match (`new` once
            // per match) charged together, before any is made.
            let upto = first[matches - 1] + old.len();
            budget.charge_bytes(upto.saturating_add(matches.saturating_mul(new.len())))?;
            for &i in &first[..matches] {
                out.push_str(&s[last..i]);
                out.push_str(new);
                last = i + old.len();
            }
        } else {
            let mut k = 0;
            text::for_each_match(budget, s, old, |i| {
                budget.charge_bytes(i - last + new.len())?;
                out.push_str(&s[last..i]);
                out.push_str(new);
                last = i + old.len();
                k += 1;
                Ok(k < matches)
            })?;
        }
        budget.charge_bytes(s.len() - last)?;
        out.push_str(&s[last..]);
    } else {
        budget.charge_bytes(s.len())?;
        out.push_str(s);
    }
    th.heap.finish_str(out)
}

/// The longest text [`replace_short`] takes.
const SHORT_REPLACE: usize = 256;

/// [`replace_text`] of a short text `s` (at most [`SHORT_REPLACE`] bytes)
/// at the matches `at` of `old` (every one, at most
/// [`REMEMBERED_MATCHES`]): the pieces between them and `new` written into
/// one block. The heap is charged as [`replace_text`] charges it (the text
/// rounded up to words, and the string object; a new string even when
/// nothing matched), the work once for the search and the copy.
fn replace_short<'h>(th: &Thread<'h>, s: &[u8], old: &[u8], new: &[u8], at: &[usize]) -> R<'h> {
    th.budget.charge_bytes(s.len() * 2 + at.len() * new.len())?;
    th.heap.str_replaced(s, at, old.len(), new)
}

fn join<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("join", a, 1, 1)?;
    let x = pos("join", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    let sep = recv(a)?;
    args::with_items(th.budget, x, |items| join_items(th, sep, items))
}

/// `sep.join(items)`.
fn join_items<'h>(th: &Thread<'h>, sep: &[u8], items: &[Value<'h>]) -> R<'h> {
    let mut size = 0usize;
    for (i, v) in items.iter().enumerate() {
        let Value::Str(s) = v else {
            return Err(Error::msg(format!(
                "join: in list, want string, got {}",
                v.type_name()
            )));
        };
        size = size.saturating_add(s.text.len());
        if i > 0 {
            size = size.saturating_add(sep.len());
        }
    }
    if size > th.budget.limits.max_heap_bytes {
        return Err(Error::limit(LimitKind::HeapBytes));
    }
    let mut out = th.heap.string_builder(size)?;
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        if let Value::Str(s) = v {
            th.budget.charge_bytes(s.text.len() + sep.len() + 16)?;
            out.push_str(s.text);
        }
    }
    th.heap.finish_str(out)
}

/// Collects pieces of a receiver into a list, charged as it grows.
struct Pieces<'h, 't> {
    th: &'t Thread<'h>,
    /// The pieces so far: grown in the arena, the list would leave its
    /// outgrown copies there, between the pieces' strings.
    out: args::Items<'t, 'h>,
}

impl<'h, 't> Pieces<'h, 't> {
    fn new(th: &'t Thread<'h>) -> Result<Pieces<'h, 't>> {
        Ok(Pieces {
            th,
            out: args::Items::with_capacity(th.budget, 0)?,
        })
    }

    #[inline]
    fn push(&mut self, piece: &'h [u8]) -> Result<()> {
        // `Heap::str_in_arena`, inlined: a split makes a string per piece.
        let v = Value::Str(self.th.heap.alloc(StrObj::new(piece))?);
        self.th.budget.charge_bytes(16)?;
        self.out.push(v)
    }

    /// The list of the pieces (reversed: last first), sized exactly.
    fn finish(self, reversed: bool) -> R<'h> {
        let heap = self.th.heap;
        let mut out = heap.vec_with_capacity(self.out.len())?;
        out.extend_from_slice(&self.out);
        if reversed {
            out.reverse();
        }
        heap.list_from_vec(out)
    }
}

/// Go's `strings.Fields` (`max` absent) and starlark-go's `splitspace`:
/// at most `max` splits at runs of white space, from the left; the last
/// field runs to the end. An invalid byte is not white space.
fn split_space<'h>(th: &Thread<'h>, s: &'h [u8], max: Option<usize>) -> R<'h> {
    let mut res = Pieces::new(th)?;
    let mut start: Option<usize> = None;
    let mut splits = 0;
    for (i, n, c) in runes(s) {
        th.budget.charge_bytes(n)?;
        if c.is_whitespace() {
            if let Some(st) = start {
                if Some(splits) == max {
                    break;
                }
                res.push(&s[st..i])?;
                splits += 1;
                start = None;
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(st) = start {
        res.push(&s[st..])?;
    }
    res.finish(false)
}

/// starlark-go's `rsplitspace`: the same from the right.
fn rsplit_space<'h>(th: &Thread<'h>, s: &'h [u8], max: usize) -> R<'h> {
    let mut res = Pieces::new(th)?;
    let mut end: Option<usize> = None;
    let mut splits = 0;
    for (i, n, c) in runes(s).rev() {
        th.budget.charge_bytes(n)?;
        let after = i + n;
        if c.is_whitespace() {
            if let Some(e) = end {
                if splits == max {
                    break;
                }
                res.push(&s[after..e])?;
                splits += 1;
                end = None;
            }
        } else if end.is_none() {
            end = Some(after);
        }
    }
    if let Some(e) = end {
        res.push(&s[..e])?;
    }
    res.finish(true)
}

/// Splits at the non-overlapping matches of non-empty `sep`, found from
/// the left, after skipping the first `skip` of them and using at most
/// `max` (the skipped ones stay inside the first piece).
fn split_at<'h>(th: &Thread<'h>, s: &'h [u8], sep: &[u8], skip: usize, max: usize) -> R<'h> {
    let mut res = Pieces::new(th)?;
    let (mut last, mut k) = (0, 0);
    if max > 0 {
        text::for_each_match(th.budget, s, sep, |i| {
            k += 1;
            if k <= skip {
                return Ok(true);
            }
            res.push(&s[last..i])?;
            last = i + sep.len();
            Ok(k - skip < max)
        })?;
    }
    res.push(&s[last..])?;
    res.finish(false)
}

/// `split` (or `rsplit`) at every occurrence of the one-byte separator
/// `sep`, the common case: the pieces are counted first (a fast scan, its
/// work charged per window), then their string objects are made in one
/// block and the list sized exactly. Charged as [`split_at`] charges: a
/// string object and 16 bytes of work per piece, and the list.
fn split_byte<'h>(th: &Thread<'h>, s: &'h [u8], sep: u8) -> R<'h> {
    if s.len() <= SHORT_SPLIT {
        return split_byte_short(th, s, sep);
    }
    let mut n = 1usize;
    for window in s.chunks(crate::budget::WORK_CHECK_BYTES) {
        th.budget.charge_bytes(window.len())?;
        n += memchr::memchr_iter(sep, window).count();
    }
    let mut ends = memchr::memchr_iter(sep, s);
    pieces_list(th, s, n, || ends.next())
}

/// The longest text [`split_byte_short`] splits.
const SHORT_SPLIT: usize = 255;

/// [`split_byte`] of a short text (a line, a path, a field): one pass a
/// word at a time notes where the pieces end, which costs less than a
/// `memchr` call per piece. Charged as [`split_byte`] charges.
fn split_byte_short<'h>(th: &Thread<'h>, s: &'h [u8], sep: u8) -> R<'h> {
    th.budget.charge_bytes(s.len())?;
    // The end of every piece but the last (positions fit a byte).
    let mut ends = [0u8; SHORT_SPLIT];
    let cut = text::byte_positions(sep, s, &mut ends);
    let mut ends = ends[..cut].iter().map(|&e| usize::from(e));
    pieces_list(th, s, cut + 1, || ends.next())
}

/// The list of the `n` pieces of `s` that end where `next_end` says (the
/// last at the end of `s`), each after a one-byte separator: their string
/// objects made in one block, charged a string object and 16 bytes of work
/// each, and the list sized exactly.
fn pieces_list<'h>(
    th: &Thread<'h>,
    s: &'h [u8],
    n: usize,
    mut next_end: impl FnMut() -> Option<usize>,
) -> R<'h> {
    let heap = th.heap;
    heap.charge(n.saturating_mul(std::mem::size_of::<StrObj>()))?;
    th.budget.charge_bytes(n.saturating_mul(16))?;
    let mut out = heap.vec_with_capacity(n)?;
    let mut start = 0;
    let pieces: &'h [StrObj<'h>] = heap.bump.alloc_slice_fill_with(n, |_| {
        let end = next_end().unwrap_or(s.len());
        let piece = StrObj::new(&s[start..end]);
        start = end + 1;
        piece
    });
    out.extend(pieces.iter().map(Value::Str));
    heap.list_from_vec(out)
}

#[inline]
fn split_impl<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str) -> R<'h> {
    let p = positional(name, a, 0, 2)?;
    let s = recv(a)?;
    let maxsplit = pos(name, p, 1, args::want_int)?.unwrap_or(-1);
    let max = usize::try_from(maxsplit).ok();
    match p.first() {
        None | Some(Value::None) => match max {
            Some(m) if name == "rsplit" => rsplit_space(th, s, m),
            _ => split_space(th, s, max),
        },
        Some(Value::Str(sep)) => {
            let sep = sep.text;
            if sep.is_empty() {
                return Err(Error::msg("split: empty separator"));
            }
            match max {
                None => split_all(th, s, sep),
                Some(m) if name == "split" => split_at(th, s, sep, 0, m),
                Some(m) => {
                    // Go splits fully, then rejoins the leading excess: the
                    // last `m` separators found from the left split.
                    let all = text::count(th.budget, s, sep, usize::MAX)?;
                    split_at(th, s, sep, all.saturating_sub(m), m)
                }
            }
        }
        Some(x) => Err(Error::msg(format!(
            "split: got {} for separator, want string",
            x.type_name()
        ))),
    }
}

/// `s.split(sep)` (or `rsplit`) of the text `s` at every occurrence of the
/// non-empty separator `sep`.
#[inline]
pub(crate) fn split_all<'h>(th: &Thread<'h>, s: &'h [u8], sep: &[u8]) -> R<'h> {
    match sep {
        [b] => split_byte(th, s, *b),
        _ => split_at(th, s, sep, 0, usize::MAX),
    }
}

fn split<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    split_impl(th, a, "split")
}

fn rsplit<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    split_impl(th, a, "rsplit")
}

fn splitlines<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("splitlines", a, 0, 1)?;
    let keep = pos("splitlines", p, 0, args::want_bool)?.unwrap_or(false);
    let s = recv(a)?;
    let mut lines = Pieces::new(th)?;
    let mut last = 0;
    text::for_each_match(th.budget, s, b"\n", |i| {
        lines.push(&s[last..if keep { i + 1 } else { i }])?;
        last = i + 1;
        Ok(true)
    })?;
    if last < s.len() {
        lines.push(&s[last..])?;
    }
    lines.finish(false)
}

// ---------------------------------------------------------------------------
// Element views

fn elems<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("elems", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(s.len())?;
    for i in 0..s.len() {
        out.push(th.heap.str_in_arena(&s[i..i + 1])?);
        args::tick(th.budget, i)?;
    }
    th.heap.elems(a.recv(), ElemsKind::StrElems, out)
}

fn elem_ords<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("elem_ords", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(s.len())?;
    for piece in s.chunks(crate::budget::WORK_CHECK_BYTES / 16) {
        th.budget.charge_bytes(piece.len() * 16)?;
        out.extend(piece.iter().map(|b| Value::Int(*b as i64)));
    }
    th.heap.elems(a.recv(), ElemsKind::StrElemOrds, out)
}

fn codepoints<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("codepoints", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(text::rune_count(s, th.budget)?)?;
    for (i, (at, n, c)) in runes(s).enumerate() {
        out.push(if is_invalid(c, n) {
            th.heap.str("\u{FFFD}")?
        } else {
            th.heap.str_in_arena(&s[at..at + n])?
        });
        args::tick(th.budget, i)?;
    }
    th.heap.elems(a.recv(), ElemsKind::StrCodepoints, out)
}

fn codepoint_ords<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("codepoint_ords", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(text::rune_count(s, th.budget)?)?;
    for (_, n, c) in runes(s) {
        th.budget.charge_bytes(n)?;
        out.push(Value::Int(c as i64));
    }
    th.heap.elems(a.recv(), ElemsKind::StrCodepointOrds, out)
}

fn bytes_elems<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("elems", a, 0, 0)?;
    let Value::Bytes(b) = a.recv() else {
        return Err(Error::msg("bytes method on non-bytes"));
    };
    let mut out = th.heap.vec_with_capacity(b.bytes.len())?;
    th.budget.in_blocks(b.bytes, |block| {
        out.extend(block.iter().map(|x| Value::Int(*x as i64)))
    })?;
    th.heap.elems(a.recv(), ElemsKind::BytesElems, out)
}

/// Appends `str(v)` (strings bare, others as `repr`).
pub(super) fn write_str(out: &mut Vec<u8>, v: Value<'_>, th: &Thread<'_>) -> Result<()> {
    format::write_str(out, v, th.budget)
}
