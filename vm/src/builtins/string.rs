//! The methods of strings, and `bytes.elems`.
//!
//! Starlark strings index by byte, so positions (`find`, `index`, the
//! `start`/`end` arguments) are byte offsets, which may fall inside a
//! multi-byte character. Our strings are always valid UTF-8, so searching
//! uses that: a match of a (valid UTF-8) needle always starts and ends on
//! character boundaries, so a byte range can be narrowed to the
//! boundaries inside it without losing matches. Case mappings use
//! one-to-one (simple) mappings, as Go's `unicode.To*` do. Results that
//! are pieces of the receiver share its text instead of copying it.
//!
//! `elems`, `codepoints`, `elem_ords` and `codepoint_ords` return element
//! views (`string.elems`, `string.codepoints`), iterable only, as in
//! starlark-go.

use super::args::{self, pos, positional};
use super::list::indices;
use super::{Args, BuiltinFn};
use crate::error::{Error, LimitKind, Result};
use crate::format;
use crate::interp::Thread;
use crate::ops;
use crate::value::{ElemsKind, Value};
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

pub(super) fn recv<'h>(a: &Args<'h, '_>) -> Result<&'h str> {
    match a.recv() {
        Value::Str(s) => Ok(s.text),
        // The interpreter only binds string methods to strings.
        v => Err(Error::msg(format!("string method on {}", v.type_name()))),
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

fn map_chars<'h>(th: &Thread<'h>, s: &str, mut f: impl FnMut(usize, char) -> char) -> R<'h> {
    // A simple mapping changes a character's length by at most 1 byte per
    // byte (e.g. 'ı' to 'I' shrinks; 'ſ' grows), so twice is a safe bound.
    let mut out = th.heap.string_builder(s.len().saturating_mul(2))?;
    for (i, c) in s.chars().enumerate() {
        out.push(f(i, c));
        args::tick(th.budget, i)?;
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
fn map_ascii<'h>(th: &Thread<'h>, s: &str, upper: bool) -> R<'h> {
    th.heap.charge(s.len())?;
    let text = th.heap.bump.alloc_str(s);
    let mut rest: &mut str = &mut *text;
    loop {
        // Every position of an ASCII string is a character boundary.
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

fn lower<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("lower", a, 0, 0)?;
    let s = recv(a)?;
    if s.is_ascii() {
        return map_ascii(th, s, false);
    }
    map_chars(th, s, |_, c| to_lower(c))
}

fn upper<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("upper", a, 0, 0)?;
    let s = recv(a)?;
    if s.is_ascii() {
        return map_ascii(th, s, true);
    }
    map_chars(th, s, |_, c| to_upper(c))
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

fn all_chars<'h>(a: &Args<'h, '_>, name: &str, f: impl Fn(char) -> bool) -> R<'h> {
    positional(name, a, 0, 0)?;
    let s = recv(a)?;
    Ok(Value::Bool(!s.is_empty() && s.chars().all(f)))
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

fn isalnum<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(a, "isalnum", |c| is_letter(c) || is_digit(c))
}

fn isalpha<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(a, "isalpha", is_letter)
}

fn isdigit<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(a, "isdigit", is_digit)
}

fn isspace<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    all_chars(a, "isspace", char::is_whitespace)
}

fn islower<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("islower", a, 0, 0)?;
    let s = recv(a)?;
    Ok(Value::Bool(
        s.chars().any(is_cased) && s.chars().all(|c| to_lower(c) == c),
    ))
}

fn isupper<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("isupper", a, 0, 0)?;
    let s = recv(a)?;
    Ok(Value::Bool(
        s.chars().any(is_cased) && s.chars().all(|c| to_upper(c) == c),
    ))
}

