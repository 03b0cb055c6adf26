//! codemode-catalog: capabilities, their field shapes, argument binding,
//! search, describe, authorization and the CodeMode service.
//!
//! This crate is not written yet; the catalog issue builds it.
