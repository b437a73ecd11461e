//! Integration tests of the runtimes with real processes and files: one test
//! binary, one module per topic.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "suite/artifacts.rs"]
mod artifacts;
#[path = "suite/common.rs"]
mod common;
#[path = "suite/conformance.rs"]
mod conformance;
#[cfg(feature = "container")]
#[path = "suite/container.rs"]
mod container;
#[path = "suite/exec.rs"]
mod exec;
#[path = "suite/hostile.rs"]
mod hostile;
#[path = "suite/limits.rs"]
mod limits;
#[path = "suite/local.rs"]
mod local;
#[path = "suite/policy.rs"]
mod policy;
#[path = "suite/sandbox.rs"]
mod sandbox;
#[path = "suite/spans.rs"]
mod spans;
#[path = "suite/workspace_limits.rs"]
mod workspace_limits;
