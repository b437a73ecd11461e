//! Skills defined in code, an agent session over them and the request a model
//! would get, with no I/O and no async runtime: this crate builds for
//! `wasm32-unknown-unknown` (CI builds it) as well as natively.
//!
//! ```text
//! cargo run -p in-code-wasm -- "What is in sales.csv?"
//! cargo build -p in-code-wasm --target wasm32-unknown-unknown
//! ```
//!
//! An edge worker would call [`first_request`] from its request handler (with
//! `wasm-bindgen`, or from a host through its own glue) and send the JSON to
//! the model provider with the platform's `fetch`.
//!
//! What it must not depend on: anything but `skills-core` and `skills-agent`
//! without features (no tokio, no file system, no HTTP client).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use skills_agent::Agent;
use skills_core::{InCodeProvider, define_skill};
use skills_models::wire;

/// Why [`first_request`] could not build a request.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The skills this example knows, defined in code.
fn provider() -> Result<InCodeProvider, Error> {
    let csv = define_skill(
        "csv-insights",
        "Profiles a CSV file: columns, types, missing values. Use when the user shares a CSV.",
    )
    .body("1. Read the header.\n2. Count missing values per column.\n3. Report outliers.")
    .resource(
        "references/checks.md",
        "# Checks\nRanges, outliers, duplicates.\n",
    )
    .build()?;
    let commit = define_skill(
        "commit-message",
        "Writes a conventional commit message for a change. Use when asked for a commit message.",
    )
    .body("Summary line under 72 characters, imperative mood, then a blank line and the why.")
    .build()?;
    Ok(InCodeProvider::new([csv, commit])?)
}

/// The Anthropic Messages request body (JSON) for the first turn of a new
/// session in which the user says `user`: the catalog of in-code skills in a
/// stable system block, the skill tools, and the user's message.
///
/// The same session would go on with `handle_tool_call` and `build_request`
/// after each model answer; see the `skills-agent` docs.
pub fn first_request(user: &str, model: &str) -> Result<String, Error> {
    let provider = Arc::new(provider()?);
    let agent = Agent::builder("edge", provider)
        .instructions("You are a concise assistant. Load a skill when one fits the task.")
        .build()?;
    let request = block_on(async {
        let mut session = agent.start_session().await?;
        session.push_user(user).await?;
        Ok::<_, Error>(session.build_request())
    })??;
    Ok(wire::anthropic_messages(&request, model))
}

/// Runs a future that never waits on I/O to completion.
///
/// Everything above works on in-code skills, whose futures are ready at once;
/// polling with a no-op waker is all an executor needs to do for them, and it
/// keeps this crate free of any runtime on wasm32. A future that is still
/// pending after a few polls waits on I/O (a provider that does I/O): that is
/// an error here rather than a spin; use your platform's executor for those.
fn block_on<F: Future>(future: F) -> Result<F::Output, Error> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..MAX_POLLS {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return Ok(out);
        }
    }
    Err("the future waits on I/O; run it on an executor".into())
}

/// Polls [`block_on`] allows: a future that yields once or twice (without
/// waiting on anything) still completes.
const MAX_POLLS: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_request_carries_the_catalog_and_the_user_message() {
        let json = first_request("What is in sales.csv?", "claude-sonnet-4-5").expect("builds");
        let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        let system = value["system"].to_string();
        assert!(system.contains("csv-insights"), "{system}");
        assert!(system.contains("commit-message"), "{system}");
        assert!(json.contains("What is in sales.csv?"));
        assert!(value["tools"].as_array().is_some_and(|t| !t.is_empty()));
    }

    #[test]
    fn a_future_that_waits_is_an_error_not_a_spin() {
        let err = block_on(std::future::pending::<()>()).expect_err("never ready");
        assert!(err.to_string().contains("waits on I/O"), "{err}");
    }

    #[test]
    fn the_request_is_byte_stable() {
        let a = first_request("hi", "m").expect("builds");
        let b = first_request("hi", "m").expect("builds");
        assert_eq!(a, b);
    }
}
