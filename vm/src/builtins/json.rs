//! The `json` module, as starlark-go's `lib/json`: `encode`, `decode` and
//! `indent` (`encode_indent` is not in the surface).
//!
//! `encode` writes compact JSON with sorted dict keys, quoting strings of
//! printable ASCII like Go's `strconv.Quote` and others like Go's
//! `json.Marshal`. `decode` follows starlark-go's hand-written parser
//! (ints of any size, floats when the number has `.`, `e` or `E`), with
//! Go's `json.Unmarshal` rules for escaped strings. `indent` re-indents
//! like Go's `json.Indent`, with the messages of Go's JSON scanner.
//! Nesting is bounded by [`MAX_DEPTH`] so no input can exhaust the Rust
//! stack, and long inputs check the deadline.

use super::args::{self, positional, unpack, unpack_from};
use super::{Args, BuiltinFn, ModuleDef, ModuleMember};
use crate::budget::{Budget, BYTES_PER_UNIT, WORK_BLOCK};
use crate::error::{Error, LimitKind, Result};
use crate::format;
use crate::interp::Thread;
use crate::value::Value;
use num_bigint::BigInt;
use rustc_hash::FxHasher;
use std::fmt::Write;
use std::hash::Hasher;
use std::mem::size_of;

/// The deepest nesting `encode`, `decode` and `indent` accept.
pub const MAX_DEPTH: usize = 512;

static ENCODE: BuiltinFn = BuiltinFn {
    name: "json.encode",
    call: encode,
};
static DECODE: BuiltinFn = BuiltinFn {
    name: "json.decode",
    call: decode,
};
static INDENT: BuiltinFn = BuiltinFn {
    name: "json.indent",
    call: indent,
};

/// The `json` module value.
pub static MODULE: ModuleDef = ModuleDef {
    name: "json",
    members: &[
        ("decode", ModuleMember::Function(&DECODE)),
        ("encode", ModuleMember::Function(&ENCODE)),
        ("indent", ModuleMember::Function(&INDENT)),
    ],
};

// ---------------------------------------------------------------------------
// encode

/// `s` in consecutive pieces of about [`WORK_BLOCK`] bytes, none cut
/// inside a UTF-8 sequence (a cut moves past at most three continuation
/// bytes: a fourth cannot belong to the sequence before it).
fn text_blocks(s: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cut = rest.len().min(WORK_BLOCK);
        let mut moved = 0;
        while cut < rest.len() && rest[cut] & 0xC0 == 0x80 && moved < 3 {
            cut += 1;
            moved += 1;
        }
        let (block, tail) = rest.split_at(cut);
        rest = tail;
        Some(block)
    })
}

/// Whether `b` is a printable ASCII byte.
fn printable(b: &u8) -> bool {
    (0x20..0x80).contains(b)
}

/// Appends `s` as a JSON string. A long `s` is read and escaped block by
/// block with the work of each charged to `budget` (one pass decides the
/// escaping style, one escapes); a short one's output is charged by the
/// encoder with the rest of its output.
fn quote(out: &mut String, s: &[u8], budget: &Budget) -> Result<()> {
    if s.len() <= WORK_BLOCK {
        let printable_ascii = s.iter().all(printable);
        out.push('"');
        quote_block(out, s, printable_ascii);
        out.push('"');
        return Ok(());
    }
    let mut printable_ascii = true;
    for block in text_blocks(s) {
        budget.charge_work((block.len() / BYTES_PER_UNIT) as u64)?;
        if !block.iter().all(printable) {
            printable_ascii = false;
            break;
        }
    }
    out.push('"');
    for block in text_blocks(s) {
        // Escaping goes a character at a time: a unit per byte.
        budget.charge_work(block.len() as u64)?;
        quote_block(out, block, printable_ascii);
    }
    out.push('"');
    Ok(())
}

