//! `%` templates read once, when the code is compiled.
//!
//! Most interpolations in agent programs have a string literal on the left
//! of `%` with only `%s`, `%d` and `%%` in it: `"r%d" % i`,
//! `"%s: %d" % (name, n)`. The compiler reads such a literal into a
//! [`Template`] — its literal runs and its conversions, in order — and
//! emits [`crate::opcode::Instr::Percent`], whose arguments are a tuple
//! display's items in registers (no tuple is built) or one value. Running
//! it only checks the kinds of the values and copies the pieces: the text
//! is not searched for `%` again.
//!
//! A template is taken only where the operator's quick path
//! (`format::percent_short`) would take the same text, and [`Template::quick`]
//! charges exactly what that path charges; whatever it declines — a value
//! of another kind, a count of values that does not match, a text over the
//! quick path's length — goes to the operator's own `format::percent` with
//! the literal's text, so results and errors are the operator's.

use crate::error::Result;
use crate::heap::Heap;
use crate::value::Value;
use std::mem::MaybeUninit;

/// One piece of a template, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'h> {
    /// Literal text (a `%%` reads as `%`).
    Text(&'h [u8]),
    /// `%d`: an int.
    Int,
    /// `%s`: a string or an int.
    Str,
}

/// A `%` format literal read into pieces (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Template<'h> {
    /// The literal's text, for the operator's general path.
    pub text: &'h [u8],
    pub pieces: &'h [Piece<'h>],
    /// The number of conversions (`%s`, `%d`).
    pub nconv: u16,
    /// Whether the arguments are `nconv` registers (a tuple display of
    /// that many items) rather than one value.
    pub spread: bool,
    /// The runs before and after the one conversion of a template of
    /// [`Template::quick_one`]'s shape whose text leaves room for any int
    /// within [`MAX_TEXT`]: for [`Template::int_text`].
    pub around: Option<(&'h [u8], &'h [u8])>,
}

// The operator's quick path's bounds (`format::percent_short`), which a
// template must keep to take the same texts: conversions, parts (literal
// runs, `%%`, values) and bytes of text.
use crate::format::{SHORT_ARGS as MAX_CONV, SHORT_PARTS as MAX_PARTS, SHORT_TEXT as MAX_TEXT};

/// The pieces of `text` when it is a template the operator's quick path
/// reads whole (only `%s`, `%d` and `%%`, at most [`MAX_CONV`] conversions
/// and [`MAX_PARTS`] parts counted as that path counts them), with the
/// number of conversions; `None` for any other text.
pub fn parse(text: &[u8]) -> Option<(Vec<Piece<'_>>, u16)> {
    let mut pieces = Vec::new();
    // Parts as the quick path counts them: the run before each `%`, each
    // `%%` and conversion, the rest after the last.
    let mut parts = 0usize;
    let mut nconv = 0usize;
    // Where the literal text not yet in a piece starts.
    let mut from = 0usize;
    let mut at = 0usize;
    while let Some(j) = text[at..].iter().position(|&c| c == b'%') {
        parts += usize::from(j > 0) + 1;
        at += j;
        match *text.get(at + 1)? {
            // The run goes on through the first `%` of the pair.
            b'%' => pieces.push(Piece::Text(&text[from..at + 1])),
            conv @ (b'd' | b's') => {
                if at > from {
                    pieces.push(Piece::Text(&text[from..at]));
                }
                pieces.push(if conv == b'd' { Piece::Int } else { Piece::Str });
                nconv += 1;
            }
            _ => return None,
        }
        at += 2;
        from = at;
    }
    if from < text.len() {
        parts += 1;
        pieces.push(Piece::Text(&text[from..]));
    }
    if nconv > MAX_CONV || parts > MAX_PARTS {
        return None;
    }
    // One conversion with at most a run on each side takes the shape of
    // `Template::quick_one`: a run, the conversion, a run (either empty).
    if let Some(i) = pieces.iter().position(|p| !matches!(p, Piece::Text(_))) {
        if nconv == 1 && i <= 1 && pieces.len() - i <= 2 {
            fn run<'t>(p: Option<&Piece<'t>>, empty: &'t [u8]) -> &'t [u8] {
                match p {
                    Some(Piece::Text(t)) => t,
                    _ => empty,
                }
            }
            let empty = &text[..0];
            let (pre, post) = (
                run(pieces[..i].first(), empty),
                run(pieces.get(i + 1), empty),
            );
            pieces = vec![Piece::Text(pre), pieces[i], Piece::Text(post)];
        }
    }
    Some((pieces, nconv as u16))
}

