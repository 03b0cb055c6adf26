//! Strings are byte strings inside a program, and text outside it: where a
//! string leaves the program (its result, a capability's arguments, and
//! `json.encode`), each invalid byte becomes U+FFFD, as Go's JSON encoder
//! writes it.

mod common;

use codemode_vm::{execute, Data, Host, HostCall, Limits};
use common::json_of;
use std::cell::RefCell;

#[test]
fn results_replace_each_invalid_byte() {
    assert_eq!(json_of(r#""é"[0] + "x""#), "\"\u{FFFD}x\"");
    assert_eq!(json_of(r#""😀"[0:2]"#), "\"\u{FFFD}\u{FFFD}\"");
    assert_eq!(json_of(r#""é"[0] + "é"[1]"#), "\"é\"");
    assert_eq!(
        json_of(r#"{"é"[1]: "é"[0:1]}"#),
        "{\"\u{FFFD}\":\"\u{FFFD}\"}"
    );
    assert_eq!(json_of(r#"["a", ("é"[1],)]"#), "[\"a\",[\"\u{FFFD}\"]]");
}

#[test]
fn json_encode_escapes_each_invalid_byte() {
    assert_eq!(json_of(r#"json.encode("é"[0])"#), r#""\"\\ufffd\"""#);
    assert_eq!(
        json_of(r#"json.encode("a" + "😀"[1:3] + "<")"#),
        r#""\"a\\ufffd\\ufffd\\u003c\"""#
    );
    assert_eq!(
        json_of(r#"json.encode({"é"[0]: 1})"#),
        r#""{\"\\ufffd\":1}""#
    );
    assert_eq!(json_of(r#"json.encode("é")"#), "\"\\\"é\\\"\"");
}

struct Recorder(RefCell<Vec<(String, Data)>>);

impl Host for Recorder {
    type Error = ();
    fn call(&self, call: HostCall<'_>) -> Result<Data, ()> {
        self.0.borrow_mut().extend(call.args.iter().cloned());
        Ok(Data::Null)
    }
}

#[test]
fn capability_arguments_replace_each_invalid_byte() {
    let h = Recorder(RefCell::new(Vec::new()));
    let src =
        "def main():\n    e = \"é\"\n    ns.f(a = e[0], b = [e[1] + \"x\"], c = e)\n    return 0\n";
    assert_eq!(
        execute(src, &["ns.f"], &h, &Limits::default(), None),
        Ok(Data::Int(0))
    );
    assert_eq!(
        h.0.into_inner(),
        vec![
            ("a".to_string(), Data::Str("\u{FFFD}".to_string())),
            (
                "b".to_string(),
                Data::List(vec![Data::Str("\u{FFFD}x".to_string())])
            ),
            ("c".to_string(), Data::Str("é".to_string())),
        ]
    );
}
