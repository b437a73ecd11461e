//! The integration tests of `skills-agent`, in one test binary
//! (`cargo test -p skills-agent --test tests`):
//!
//! * `engine` (in `tests/engine/`): the disclosure engine's behaviour: the
//!   append-only request invariant, load state, lifetimes and the cap,
//!   materialization, dynamic tools, catalog deltas, search, compaction,
//!   invocation control, profiles, resume, cache breakpoints and hostile
//!   model input, the allowed-tools policy and `model: inherit`, and the
//!   no-op of an agent without skills; helpers and the in-code fixture skills in
//!   `tests/engine/support.rs`.
//! * `snap` (in `tests/snap/`): snapshots of everything the model sees: every
//!   skill tool's result text in every preset, the tool specs of every
//!   preset, and whole requests (and their wire bodies) after each step of a
//!   short conversation. They are insta binary snapshots in
//!   `tests/snapshots/` (`<name>.snap` holds the metadata, `<name>.snap.txt`
//!   the exact text), compared byte for byte, trailing newlines included
//!   (review a change with `cargo insta review`, or rewrite with
//!   `INSTA_UPDATE=always cargo test -p skills-agent --test tests snap::` and
//!   review `git diff`: the texts are the model's view).
//! * `runner`: the agent loop against a scripted model.
//! * `exec_tools`: the run and exec tools against the real local runtime.
//! * `prefix_stability`: the prefix-stability invariants on the scripted
//!   conversation of `examples/prefix_stability`.

mod engine {
    mod allowed_tools;
    mod append_only;
    mod bad_input;
    mod cache;
    mod catalog_deltas;
    mod compaction;
    mod dynamic_tools;
    mod invocation;
    mod isolation;
    mod library;
    mod lifetimes;
    mod materialization;
    mod no_op;
    mod profiles;
    mod prompt_safety;
    mod resume;
    mod review_fixes;
    mod search;
    mod search_index;
    mod support;
    mod tiers;
    mod tracing_spans;
}

mod exec_tools;
mod prefix_stability;
mod runner;
mod snap;
