//! Integration tests of the `skills` binary: one test binary, a module per
//! area (the files beside this one). Two timing-sensitive tests keep
//! binaries of their own, so that nothing else runs in their process while
//! they send signals and time exits: `signals.rs` and `mcp_shutdown.rs`.

mod mcp_support;
mod support;

mod agent;
mod cli;
mod config;
mod deploy;
mod eval;
mod index;
mod inspector;
mod lock;
mod mcp;
mod parity;
mod report;
mod run;
mod runtime_flags;
mod verbose;
