//! codemode: code mode for AI agents over the Model Context Protocol.
//!
//! This facade re-exports the crates of the workspace: [`lang`] (lexer,
//! parser, resolver), [`vm`] (compiler and interpreter), [`catalog`]
//! (capabilities and the CodeMode service) and [`server`] (the MCP adapter,
//! transports and the `codemode` binary).
//!
//! Running a program against a host that serves capability calls:
//!
//! ```
//! use codemode::vm::{execute, Data, ExecError, Host, HostCall, Limits};
//!
//! /// Serves `records.lookup` from a fixed table.
//! struct Records;
//!
//! impl Host for Records {
//!     type Error = String;
//!     fn call(&self, call: HostCall<'_>) -> Result<Data, String> {
//!         match call.name {
//!             "records.lookup" => Ok(Data::Map(vec![(
//!                 "items".into(),
//!                 Data::List(vec![Data::Str("alpha".into()), Data::Str("alpine".into())]),
//!             )])),
//!             other => Err(format!("no backend for {other}")),
//!         }
//!     }
//! }
//!
//! let source = r#"
//! def main():
//!     found = records.lookup(key="al", limit=2)
//!     return [name.upper() for name in found["items"]]
//! "#;
//! let result = execute(source, &["records.lookup"], &Records, &Limits::default(), None);
//! assert_eq!(
//!     result,
//!     Ok(Data::List(vec![Data::Str("ALPHA".into()), Data::Str("ALPINE".into())]))
//! );
//!
//! // Errors are classified; a runtime error names its position, and one
//! // that a Python habit caused ends with a hint.
//! let bad = execute("def main():\n    return 1 + \"a\"\n", &[], &Records, &Limits::default(), None);
//! assert_eq!(
//!     bad,
//!     Err(ExecError::InvalidProgram(
//!         "<codemode>:2:14: unknown binary op: int + string (hint: convert first: \
//!          str(x) to join text, int(x) or float(x) for arithmetic)"
//!             .into()
//!     ))
//! );
//! ```

pub use codemode_catalog as catalog;
pub use codemode_lang as lang;
pub use codemode_server as server;
pub use codemode_vm as vm;

/// The README's Rust examples, compiled and run as doc tests so that the
/// documentation cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
