//! Logging never stops a command: every command runs with `-vv` and with
//! `RUST_LOG=trace`, and must exit and log.
//!
//! The binary used to hold the process-wide stderr (and stdout) lock while
//! async work ran on tokio's threads; a worker that logged then waited for
//! that lock forever, so `skills -v run …` and `skills -vv agent …` hung.
//! Each run here is watched: a command still running after [`BOUND`] is killed
//! and the test fails with "hung". That is a hang detector, not a timing check:
//! the bound is far above what any of these commands needs.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use crate::support::{FakeModel, Watched, skills};

/// Far longer than any command here takes, even in a debug build on a busy
/// machine.
const BOUND: Duration = Duration::from_secs(300);

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

/// How logging is turned on.
#[derive(Debug, Clone, Copy)]
enum Logging {
    /// `-vv` before the command.
    Vv,
    /// `RUST_LOG=trace` in the environment.
    RustLogTrace,
}

const BOTH: [Logging; 2] = [Logging::Vv, Logging::RustLogTrace];

/// One command to run in both logging modes.
struct Case<'a> {
    args: Vec<&'a str>,
    env: Vec<(&'a str, &'a str)>,
    stdin: Option<&'a [u8]>,
    /// A log target the command must show (`skills_fs::`, …).
    logs_from: &'a str,
    /// Text its standard output must contain.
    stdout_has: &'a str,
}

impl<'a> Case<'a> {
    fn new(args: &[&'a str], logs_from: &'a str, stdout_has: &'a str) -> Self {
        Self {
            args: args.to_vec(),
            env: Vec::new(),
            stdin: None,
            logs_from,
            stdout_has,
        }
    }

    fn env(mut self, key: &'a str, value: &'a str) -> Self {
        self.env.push((key, value));
        self
    }

    fn stdin(mut self, bytes: &'a [u8]) -> Self {
        self.stdin = Some(bytes);
        self
    }

    /// Runs the case with `logging`; fails unless it exited 0, printed what
    /// it should and logged.
    fn check(&self, logging: Logging) {
        let mut cmd = skills();
        match logging {
            Logging::Vv => {
                cmd.arg("-vv");
            }
            Logging::RustLogTrace => {
                cmd.env("RUST_LOG", "trace");
            }
        }
        cmd.args(&self.args).envs(self.env.iter().copied());
        let label = format!("{logging:?} skills {}", self.args.join(" "));
        let done = Watched::spawn(&mut cmd, &label, self.stdin).finish(BOUND);
        assert!(
            done.status.success(),
            "{label}: {:?}\n{}",
            done.status,
            done.stderr
        );
        assert!(
            done.stdout.contains(self.stdout_has),
            "{label}: no `{}` on stdout:\n{}",
            self.stdout_has,
            done.stdout
        );
        let logged = done
            .stderr
            .lines()
            .any(|l| l.contains(" TRACE ") || l.contains(" DEBUG "));
        assert!(logged, "{label}: nothing logged:\n{}", done.stderr);
        assert!(
            done.stderr.contains(self.logs_from),
            "{label}: no event from `{}`:\n{}",
            self.logs_from,
            done.stderr
        );
    }

    fn check_both(&self) {
        for logging in BOTH {
            self.check(logging);
        }
    }
}

#[test]
fn validate_logs_and_exits() {
    let ex = examples();
    Case::new(&["validate", &ex], "skills_fs::", "ok ").check_both();
}

#[test]
fn list_logs_and_exits() {
    let ex = examples();
    Case::new(&["list", &ex], "skills_fs::", "csv-insights").check_both();
}

#[test]
fn catalog_logs_and_exits() {
    let ex = examples();
    Case::new(&["catalog", &ex], "skills_fs::", "csv-insights").check_both();
}

#[test]
fn show_logs_and_exits() {
    let ex = examples();
    Case::new(
        &["show", "csv-insights", &ex],
        "skills_fs::",
        "name:        csv-insights",
    )
    .check_both();
}

#[test]
fn read_logs_and_exits() {
    let ex = examples();
    Case::new(
        &["read", "csv-insights", "SKILL.md", &ex],
        "skills_fs::",
        "name: csv-insights",
    )
    .check_both();
}

#[test]
fn run_locally_logs_and_exits() {
    let ex = examples();
    Case::new(
        &["run", "csv-insights", &ex, "--", "echo ran"],
        "skills_exec::",
        "ran",
    )
    .check_both();
}

/// Needs bubblewrap at /usr/bin/bwrap (`.ci/test` installs it); fails
/// without it.
#[test]
fn run_in_the_sandbox_logs_and_exits() {
    let ex = examples();
    Case::new(
        &["run", "--sandbox", "csv-insights", &ex, "--", "echo ran"],
        "skills_exec::",
        "ran",
    )
    .check_both();
}

#[test]
fn report_logs_and_exits() {
    let ex = examples();
    Case::new(&["report", &ex], "skills_fs::", "skills report").check_both();
}

/// The fake model's script for one agent run: load `csv-insights`, run a
/// command in it (with `--run local`), answer.
fn agent_script(i: usize) -> String {
    match i % 3 {
        0 => crate::support::load_skill_call("csv-insights"),
        1 => crate::support::tool_call(
            "run_skill_command",
            r#"{"skill":"csv-insights","command":"echo ran"}"#,
        ),
        _ => crate::support::answer("done"),
    }
}

/// `agent` against a fake model on 127.0.0.1 that loads a skill (read on
/// tokio's blocking pool) and runs a command in it, keeping the conversation
/// in a SQLite store; then `sessions list` and `sessions show` read that
/// store.
#[test]
fn agent_and_sessions_log_and_exit() {
    let model = FakeModel::start(agent_script, |_| Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("sessions.db").display());
    let ex = examples();
    for logging in BOTH {
        Case::new(
            &[
                "agent",
                "--model",
                "openai:test-model",
                "--prompt",
                "Say done.",
                "--run",
                "local",
                "--session",
                &store,
                &ex,
            ],
            "skills_exec::",
            "done",
        )
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", &model.url)
        .check(logging);
    }
    assert_eq!(model.requests(), 6, "three model requests per agent run");
    Case::new(&["sessions", "list", &store], "skills_store::", "default").check_both();
    Case::new(&["sessions", "show", &store], "skills_store::", "Say done.").check_both();
    assert!(Path::new(&dir.path().join("sessions.db")).exists());
}

/// `mcp` over stdio answers one request, then the client closes its end.
#[test]
fn mcp_stdio_logs_and_exits() {
    let ex = examples();
    let initialize = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","#,
        r#""capabilities":{},"clientInfo":{"name":"verbose-test","version":"1"}}}"#,
        "\n"
    );
    Case::new(&["mcp", &ex], "skills_mcp::", r#""id":1"#)
        .stdin(initialize.as_bytes())
        .check_both();
}
