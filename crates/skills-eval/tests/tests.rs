//! The integration tests of `skills-eval`, in one binary.
#![allow(clippy::unwrap_used)]

mod outputs;
mod support;
mod triggers;
