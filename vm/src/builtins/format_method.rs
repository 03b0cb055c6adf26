//! `str.format`: replacement fields `{}`, `{0}`, `{name}` with the
//! conversions `!s` and `!r`, and `{{`/`}}` escapes. Like starlark-go,
//! there are no format specs, attribute or index syntax, or nested
//! fields; each is refused with starlark-go's text.

use super::string::{recv, write_str};
use super::Args;
use crate::error::{Error, LimitKind, Result};
use crate::format;
use crate::interp::Thread;
use crate::text::{find_byte, lossy};
use crate::value::Value;

/// Appends `lit` with `}}` read as `}`, refusing a lone `}`.
fn literal(out: &mut Vec<u8>, mut lit: &[u8]) -> Result<()> {
    while let Some(j) = find_byte(b'}', lit) {
        if lit.get(j + 1) != Some(&b'}') {
            return Err(Error::msg("format: single '}' in format"));
        }
        out.extend_from_slice(&lit[..=j]);
        lit = &lit[j + 2..];
    }
    out.extend_from_slice(lit);
    Ok(())
}

/// `s` before and after the first `sep` (a field's name and conversion
/// are a few bytes: a plain loop, no word scan).
fn split_once(s: &[u8], sep: u8) -> Option<(&[u8], &[u8])> {
    let i = s.iter().position(|&b| b == sep)?;
    Some((&s[..i], &s[i + 1..]))
}

/// starlark-go's `decimal`: all ASCII digits, without overflow.
fn decimal(s: &[u8]) -> Option<usize> {
    let mut x: usize = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        x = x.checked_mul(10)?.checked_add((b - b'0') as usize)?;
    }
    Some(x)
}

pub fn format<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    if let Some(v) = format_short(th, a) {
        return v;
    }
    format::with_text_buffer(|out| format_into(out, th, a))
}

/// The commonest templates (`"{} / {}".format(a, b)`, `"{name}: {n}"`):
/// fields `{}`, `{N}` or `{name}` without conversions or specs, of strings
/// and ints, no `{{`/`}}` escapes, into a [`format::ShortText`]. The text is the one [`format_into`] writes.
/// `None` for everything else, errors included: [`format_into`] decides.
fn format_short<'h>(th: &Thread<'h>, a: &Args<'h, '_>) -> Option<Result<Value<'h>>> {
    let fmt = recv(a).ok()?;
    let mut text = format::ShortText::new();
    let (mut auto, mut manual, mut next) = (false, false, 0);
    let mut rest = fmt;
    loop {
        let open = find_byte(b'{', rest);
        let lit = &rest[..open.unwrap_or(rest.len())];
        if find_byte(b'}', lit).is_some() {
            return None;
        }
        text.push(lit)?;
        let Some(i) = open else { break };
        rest = &rest[i + 1..];
        let close = find_byte(b'}', rest)?;
        let name = &rest[..close];
        rest = &rest[close + 1..];
        let arg = match name.first() {
            None if !manual => {
                auto = true;
                next += 1;
                *a.positional.get(next - 1)?
            }
            Some(b'0'..=b'9') if !auto => {
                manual = true;
                *a.positional.get(decimal(name)?)?
            }
            Some(c)
                if !c.is_ascii_digit()
                    && name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_') =>
            {
                a.named.iter().find(|(k, _)| k.as_bytes() == name)?.1
            }
            _ => return None,
        };
        text.push_value(arg)?;
    }
    Some(text.finish(th.heap, fmt.len()))
}

/// [`format`], with `out` to write the text in before it is copied into
/// the heap.
fn format_into<'h>(out: &mut Vec<u8>, th: &Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    let mut fmt = recv(a)?;
    let args = a.positional;
    let (mut auto, mut manual) = (false, false);
    let mut index = 0;
    out.reserve(fmt.len());
    let mut text_charged = 0usize;
    let max = th.budget.limits.max_heap_bytes;
    loop {
        if out.len() > max {
            return Err(Error::limit(LimitKind::HeapBytes));
        }
        let Some(i) = crate::text::find(th.budget, fmt, b"{")? else {
            literal(out, fmt)?;
            break;
        };
        literal(out, &fmt[..i])?;
        if fmt.get(i + 1) == Some(&b'{') {
            out.push(b'{');
            fmt = &fmt[i + 2..];
            continue;
        }
        fmt = &fmt[i + 1..];
        let Some(close) = find_byte(b'}', fmt) else {
            return Err(Error::msg("format: unmatched '{' in format"));
        };
        let field = &fmt[..close];
        fmt = &fmt[close + 1..];
        let (name, conv, spec): (&[u8], &[u8], &[u8]) = match split_once(field, b'!') {
            None => match split_once(field, b':') {
                None => (field, b"s", b""),
                Some((n, s)) => (n, b"s", s),
            },
            Some((n, rest)) => match split_once(rest, b':') {
                None => (n, rest, b""),
                Some((c, s)) => (n, c, s),
            },
        };
        let arg = if name.is_empty() {
            if manual {
                return Err(Error::msg("format: cannot switch from manual field specification to automatic field numbering"));
            }
            auto = true;
            let Some(v) = args.get(index) else {
                return Err(Error::msg("format: tuple index out of range"));
            };
            index += 1;
            *v
        } else if let Some(num) = decimal(name) {
            if auto {
                return Err(Error::msg("format: cannot switch from automatic field numbering to manual field specification"));
            }
            manual = true;
            match args.get(num) {
                Some(v) => *v,
                None => return Err(Error::msg("format: tuple index out of range")),
            }
        } else {
            match a.named.iter().find(|(k, _)| k.as_bytes() == name) {
                Some((_, v)) => *v,
                None => {
                    let name = lossy(name);
                    return Err(Error::msg(if name.contains('.') {
                        format!("format: attribute syntax x.y is not supported in replacement fields: {name}")
                    } else if name.contains('[') {
                        format!("format: element syntax a[i] is not supported in replacement fields: {name}")
                    } else if name.contains('{') {
                        "format: nested replacement fields not supported".to_string()
                    } else {
                        format!("format: keyword {name} not found")
                    }));
                }
            }
        };
        if !spec.is_empty() {
            return Err(Error::msg(format!(
                "format spec features not supported in replacement fields: {}",
                lossy(spec)
            )));
        }
        let before = out.len();
        match conv {
            b"s" => write_str(out, arg, th)?,
            b"r" => format::write_repr_bytes(out, arg, th.budget)?,
            _ => {
                let mut q = String::new();
                format::write_quoted(&mut q, conv, false);
                return Err(Error::msg(format!("format: unknown conversion {q}")));
            }
        }
        text_charged += out.len() - before;
    }
    let mut b = th.heap.string_builder(out.len())?;
    b.push_str(&*out);
    // The fields' text was charged as it was written; the copy is now in
    // the heap.
    th.budget.release_heap(text_charged);
    th.heap.finish_str(b)
}
