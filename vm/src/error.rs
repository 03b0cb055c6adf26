//! The errors of running a program.
//!
//! Inside the VM every failure is an [`Error`]: a Starlark runtime error in
//! starlark-go's words (its source position is attached by the interpreter
//! as the error leaves the failing instruction), a breached budget, a
//! cancellation, a binding failure of a capability call, or a host error
//! passed through untouched. [`crate::ExecError`] is the classified form
//! that leaves the crate.

use codemode_lang::ast::Pos;
use codemode_lang::Hint;
use std::any::Any;
use std::fmt;

/// Which budget was exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitKind {
    SourceBytes,
    Steps,
    Time,
    NativeCalls,
    ValueDepth,
    ValueBytes,
    IntermediateBytes,
    HeapBytes,
    /// Too many nested calls (Starlark frames or builtins calling back).
    CallDepth,
}

/// A failure inside the VM.
pub struct Error(Box<ErrorKind>);

pub enum ErrorKind {
    /// A runtime error: starlark-go's message, and the position of the
    /// instruction that failed once the interpreter knows it.
    Eval {
        msg: String,
        pos: Option<Pos>,
        /// How to write it instead, when a Python habit caused it.
        hint: Option<Hint>,
    },
    Limit(LimitKind),
    Cancelled,
    /// A capability call could not be bound (e.g. positional arguments).
    InvalidArguments(String),
    /// An error of the host, returned unchanged to the caller of execute.
    Host(Box<dyn Any + Send>),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn msg(msg: impl Into<String>) -> Error {
        Error(Box::new(ErrorKind::Eval {
            msg: msg.into(),
            pos: None,
            hint: None,
        }))
    }

    /// A runtime error that a Python habit caused, with its hint.
    pub fn hinted(msg: impl Into<String>, hint: Hint) -> Error {
        Error(Box::new(ErrorKind::Eval {
            msg: msg.into(),
            pos: None,
            hint: Some(hint),
        }))
    }

    pub fn limit(kind: LimitKind) -> Error {
        Error(Box::new(ErrorKind::Limit(kind)))
    }

    pub fn cancelled() -> Error {
        Error(Box::new(ErrorKind::Cancelled))
    }

    pub fn invalid_arguments(msg: impl Into<String>) -> Error {
        Error(Box::new(ErrorKind::InvalidArguments(msg.into())))
    }

    pub fn host(e: Box<dyn Any + Send>) -> Error {
        Error(Box::new(ErrorKind::Host(e)))
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }

    /// Prefixes a runtime error's message (`"append: "`), as starlark-go
    /// does for errors of builtins.
    pub fn prefixed(mut self, prefix: &str) -> Error {
        if let ErrorKind::Eval { msg, pos: None, .. } = &mut *self.0 {
            msg.insert_str(0, prefix);
        }
        self
    }

    /// Records the position of the failing instruction, unless an inner
    /// frame already did.
    pub fn at(mut self, at: Pos) -> Error {
        if let ErrorKind::Eval { pos, .. } = &mut *self.0 {
            if pos.is_none() {
                *pos = Some(at);
            }
        }
        self
    }

    /// The runtime error's message, if this is one.
    pub fn message(&self) -> Option<&str> {
        match &*self.0 {
            ErrorKind::Eval { msg, .. } => Some(msg),
            _ => None,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            ErrorKind::Eval { msg, pos, hint } => write!(f, "Eval({msg:?} at {pos:?}, {hint:?})"),
            ErrorKind::Limit(k) => write!(f, "Limit({k:?})"),
            ErrorKind::Cancelled => write!(f, "Cancelled"),
            ErrorKind::InvalidArguments(m) => write!(f, "InvalidArguments({m:?})"),
            ErrorKind::Host(_) => write!(f, "Host(..)"),
        }
    }
}