impl<'h> Template<'h> {
    /// The template of `text`, whose pieces and conversions [`parse`] gave.
    pub fn new(text: &'h [u8], pieces: &'h [Piece<'h>], nconv: u16, spread: bool) -> Self {
        // An int's text is at most 20 bytes (`-9223372036854775808`).
        let around = match pieces {
            [Piece::Text(pre), Piece::Int | Piece::Str, Piece::Text(post)]
                if text.len() + 20 <= MAX_TEXT =>
            {
                Some((*pre, *post))
            }
            _ => None,
        };
        Template {
            text,
            pieces,
            nconv,
            spread,
            around,
        }
    }

    /// The text for the one int `i` of a one-conversion template
    /// (`"r%d" % i`), written in one go, charged as [`Template::quick`]
    /// charges it; `None` for other templates.
    #[inline(always)]
    pub fn int_text(&self, heap: Heap<'h>, i: i64) -> Option<Result<Value<'h>>> {
        let (pre, post) = self.around?;
        Some(
            heap.budget
                .charge_bytes(self.text.len())
                .and_then(|()| heap.str_around_int(pre, i, post)),
        )
    }

    /// The registers the instruction reads its arguments from.
    pub fn nargs(&self) -> usize {
        if self.spread {
            self.nconv as usize
        } else {
            1
        }
    }

    /// The text for the values `items` (the operator's arguments as its
    /// quick path sees them), charged as that path charges: the literal's
    /// bytes and the strings copied as work, the new string to the heap.
    /// `None` when the operator's general path decides (a value of another
    /// kind, another count of values, a text over [`MAX_TEXT`] bytes).
    #[inline]
    pub fn quick(&self, heap: Heap<'h>, items: &[Value<'h>]) -> Option<Result<Value<'h>>> {
        if items.len() != self.nconv as usize {
            return None;
        }
        // (Three runs, as of "a%%b%%c", are not this shape: the middle
        // piece must be the one conversion.)
        if let ([Piece::Text(pre), conv, Piece::Text(post)], [v]) = (self.pieces, items) {
            if !matches!(conv, Piece::Text(_)) {
                return self.quick_one(heap, pre, *conv, *v, post);
            }
        }
        let mut ints = [itoa::Buffer::new(); MAX_CONV];
        let mut ints = ints.iter_mut();
        let mut parts: [MaybeUninit<&[u8]>; MAX_PARTS] = [MaybeUninit::uninit(); MAX_PARTS];
        let (mut len, mut copied, mut k) = (0usize, 0usize, 0usize);
        for (m, p) in self.pieces.iter().enumerate() {
            let b: &[u8] = match *p {
                Piece::Text(t) => t,
                Piece::Int | Piece::Str => {
                    // `parse` counted at most `MAX_CONV` conversions, and
                    // `items` holds as many values.
                    let b = match (*p, items.get(k)?) {
                        (_, &Value::Int(i)) => ints.next()?.format(i).as_bytes(),
                        (Piece::Str, &Value::Str(s)) => {
                            copied += s.text.len();
                            s.text
                        }
                        _ => return None,
                    };
                    k += 1;
                    b
                }
            };
            *parts.get_mut(m)? = MaybeUninit::new(b);
            len += b.len();
        }
        if len > MAX_TEXT {
            return None;
        }
        let n = self.pieces.len().min(MAX_PARTS);
        // SAFETY: the loop wrote `parts[..pieces.len()]` (it returns
        // before writing past `MAX_PARTS`).
        let parts = unsafe { std::slice::from_raw_parts(parts.as_ptr().cast::<&[u8]>(), n) };
        Some(
            heap.budget
                .charge_bytes(self.text.len() + copied)
                .and_then(|()| heap.str_of_parts(parts)),
        )
    }
}

