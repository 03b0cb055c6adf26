//! Fuzzes `%` formatting and `str.format` with an arbitrary format string
//! and arbitrary arguments (the bytes up to the first NUL are the format;
//! the rest is JSON for the arguments, or one string when it is not JSON):
//! each operation must give a string or a runtime error, never a panic.
#![no_main]

use codemode_fuzz::{run_with_input, text_and_json};
use codemode_vm::{Data, ExecError};
use libfuzzer_sys::fuzz_target;

/// One program per operation, so an error in one does not hide the rest.
const PROGRAMS: &[&str] = &[
    "def main():\n    a = fuzz.input()\n    return len(a[\"f\"] % a[\"v\"])\n",
    "def main():\n    a = fuzz.input()\n    v = a[\"v\"]\n    return len(a[\"f\"] % (tuple(v) if type(v) == \"list\" else (v,)))\n",
    "def main():\n    a = fuzz.input()\n    v = a[\"v\"]\n    return len(a[\"f\"].format(*(v if type(v) == \"list\" else [v])))\n",
    "def main():\n    a = fuzz.input()\n    v = a[\"v\"]\n    return len(a[\"f\"].format(**(v if type(v) == \"dict\" else {})))\n",
];

fuzz_target!(|data: &[u8]| {
    let (format, value) = text_and_json(data);
    let input = Data::Map(vec![("f".into(), Data::Str(format)), ("v".into(), value)]);
    for program in PROGRAMS {
        match run_with_input(program, input.clone()) {
            Ok(Data::Int(_))
            | Err(ExecError::InvalidProgram(_))
            | Err(ExecError::ResourceLimit(_)) => {}
            other => panic!("{program}: {other:?}"),
        }
    }
});