/// Appends the escaped text of a piece of a string, in Go's
/// `strconv.Quote` style when the whole string is printable ASCII, in
/// `json.Marshal`'s otherwise.
fn quote_block(out: &mut String, s: &[u8], printable_ascii: bool) {
    if printable_ascii {
        // Go's strconv.Quote: only `"`, `\` and DEL need escapes here.
        for &b in s {
            let c = b as char;
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\x7f' => out.push_str("\\x7f"),
                _ => out.push(c),
            }
        }
    } else {
        // Go's json.Marshal (HTML-safe), which writes an invalid byte as
        // the escape of U+FFFD.
        for (_, n, c) in crate::text::runes(s) {
            if crate::text::is_invalid(c, n) {
                out.push_str("\\ufffd");
                continue;
            }
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\x08' => out.push_str("\\b"),
                '\x0c' => out.push_str("\\f"),
                '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                _ => out.push(c),
            }
        }
    }
}

struct Encoder<'b> {
    budget: &'b crate::budget::Budget,
    out: String,
    /// Addresses of the containers being encoded, to detect cycles.
    path: Vec<usize>,
    steps: usize,
    /// The output length up to which the bytes written are charged.
    charged_len: usize,
    /// The text written so far, apart from its unfinished end in `out`.
    pieces: format::TextPieces,
}

impl Encoder<'_> {
    /// Charges the bytes written since the last charge, so a few huge
    /// elements count as much as many small ones.
    fn charge_output(&mut self) -> Result<()> {
        let units = (self.out.len() - self.charged_len) / BYTES_PER_UNIT;
        self.charged_len += units * BYTES_PER_UNIT;
        self.budget.charge_work(units as u64)
    }

    fn emit(&mut self, x: Value<'_>) -> Result<()> {
        self.steps += 1;
        args::tick(self.budget, self.steps)?;
        // The text is charged to the heap when done, and then copied into
        // it: it may take what is left. A long text is moved into pieces
        // as it is written.
        if self.pieces.due(&self.out) {
            self.charge_output()?;
            self.pieces.spill(&mut self.out)?;
            self.charged_len = 0;
        }
        self.charge_output()?;
        let addr = match x {
            Value::List(l) => Some(l as *const _ as usize),
            Value::Dict(d) => Some(d as *const _ as usize),
            Value::Tuple(t) => Some(t.items.as_ptr() as usize),
            _ => None,
        };
        if let Some(a) = addr {
            if self.path.contains(&a) {
                return Err(Error::msg("cycle in JSON structure"));
            }
            if self.path.len() >= MAX_DEPTH {
                return Err(Error::msg("nesting too deep"));
            }
            self.path.push(a);
        }
        let r = self.emit_inner(x);
        if addr.is_some() {
            self.path.pop();
        }
        r
    }

    fn emit_inner(&mut self, x: Value<'_>) -> Result<()> {
        match x {
            Value::None => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => {
                self.out.push_str(itoa::Buffer::new().format(i));
            }
            Value::BigInt(b) => format::write_bigint(&mut self.out, b, self.budget)?,
            Value::Float(f) => {
                if !f.is_finite() {
                    return Err(Error::msg(format!(
                        "cannot encode non-finite float {}",
                        format::float_str(f)
                    )));
                }
                format::write_float(&mut self.out, f, b'g');
            }
            Value::Str(s) => quote(&mut self.out, s.text, self.budget)?,
            Value::Dict(d) => {
                // The sorted copy of the entries is charged while it lives.
                let copy_bytes = d.len().saturating_mul(size_of::<(&[u8], Value<'_>)>());
                self.budget.charge_heap(copy_bytes)?;
                let mut items: Vec<(&[u8], Value<'_>)> = Vec::with_capacity(d.len());
                for (k, v) in d.map.borrow().iter() {
                    match k {
                        Value::Str(s) => items.push((s.text, v)),
                        _ => {
                            return Err(Error::msg(format!(
                                "dict has {} key, want string",
                                k.type_name()
                            )))
                        }
                    }
                }
                items.sort_by(|a, b| a.0.cmp(b.0));
                self.out.push('{');
                for (i, (k, v)) in items.into_iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    quote(&mut self.out, k, self.budget)?;
                    self.out.push(':');
                    self.emit(v).map_err(|e| {
                        let mut key = String::new();
                        format::write_quoted(&mut key, k, false);
                        e.prefixed(&format!("in dict key {key}: "))
                    })?;
                }
                self.budget.release_heap(copy_bytes);
                self.out.push('}');
            }
            Value::List(_) | Value::Tuple(_) | Value::Range(_) | Value::Elems(_) => {
                self.out.push('[');
                if let Value::Range(r) = x {
                    // Ints cannot fail or nest: emitted in place, with the
                    // deadline checked as for any element.
                    for k in 0..r.len() {
                        if k > 0 {
                            self.out.push(',');
                        }
                        self.emit(Value::Int(r.at(k)))?;
                    }
                    self.out.push(']');
                    return Ok(());
                }
                // Read by index (a list re-borrowed per element), so no
                // copy of the elements is made and no borrow spans the
                // recursion.
                let item = |i: usize| match x {
                    Value::List(l) => l.get(i),
                    Value::Tuple(t) => t.items.get(i).copied(),
                    // `s.elems()` and friends are iterable, so an array.
                    Value::Elems(e) => e.items.get(i).copied(),
                    _ => None,
                };
                for i in 0.. {
                    let Some(v) = item(i) else { break };
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.emit(v)
                        .map_err(|e| e.prefixed(&format!("at {} index {i}: ", x.type_name())))?;
                }
                self.out.push(']');
            }
            _ => {
                return Err(Error::msg(format!(
                    "cannot encode {} as JSON",
                    x.type_name()
                )))
            }
        }
        Ok(())
    }
}

fn encode<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    let p = positional("json.encode", a, 1, 1)?;
    let mut enc = Encoder {
        budget: th.budget,
        out: String::new(),
        path: Vec::new(),
        steps: 0,
        charged_len: 0,
        pieces: format::TextPieces::new("", th.budget.heap_left()),
    };
    enc.emit(p[0]).map_err(|e| e.prefixed("json.encode: "))?;
    // The last element's text, which no later element charged.
    enc.charge_output()?;
    enc.pieces.check(&enc.out)?;
    // The text is charged while it is copied into the heap.
    let len = enc.pieces.len(&enc.out);
    th.budget.charge_heap(len)?;
    let copy = enc.pieces.into_value(&enc.out, th.heap);
    th.budget.release_heap(len);
    copy
}

