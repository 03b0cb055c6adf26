//! Strings as starlark-go sees them: byte strings, usually UTF-8.
//!
//! A Starlark string holds any bytes: indexing and slicing count bytes and
//! may cut a character into pieces, which stay raw bytes. Where an
//! operation needs characters (`codepoints`, case mappings, `strip`,
//! `split()` at white space, `hash`, conversion for the host), it decodes
//! as Go does: a valid UTF-8 sequence is its character, and each byte that
//! does not start one is a character of its own, U+FFFD (so `"\xf0\x9f"`
//! is two of them, where Rust's lossy decoding would make one). Valid
//! UTF-8 is the same in both languages (no surrogates, no overlong forms).
//! Byte searching comes from `bstr`, in windows of bounded length so that
//! the deadline is looked at while a long string is searched.

use crate::budget::{Budget, WORK_CHECK_BYTES};
use crate::error::Result;
use bstr::{ByteSlice, Finder, FinderReverse};
use std::borrow::Cow;

/// The replacement character an invalid byte decodes to.
pub const REPLACEMENT: char = '\u{FFFD}';

/// The character at the start of non-empty `s` and its length in bytes: an
/// invalid byte is U+FFFD of length 1.
#[inline]
pub fn decode(s: &[u8]) -> (char, usize) {
    match s.first() {
        Some(&b) if b < 0x80 => (b as char, 1),
        Some(_) => match bstr::decode_utf8(s) {
            (Some(c), n) => (c, n),
            (None, _) => (REPLACEMENT, 1),
        },
        None => (REPLACEMENT, 0),
    }
}

/// The character at the end of non-empty `s` and its length, decoded as
/// [`decode`] does (so the same characters are seen from either end).
#[inline]
pub fn decode_last(s: &[u8]) -> (char, usize) {
    match s.last() {
        Some(&b) if b < 0x80 => (b as char, 1),
        Some(_) => match bstr::decode_last_utf8(s) {
            (Some(c), n) => (c, n),
            (None, _) => (REPLACEMENT, 1),
        },
        None => (REPLACEMENT, 0),
    }
}

/// The characters of `s` with their byte offsets and lengths.
pub fn runes(s: &[u8]) -> Runes<'_> {
    Runes {
        s,
        front: 0,
        back: s.len(),
    }
}

/// See [`runes`]; iterates from both ends.
pub struct Runes<'a> {
    s: &'a [u8],
    front: usize,
    back: usize,
}

impl Iterator for Runes<'_> {
    /// (offset, length, character)
    type Item = (usize, usize, char);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize, char)> {
        if self.front >= self.back {
            return None;
        }
        let at = self.front;
        let (c, n) = decode(&self.s[at..self.back]);
        self.front += n;
        Some((at, n, c))
    }
}

impl DoubleEndedIterator for Runes<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<(usize, usize, char)> {
        if self.front >= self.back {
            return None;
        }
        let (c, n) = decode_last(&self.s[self.front..self.back]);
        self.back -= n;
        Some((self.back, n, c))
    }
}

/// Whether the character of length `len` decoded at some offset was an
/// invalid byte (a U+FFFD written in the text is 3 bytes long).
#[inline]
pub fn is_invalid(c: char, len: usize) -> bool {
    c == REPLACEMENT && len == 1
}

/// Go's `utf8.RuneCount`: characters, each invalid byte counting one.
pub fn rune_count(s: &[u8], budget: &Budget) -> Result<usize> {
    let mut n = 0;
    for chunk in s.utf8_chunks() {
        budget.charge_bytes(chunk.valid().len() + chunk.invalid().len())?;
        n += chunk.valid().chars().count() + chunk.invalid().len();
    }
    Ok(n)
}

/// The text of `s` for the host: `s` itself when it is valid UTF-8,
/// otherwise a copy with every invalid byte replaced by U+FFFD (as Go's
/// JSON encoder and starlark-go's conversions do).
pub fn lossy(s: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(s) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => {
            let mut out = String::with_capacity(lossy_len(s));
            for chunk in s.utf8_chunks() {
                out.push_str(chunk.valid());
                for _ in chunk.invalid() {
                    out.push(REPLACEMENT);
                }
            }
            Cow::Owned(out)
        }
    }
}

/// The length of [`lossy`]`(s)` without making it.
pub fn lossy_len(s: &[u8]) -> usize {
    s.utf8_chunks()
        .map(|c| c.valid().len() + 3 * c.invalid().len())
        .sum()
}

/// Calls `f` with the start of each non-overlapping match of non-empty
/// `needle` in `hay`, left to right, until `f` returns false. The search
/// runs in windows of about [`WORK_CHECK_BYTES`], each charged as work.
pub fn for_each_match(
    budget: &Budget,
    hay: &[u8],
    needle: &[u8],
    mut f: impl FnMut(usize) -> Result<bool>,
) -> Result<()> {
    let n = needle.len();
    debug_assert!(n > 0);
    // A one-byte needle (`%`, `,`, a newline: most searches) is found with
    // memchr; building a substring finder costs more than a short search.
    let finder = (n > 1).then(|| Finder::new(needle));
    let search = |window: &[u8]| match &finder {
        Some(finder) => finder.find(window),
        None => window.find_byte(needle[0]),
    };
    let mut pos = 0;
    while pos + n <= hay.len() {
        // Matches starting in [pos, end) lie in hay[pos..end + n - 1].
        let end = pos.saturating_add(WORK_CHECK_BYTES).min(hay.len());
        let wend = (end + n - 1).min(hay.len());
        match search(&hay[pos..wend]) {
            Some(i) => {
                budget.charge_bytes(i + n)?;
                if !f(pos + i)? {
                    return Ok(());
                }
                pos += i + n;
            }
            None => {
                budget.charge_bytes(wend - pos)?;
                pos = end;
            }
        }
    }
    Ok(())
}

