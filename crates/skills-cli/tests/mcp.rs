//! `skills mcp` with a real MCP client: the official Python SDK (PyPI `mcp`)
//! runs `tests/mcp_clients/skills_client.py` against the built binary over
//! stdio and over Streamable HTTP (with a bearer token), on the legacy
//! handshake and on protocol 2026-07-28: on a flat tree and on one with a
//! multi-segment skill and a nested one (the URIs rmcp's folder catalog
//! gives), with a skill the extension cannot list left out, and with the
//! tools' annotations checked.
//!
//! Environment: `SKILLS_MCP_PYTHON`, the Python that has `mcp` installed
//! (default: `<workspace>/target/mcp-client-venv/bin/python`). Without it
//! the client tests fail, saying how to install it
//! (`bash .ci/install-mcp-client`; `bash .ci/test` does it for you).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::mcp_support::{
    HttpServer, NESTED_URIS, add_unlistable_skill, client_python, fixture, nested_fixture,
    ping_status, skills,
};
use serde_json::Value;

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/skills_client.py")
}

/// Runs the client script and returns its JSON summary.
fn run_client(args: &[&str]) -> Value {
    run_client_with_stderr(args).0
}

/// Runs the client script; its JSON summary and its standard error (where
/// the stdio server's own standard error goes too).
fn run_client_with_stderr(args: &[&str]) -> (Value, String) {
    let output = Command::new(client_python())
        .arg(client_script())
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the MCP client failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    (
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn check_summary(summary: &Value, protocol: &str) {
    assert_eq!(summary["protocol"], protocol, "{summary}");
    assert_eq!(summary["skills"], serde_json::json!(["charts", "notes"]));
    // Every file of every skill read and its digest checked; the image as a blob.
    assert_eq!(summary["files_checked"], 5, "{summary}");
    assert_eq!(summary["blobs"], 1, "{summary}");
    assert_eq!(summary["unknown_skill_code"], -32602);
    assert_eq!(summary["load_unknown_is_error"], true);
    assert_eq!(summary["read_skill_file_is_error"], false);
    // SEP-2549 cache hints only on 2026-07-28.
    assert_eq!(
        summary["cache_hints"],
        protocol == "2026-07-28",
        "{summary}"
    );
    assert!(summary["instructions_bytes"].as_u64().unwrap() > 0);
    check_annotations(summary);
}

/// Every tool has a title and its annotations: the read tools read-only,
/// idempotent and closed-world, the run tools not read-only.
fn check_annotations(summary: &Value) {
    let annotations = summary["annotations"].as_object().unwrap();
    for tool in summary["tools"].as_array().unwrap() {
        let name = tool.as_str().unwrap();
        let hints = &annotations[name];
        assert!(summary["titles"][name].is_string(), "{name}: {summary}");
        assert_eq!(hints["title"], summary["titles"][name], "{name}");
        let read_only = matches!(name, "load_skill" | "read_skill_file");
        assert_eq!(hints["readOnlyHint"], read_only, "{name}: {hints}");
        if read_only {
            assert_eq!(hints["idempotentHint"], true, "{name}: {hints}");
            assert_eq!(hints["openWorldHint"], false, "{name}: {hints}");
            assert_eq!(hints["destructiveHint"], false, "{name}: {hints}");
        }
        if name == "run_skill_command" {
            assert_eq!(hints["destructiveHint"], true, "{name}: {hints}");
            assert_eq!(hints["openWorldHint"], true, "{name}: {hints}");
        }
    }
}

#[test]
fn python_client_over_stdio_legacy_handshake() {
    let dir = fixture();
    let root = dir.path().to_str().unwrap();
    let summary = run_client(&["stdio", "legacy", skills(), root]);
    check_summary(&summary, "2025-11-25");
    assert_eq!(
        summary["tools"],
        serde_json::json!(["load_skill", "read_skill_file"])
    );
}

#[test]
fn python_client_over_stdio_2026_07_28() {
    let dir = fixture();
    let root = dir.path().to_str().unwrap();
    let summary = run_client(&["stdio", "auto", skills(), root]);
    check_summary(&summary, "2026-07-28");
}

/// The tree with a multi-segment skill and a nested one: the URIs rmcp's
/// folder catalog gives, every file of every manifest read and its digest
/// checked (the nested skill's files through both skills), every folder of
/// every manifest read.
fn check_nested_summary(summary: &Value, protocol: &str) {
    assert_eq!(summary["protocol"], protocol, "{summary}");
    assert_eq!(summary["uris"], serde_json::json!(NESTED_URIS), "{summary}");
    assert_eq!(
        summary["skills"],
        serde_json::json!(["billing", "refunds", "notes"])
    );
    // billing: 5 files (its own 2, refunds' 3); refunds: 3; notes: 1.
    assert_eq!(summary["files_checked"], 9, "{summary}");
    assert_eq!(summary["blobs"], 2, "{summary}");
    assert_eq!(summary["read_skill_file_is_error"], false, "{summary}");
    check_annotations(summary);
}

#[test]
fn python_client_on_nested_skills_over_stdio_both_protocols() {
    let dir = nested_fixture();
    let root = dir.path().to_str().unwrap();
    let summary = run_client(&["stdio", "legacy", skills(), root]);
    check_nested_summary(&summary, "2025-11-25");
    let summary = run_client(&["stdio", "auto", skills(), root]);
    check_nested_summary(&summary, "2026-07-28");
}

#[test]
fn python_client_on_nested_skills_over_http_both_protocols() {
    let dir = nested_fixture();
    let server = HttpServer::start(dir.path(), Some("t0ken"));
    let summary = run_client(&["http", "auto", &server.url, "t0ken"]);
    check_nested_summary(&summary, "2026-07-28");
    let summary = run_client(&["http", "legacy", &server.url, "t0ken"]);
    check_nested_summary(&summary, "2025-11-25");
}

/// A skill the extension cannot list (a name over 64 characters) is left out
/// with a warning on the server's log; the rest is listed, read and checked.
#[test]
fn python_client_lists_the_rest_when_one_skill_cannot_be_listed() {
    let dir = nested_fixture();
    let long = add_unlistable_skill(dir.path());
    let root = dir.path().to_str().unwrap();
    let (summary, stderr) = run_client_with_stderr(&["stdio", "legacy", skills(), root, "-v"]);
    check_nested_summary(&summary, "2025-11-25");
    assert!(
        stderr.contains("skill left out of skills/list") && stderr.contains(&long),
        "{stderr}"
    );
}

#[test]
fn python_client_calls_the_run_tools() {
    let dir = fixture();
    let root = dir.path().to_str().unwrap();
    let summary = run_client(&["stdio", "legacy", skills(), root, "--run", "local"]);
    check_summary(&summary, "2025-11-25");
    let tools = summary["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "run_skill_command"), "{summary}");
    assert_eq!(summary["run_is_error"], false, "{summary}");
    assert_eq!(summary["run_output_seen"], true, "{summary}");
}

#[test]
fn python_client_over_http_both_protocols() {
    let dir = fixture();
    let server = HttpServer::start(dir.path(), Some("t0ken"));
    let summary = run_client(&["http", "auto", &server.url, "t0ken"]);
    check_summary(&summary, "2026-07-28");
    let summary = run_client(&["http", "legacy", &server.url, "t0ken"]);
    check_summary(&summary, "2025-11-25");
}

#[test]
fn python_client_with_a_wrong_token_is_refused() {
    let dir = fixture();
    let server = HttpServer::start(dir.path(), Some("t0ken"));
    let output = Command::new(client_python())
        .arg(client_script())
        .args(["http", "legacy", &server.url, "wrong"])
        .output()
        .unwrap();
    // The SDK reports only "Server returned an error response".
    assert!(!output.status.success());
    // The status itself, on a raw request.
    let status = |auth: &str| ping_status(&server.url, auth);
    assert!(status("").contains(" 401 "));
    assert!(status("Authorization: Bearer wrong\r\n").contains(" 401 "));
    assert!(!status("Authorization: Bearer t0ken\r\n").contains(" 401 "));
}

#[test]
fn a_public_address_without_a_token_is_refused() {
    let dir = fixture();
    let output = Command::new(skills())
        .args(["mcp", "--http", "0.0.0.0:0"])
        .arg(dir.path())
        .env_remove("SKILLS_MCP_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("SKILLS_MCP_TOKEN"), "{stderr}");
}

/// `skills mcp DIR` over piped standard input and output.
fn stdio_server(dir: &std::path::Path) -> std::process::Child {
    Command::new(skills())
        .arg("mcp")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// [`stdio_server`] after the MCP handshake: the server, its standard input,
/// and a reader of its next answer.
#[cfg(target_os = "linux")]
fn stdio_session(
    dir: &std::path::Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    impl FnMut() -> Value,
) {
    use std::io::{BufRead as _, BufReader, Write as _};

    let mut child = stdio_server(dir);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answer = move || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    assert_eq!(answer()["id"], 0);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    (child, stdin, answer)
}

#[test]
fn stdio_ends_cleanly_when_the_client_hangs_up() {
    let dir = fixture();
    let mut child = stdio_server(dir.path());
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
        .unwrap();
        writeln!(stdin, "{{broken").unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let answers: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Answers are matched by id, in whatever order they come.
    let init = answers
        .iter()
        .find(|a| a["id"] == 1)
        .expect("initialize answered");
    assert_eq!(init["result"]["serverInfo"]["name"], "skills");
    // The broken line got a parse error.
    assert!(
        answers
            .iter()
            .any(|a| a["id"].is_null() && a["error"]["code"] == -32700),
        "{stdout}"
    );
}

/// Without the run tools, 100 requests at once over stdio are all answered
/// by a bounded blocking pool: the process never has more than its main
/// thread, the two workers and the pool's 4 threads (with tokio's default
/// pool, each request in flight could start a thread: 31 in all). With
/// glibc, all of them allocate from the main arena: the process has no
/// other (there were 10, one per thread).
#[cfg(target_os = "linux")]
#[test]
fn stdio_bounds_its_threads_and_arenas_under_concurrent_requests() {
    use std::io::Write as _;

    let dir = fixture();
    let (mut child, mut stdin, mut answer) = stdio_session(dir.path());
    let tasks = format!("/proc/{}/task", child.id());
    let threads = || std::fs::read_dir(&tasks).unwrap().count();
    let mut most = threads();
    for round in 0..10 {
        let mut batch = String::new();
        for k in 0..100 {
            batch.push_str(&format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"resources/read","params":{{"uri":"skill://charts/references/styles.md"}}}}"#,
                round * 100 + k + 1
            ));
            batch.push('\n');
        }
        stdin.write_all(batch.as_bytes()).unwrap();
        stdin.flush().unwrap();
        for _ in 0..100 {
            let reply = answer();
            assert!(reply["result"]["contents"].is_array(), "{reply}");
            most = most.max(threads());
        }
    }
    #[cfg(all(target_env = "gnu", target_pointer_width = "64"))]
    let arenas = malloc_arenas(child.id());
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(most <= 1 + 2 + 4, "{most} threads");
    #[cfg(all(target_env = "gnu", target_pointer_width = "64"))]
    assert!(arenas.is_empty(), "arenas besides the main one: {arenas:?}");
}

/// `skills mcp` gives back the pages of code it is no longer running: right
/// after requests of every kind its executable's code holds some resident
/// pages; after a few quiet seconds (its releases run every 2 s) only the
/// code it ran since (the change poll, the release itself) is resident.
#[cfg(target_os = "linux")]
#[test]
fn stdio_releases_the_code_it_stopped_running() {
    use std::io::Write as _;

    let dir = fixture();
    let (mut child, mut stdin, mut answer) = stdio_session(dir.path());
    let requests = [
        r#""method":"resources/list""#,
        r#""method":"resources/read","params":{"uri":"skill://charts/references/styles.md"}"#,
        r#""method":"tools/list""#,
        r#""method":"tools/call","params":{"name":"load_skill","arguments":{"name":"charts"}}"#,
        r#""method":"prompts/list""#,
    ];
    // A release may fall between the requests and the reading: the most
    // of five rounds, 100 ms apart, is read after requests at least once.
    let mut busy = 0;
    for round in 0..5 {
        for (k, request) in requests.iter().enumerate() {
            let id = round * 10 + k + 1;
            writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},{request}}}"#).unwrap();
            assert_eq!(answer()["id"], id);
        }
        busy = busy.max(resident_code_kib(child.id()));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(4500));
    let quiet = resident_code_kib(child.id());
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(quiet * 10 < busy * 9, "{quiet} KiB quiet, {busy} KiB busy");
}