// ---------------------------------------------------------------------------
// decode

/// Go's `%q` of a byte (as a rune), used in starlark-go's messages.
fn go_char(b: u8) -> String {
    let c = b as char;
    match c {
        '\'' => "'\\''".to_string(),
        '\x07' => "'\\a'".to_string(),
        '\x08' => "'\\b'".to_string(),
        '\x0c' => "'\\f'".to_string(),
        '\n' => "'\\n'".to_string(),
        '\r' => "'\\r'".to_string(),
        '\t' => "'\\t'".to_string(),
        '\x0b' => "'\\v'".to_string(),
        '\\' => "'\\\\'".to_string(),
        _ if b < 0x20 || b == 0x7f => format!("'\\x{b:02x}'"),
        _ if (0x80..0xa0).contains(&b) || b == 0xad => format!("'\\u{:04x}'", b),
        _ => format!("'{c}'"),
    }
}

/// A failure of the parser (answered by `default` when given), or an
/// error that must propagate (budgets).
enum Fail {
    Syntax(String),
    Hard(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Hard(e)
    }
}

struct Decoder<'h, 't> {
    th: &'t Thread<'h>,
    s: &'h str,
    i: usize,
    steps: usize,
    /// Object keys made so far, by their text: a key that every record
    /// repeats is one string, made once (strings are immutable, so sharing
    /// one cannot be observed). A direct-mapped cache of [`KEY_SLOTS`]
    /// keys of at most [`MAX_KEY_BYTES`]: a lookup is one hash and one
    /// comparison whatever the text holds, and a key whose slot another
    /// holds is made anew.
    keys: Vec<Option<(&'h str, Value<'h>)>>,
}

/// The slots of a decoder's key cache (see [`Decoder::keys`]).
const KEY_SLOTS: usize = 64;
/// The longest object key a decoder shares.
const MAX_KEY_BYTES: usize = 64;