impl<'h> Template<'h> {
    /// [`Template::quick`] of the commonest shape, one conversion between
    /// two literal runs (`"r%d"`'s pieces are `r`, `%d` and an empty
    /// run): the text made in one go.
    #[inline]
    fn quick_one(
        &self,
        heap: Heap<'h>,
        pre: &[u8],
        conv: Piece<'h>,
        v: Value<'h>,
        post: &[u8],
    ) -> Option<Result<Value<'h>>> {
        let mut int = itoa::Buffer::new();
        let (b, copied): (&[u8], usize) = match (conv, v) {
            (_, Value::Int(i)) => (int.format(i).as_bytes(), 0),
            (Piece::Str, Value::Str(s)) => (s.text, s.text.len()),
            _ => return None,
        };
        if pre.len() + b.len() + post.len() > MAX_TEXT {
            return None;
        }
        Some(
            heap.budget
                .charge_bytes(self.text.len() + copied)
                .and_then(|()| heap.str_of_parts(&[pre, b, post])),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_of_templates() {
        use Piece::{Int, Str, Text};
        let cases: &[(&[u8], &[Piece<'_>], u16)] = &[
            // One conversion: a run on each side, either empty.
            (b"r%d", &[Text(b"r"), Int, Text(b"")], 1),
            (b"%s", &[Text(b""), Str, Text(b"")], 1),
            (b"<%s>", &[Text(b"<"), Str, Text(b">")], 1),
            (b"%s: %d%%", &[Str, Text(b": "), Int, Text(b"%")], 2),
            // `%%` ends a run after its first `%`.
            (
                b"100%% of %s%%, %%%% done",
                &[
                    Text(b"100%"),
                    Text(b" of "),
                    Str,
                    Text(b"%"),
                    Text(b", %"),
                    Text(b"%"),
                    Text(b" done"),
                ],
                1,
            ),
            (b"", &[], 0),
            (b"%%", &[Text(b"%")], 0),
            // Three runs and no conversion: not the one-conversion shape.
            (b"a%%b%%c", &[Text(b"a%"), Text(b"b%"), Text(b"c")], 0),
        ];
        for &(text, pieces, n) in cases {
            assert_eq!(
                parse(text),
                Some((pieces.to_vec(), n)),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn texts_the_quick_path_leaves_are_not_templates() {
        for t in [
            &b"%r"[..],
            b"%5d",
            b"%(k)s",
            b"trailing %",
            b"%x",
            b"%f",
            b"%s%s%s%s%s%s%s%s%s",
        ] {
            assert!(parse(t).is_none(), "{:?}", String::from_utf8_lossy(t));
        }
        // Eight conversions are the most; 24 parts as the quick path
        // counts them (a run before each `%`, each `%%`, each conversion,
        // the rest).
        assert!(parse(b"%s%s%s%s%s%s%s%s").is_some());
        assert!(parse(&b"a%%".repeat(12)).is_some());
        assert!(parse(&[&b"a%%".repeat(12)[..], b"b"].concat()).is_none());
    }

    #[test]
    fn an_int_in_one_go_is_the_operators_text_and_charges() {
        use crate::budget::Budget;
        use crate::Limits;
        let long_pre = [&b"p".repeat(230)[..], b"%d"].concat();
        let too_long = [&b"p".repeat(240)[..], b"%d!"].concat();
        let texts: [&[u8]; 7] = [
            b"r%d",
            b"%d",
            b"%s",
            b"<%s>",
            b"o%d@example.com",
            &long_pre,
            &too_long,
        ];
        let ints = [0, 7, -7, 10, 99, 100, 65536, -123456789, i64::MAX, i64::MIN];
        for text in texts {
            let (pieces, nconv) = parse(text).unwrap();
            let t = Template::new(text, &pieces, nconv, false);
            // A text with no room for the longest int is left to the
            // operator's paths.
            assert_eq!(t.around.is_some(), text.len() + 20 <= MAX_TEXT);
            for i in ints {
                let (bump_a, bump_b) = (bumpalo::Bump::new(), bumpalo::Bump::new());
                let limits = Limits::default();
                let now = std::time::Instant::now();
                let (budget_a, budget_b) = (
                    Budget::new(limits.clone(), now, None),
                    Budget::new(limits, now, None),
                );
                let (heap_a, heap_b) =
                    (Heap::new(&bump_a, &budget_a), Heap::new(&bump_b, &budget_b));
                let want = crate::format::percent(heap_b, text, Value::Int(i)).unwrap();
                let Some(got) = t.int_text(heap_a, i) else {
                    assert!(t.around.is_none());
                    continue;
                };
                let (Value::Str(got), Value::Str(want)) = (got.unwrap(), want) else {
                    panic!("not strings");
                };
                let shown = String::from_utf8_lossy(text);
                assert_eq!(got.text, want.text, "{shown} % {i}");
                assert_eq!(
                    budget_a.heap_bytes(),
                    budget_b.heap_bytes(),
                    "{shown} % {i}"
                );
                assert_eq!(
                    budget_a.work_charged(),
                    budget_b.work_charged(),
                    "{shown} % {i}"
                );
            }
        }
    }
}
