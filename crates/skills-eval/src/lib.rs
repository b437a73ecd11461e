//! Skill evals on the agent loop: do skills trigger, and do they work?
//!
//! - **Trigger evals** ([`TriggerEval`]): a [`QuerySet`] of queries that
//!   should or should not load a skill runs against the whole catalog, as an
//!   agent sees it, several times per query; the [`TriggerReport`] gives
//!   each skill's trigger rate, false-trigger rate, precision and recall,
//!   the queries that went wrong and what loaded instead. [`compare`] sets a
//!   report against a baseline to show what a description change did on
//!   the validation split.
//! - **Output evals** ([`OutputEval`]): a skill's `evals/evals.json`
//!   ([`EvalSet`]) runs case by case in fresh sessions with the skill's
//!   files staged in a workspace; the runner checks the assertions and
//!   [`write_results`] writes `grading.json`, `timing.json` and
//!   `benchmark.json` in the convention's shapes.
//! - **Reports** ([`render`]): a terminal table, and a self-contained HTML
//!   page, for both.
//!
//! The runners take an `Agent` and a `Model` from `skills-agent`, so an
//! app evaluates its skills with the same tools, policy and adapters it
//! ships, in its own CI. They need a tokio runtime (timeouts); they never
//! block it. Writing the result files ([`write_results`]) is blocking I/O:
//! call it off the async workers.
//!
//! This crate must not depend on `skills-fs`, `skills-exec`,
//! `skills-models` or the CLI: callers pick the provider, the runtime and
//! the model.

mod compare;
mod error;
pub mod evalset;
mod jsonpath;
mod outputs;
mod queries;
pub mod render;
mod results;
mod triggers;
mod usage;

pub use compare::{Comparison, FlippedQuery, SkillDelta, compare};
pub use error::{EvalError, EvalErrorKind};
pub use evalset::{Assertion, EvalCase, EvalSet};
pub use jsonpath::JsonPath;
pub use outputs::{
    CaseRun, DEFAULT_OUTPUT_CONCURRENCY, DEFAULT_OUTPUT_MAX_STEPS, DEFAULT_OUTPUT_RUNS,
    DEFAULT_OUTPUT_TIMEOUT, Expectation, GRADER_TIMEOUT, MAX_CHECKED_FILE_BYTES, MAX_GRADED_BYTES,
    OutputEval, OutputReport,
};
pub use queries::{
    MAX_QUERIES, MAX_QUERY_BYTES, QueryOptions, QuerySet, Split, TriggerQuery, split_of,
};
pub use results::{CONFIGURATION, benchmark_json, grading_json, timing_json, write_results};
pub use triggers::{
    DEFAULT_CONCURRENCY, DEFAULT_MAX_STEPS, DEFAULT_RUNS, DEFAULT_THRESHOLD, DEFAULT_TIMEOUT,
    MAX_CONCURRENCY, MAX_ERRORS_KEPT, MAX_RUNS, NONE, QueryResult, RunProgress, SkillRates,
    TriggerEval, TriggerReport,
};
pub use usage::UsageTotals;

#[cfg(doctest)]
#[doc = include_str!("../../../docs/eval.md")]
struct EvalGuide;

/// Most bytes of a final answer a case run keeps.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;