/// The slot of `key` in a decoder's key cache.
fn key_slot(key: &str) -> usize {
    let mut h = FxHasher::default();
    h.write(key.as_bytes());
    (h.finish() as usize) % KEY_SLOTS
}

type D<T> = std::result::Result<T, Fail>;

fn fail<T>(msg: String) -> D<T> {
    Err(Fail::Syntax(msg))
}

impl<'h> Decoder<'h, '_> {
    /// Skips white space; whether anything follows it. A long run is
    /// charged as it is skipped (a unit per byte).
    fn skip_space(&mut self) -> D<bool> {
        let b = self.s.as_bytes();
        while self.i < b.len() {
            if !matches!(b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
                return Ok(true);
            }
            self.i += 1;
            if self.i.is_multiple_of(WORK_BLOCK) {
                self.th.budget.charge_work(WORK_BLOCK as u64)?;
            }
        }
        Ok(false)
    }

    fn next(&mut self) -> D<u8> {
        if self.skip_space()? {
            Ok(self.s.as_bytes()[self.i])
        } else {
            fail("unexpected end of file".into())
        }
    }

    /// The string literal at `self.i` (its opening quote); an object key
    /// when `key` (see [`Decoder::keys`]).
    fn string(&mut self, key: bool) -> D<Value<'h>> {
        let heap = self.th.heap;
        let bytes = self.s.as_bytes();
        let mut safe = true;
        let mut closed = false;
        let mut j = self.i + 1;
        while j < bytes.len() {
            if j.is_multiple_of(WORK_BLOCK) {
                // The scan goes a byte at a time: a unit per byte.
                self.th.budget.charge_work(WORK_BLOCK as u64)?;
            }
            let c = bytes[j];
            if c == b'\\' {
                safe = false;
                j += 1;
            } else if c == b'"' {
                closed = true;
                j += 1;
                break;
            } else if c >= 0x80 {
                safe = false;
            }
            j += 1;
        }
        if !closed {
            return fail("unclosed string literal".into());
        }
        let start = self.i;
        self.i = j;
        // `j` follows an ASCII quote, so both ends are boundaries.
        let lit = &self.s[start..j];
        if safe {
            let text = &lit[1..lit.len() - 1];
            if !key || text.len() > MAX_KEY_BYTES {
                return Ok(heap.str_in_arena(text)?);
            }
            if self.keys.is_empty() {
                // Made at the first key: a text without objects needs none.
                self.keys.resize(KEY_SLOTS, None);
            }
            let slot = &mut self.keys[key_slot(text)];
            if let Some((k, v)) = *slot {
                if k == text {
                    return Ok(v);
                }
            }
            let v = heap.str_in_arena(text)?;
            *slot = Some((text, v));
            return Ok(v);
        }
        let text = unquote(lit, self.th.budget)?;
        Ok(heap.str(&text)?)
    }

    fn parse(&mut self, depth: usize) -> D<Value<'h>> {
        self.steps += 1;
        args::tick(self.th.budget, self.steps)?;
        let heap = self.th.heap;
        let bytes = self.s.as_bytes();
        let b = self.next()?;
        let rest = &self.s[self.i..];
        match b {
            b'"' => self.string(false),
            b'n' if rest.starts_with("null") => {
                self.i += 4;
                Ok(Value::None)
            }
            b't' if rest.starts_with("true") => {
                self.i += 4;
                Ok(Value::Bool(true))
            }
            b'f' if rest.starts_with("false") => {
                self.i += 5;
                Ok(Value::Bool(false))
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return fail("nesting too deep".into());
                }
                self.i += 1;
                let mut elems = heap.vec_with_capacity(0)?;
                if self.next()? != b']' {
                    loop {
                        let v = self.parse(depth + 1)?;
                        heap.push(&mut elems, v)?;
                        let c = self.next()?;
                        if c != b',' {
                            if c != b']' {
                                return fail(format!("got {}, want ',' or ']'", go_char(c)));
                            }
                            break;
                        }
                        self.i += 1;
                    }
                }
                self.i += 1;
                Ok(heap.list_from_vec(elems)?)
            }
            b'{' => {
                if depth >= MAX_DEPTH {
                    return fail("nesting too deep".into());
                }
                self.i += 1;
                let d = heap.dict(0)?;
                if self.next()? != b'}' {
                    loop {
                        let key = if self.next()? == b'"' {
                            // As `parse` would, with the key shared.
                            self.steps += 1;
                            args::tick(self.th.budget, self.steps)?;
                            self.string(true)?
                        } else {
                            self.parse(depth + 1)?
                        };
                        if !matches!(key, Value::Str(_)) {
                            return fail(format!(
                                "got {} for object key, want string",
                                key.type_name()
                            ));
                        }
                        let c = self.next()?;
                        if c != b':' {
                            return fail(format!(
                                "after object key, got {}, want ':' ",
                                go_char(c)
                            ));
                        }
                        self.i += 1;
                        let value = self.parse(depth + 1)?;
                        d.map.borrow_mut().insert(key, value)?;
                        let c = self.next()?;
                        if c != b',' {
                            if c != b'}' {
                                return fail(format!(
                                    "in object, got {}, want ',' or '}}'",
                                    go_char(c)
                                ));
                            }
                            break;
                        }
                        self.i += 1;
                    }
                }
                self.i += 1;
                Ok(Value::Dict(d))
            }
            b'0'..=b'9' | b'-' => {
                let mut float = false;
                let mut j = self.i + 1;
                while j < bytes.len() {
                    match bytes[j] {
                        b'0'..=b'9' => {}
                        b'.' | b'e' | b'E' | b'+' | b'-' => float = true,
                        _ => break,
                    }
                    j += 1;
                }
                let num = &self.s[self.i..j];
                self.i = j;
                let digits = num.strip_prefix('-').unwrap_or(num);
                let db = digits.as_bytes();
                if db.is_empty() || (db[0] == b'0' && db.len() > 1 && db[1].is_ascii_digit()) {
                    return fail(format!("invalid number: {num}"));
                }
                if float {
                    match num.parse::<f64>() {
                        Ok(f) if f.is_finite() => Ok(Value::Float(f)),
                        _ => fail(format!("invalid number: {num}")),
                    }
                } else {
                    if !digits.bytes().all(|c| c.is_ascii_digit()) {
                        return fail(format!("invalid number: {num}"));
                    }
                    if let Ok(i) = num.parse::<i64>() {
                        return Ok(Value::Int(i));
                    }
                    format::check_int_text_cost(digits.len() / 9 + 1, self.th.budget)?;
                    match num.parse::<BigInt>() {
                        Ok(n) => Ok(heap.int(n)?),
                        Err(_) => fail(format!("invalid number: {num}")),
                    }
                }
            }
            _ => fail(format!("unexpected character {}", go_char(b))),
        }
    }
}

