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
//! Byte searching comes from `memchr` (a first-byte scan for a short
//! search, a memmem finder once that misses often), in windows of bounded
//! length so that the deadline is looked at while a long string is
//! searched.

use crate::budget::{Budget, WORK_CHECK_BYTES};
use crate::error::Result;
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

/// Bytes [`find_byte`] looks at itself, eight at a time, before it hands
/// the rest to `memchr`: most separators in the text of a program are a
/// few bytes apart, and a call of `memchr` costs more than those bytes.
const NEAR_BYTES: usize = 32;

/// Copies `n` bytes from `src` to `dst`: at most 16 with two overlapping
/// word moves each way (or three byte moves), longer ones by `memcpy`. Most
/// texts a program joins are a few bytes, and a `memcpy` call costs more
/// than the copy.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `n` bytes, and
/// the two ranges must not overlap.
#[inline(always)]
pub unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: every access is within the first `n` bytes of `src` or
    // `dst`, which the caller vouches for.
    unsafe {
        if n > 16 {
            std::ptr::copy_nonoverlapping(src, dst, n);
        } else if n >= 8 {
            let a = src.cast::<u64>().read_unaligned();
            let b = src.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if n >= 4 {
            let a = src.cast::<u32>().read_unaligned();
            let b = src.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(n - 4).cast::<u32>().write_unaligned(b);
        } else if n > 0 {
            let (a, b, c) = (*src, *src.add(n / 2), *src.add(n - 1));
            *dst = a;
            *dst.add(n / 2) = b;
            *dst.add(n - 1) = c;
        }
    }
}

/// The number of decimal digits of `u`: estimated from its bit length
/// (`bits * log10(2)`, which is the count or one less) and corrected by one
/// comparison.
#[inline(always)]
pub fn decimal_len(u: u64) -> usize {
    const POW10: [u64; 20] = {
        let mut t = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            t[i] = t[i - 1] * 10;
            i += 1;
        }
        t
    };
    // `u | 1`: 0 has one digit, and no other count changes (a power of
    // ten above 1 is even).
    let u = u | 1;
    let bits = 64 - u.leading_zeros() as usize;
    // 1233 / 4096 is just above log10(2); for 1 to 64 bits the estimate
    // is at most 19.
    let guess = (bits * 1233) >> 12;
    guess + usize::from(u >= POW10[guess])
}

/// The two-digit texts `00` to `99`, one after the other.
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Writes the decimal digits of `u` (as many as [`decimal_len`] counts)
/// so that they end just before `end`, two at a time.
///
/// # Safety
/// The `decimal_len(u)` bytes before `end` must be valid for writing.
#[inline(always)]
pub unsafe fn write_decimal(mut u: u64, mut end: *mut u8) {
    // SAFETY: the digits are written backwards from `end`,
    // `decimal_len(u)` bytes in all, which the caller vouches for.
    unsafe {
        while u >= 100 {
            let pair = (u % 100) as usize * 2;
            u /= 100;
            end = end.sub(2);
            std::ptr::copy_nonoverlapping(DIGIT_PAIRS.as_ptr().add(pair), end, 2);
        }
        if u >= 10 {
            std::ptr::copy_nonoverlapping(DIGIT_PAIRS.as_ptr().add(u as usize * 2), end.sub(2), 2);
        } else {
            *end.sub(1) = b'0' + u as u8;
        }
    }
}

