//! Fuzzes `json.decode` with arbitrary text: it must decode or fail with a
//! `json.decode: ` message (never a panic or a stack overflow), `default`
//! must catch every decode error, and whatever decodes must survive
//! `json.encode` and decode again to an equal value; `json.indent` of the
//! same text must re-indent it or fail cleanly.
#![no_main]

use codemode_fuzz::{check_property, run_with_input, BROKEN};
use codemode_vm::{Data, ExecError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let source = format!(
        r#"
def main():
    s = fuzz.input()
    sentinel = ["sentinel"]
    x = json.decode(s, default = sentinel)
    if x == sentinel:
        return None
    y = json.decode(json.encode(x))
    if x != y:
        fail("{BROKEN}: round trip changed the value")
    json.indent(s)
    return True
"#
    );
    let outcome = run_with_input(&source, Data::Str(text.clone()));
    check_property(&outcome);
    let bare = "def main():\n    return json.decode(fuzz.input()) != None\n";
    match run_with_input(bare, Data::Str(text)) {
        Err(ExecError::InvalidProgram(detail)) => {
            assert!(detail.contains("json.decode: "), "{detail}");
        }
        Err(ExecError::ResourceLimit(_)) | Ok(_) => {}
        Err(e) => panic!("json.decode failed as {e:?}"),
    }
});