fn istitle<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("istitle", a, 0, 0)?;
    let s = recv(a)?;
    let (mut cased, mut prev_cased) = (false, false);
    for c in s.chars() {
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

/// The part of `s[start..end]` between the character boundaries inside
/// it, and its offset; see the module comment.
fn narrow(s: &str, start: usize, end: usize) -> (&str, usize) {
    let mut a = start;
    while a < s.len() && !s.is_char_boundary(a) {
        a += 1;
    }
    let mut z = end;
    while z > 0 && !s.is_char_boundary(z) {
        z -= 1;
    }
    if a >= z {
        return ("", a.min(s.len()));
    }
    (&s[a..z], a)
}

fn find_impl<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, last: bool, strict: bool) -> R<'h> {
    let p = positional(name, a, 1, 3)?;
    let sub = pos(name, p, 0, args::want_str)?.unwrap_or("");
    let s = recv(a)?;
    let (start, end) = indices(th, p.get(1).copied(), p.get(2).copied(), s.len())
        .map_err(|e| e.prefixed(&format!("{name}: ")))?;
    let found = if start > end {
        // Go searches the empty slice: only "" is found, at `start`.
        sub.is_empty().then_some(start)
    } else if sub.is_empty() {
        Some(if last { end } else { start })
    } else {
        let (part, off) = narrow(s, start, end);
        let i = if last {
            part.rfind(sub)
        } else {
            part.find(sub)
        };
        i.map(|i| i + off)
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
    let sub = pos("count", p, 0, args::want_str)?.unwrap_or("");
    let s = recv(a)?;
    let (start, end) = indices(th, p.get(1).copied(), p.get(2).copied(), s.len())
        .map_err(|e| e.prefixed("count: "))?;
    if start >= end {
        return Ok(Value::Int(if sub.is_empty() { 1 } else { 0 }));
    }
    let (part, off) = narrow(s, start, end);
    let n = if sub.is_empty() {
        // Go counts runes + 1; stray bytes of a cut character count one
        // each.
        let stray = (off - start) + (end - off - part.len());
        part.chars().count() + stray + 1
    } else {
        part.matches(sub).count()
    };
    Ok(Value::Int(n as i64))
}

fn starts_ends<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, ends: bool) -> R<'h> {
    let p = positional(name, a, 1, 3)?;
    let s = recv(a)?;
    let (start, end) = indices(th, p.get(1).copied(), p.get(2).copied(), s.len())
        .map_err(|e| e.prefixed(&format!("{name}: ")))?;
    let b = &s.as_bytes()[start..end.max(start)];
    let test = |x: &str| {
        if ends {
            b.ends_with(x.as_bytes())
        } else {
            b.starts_with(x.as_bytes())
        }
    };
    match p[0] {
        Value::Str(x) => Ok(Value::Bool(test(x.text))),
        Value::Tuple(t) => {
            for (i, x) in t.items.iter().enumerate() {
                let Value::Str(x) = x else {
                    return Err(Error::msg(format!(
                        "{name}: want string, got {}, for element {i}",
                        x.type_name()
                    )));
                };
                if test(x.text) {
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

fn startswith<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    starts_ends(th, a, "startswith", false)
}

fn endswith<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    starts_ends(th, a, "endswith", true)
}

// ---------------------------------------------------------------------------
// Pieces

fn strip_impl<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str, left: bool, right: bool) -> R<'h> {
    let p = positional(name, a, 0, 1)?;
    let chars = pos(name, p, 0, args::want_str)?.unwrap_or("");
    let s = recv(a)?;
    let pred = |c: char| {
        if chars.is_empty() {
            c.is_whitespace()
        } else {
            chars.contains(c)
        }
    };
    let mut r = s;
    if left {
        r = r.trim_start_matches(pred);
    }
    if right {
        r = r.trim_end_matches(pred);
    }
    th.heap.str_in_arena(r)
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
    let sep = pos(name, p, 0, args::want_str)?.unwrap_or("");
    let s = recv(a)?;
    if sep.is_empty() {
        return Err(Error::msg(format!("{name}: empty separator")));
    }
    let heap = th.heap;
    let i = if last { s.rfind(sep) } else { s.find(sep) };
    let parts = match i {
        Some(i) => [&s[..i], sep, &s[i + sep.len()..]],
        None if last => ["", "", s],
        None => [s, "", ""],
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
    let x = pos("removeprefix", p, 0, args::want_str)?.unwrap_or("");
    let s = recv(a)?;
    th.heap.str_in_arena(s.strip_prefix(x).unwrap_or(s))
}

fn removesuffix<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("removesuffix", a, 1, 1)?;
    let x = pos("removesuffix", p, 0, args::want_str)?.unwrap_or("");
    let s = recv(a)?;
    th.heap.str_in_arena(s.strip_suffix(x).unwrap_or(s))
}

/// The start positions of the non-overlapping matches of a non-empty
/// `needle` in `hay`, left to right (as `str::match_indices` finds them).
/// They are character boundaries, since both are valid UTF-8.
fn match_starts<'a>(hay: &'a str, needle: &'a str) -> MatchStarts<'a> {
    match needle.as_bytes() {
        [b] => MatchStarts::Byte(memchr::memchr_iter(*b, hay.as_bytes())),
        n => MatchStarts::Bytes(memchr::memmem::find_iter(hay.as_bytes(), n)),
    }
}

