//! The session stores' tests: the conformance suite of `skills-testkit`
//! (`skills_testkit::session_store_suite!`) run against every store
//! (memory, SQLite, PostgreSQL), killed writers, schema versions, and resume
//! across a restart.
//!
//! PostgreSQL tests need a server: set `SKILLS_TEST_POSTGRES_URL`
//! (`bash .ci/test` starts one with `bash .ci/postgres start`).

#![allow(clippy::unwrap_used)]

mod conformance; // checks beyond the shared suite
mod fixture;
mod killed;
mod memory;
mod postgres;
mod resume;
mod schema;
mod sqlite;
