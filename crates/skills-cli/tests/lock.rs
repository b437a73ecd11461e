//! `skills lock`, `skills verify` and `--locked` against a well-known index
//! served on 127.0.0.1 (a hand-written HTTP server whose files the test
//! changes) and a local folder root; and `skills list http://127.0.0.1:PORT`
//! probing the index, a wrong digest refusing one skill.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
const INDEX: &str = "/.well-known/agent-skills/index.json";

/// Files served by path; changed by the test while the server runs.
#[derive(Clone, Default)]
struct Site {
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    url: String,
}

impl Site {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let site = Self {
            files: Arc::default(),
            url,
        };
        let files = Arc::clone(&site.files);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let files = Arc::clone(&files);
                thread::spawn(move || answer(stream, &files));
            }
        });
        site
    }

    fn put(&self, path: &str, body: Vec<u8>) {
        self.files
            .lock()
            .expect("lock")
            .insert(path.to_owned(), body);
    }

    /// Serves `skills` (name, body) as `skill-md` entries with their digests,
    /// plus `(name, digest)` overrides for wrong digests.
    fn publish(&self, skills: &[(&str, &str)], wrong: &[&str]) {
        let mut entries = Vec::new();
        for (name, body) in skills {
            let path = format!("/s/{name}/SKILL.md");
            let digest = if wrong.contains(name) {
                sha256(b"not this")
            } else {
                sha256(body.as_bytes())
            };
            self.put(&path, body.as_bytes().to_vec());
            entries.push(serde_json::json!({
                "name": name, "description": "d", "type": "skill-md",
                "url": path, "digest": digest,
            }));
        }
        let index = serde_json::json!({ "$schema": SCHEMA, "skills": entries });
        self.put(INDEX, serde_json::to_vec(&index).expect("json"));
    }
}