/// See [`match_starts`]: a one-byte needle has the cheaper searcher. (A
/// short-lived local, so the size of the substring searcher is no cost.)
#[allow(clippy::large_enum_variant)]
enum MatchStarts<'a> {
    Byte(memchr::Memchr<'a>),
    Bytes(memchr::memmem::FindIter<'a, 'a>),
}

impl Iterator for MatchStarts<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            MatchStarts::Byte(m) => m.next(),
            MatchStarts::Bytes(m) => m.next(),
        }
    }
}

fn replace<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("replace", a, 2, 3)?;
    let old = pos("replace", p, 0, args::want_str)?.unwrap_or("");
    let new = pos("replace", p, 1, args::want_str)?.unwrap_or("");
    let limit = pos("replace", p, 2, args::want_int)?.unwrap_or(-1);
    let s = recv(a)?;
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    // Matches of a non-empty `old` are found twice: counted to charge the
    // result, then copied around.
    let matches = if old.is_empty() {
        s.chars().count() + 1
    } else {
        match_starts(s, old).take(limit).count()
    }
    .min(limit);
    let size = (s.len() - matches * old.len()).saturating_add(matches.saturating_mul(new.len()));
    if size > th.budget.limits.max_heap_bytes {
        return Err(Error::limit(LimitKind::HeapBytes));
    }
    let mut out = th.heap.string_builder(size)?;
    if old.is_empty() {
        // Go's strings.Replace and Rust's replacen agree for an empty
        // `old`: inserted before each character and at the end.
        out.push_str(&s.replacen(old, new, matches));
    } else {
        // Matches of valid UTF-8 in valid UTF-8 start and end on character
        // boundaries.
        let mut last = 0;
        for i in match_starts(s, old).take(matches) {
            out.push_str(&s[last..i]);
            out.push_str(new);
            last = i + old.len();
        }
        out.push_str(&s[last..]);
    }
    th.heap.finish_str(out)
}

fn join<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("join", a, 1, 1)?;
    let x = pos("join", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    let sep = recv(a)?;
    let items = args::collect(th.heap, x)?;
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
            out.push_str(s.text);
        }
        args::tick(th.budget, i)?;
    }
    th.heap.finish_str(out)
}

/// A list of pieces of the receiver.
fn str_list<'h>(th: &Thread<'h>, parts: &[&'h str]) -> R<'h> {
    let mut out = th.heap.vec_with_capacity(parts.len())?;
    for (i, p) in parts.iter().enumerate() {
        out.push(th.heap.str_in_arena(p)?);
        args::tick(th.budget, i)?;
    }
    th.heap.list_from_vec(out)
}

/// Go's `splitspace`: at most `max` splits at runs of white space, from
/// the left; the last field runs to the end.
fn split_space(s: &str, max: usize) -> Vec<&str> {
    let mut res = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if let Some(st) = start {
                if res.len() == max {
                    break;
                }
                res.push(&s[st..i]);
                start = None;
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(st) = start {
        res.push(&s[st..]);
    }
    res
}

/// Go's `rsplitspace`: the same from the right.
fn rsplit_space(s: &str, max: usize) -> Vec<&str> {
    let mut res = Vec::new();
    let mut end: Option<usize> = None;
    for (i, c) in s.char_indices().rev() {
        let after = i + c.len_utf8();
        if c.is_whitespace() {
            if let Some(e) = end {
                if res.len() == max {
                    break;
                }
                res.push(&s[after..e]);
                end = None;
            }
        } else if end.is_none() {
            end = Some(after);
        }
    }
    if let Some(e) = end {
        res.push(&s[..e]);
    }
    res.reverse();
    res
}

fn split_impl<'h>(th: &Thread<'h>, a: &Args<'h, '_>, name: &str) -> R<'h> {
    let p = positional(name, a, 0, 2)?;
    let s = recv(a)?;
    let maxsplit = pos(name, p, 1, args::want_int)?.unwrap_or(-1);
    let max = usize::try_from(maxsplit).ok();
    let parts: Vec<&'h str> = match p.first() {
        None | Some(Value::None) => match max {
            None => s.split_whitespace().collect(),
            Some(m) if name == "split" => split_space(s, m),
            Some(m) => rsplit_space(s, m),
        },
        Some(Value::Str(sep)) => {
            let sep = sep.text;
            if sep.is_empty() {
                return Err(Error::msg("split: empty separator"));
            }
            match max {
                None => {
                    let mut parts = Vec::new();
                    let mut last = 0;
                    for i in match_starts(s, sep) {
                        parts.push(&s[last..i]);
                        last = i + sep.len();
                    }
                    parts.push(&s[last..]);
                    parts
                }
                Some(m) if name == "split" => s.splitn(m.saturating_add(1), sep).collect(),
                Some(m) => {
                    // Go splits fully, then rejoins the leading excess.
                    let all: Vec<&str> = s.split(sep).collect();
                    let excess = all.len().saturating_sub(m);
                    if excess > 0 {
                        let head_len: usize = all[..excess].iter().map(|x| x.len()).sum::<usize>()
                            + (excess - 1) * sep.len();
                        let mut v = vec![&s[..head_len]];
                        v.extend_from_slice(&all[excess..]);
                        v
                    } else {
                        all
                    }
                }
            }
        }
        Some(x) => {
            return Err(Error::msg(format!(
                "split: got {} for separator, want string",
                x.type_name()
            )))
        }
    };
    str_list(th, &parts)
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
    let mut lines: Vec<&'h str> = Vec::new();
    if !s.is_empty() {
        if keep {
            lines.extend(s.split_inclusive('\n'));
        } else {
            lines.extend(s.split('\n'));
            if s.ends_with('\n') {
                lines.pop();
            }
        }
    }
    str_list(th, &lines)
}

