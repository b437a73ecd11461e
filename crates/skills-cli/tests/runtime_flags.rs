//! The runtime flags of `skills run`, `skills agent --run` and
//! `skills mcp --run` (`--artifacts`, `--save-artifacts`, `--allow-input`),
//! `skills run --input`, and the `workspace.*` spans `-vv` shows: the real
//! binary, real processes, real files.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::support::skills;

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

fn run(args: &[&str]) -> Output {
    skills().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The one session folder the artifact store `dir` holds.
fn only_session(dir: &Path) -> PathBuf {
    let sessions: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions.into_iter().next().unwrap()
}

#[test]
fn run_saves_artifacts_into_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let ex = examples();
    let s = store.to_str().unwrap();
    // Not asked, not forced: nothing saved (the store stays in memory
    // without --artifacts, and is not created here).
    let out = run(&[
        "run",
        "--artifacts",
        s,
        "commit-message",
        &ex,
        "--",
        "echo one > out/a.txt",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("--- artifacts"));
    assert!(!store.exists());
    // Forced: every collected file is saved, and listed.
    let out = run(&[
        "run",
        "--artifacts",
        s,
        "--save-artifacts",
        "commit-message",
        &ex,
        "--",
        "echo one > out/a.txt; mkdir out/sub; echo two > out/sub/b.txt",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let listed: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != "--- artifacts")
        .collect();
    assert_eq!(
        listed,
        [
            "--- artifacts",
            "a.txt\t1\tout/a.txt",
            "sub/b.txt\t1\tout/sub/b.txt"
        ],
        "{stdout}"
    );
    let session = only_session(&store);
    assert_eq!(
        std::fs::read_to_string(session.join("a%2Etxt/1")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(session.join("sub%2Fb%2Etxt/1")).unwrap(),
        "two\n"
    );
    // --json lists them too.
    let out = run(&[
        "run",
        "--json",
        "--save-artifacts",
        "commit-message",
        &ex,
        "--",
        "echo three > out/c.txt",
    ]);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["artifact_files"][0]["name"], "c.txt", "{result}");
    assert_eq!(result["artifact_files"][0]["version"], 1, "{result}");
}

#[test]
fn run_stages_host_inputs_from_allowed_folders_only() {
    let tmp = tempfile::tempdir().unwrap();
    let host = tmp.path().join("host");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("data.csv"), "a,b\n1,2\n").unwrap();
    let from = format!("host://{}", host.join("data.csv").display());
    let ex = examples();
    let allowed = host.to_str().unwrap();
    let out = run(&[
        "run",
        "--allow-input",
        allowed,
        "--input",
        &from,
        "--input",
        &format!("{from}=work/inputs/renamed.csv"),
        "commit-message",
        &ex,
        "--",
        "cat $WORK_DIR/inputs/data.csv; wc -l < $WORK_DIR/inputs/renamed.csv",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert_eq!(stdout, "a,b\n1,2\n2\n");
    // Without --allow-input: refused, exit code 2, nothing run.
    let out = run(&[
        "run",
        "--input",
        &from,
        "commit-message",
        &ex,
        "--",
        "echo ran",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out.stdout).contains("ran"));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("host"), "{stderr}");
    // Another folder allowed: still refused.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let out = run(&[
        "run",
        "--allow-input",
        other.to_str().unwrap(),
        "--input",
        &from,
        "commit-message",
        &ex,
        "--",
        "echo ran",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    // A folder that does not exist is a usage error.
    let out = run(&[
        "run",
        "--allow-input",
        tmp.path().join("missing").to_str().unwrap(),
        "commit-message",
        &ex,
        "--",
        "echo ran",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--allow-input"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn vv_shows_the_workspace_spans() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("in.txt"), "x\n").unwrap();
    let from = format!("host://{}", tmp.path().join("in.txt").display());
    let ex = examples();
    let out = run(&[
        "-vv",
        "run",
        "--allow-input",
        tmp.path().to_str().unwrap(),
        "--input",
        &from,
        "commit-message",
        &ex,
        "--",
        "cp $WORK_DIR/inputs/in.txt out/",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for span in [
        "workspace.create{",
        "workspace.stage.skill{",
        "workspace.run{",
        "workspace.stage.inputs{",
        "workspace.collect{",
        "workspace.inline{",
        "workspace.cleanup{",
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(span) && l.contains("close"))
            .unwrap_or_else(|| panic!("no closed {span} in:\n{stderr}"));
        assert!(line.contains("session="), "{line}");
    }
    let run_line = stderr
        .lines()
        .find(|l| l.contains("workspace.run{") && l.contains("close"))
        .unwrap();
    assert!(
        run_line.contains("skill=commit-message") && run_line.contains("runtime=\"local\"")
            || run_line.contains("runtime=local"),
        "{run_line}"
    );
}

/// A minimal MCP client over the server's standard input and output.
struct Mcp {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(args: &[&str]) -> Self {
        Self::start_with(args, &[])
    }

    /// Starts `skills mcp ARGS` with extra environment variables.
    fn start_with(args: &[&str], env: &[(&str, String)]) -> Self {
        let mut cmd = skills();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Self {
            child,
            stdout,
            next: 1,
        };
        mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "runtime-flags-test", "version": "1"}
            }),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its response's `result`.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server ended"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    /// Calls `tool`; the JSON its text content holds.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }

    fn close(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

#[test]
fn mcp_run_tools_use_the_runtime_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let host = tmp.path().join("host");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("notes.txt"), "from the host\n").unwrap();
    let store = tmp.path().join("store");
    let ex = examples();
    let mut mcp = Mcp::start(&[
        "--run",
        "local",
        "--allow-input",
        host.to_str().unwrap(),
        "--artifacts",
        store.to_str().unwrap(),
        &ex,
    ]);
    mcp.call("load_skill", json!({"name": "commit-message"}));
    let result = mcp.call(
        "run_skill_command",
        json!({
            "skill": "commit-message",
            "command": "tr a-z A-Z < $WORK_DIR/inputs/notes.txt > out/upper.txt",
            "inputs": [{"from": format!("host://{}", host.join("notes.txt").display())}],
            "outputs": {"globs": ["out/*.txt"], "save": true, "name_template": "mcp/"}
        }),
    );
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(
        result["staged_inputs"][0]["path"], "work/inputs/notes.txt",
        "{result}"
    );
    assert_eq!(
        result["artifact_files"][0]["name"], "mcp/upper.txt",
        "{result}"
    );
    assert_eq!(result["artifact_files"][0]["version"], 1, "{result}");
    mcp.close();
    let session = only_session(&store);
    assert_eq!(
        std::fs::read_to_string(session.join("mcp%2Fupper%2Etxt/1")).unwrap(),
        "FROM THE HOST\n"
    );
}

/// `skills run --runtime container`: the command runs in a container of its
/// own (not root, no network, the skill read-only), its files are listed,
/// its exit code and a timeout are the command's; `--container-image`
/// names the image and is refused without the container runtime.
#[test]
fn run_in_a_container() {
    let env = crate::support::container_env();
    let ex = examples();
    let run_env = |args: &[&str]| {
        let mut cmd = skills();
        for (k, v) in &env {
            cmd.env(k, v);
        }
        cmd.args(args).output().unwrap()
    };
    let out = run_env(&[
        "run",
        "--runtime",
        "container",
        "commit-message",
        &ex,
        "--",
        "hostname; (echo x >> SKILL.md) 2>/dev/null || echo read-only; echo hi > out/hi.txt",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("skills-container\nread-only\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("--- files\nout/hi.txt\t3\ttext/plain"),
        "{stdout}"
    );
    let out = run_env(&[
        "run",
        "--runtime",
        "container",
        "commit-message",
        &ex,
        "--",
        "exit 7",
    ]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    let out = run_env(&[
        "run",
        "--runtime",
        "container",
        "--timeout",
        "1",
        "commit-message",
        &ex,
        "--",
        "sleep 30",
    ]);
    assert_eq!(out.status.code(), Some(124), "{}", text(&out.stderr));
    let image = &env[1].1;
    let out = run_env(&[
        "run",
        "--runtime",
        "container",
        "--container-image",
        image,
        "commit-message",
        &ex,
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run_env(&[
        "run",
        "--container-image",
        image,
        "commit-message",
        &ex,
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--runtime container"),
        "{}",
        text(&out.stderr)
    );
    let out = run_env(&[
        "run",
        "--runtime",
        "container",
        "--container-image",
        "localhost/skills-no-such:0",
        "commit-message",
        &ex,
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("build-image.sh"),
        "{}",
        text(&out.stderr)
    );
}

/// `skills mcp --run container`: the run tool's commands run in containers.
#[test]
fn mcp_runs_commands_in_containers() {
    let ex = examples();
    let mut mcp = Mcp::start_with(
        &["--run", "container", &ex],
        &crate::support::container_env(),
    );
    mcp.call("load_skill", json!({"name": "commit-message"}));
    let result = mcp.call(
        "run_skill_command",
        json!({
            "skill": "commit-message",
            "command": "hostname > out/host.txt",
            "output_files": ["out/*.txt"]
        }),
    );
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(
        result["output_files"][0]["content"], "skills-container\n",
        "{result}"
    );
    mcp.close();
}