fn answer(mut stream: TcpStream, files: &Mutex<HashMap<String, Vec<u8>>>) {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&request).into_owned();
    let path = text.split(' ').nth(1).unwrap_or("/");
    let body = files.lock().expect("lock").get(path).cloned();
    let _ = match body {
        Some(body) => stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .and_then(|()| stream.write_all(&body)),
        None => stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    };
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn skill(name: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Skill {name} for lock tests.\n---\n# {name}\n{extra}\n"
    )
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn skills(cwd: &Path, cache: &Path, args: &[&str]) -> Out {
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(args)
        .current_dir(cwd)
        .env("SKILLS_CACHE_DIR", cache)
        .env_remove("SKILLS_ROOT")
        .env_remove("RUST_LOG")
        .output()
        .expect("runs");
    Out {
        code: output.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[track_caller]
fn expect(out: &Out, code: i32) {
    assert_eq!(
        out.code, code,
        "--- stdout\n{}\n--- stderr\n{}",
        out.stdout, out.stderr
    );
}

#[test]
fn lock_verify_and_locked_follow_the_index_and_a_local_folder() {
    let site = Site::start();
    let alpha = skill("alpha", "v1");
    let beta = skill("beta", "v1");
    site.publish(&[("alpha", &alpha), ("beta", &beta)], &[]);
    let work = tempfile::tempdir().expect("tempdir");
    let cwd = work.path().join("project");
    let cache = work.path().join("cache");
    let local = cwd.join("local");
    std::fs::create_dir_all(local.join("gamma")).expect("mkdir");
    std::fs::write(local.join("gamma/SKILL.md"), skill("gamma", "v1")).expect("write");

    // No lockfile yet: exit 2, saying how to make one.
    let out = skills(&cwd, &cache, &["verify"]);
    expect(&out, 2);
    assert!(out.stderr.contains("skills lock"), "{}", out.stderr);

    let out = skills(&cwd, &cache, &["lock", &site.url, "local"]);
    expect(&out, 0);
    let text = std::fs::read_to_string(cwd.join("skills.lock.json")).expect("lockfile");
    let lock: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(lock["version"], 1);
    assert_eq!(lock["roots"], serde_json::json!([site.url, "local"]));
    assert_eq!(lock["skills"]["alpha"]["digest"], sha256(alpha.as_bytes()));
    assert_eq!(
        lock["skills"]["alpha"]["url"],
        format!("{}/s/alpha/SKILL.md", site.url)
    );
    assert_eq!(lock["skills"]["alpha"]["source"], site.url.as_str());
    assert_eq!(lock["skills"]["gamma"]["source"], "local");
    assert!(lock["skills"]["gamma"].get("url").is_none());
    assert!(
        lock["skills"]["gamma"]["digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:") && d.len() == 71)
    );
    assert!(
        !text.contains("fetched") && !text.contains("time"),
        "{text}"
    );
    // Sorted keys: `roots` before `skills` before `version`.
    let (r, s, v) = (
        text.find("\"roots\"").expect("roots"),
        text.find("\"skills\"").expect("skills"),
        text.find("\"version\"").expect("version"),
    );
    assert!(r < s && s < v, "{text}");

    // Unchanged: verify (roots from the lockfile) and --locked pass.
    expect(&skills(&cwd, &cache, &["verify"]), 0);
    let out = skills(&cwd, &cache, &["--locked", "list", &site.url, "local"]);
    expect(&out, 0);
    assert!(out.stdout.contains("alpha") && out.stdout.contains("gamma"));

    // Upstream changes alpha, drops beta, adds delta; gamma changes locally.
    let alpha2 = skill("alpha", "v2");
    site.publish(&[("alpha", &alpha2), ("delta", &skill("delta", "v1"))], &[]);
    std::fs::write(local.join("gamma/extra.md"), "more").expect("write");
    let out = skills(&cwd, &cache, &["verify"]);
    expect(&out, 1);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let short = |d: &str| format!("{}…", &d[..19]);
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert_eq!(
        lines[0],
        format!(
            "changed  alpha  {} -> {}  ({}/s/alpha/SKILL.md)",
            short(&sha256(alpha.as_bytes())),
            short(&sha256(alpha2.as_bytes())),
            site.url
        )
    );
    assert!(lines[1].starts_with("removed  beta  ("), "{}", out.stdout);
    assert!(
        lines[2].starts_with("added    delta  sha256:"),
        "{}",
        out.stdout
    );
    assert!(
        lines[3].starts_with("changed  gamma  sha256:"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("error[lock-drift]"), "{}", out.stderr);

    // --locked refuses to load, with the same lines.
    let out = skills(&cwd, &cache, &["--locked", "list", &site.url, "local"]);
    expect(&out, 1);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(out.stderr.contains("lock-drift"), "{}", out.stderr);
    assert!(out.stderr.contains("removed  beta"), "{}", out.stderr);
    assert!(out.stderr.contains("changed  alpha"), "{}", out.stderr);

    // Re-locking accepts the change.
    expect(&skills(&cwd, &cache, &["lock", &site.url, "local"]), 0);
    expect(&skills(&cwd, &cache, &["verify"]), 0);
}

#[test]
fn list_probes_the_index_of_a_bare_host_and_refuses_a_wrong_digest() {
    let site = Site::start();
    site.publish(
        &[("alpha", &skill("alpha", "")), ("beta", &skill("beta", ""))],
        &["beta"],
    );
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    let out = skills(work.path(), &cache, &["list", &site.url]);
    expect(&out, 0);
    assert!(out.stdout.contains("alpha"), "{}", out.stdout);
    assert!(!out.stdout.contains("beta"), "{}", out.stdout);
    assert!(
        out.stderr.contains("error[digest-mismatch]"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("{}/s/beta/SKILL.md", site.url)),
        "{}",
        out.stderr
    );
    // `lock` refuses to record a root with a refused skill.
    let out = skills(work.path(), &cache, &["lock", &site.url]);
    expect(&out, 1);
    assert!(!work.path().join("skills.lock.json").exists());
}