/// The first `b` in `hay`: the first [`NEAR_BYTES`] are scanned a word at
/// a time, the rest by `memchr`.
#[inline]
pub fn find_byte(b: u8, hay: &[u8]) -> Option<usize> {
    const LOW: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let splat = LOW.wrapping_mul(u64::from(b));
    let mut i = 0;
    while let Some(word) = hay.get(i..i + 8) {
        if i == NEAR_BYTES {
            return memchr::memchr(b, &hay[i..]).map(|j| i + j);
        }
        let mut bytes = [0; 8];
        bytes.copy_from_slice(word);
        // The bytes equal to `b` are zero here; the lowest byte flagged is
        // the first zero byte (a borrow can only flag bytes above it).
        let x = u64::from_le_bytes(bytes) ^ splat;
        let zero = x.wrapping_sub(LOW) & !x & HIGH;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    hay[i..].iter().position(|&c| c == b).map(|j| i + j)
}

/// Notes in `out` the position of every `b` in `hay` (at most
/// `out.len()` of them, which a caller sizes to `hay`, positions fitting a
/// byte) and returns how many: a word at a time, each word's matches
/// flagged exactly (no borrow between bytes) and taken lowest first.
#[inline]
pub fn byte_positions(b: u8, hay: &[u8], out: &mut [u8; 255]) -> usize {
    const LOW7: u64 = u64::from_ne_bytes([0x7f; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let splat = u64::from_ne_bytes([b; 8]);
    let mut n = 0;
    let mut i = 0;
    while let Some(word) = hay.get(i..i + 8) {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(word);
        // Bytes equal to `b` are zero in `x`; `(x & 0x7f) + 0x7f` sets a
        // byte's high bit exactly when its low seven bits are not all
        // zero, without carrying into the next byte.
        let x = u64::from_le_bytes(bytes) ^ splat;
        let mut zero = !(((x & LOW7).wrapping_add(LOW7)) | x) & HIGH;
        while zero != 0 {
            if let Some(slot) = out.get_mut(n) {
                *slot = (i + (zero.trailing_zeros() / 8) as usize) as u8;
                n += 1;
            }
            zero &= zero - 1;
        }
        i += 8;
    }
    for (j, &c) in hay.iter().enumerate().skip(i) {
        if c == b {
            if let Some(slot) = out.get_mut(n) {
                *slot = j as u8;
                n += 1;
            }
        }
    }
    n
}

/// Misses of the first-byte search after which a substring search builds
/// a memmem finder: building one costs about as much as a few dozen
/// candidate checks, so short searches (most of them) never build it, and
/// a needle whose first byte is common in the haystack (where checking
/// every occurrence would cost needle length times haystack length) soon
/// gets one.
const MISSES_BEFORE_FINDER: usize = 8;

/// How a search by first byte ended ([`first_byte_find`]).
enum Probe {
    /// A match starts here.
    Match(usize),
    /// No match.
    Absent,
    /// [`MISSES_BEFORE_FINDER`] candidates missed, none before this
    /// position matching: the rest is better searched by a memmem finder.
    Missed(usize),
}

/// The first match of non-empty `needle` in `hay`, looked for by `memchr`
/// of its first byte with each candidate compared in place, counting the
/// candidates that miss in `misses` (kept across calls by the caller).
#[inline(always)]
fn first_byte_find(hay: &[u8], needle: &[u8], misses: &mut usize) -> Probe {
    // Candidates start at most here.
    let Some(last) = hay.len().checked_sub(needle.len()) else {
        return Probe::Absent;
    };
    let (first, tail) = (needle[0], &needle[1..]);
    let mut at = 0;
    while let Some(j) = find_byte(first, &hay[at..=last]) {
        let c = at + j;
        if &hay[c + 1..c + needle.len()] == tail {
            return Probe::Match(c);
        }
        at = c + 1;
        if at > last {
            break;
        }
        *misses += 1;
        if *misses >= MISSES_BEFORE_FINDER {
            return Probe::Missed(at);
        }
    }
    Probe::Absent
}

/// The starts of the non-overlapping matches of non-empty `needle` in the
/// short `hay`, left to right, written into `out`: how many, or `None`
/// when there are more than `out` holds or the first-byte search missed
/// [`MISSES_BEFORE_FINDER`] times (the caller then searches as
/// [`for_each_match`] does, which stays linear). One pass with no search
/// state: `replace` on a line or a field.
#[inline]
pub fn short_matches(hay: &[u8], needle: &[u8], out: &mut [usize]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let (mut k, mut pos, mut misses) = (0, 0, 0);
    loop {
        match first_byte_find(&hay[pos..], needle, &mut misses) {
            Probe::Match(c) => {
                *out.get_mut(k)? = pos + c;
                k += 1;
                pos += c + needle.len();
            }
            Probe::Absent => return Some(k),
            Probe::Missed(_) => return None,
        }
    }
}

/// Finds one needle in a haystack again and again (the windows of one
/// search): `memchr` for a one-byte needle; for a longer one, `memchr` of
/// its first byte with each candidate compared in place, until
/// [`MISSES_BEFORE_FINDER`] candidates missed, then a memmem finder, built
/// once. Either way the search stays linear in the haystack.
struct Search<'n> {
    needle: &'n [u8],
    misses: usize,
    finder: Option<memchr::memmem::Finder<'n>>,
    rfinder: Option<memchr::memmem::FinderRev<'n>>,
}

impl<'n> Search<'n> {
    fn new(needle: &'n [u8]) -> Search<'n> {
        debug_assert!(!needle.is_empty());
        Search {
            needle,
            misses: 0,
            finder: None,
            rfinder: None,
        }
    }

    /// The first match in `hay`.
    #[inline(always)]
    fn find(&mut self, hay: &[u8]) -> Option<usize> {
        match self.needle {
            [b] => find_byte(*b, hay),
            _ => self.find_long(hay),
        }
    }

    /// [`Search::find`] of a needle of two bytes or more.
    fn find_long(&mut self, hay: &[u8]) -> Option<usize> {
        if let Some(finder) = &self.finder {
            return finder.find(hay);
        }
        match first_byte_find(hay, self.needle, &mut self.misses) {
            Probe::Match(c) => Some(c),
            Probe::Absent => None,
            Probe::Missed(at) => {
                let finder = self.finder.insert(memchr::memmem::Finder::new(self.needle));
                finder.find(&hay[at..]).map(|i| at + i)
            }
        }
    }

    /// The last match in `hay`, searched from the end the same way (with
    /// `memrchr` of the needle's last byte).
    #[inline]
    fn rfind(&mut self, hay: &[u8]) -> Option<usize> {
        let needle = self.needle;
        if let [b] = needle {
            return memchr::memrchr(*b, hay);
        }
        if let Some(finder) = &self.rfinder {
            return finder.rfind(hay);
        }
        let n = needle.len();
        if hay.len() < n {
            return None;
        }
        let (lead, last) = (&needle[..n - 1], needle[n - 1]);
        // A match at `c` has its last byte at `c + n - 1`: last bytes are
        // looked for in `hay[n - 1..end]`.
        let mut end = hay.len();
        while let Some(c) = memchr::memrchr(last, &hay[n - 1..end]) {
            if &hay[c..c + n - 1] == lead {
                return Some(c);
            }
            // Matches starting before `c` end before its last byte.
            end = c + n - 1;
            self.misses += 1;
            if self.misses >= MISSES_BEFORE_FINDER {
                let finder = self.rfinder.insert(memchr::memmem::FinderRev::new(needle));
                return finder.rfind(&hay[..end]);
            }
        }
        None
    }
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
    let mut search = Search::new(needle);
    let mut pos = 0;
    while pos + n <= hay.len() {
        // Matches starting in [pos, end) lie in hay[pos..end + n - 1].
        let end = pos.saturating_add(WORK_CHECK_BYTES).min(hay.len());
        let wend = (end + n - 1).min(hay.len());
        match search.find(&hay[pos..wend]) {
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
#[inline]
pub fn find(budget: &Budget, hay: &[u8], needle: &[u8]) -> Result<Option<usize>> {
    if let ([b], true) = (needle, hay.len() <= WORK_CHECK_BYTES) {
        // One window: charged as [`for_each_match`] charges it.
        let found = find_byte(*b, hay);
        budget.charge_bytes(found.map_or(hay.len(), |i| i + 1))?;
        return Ok(found);
    }
    find_windowed(budget, hay, needle)
}

/// [`find`] through [`for_each_match`].
fn find_windowed(budget: &Budget, hay: &[u8], needle: &[u8]) -> Result<Option<usize>> {
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
    let mut search = Search::new(needle);
    let mut end = hay.len();
    while end >= n {
        let start = end.saturating_sub(WORK_CHECK_BYTES + n);
        budget.charge_bytes(end - start)?;
        if let Some(i) = search.rfind(&hay[start..end]) {
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
    fn short_matches_agrees_with_for_each_match_or_declines() {
        // Every needle of one to three letters over texts of a, b and c:
        // the matches found in one pass are the windowed search's, or the
        // pass declines (too many matches, too many first-byte misses).
        let texts = [
            "",
            "a",
            "abcabcab",
            "aaaaaaaaaaaaaaaaaaaa",
            "abababababababababab",
            "cabbacbbcabca",
        ];
        let mut declined = 0;
        for text in texts {
            for needle in ["a", "b", "ab", "ba", "aa", "abc", "cab", "aaa", "bbb"] {
                let (hay, needle) = (text.as_bytes(), needle.as_bytes());
                let mut all = Vec::new();
                for_each_match(&budget(), hay, needle, |i| {
                    all.push(i);
                    Ok(true)
                })
                .unwrap();
                let mut out = [0usize; 8];
                match short_matches(hay, needle, &mut out) {
                    Some(k) => assert_eq!(&out[..k], &all[..], "{text:?} {needle:?}"),
                    None => declined += 1,
                }
            }
        }
        assert!(declined > 0, "the long texts of one letter are declined");
        // More matches than `out` holds: declined, not cut short.
        let mut out = [0usize; 8];
        assert_eq!(short_matches(b"a.b.c.d.e.f.g.h.i.", b".", &mut out), None);
        assert_eq!(short_matches(b"a.b.c.d.e.f.g.h.", b".", &mut out), Some(8));
        assert_eq!(short_matches(b"a.b.c.d.e.f.g.h", b".", &mut out), Some(7));
        // First bytes that miss MISSES_BEFORE_FINDER times: declined.
        assert_eq!(short_matches(b"hhhhhhhhhhttps", b"https", &mut out), None);
        assert_eq!(short_matches(b"hhhttps", b"https", &mut out), Some(1));
        assert_eq!(out[0], 2);
    }

    #[test]
    fn byte_positions_finds_every_match_exactly() {
        // Every byte value as a separator next to its neighbours (where a
        // borrowing word trick would flag false matches), at every offset
        // of the words and the tail.
        for sep in [0u8, 1, 0x7f, 0x80, 0xfe, 0xff, b','] {
            for len in 0..=40 {
                let hay: Vec<u8> = (0..len)
                    .map(|i: usize| match (i * 7 + usize::from(sep)) % 5 {
                        0 => sep,
                        1 => sep.wrapping_add(1),
                        2 => sep.wrapping_sub(1),
                        3 => 0,
                        _ => sep ^ 0x80,
                    })
                    .collect();
                let want: Vec<u8> = (0..len)
                    .filter(|&i| hay[i] == sep)
                    .map(|i| i as u8)
                    .collect();
                let mut out = [0u8; 255];
                let n = byte_positions(sep, &hay, &mut out);
                assert_eq!(&out[..n], &want[..], "sep {sep:#x} in {hay:?}");
            }
        }
        let all = [b'x'; 255];
        let mut out = [0u8; 255];
        assert_eq!(byte_positions(b'x', &all, &mut out), 255);
        assert_eq!(out[254], 254);
    }

    #[test]
    fn decimal_digits_are_the_standard_text_at_every_length() {
        let mut values = vec![0u64, 1, 9, 10, 11, 99, 100, 101, u64::MAX, u64::MAX - 1];
        for p in 1..20u32 {
            let t = 10u64.pow(p);
            values.extend([t - 1, t, t + 1, t + t / 2 + 7]);
        }
        for u in values {
            let text = u.to_string();
            assert_eq!(decimal_len(u), text.len(), "{u}");
            let mut buf = [b'#'; 24];
            // SAFETY: the buffer holds the digits before offset 22.
            unsafe { write_decimal(u, buf.as_mut_ptr().add(22)) };
            let start = 22 - text.len();
            assert_eq!(&buf[start..22], text.as_bytes(), "{u}");
            assert!(
                buf[..start].iter().chain(&buf[22..]).all(|&b| b == b'#'),
                "{u}"
            );
        }
    }

    #[test]
    fn copy_short_copies_exactly_n_bytes_of_every_length() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=40 {
            let mut dst = [0u8; 48];
            // SAFETY: both buffers hold at least `n` bytes and are distinct.
            unsafe { copy_short(src.as_ptr(), dst.as_mut_ptr(), n) };
            assert_eq!(&dst[..n], &src[..n], "length {n}");
            assert!(
                dst[n..].iter().all(|&b| b == 0),
                "length {n} wrote past its end"
            );
        }
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

    #[test]
    fn word_scan_finds_the_first_byte_as_a_plain_scan() {
        for len in 0..100 {
            for at in 0..=len {
                for (fill, b) in [
                    (b'a', b' '),
                    (0xff, 0x00),
                    (0x01, 0x00),
                    (0x00, 0x80),
                    (0x81, 0x01),
                ] {
                    let mut hay = vec![fill; len];
                    if at < len {
                        hay[at] = b;
                    }
                    // A second occurrence after the first must not matter.
                    if at + 3 < len {
                        hay[at + 3] = b;
                    }
                    let want = hay.iter().position(|&c| c == b);
                    assert_eq!(find_byte(b, &hay), want, "{len} {at} {b}");
                }
            }
        }
    }

    /// The starts of the non-overlapping matches of `needle`, found by
    /// comparing at every offset.
    fn naive_matches(hay: &[u8], needle: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = 0;
        while i + needle.len() <= hay.len() {
            if &hay[i..i + needle.len()] == needle {
                out.push(i);
                i += needle.len();
            } else {
                i += 1;
            }
        }
        out
    }

    #[test]
    fn first_byte_search_and_finder_agree_with_a_plain_search() {
        let b = budget();
        // Haystacks over a two-letter alphabet make the needle's first and
        // last bytes common, so long searches pass the miss limit and go
        // on with a finder, from the offset where the scan stopped.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..4000 {
            let hay: Vec<u8> = (0..next() % 90)
                .map(|_| b"ab"[(next() % 2) as usize])
                .collect();
            let needle: Vec<u8> = (0..1 + next() % 5)
                .map(|_| b"ab"[(next() % 2) as usize])
                .collect();
            let want = naive_matches(&hay, &needle);
            let mut got = Vec::new();
            for_each_match(&b, &hay, &needle, |i| {
                got.push(i);
                Ok(true)
            })
            .unwrap();
            assert_eq!(got, want, "{hay:?} {needle:?}");
            assert_eq!(find(&b, &hay, &needle).unwrap(), want.first().copied());
            let last = (0..=hay.len().saturating_sub(needle.len()))
                .rev()
                .find(|&i| hay[i..].starts_with(&needle));
            assert_eq!(
                rfind(&b, &hay, &needle).unwrap(),
                last,
                "{hay:?} {needle:?}"
            );
            assert_eq!(count(&b, &hay, &needle, usize::MAX).unwrap(), want.len());
        }
    }
}
