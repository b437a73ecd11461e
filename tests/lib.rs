//! End-to-end tests across the workspace's crates (`skills-fs` →
//! `skills-agent` → `skills-exec`, and `skills-mcp` to a real MCP client):
//! see `e2e.rs`.
//! The library itself is empty; the package exists for its tests.
//!
//! What it must not depend on: anything but the public APIs of the crates
//! under test (it wires them as a user would).

/// The example in `docs/quick-start.md`, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../docs/quick-start.md")]
pub struct QuickStart;

/// The library examples in `README.md`, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct Readme;