// ---------------------------------------------------------------------------
// Element views

fn elems<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("elems", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(s.len())?;
    for (i, b) in s.as_bytes().iter().enumerate() {
        out.push(ops::str_from_bytes(th.heap, std::slice::from_ref(b))?);
        args::tick(th.budget, i)?;
    }
    th.heap.elems(a.recv(), ElemsKind::StrElems, &out)
}

fn elem_ords<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("elem_ords", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(s.len())?;
    out.extend(s.as_bytes().iter().map(|b| Value::Int(*b as i64)));
    th.heap.elems(a.recv(), ElemsKind::StrElemOrds, &out)
}

fn codepoints<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("codepoints", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(s.chars().count())?;
    for (i, (at, c)) in s.char_indices().enumerate() {
        out.push(th.heap.str_in_arena(&s[at..at + c.len_utf8()])?);
        args::tick(th.budget, i)?;
    }
    th.heap.elems(a.recv(), ElemsKind::StrCodepoints, &out)
}

fn codepoint_ords<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("codepoint_ords", a, 0, 0)?;
    let s = recv(a)?;
    let mut out = th.heap.vec_with_capacity(s.chars().count())?;
    out.extend(s.chars().map(|c| Value::Int(c as i64)));
    th.heap.elems(a.recv(), ElemsKind::StrCodepointOrds, &out)
}

fn bytes_elems<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("elems", a, 0, 0)?;
    let Value::Bytes(b) = a.recv() else {
        return Err(Error::msg("bytes method on non-bytes"));
    };
    let mut out = th.heap.vec_with_capacity(b.bytes.len())?;
    out.extend(b.bytes.iter().map(|x| Value::Int(*x as i64)));
    th.heap.elems(a.recv(), ElemsKind::BytesElems, &out)
}

/// Appends `str(v)` (strings bare, others as `repr`).
pub(super) fn write_str(out: &mut String, v: Value<'_>, th: &Thread<'_>) -> Result<()> {
    format::write_str(out, v, th.budget)
}

#[cfg(test)]
mod tests {
    use super::match_starts;

    /// The searchers find exactly the matches the standard library does,
    /// for one-byte and longer needles, overlapping candidates and
    /// multi-byte text included.
    #[test]
    fn match_starts_agrees_with_match_indices() {
        let hays = [
            "",
            "a",
            "aaaa",
            "abababa",
            "a,b,,c,",
            "ééaéé",
            "x→y→→z",
            "aaa aaa",
        ];
        let needles = ["a", ",", "aa", "aba", "é", "→", "→→", "aaa", " ", "zz"];
        for hay in hays {
            for needle in needles {
                let want: Vec<usize> = hay.match_indices(needle).map(|(i, _)| i).collect();
                let got: Vec<usize> = match_starts(hay, needle).collect();
                assert_eq!(got, want, "{hay:?} / {needle:?}");
            }
        }
    }
}
