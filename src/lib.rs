//! codemode: code mode for AI agents over the Model Context Protocol.
//!
//! This facade re-exports the crates of the workspace: [`lang`] (lexer,
//! parser, resolver), [`vm`] (compiler and interpreter), [`catalog`]
//! (capabilities and the CodeMode service) and [`server`] (the MCP adapter,
//! transports and the `codemode` binary).

pub use codemode_catalog as catalog;
pub use codemode_lang as lang;
pub use codemode_server as server;
pub use codemode_vm as vm;