/// Go's `json.Unmarshal` of a quoted string literal (with its quotes):
/// escapes, surrogate pairs (a lone surrogate becomes U+FFFD), and Go's
/// scanner messages for malformed input.
fn unquote(lit: &str, budget: &Budget) -> D<String> {
    let body = &lit[1..lit.len() - 1];
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    let hex4 =
        |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> std::result::Result<u32, String> {
            let mut v = 0;
            for _ in 0..4 {
                match chars.next() {
                    Some(c) if c.is_ascii_hexdigit() => v = v * 16 + c.to_digit(16).unwrap_or(0),
                    Some(c) => {
                        return Err(format!(
                            "invalid character {} in \\u hexadecimal character escape",
                            scanner_char(c)
                        ))
                    }
                    // The body ends where the literal's closing quote is,
                    // which is what Go's scanner reads next.
                    None => {
                        return Err(format!(
                            "invalid character {} in \\u hexadecimal character escape",
                            scanner_char('"')
                        ))
                    }
                }
            }
            Ok(v)
        };
    let mut read = 0usize;
    while let Some(c) = chars.next() {
        read += 1;
        if read.is_multiple_of(WORK_BLOCK) {
            // Decoding goes a character at a time: a unit per character.
            budget.charge_work(WORK_BLOCK as u64)?;
        }
        match c {
            '\\' => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                Some('b') => out.push('\x08'),
                Some('f') => out.push('\x0c'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let u = hex4(&mut chars).map_err(Fail::Syntax)?;
                    if (0xD800..0xDC00).contains(&u) {
                        // A high surrogate pairs only with `\u` + low.
                        let mut look = chars.clone();
                        if look.next() == Some('\\') && look.next() == Some('u') {
                            if let Ok(lo) = hex4(&mut look) {
                                if (0xDC00..0xE000).contains(&lo) {
                                    chars = look;
                                    let c = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                                    continue;
                                }
                            }
                        }
                        out.push('\u{FFFD}');
                    } else {
                        out.push(char::from_u32(u).unwrap_or('\u{FFFD}'));
                    }
                }
                Some(c) => {
                    return fail(format!(
                        "invalid character {} in string escape code",
                        scanner_char(c)
                    ))
                }
                None => return fail("unexpected end of JSON input".into()),
            },
            c if (c as u32) < 0x20 => {
                return fail(format!(
                    "invalid character {} in string literal",
                    scanner_char(c)
                ))
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Go's JSON scanner `quoteChar`.
fn scanner_char(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '"' => "'\"'".into(),
        _ => {
            let mut q = String::new();
            format::write_quoted(&mut q, c.to_string().as_bytes(), false);
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

fn decode<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    let u = unpack("json.decode", a, ["x", "default"], 1)?;
    let s = u.conv(0, args::want_str)?.unwrap_or(b"");
    // Text with invalid bytes is decoded with U+FFFD in their place.
    let s: &'h str = match std::str::from_utf8(s) {
        Ok(t) => t,
        Err(_) => {
            let t = crate::text::lossy(s);
            th.heap.charge(t.len())?;
            th.heap.bump.alloc_str(&t)
        }
    };
    let dflt = u.get(1);
    if a.positional.is_empty() {
        return Err(Error::msg("json.decode: unexpected keyword argument x"));
    }
    // The text is read at most once: its bytes are charged up front, its
    // values as they are parsed.
    th.budget.charge_work((s.len() / BYTES_PER_UNIT) as u64)?;
    let mut d = Decoder {
        th,
        s,
        i: 0,
        steps: 0,
        keys: Vec::new(),
    };
    let r = d.parse(0).and_then(|v| {
        if d.skip_space()? {
            let c = d.s.as_bytes()[d.i];
            fail(format!("unexpected character {} after value", go_char(c)))
        } else {
            Ok(v)
        }
    });
    match r {
        Ok(v) => Ok(v),
        Err(Fail::Hard(e)) => Err(e),
        Err(Fail::Syntax(m)) => match dflt {
            Some(v) => Ok(v),
            None => Err(Error::msg(format!("json.decode: at offset {}, {m}", d.i))),
        },
    }
}

// ---------------------------------------------------------------------------
// indent

/// A re-indenter with the messages of Go's JSON scanner.
struct Indenter<'s> {
    s: &'s [u8],
    i: usize,
    out: Vec<u8>,
    prefix: &'s str,
    indent: &'s str,
    steps: usize,
    budget: &'s crate::budget::Budget,
}

/// The error an [`Indenter`] returns when its output outgrows the heap.
const TOO_BIG: &str = "\0too big";

type I = std::result::Result<(), String>;

fn invalid(c: u8, ctx: &str) -> String {
    // Go reports the byte as a rune (Latin-1 for bytes >= 0x80).
    format!("invalid character {} {ctx}", scanner_char(c as char))
}

const EOF: &str = "unexpected end of JSON input";

impl Indenter<'_> {
    fn newline(&mut self, depth: usize) -> I {
        let need = self.prefix.len() + depth.saturating_mul(self.indent.len()) + 1;
        if self.out.len().saturating_add(need) > self.budget.limits.max_heap_bytes {
            return Err(TOO_BIG.into());
        }
        // A long prefix or indent makes each line dear. A failed charge
        // reads as the time limit after the walk, as in `value`.
        if self
            .budget
            .charge_work((need / BYTES_PER_UNIT) as u64)
            .is_err()
        {
            return Err(TOO_BIG.into());
        }
        self.out.push(b'\n');
        self.out.extend_from_slice(self.prefix.as_bytes());
        for _ in 0..depth {
            self.out.extend_from_slice(self.indent.as_bytes());
        }
        Ok(())
    }

    /// Skips white space; the byte that follows it, if any. A long run
    /// is charged as it is skipped (a unit per byte); a failed charge
    /// reads as the time limit after the walk, as in `value`.
    fn skip_space(&mut self) -> std::result::Result<Option<u8>, String> {
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                return Ok(Some(c));
            }
            self.i += 1;
            if self.i.is_multiple_of(WORK_BLOCK)
                && self.budget.charge_work(WORK_BLOCK as u64).is_err()
            {
                return Err(TOO_BIG.into());
            }
        }
        Ok(None)
    }

    fn value(&mut self, depth: usize) -> I {
        self.steps += 1;
        if args::tick(self.budget, self.steps).is_err() {
            return Err(TOO_BIG.into());
        }
        let Some(c) = self.skip_space()? else {
            return Err(EOF.into());
        };
        match c {
            b'{' | b'[' => {
                if depth >= MAX_DEPTH {
                    return Err("exceeded max depth".into());
                }
                let (close, object) = if c == b'{' {
                    (b'}', true)
                } else {
                    (b']', false)
                };
                self.out.push(c);
                self.i += 1;
                match self.skip_space()? {
                    None => return Err(EOF.into()),
                    Some(x) if x == close => {
                        self.out.push(close);
                        self.i += 1;
                        return Ok(());
                    }
                    _ => {}
                }
                loop {
                    self.newline(depth + 1)?;
                    if object {
                        match self.skip_space()? {
                            None => return Err(EOF.into()),
                            Some(b'"') => self.string()?,
                            Some(x) => {
                                return Err(invalid(
                                    x,
                                    "looking for beginning of object key string",
                                ))
                            }
                        }
                        match self.skip_space()? {
                            None => return Err(EOF.into()),
                            Some(b':') => {
                                self.out.extend_from_slice(b": ");
                                self.i += 1;
                            }
                            Some(x) => return Err(invalid(x, "after object key")),
                        }
                    }
                    self.value(depth + 1)?;
                    let ctx = if object {
                        "after object key:value pair"
                    } else {
                        "after array element"
                    };
                    match self.skip_space()? {
                        None => return Err(EOF.into()),
                        Some(b',') => {
                            self.out.push(b',');
                            self.i += 1;
                        }
                        Some(x) if x == close => {
                            self.newline(depth)?;
                            self.out.push(close);
                            self.i += 1;
                            return Ok(());
                        }
                        Some(x) => return Err(invalid(x, ctx)),
                    }
                }
            }
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            x => Err(invalid(x, "looking for beginning of value")),
        }
    }

    fn literal(&mut self, word: &[u8]) -> I {
        for (k, &w) in word.iter().enumerate() {
            match self.s.get(self.i + k) {
                None => return Err(EOF.into()),
                Some(&c) if c == w => {}
                Some(&c) => {
                    let ctx = format!(
                        "in literal {} (expecting '{}')",
                        std::str::from_utf8(word).unwrap_or(""),
                        w as char
                    );
                    return Err(invalid(c, &ctx));
                }
            }
        }
        self.out.extend_from_slice(word);
        self.i += word.len();
        Ok(())
    }

    fn number(&mut self) -> I {
        let s = self.s;
        let start = self.i;
        let mut i = self.i;
        let digit = |i: usize| s.get(i).is_some_and(|c| c.is_ascii_digit());
        if s[i] == b'-' {
            i += 1;
            match s.get(i) {
                None => return Err(EOF.into()),
                Some(c) if c.is_ascii_digit() => {}
                Some(&c) => return Err(invalid(c, "in numeric literal")),
            }
        }
        if s[i] == b'0' {
            i += 1;
        } else {
            while digit(i) {
                i += 1;
            }
        }
        if s.get(i) == Some(&b'.') {
            i += 1;
            match s.get(i) {
                None => return Err(EOF.into()),
                Some(c) if c.is_ascii_digit() => {}
                Some(&c) => return Err(invalid(c, "after decimal point in numeric literal")),
            }
            while digit(i) {
                i += 1;
            }
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(s.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            match s.get(i) {
                None => return Err(EOF.into()),
                Some(c) if c.is_ascii_digit() => {}
                Some(&c) => return Err(invalid(c, "in exponent of numeric literal")),
            }
            while digit(i) {
                i += 1;
            }
        }
        self.out.extend_from_slice(&s[start..i]);
        self.i = i;
        Ok(())
    }

    fn string(&mut self) -> I {
        let s = self.s;
        let start = self.i;
        let mut i = self.i + 1;
        loop {
            // The scan goes a byte at a time: a unit per byte. A failed
            // charge reads as the time limit after the walk, as in `value`.
            if i.is_multiple_of(WORK_BLOCK) && self.budget.charge_work(WORK_BLOCK as u64).is_err() {
                return Err(TOO_BIG.into());
            }
            let Some(&c) = s.get(i) else {
                return Err(EOF.into());
            };
            match c {
                b'"' => break,
                b'\\' => {
                    i += 1;
                    let Some(&e) = s.get(i) else {
                        return Err(EOF.into());
                    };
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            for k in 1..=4 {
                                match s.get(i + k) {
                                    None => return Err(EOF.into()),
                                    Some(h) if h.is_ascii_hexdigit() => {}
                                    Some(&h) => {
                                        return Err(invalid(
                                            h,
                                            "in \\u hexadecimal character escape",
                                        ))
                                    }
                                }
                            }
                            i += 4;
                        }
                        _ => return Err(invalid(e, "in string escape code")),
                    }
                }
                c if c < 0x20 => return Err(invalid(c, "in string literal")),
                _ => {}
            }
            i += 1;
        }
        self.out.extend_from_slice(&s[start..=i]);
        self.i = i + 1;
        Ok(())
    }
}

