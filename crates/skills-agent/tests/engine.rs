//! Behaviour tests for the disclosure engine (`skills-agent`): the
//! append-only request invariant, load state, lifetimes and the cap,
//! materialization, dynamic tools, catalog deltas, search, compaction,
//! invocation control, profiles, resume, cache breakpoints and hostile model
//! input.
//!
//! One test binary; the modules live in `tests/engine/`, helpers and the
//! in-code fixture skills in `tests/engine/support.rs`. Run with
//! `cargo test -p skills-agent --test engine`.

mod engine {
    mod append_only;
    mod bad_input;
    mod cache;
    mod catalog_deltas;
    mod compaction;
    mod dynamic_tools;
    mod invocation;
    mod isolation;
    mod lifetimes;
    mod materialization;
    mod profiles;
    mod prompt_safety;
    mod resume;
    mod review_fixes;
    mod search;
    mod search_index;
    mod support;
    mod tracing_spans;
}