/// The resident KiB of the executable mappings of process `pid`'s own
/// executable (`/proc/PID/smaps`).
#[cfg(target_os = "linux")]
fn resident_code_kib(pid: u32) -> u64 {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    let exe = exe.to_string_lossy();
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let mut code = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields
            .first()
            .is_some_and(|f| f.contains('-') && !f.ends_with(':'))
        {
            // `START-END PERMS OFFSET DEV INODE PATH`: the path is the first `/` on.
            code = fields.get(1).is_some_and(|perms| perms.contains('x'))
                && line
                    .find('/')
                    .is_some_and(|at| line[at..].trim_end() == exe);
        } else if code && fields.first() == Some(&"Rss:") {
            kib += fields[1].parse::<u64>().unwrap();
        }
    }
    kib
}

/// The arenas of glibc's allocator besides the main one (the `[heap]`) in
/// process `pid`. glibc reserves each arena's heap as 64 MiB (its maximum on
/// 64-bit Linux) aligned to 64 MiB: an anonymous read-write mapping that
/// starts on a multiple of 64 MiB and, with the inaccessible (`---p`) rest
/// of the reserve right after it, reaches the next multiple. A thread stack
/// or a large block may start on such a boundary by chance, but does not
/// fill the 64 MiB.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn malloc_arenas(pid: u32) -> Vec<String> {
    const HEAP_MAX: u64 = 64 << 20;
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    // (start, end, permissions, anonymous) of each mapping, in address order.
    let regions: Vec<(u64, u64, &str, bool)> = maps
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (start, end) = fields[0].split_once('-').unwrap();
            (
                u64::from_str_radix(start, 16).unwrap(),
                u64::from_str_radix(end, 16).unwrap(),
                fields[1],
                fields.len() == 5,
            )
        })
        .collect();
    regions
        .iter()
        .enumerate()
        .filter(|&(i, &(start, end, perms, anonymous))| {
            let reserve_end = match regions.get(i + 1) {
                Some(&(next, next_end, "---p", true)) if next == end => next_end,
                _ => end,
            };
            anonymous
                && perms == "rw-p"
                && start.is_multiple_of(HEAP_MAX)
                && reserve_end == start + HEAP_MAX
        })
        .map(|(_, (start, end, perms, _))| format!("{start:x}-{end:x} {perms}"))
        .collect()
}