fn indent<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    let u = unpack_from("json.indent", &[], a.named, ["prefix", "indent"], 0)?;
    let prefix = crate::text::lossy(u.conv(0, args::want_str)?.unwrap_or(b""));
    let ind = crate::text::lossy(u.conv(1, args::want_str)?.unwrap_or(b"\t"));
    let (prefix, ind) = (&*prefix, &*ind);
    let bare = Args {
        recv: None,
        positional: a.positional,
        named: &[],
    };
    let p = positional("json.indent", &bare, 1, 1)?;
    let s = args::pos("json.indent", p, 0, args::want_str)?.unwrap_or(b"");
    // The text is read at most once: its bytes are charged up front, its
    // values and new lines as they are written.
    th.budget.charge_work((s.len() / BYTES_PER_UNIT) as u64)?;
    let s = &*crate::text::lossy(s);
    let mut ix = Indenter {
        s: s.as_bytes(),
        i: 0,
        out: Vec::with_capacity(s.len()),
        prefix,
        indent: ind,
        steps: 0,
        budget: th.budget,
    };
    let mut r = ix.value(0);
    if r.is_ok() {
        r = match ix.skip_space() {
            Ok(Some(c)) => Err(invalid(c, "after top-level value")),
            Ok(None) => Ok(()),
            Err(m) => Err(m),
        };
    }
    th.budget.check_time()?;
    if matches!(&r, Err(m) if m == TOO_BIG) {
        return Err(Error::limit(LimitKind::HeapBytes));
    }
    if let Err(m) = r {
        return Err(Error::msg(format!("json.indent: {m}")));
    }
    // Go keeps the input's trailing white space.
    let trimmed = s.trim_end_matches([' ', '\t', '\n', '\r']);
    ix.out.extend_from_slice(&s.as_bytes()[trimmed.len()..]);
    let text = String::from_utf8_lossy(&ix.out);
    th.heap.str(text.as_bytes())
}
