//! SIGTERM and SIGINT end `skills agent` cleanly: the real binary against a
//! slow fake model on 127.0.0.1, signalled while its request is in flight.
//!
//! The first signal lets the request in flight finish, then stops the run at
//! that step boundary (exit 0); without a boundary within the grace the run
//! is cancelled (exit 1, with a message); a second signal exits at once (130).
//! The watchdog bounds are hang detectors, not timing checks.
#![allow(clippy::unwrap_used)]

#[path = "support/mod.rs"]
mod support;

use std::time::Duration;

use support::{FakeModel, Finished, Watched, answer, load_skill_call, send_signal, skills};

/// Far above the 8 s grace and any run here.
const BOUND: Duration = Duration::from_secs(120);

/// How long the slow model holds its answer back: long enough for the
/// signal to arrive while the request is in flight.
const SLOW: Duration = Duration::from_secs(2);

/// A model that never answers within any test.
const NEVER: Duration = Duration::from_secs(600);

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

/// Starts `skills agent` against `model`, waits until its first request is
/// in flight, sends `signals` (a short pause between two), and waits for it.
fn agent_signalled(model: &FakeModel, extra: &[&str], signals: &[&str]) -> Finished {
    let ex = examples();
    let mut cmd = skills();
    cmd.args(["agent", "--model", "openai:test-model", "--prompt", "Go."])
        .args(extra)
        .arg(&ex)
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", &model.url);
    let child = Watched::spawn(&mut cmd, "skills agent", None);
    model.wait_for_request(0, BOUND);
    for (i, signal) in signals.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(300));
        }
        send_signal(child.id(), signal);
    }
    child.finish(BOUND)
}

#[test]
fn sigterm_lets_the_request_in_flight_finish_and_exits_0() {
    let model = FakeModel::start(|_| answer("finished answer"), |_| SLOW);
    let done = agent_signalled(&model, &[], &["TERM"]);
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    assert_eq!(done.stdout, "finished answer\n", "{}", done.stderr);
    assert!(done.stderr.contains("[signal] SIGTERM"), "{}", done.stderr);
    assert_eq!(model.requests(), 1);
}

/// The answer in flight asks for a tool: the step finishes (the tool runs),
/// then the run stops before its next model request, which is never sent.
/// The stored session holds the step: a later run continues it.
#[test]
fn sigint_stops_at_the_step_boundary_and_the_session_continues() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("s.db").display());
    let model = FakeModel::start(
        |i| match i {
            0 => load_skill_call("commit-message"),
            _ => answer("continued"),
        },
        |i| if i == 0 { SLOW } else { Duration::ZERO },
    );
    let done = agent_signalled(&model, &["--session", &store], &["INT"]);
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    assert!(done.stderr.contains("[signal] SIGINT"), "{}", done.stderr);
    assert!(
        done.stderr.contains("[skill] loaded commit-message"),
        "{}",
        done.stderr
    );
    assert!(
        done.stderr.contains("stopped at a step boundary"),
        "{}",
        done.stderr
    );
    assert_eq!(model.requests(), 1, "no request after the signal");

    let mut again = skills();
    again
        .args([
            "agent",
            "--model",
            "openai:test-model",
            "--prompt",
            "Go on.",
        ])
        .args(["--session", &store, &examples()])
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", &model.url);
    let next = Watched::spawn(&mut again, "skills agent (continued)", None).finish(BOUND);
    assert_eq!(next.status.code(), Some(0), "{}", next.stderr);
    assert_eq!(next.stdout, "continued\n");
}

#[test]
fn a_stalled_request_is_cancelled_after_the_grace_with_a_message() {
    let model = FakeModel::start(|_| answer("too late"), |_| NEVER);
    let done = agent_signalled(&model, &[], &["TERM"]);
    assert_eq!(done.status.code(), Some(1), "{}", done.stderr);
    assert!(
        done.stderr
            .contains("did not reach a step boundary within 8 s"),
        "{}",
        done.stderr
    );
    assert!(!done.stdout.contains("too late"));
}

#[test]
fn a_second_sigint_exits_at_once_with_130() {
    let model = FakeModel::start(|_| answer("too late"), |_| NEVER);
    let done = agent_signalled(&model, &[], &["INT", "INT"]);
    assert_eq!(done.status.code(), Some(130), "{}", done.stderr);
    assert!(
        done.stderr.contains("[signal] SIGINT again: exiting now"),
        "{}",
        done.stderr
    );
    assert!(
        !done.stderr.contains("within 8 s"),
        "exited at once, not after the grace: {}",
        done.stderr
    );
}