/// The first match of non-empty `needle` in `hay`.
pub fn find(budget: &Budget, hay: &[u8], needle: &[u8]) -> Result<Option<usize>> {
    let mut found = None;
    for_each_match(budget, hay, needle, |i| {
        found = Some(i);
        Ok(false)
    })?;
    Ok(found)
}

/// The last match of non-empty `needle` in `hay`, searched from the end
/// in windows as [`for_each_match`] does.
pub fn rfind(budget: &Budget, hay: &[u8], needle: &[u8]) -> Result<Option<usize>> {
    let n = needle.len();
    let finder = FinderReverse::new(needle);
    let mut end = hay.len();
    while end >= n {
        let start = end.saturating_sub(WORK_CHECK_BYTES + n);
        budget.charge_bytes(end - start)?;
        if let Some(i) = finder.rfind(&hay[start..end]) {
            return Ok(Some(start + i));
        }
        if start == 0 {
            break;
        }
        // Matches starting before `start` end before `start + n`.
        end = start + n - 1;
    }
    Ok(None)
}

/// The number of non-overlapping matches of non-empty `needle` in `hay`,
/// up to `limit`.
pub fn count(budget: &Budget, hay: &[u8], needle: &[u8], limit: usize) -> Result<usize> {
    let mut k = 0;
    if limit > 0 {
        for_each_match(budget, hay, needle, |_| {
            k += 1;
            Ok(k < limit)
        })?;
    }
    Ok(k)
}

/// Bytes `a` and `b` compare equal; long ones are charged as work first
/// when there is a budget.
#[inline]
pub fn eq(budget: Option<&Budget>, a: &[u8], b: &[u8]) -> Result<bool> {
    if a.len() != b.len() {
        return Ok(false);
    }
    if let (true, Some(budget)) = (a.len() > 64, budget) {
        budget.charge_bytes(a.len())?;
    }
    Ok(a == b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Limits;
    use std::time::Instant;

    fn budget() -> Budget {
        Budget::new(Limits::default(), Instant::now(), None)
    }

    #[test]
    fn invalid_bytes_decode_one_by_one_from_both_ends() {
        let s = b"a\xf0\x9f\xc3\xa9\xe2\x82z\xef\xbf\xbd";
        let fwd: Vec<(usize, usize, char)> = runes(s).collect();
        let mut back: Vec<(usize, usize, char)> = runes(s).rev().collect();
        back.reverse();
        assert_eq!(fwd, back);
        let chars: Vec<char> = fwd.iter().map(|r| r.2).collect();
        assert_eq!(
            chars,
            ['a', '\u{FFFD}', '\u{FFFD}', 'é', '\u{FFFD}', '\u{FFFD}', 'z', '\u{FFFD}']
        );
        assert!(is_invalid(fwd[1].2, fwd[1].1));
        assert!(!is_invalid(fwd[7].2, fwd[7].1));
        assert_eq!(rune_count(s, &budget()).unwrap(), 8);
        assert_eq!(rune_count("héllo".as_bytes(), &budget()).unwrap(), 5);
        assert_eq!(lossy(s), "a\u{FFFD}\u{FFFD}é\u{FFFD}\u{FFFD}z\u{FFFD}");
        assert_eq!(lossy_len(s), lossy(s).len());
    }

    #[test]
    fn windowed_search_finds_what_a_plain_search_finds() {
        let b = budget();
        let mut hay = vec![b'a'; 3 * WORK_CHECK_BYTES + 17];
        for at in [
            0,
            WORK_CHECK_BYTES - 1,
            WORK_CHECK_BYTES,
            2 * WORK_CHECK_BYTES + 3,
        ] {
            hay[at] = b'x';
            hay[at + 1] = b'y';
        }
        let end = hay.len();
        hay[end - 2..].copy_from_slice(b"xy");
        let mut got = Vec::new();
        for_each_match(&b, &hay, b"xy", |i| {
            got.push(i);
            Ok(true)
        })
        .unwrap();
        let want: Vec<usize> = bstr::ByteSlice::find_iter(&hay[..], "xy").collect();
        assert_eq!(got, want);
        assert_eq!(find(&b, &hay, b"xy").unwrap(), want.first().copied());
        assert_eq!(rfind(&b, &hay, b"xy").unwrap(), want.last().copied());
        assert_eq!(
            rfind(&b, &hay[..end - 1], b"xy").unwrap(),
            Some(2 * WORK_CHECK_BYTES + 3)
        );
        assert_eq!(count(&b, &hay, b"xy", usize::MAX).unwrap(), want.len());
        // One-byte needles take the memchr path, across the same windows.
        for needle in [&b"x"[..], b"y", b"a", b"z"] {
            let mut got = Vec::new();
            for_each_match(&b, &hay, needle, |i| {
                got.push(i);
                Ok(true)
            })
            .unwrap();
            let want: Vec<usize> = bstr::ByteSlice::find_iter(&hay[..], needle).collect();
            assert_eq!(got, want, "{needle:?}");
            assert_eq!(find(&b, &hay, needle).unwrap(), want.first().copied());
        }
        assert_eq!(count(&b, &hay, b"xy", 2).unwrap(), 2);
        assert_eq!(count(&b, b"aaaa", b"aa", usize::MAX).unwrap(), 2);
        assert_eq!(find(&b, b"ab", b"abc").unwrap(), None);
        assert_eq!(rfind(&b, b"ab", b"abc").unwrap(), None);
    }
}
