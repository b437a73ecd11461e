//! Well-known index roots (`/.well-known/agent-skills/index.json`, schema
//! 0.2.0) against the hand-written server of `it::remote`: digests checked
//! before unpacking, a refused skill leaving the others loaded, URLs resolved
//! against the index, bare hosts probed, the digest-addressed cache.

use sha2::{Digest as _, Sha256};
use skills_core::Code;

use super::*;

const INDEX: &str = "/.well-known/agent-skills/index.json";
const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// One index entry as JSON.
fn entry(name: &str, kind: &str, url: &str, digest: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "description": format!("Test skill {name}."),
        "type": kind,
        "url": url,
        "digest": digest,
    })
}

fn index_of(entries: Vec<serde_json::Value>) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "$schema": SCHEMA, "skills": entries })).unwrap()
}

/// Serves `alpha` (skill-md, relative URL) and `beta` (tar.gz, path-absolute
/// URL) with their right digests and returns the index URL.
fn two_skill_index(server: &Server) -> (String, Vec<u8>, Vec<u8>) {
    let alpha = skill_md("alpha");
    let beta = tgz_of(&[
        ("SKILL.md", &skill_md("beta")),
        ("scripts/run.sh", b"echo hi\n"),
    ]);
    server.route(
        "/.well-known/agent-skills/alpha/SKILL.md",
        Route::ok(alpha.clone()),
    );
    server.route("/files/beta.tar.gz", Route::ok(beta.clone()));
    let index = index_of(vec![
        entry("alpha", "skill-md", "alpha/SKILL.md", &digest(&alpha)),
        entry("beta", "archive", "/files/beta.tar.gz", &digest(&beta)),
    ]);
    (server.route(INDEX, Route::ok(index)), alpha, beta)
}

#[test]
fn a_good_index_loads_both_types_from_relative_absolute_and_other_host_urls() {
    let server = Server::start();
    let cdn = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let alpha = skill_md("alpha");
    let beta = tgz_of(&[
        ("SKILL.md", &skill_md("beta")),
        ("scripts/run.sh", b"echo hi\n"),
    ]);
    let gamma = zip_of(&[
        ("SKILL.md", &skill_md("gamma")),
        ("ref/notes.md", b"notes\n"),
    ]);
    server.route(
        "/.well-known/agent-skills/alpha/SKILL.md",
        Route::ok(alpha.clone()),
    );
    server.route("/files/beta.tar.gz", Route::ok(beta.clone()));
    let gamma_url = cdn.route("/cdn/gamma.zip", Route::ok(gamma.clone()));
    let mut gamma_entry = entry("gamma", "archive", &gamma_url, &digest(&gamma));
    gamma_entry["version"] = "1.2.0".into();
    gamma_entry["extra-field"] = "ignored".into();
    let index = index_of(vec![
        gamma_entry,
        entry("alpha", "skill-md", "alpha/SKILL.md", &digest(&alpha)),
        entry("beta", "archive", "/files/beta.tar.gz", &digest(&beta)),
    ]);
    let url = server.route(INDEX, Route::ok(index));

    let resolved = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert!(
        resolved.diagnostics.is_empty(),
        "{:?}",
        resolved.diagnostics
    );
    assert_eq!(valid_names(&resolved.path), ["alpha", "beta", "gamma"]);
    assert!(resolved.path.join("beta/scripts/run.sh").is_file());
    assert!(resolved.path.join("gamma/ref/notes.md").is_file());
    type Row = (Option<String>, String, Option<String>, Option<String>);
    let artifacts: Vec<Row> = resolved
        .artifacts
        .iter()
        .map(|a| {
            (
                a.name.clone(),
                a.url.clone(),
                a.digest.clone(),
                a.version.clone(),
            )
        })
        .collect();
    assert_eq!(
        artifacts,
        [
            (
                Some("alpha".to_owned()),
                server.url("/.well-known/agent-skills/alpha/SKILL.md"),
                Some(digest(&alpha)),
                None
            ),
            (
                Some("beta".to_owned()),
                server.url("/files/beta.tar.gz"),
                Some(digest(&beta)),
                None
            ),
            (
                Some("gamma".to_owned()),
                gamma_url,
                Some(digest(&gamma)),
                Some("1.2.0".to_owned())
            ),
        ]
    );
}

#[test]
fn a_wrong_digest_refuses_that_skill_and_the_others_load() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let alpha = skill_md("alpha");
    let beta = tgz_of(&[("SKILL.md", &skill_md("beta"))]);
    server.route("/alpha.md", Route::ok(alpha.clone()));
    let beta_url = server.route("/beta.tar.gz", Route::ok(beta.clone()));
    let wrong = digest(b"something else");
    let index = index_of(vec![
        entry("alpha", "skill-md", "/alpha.md", &digest(&alpha)),
        entry("beta", "archive", "/beta.tar.gz", &wrong),
    ]);
    let url = server.route(INDEX, Route::ok(index));

    let resolved = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&resolved.path), ["alpha"]);
    assert_eq!(resolved.diagnostics.len(), 1, "{:?}", resolved.diagnostics);
    let d = &resolved.diagnostics[0];
    assert_eq!(d.code, Code::DigestMismatch);
    assert!(d.is_error());
    assert_eq!(d.file.as_deref(), Some(beta_url.as_str()));
    for needle in [
        wrong.as_str(),
        digest(&beta).as_str(),
        beta_url.as_str(),
        "beta",
    ] {
        assert!(d.message.contains(needle), "{} lacks {needle}", d.message);
    }
    assert_eq!(resolved.artifacts.len(), 1);
    // Nothing of the refused artifact is kept.
    let blobs: Vec<String> = std::fs::read_dir(cache.path().join("blobs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(blobs, [format!("sha256-{}.md", &digest(&alpha)[7..])]);
}

#[test]
fn an_unknown_schema_refuses_the_whole_index() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let alpha = skill_md("alpha");
    server.route("/alpha.md", Route::ok(alpha.clone()));
    let entries = vec![entry("alpha", "skill-md", "/alpha.md", &digest(&alpha))];
    for schema in [
        serde_json::json!("https://schemas.agentskills.io/discovery/0.1.0/schema.json"),
        serde_json::Value::Null,
    ] {
        let mut index = serde_json::json!({ "skills": entries.clone() });
        if !schema.is_null() {
            index["$schema"] = schema;
        }
        let url = server.route(INDEX, Route::ok(serde_json::to_vec(&index).unwrap()));
        expect_err(
            resolve_root(&url, &options(cache.path())),
            ErrorKind::Other,
            "index-invalid",
        );
    }
    assert_eq!(server.hits("/alpha.md"), 0, "nothing of the index is used");
}

#[test]
fn unknown_types_and_malformed_entries_are_skipped_with_warnings() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let alpha = skill_md("alpha");
    server.route("/alpha.md", Route::ok(alpha.clone()));
    server.route("/x.whl", Route::ok(b"wheel".to_vec()));
    let index = index_of(vec![
        entry("alpha", "skill-md", "/alpha.md", &digest(&alpha)),
        entry("wheel", "python-wheel", "/x.whl", &digest(b"wheel")),
        entry("short", "skill-md", "/alpha.md", "sha256:abc"),
        entry("local", "skill-md", "file:///etc/passwd", &digest(&alpha)),
        serde_json::json!({ "name": "nodigest", "type": "skill-md", "url": "/a" }),
    ]);
    let url = server.route(INDEX, Route::ok(index));
    let resolved = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&resolved.path), ["alpha"]);
    let codes: Vec<(Code, bool)> = resolved
        .diagnostics
        .iter()
        .map(|d| (d.code, d.is_error()))
        .collect();
    assert_eq!(codes, vec![(Code::IndexInvalid, false); 4]);
    let text: Vec<&str> = resolved
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(text[0].contains("unknown type `python-wheel`"), "{text:?}");
    assert!(text[2].contains("scheme `file`"), "{text:?}");
    assert_eq!(server.hits("/x.whl"), 0);
}

#[test]
fn a_bare_host_probes_the_well_known_index() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let _ = two_skill_index(&server);
    for spec in [server.url(""), server.url("/")] {
        let root = resolve_root(&spec, &options(cache.path())).unwrap();
        assert_eq!(valid_names(&root), ["alpha", "beta"], "{spec}");
    }
    assert_eq!(server.hits(INDEX), 2);
}

#[test]
fn archives_with_traversal_or_a_wrapper_folder_are_refused() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let alpha = skill_md("alpha");
    let evil = tgz_of(&[("SKILL.md", &skill_md("evil")), ("../escape.txt", b"x")]);
    let wrapped = zip_of(&[("wrapped/SKILL.md", &skill_md("wrapped"))]);
    server.route("/alpha.md", Route::ok(alpha.clone()));
    server.route("/evil.tar.gz", Route::ok(evil.clone()));
    server.route("/wrapped.zip", Route::ok(wrapped.clone()));
    let index = index_of(vec![
        entry("alpha", "skill-md", "/alpha.md", &digest(&alpha)),
        entry("evil", "archive", "/evil.tar.gz", &digest(&evil)),
        entry("wrapped", "archive", "/wrapped.zip", &digest(&wrapped)),
    ]);
    let url = server.route(INDEX, Route::ok(index));
    let resolved = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&resolved.path), ["alpha"]);
    let found: Vec<(Code, bool)> = resolved
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code,
                d.message.starts_with("evil:") || d.message.starts_with("wrapped:"),
            )
        })
        .collect();
    assert_eq!(found, [(Code::IoError, true), (Code::IndexInvalid, true)]);
    assert!(
        resolved.diagnostics[0].message.contains(".."),
        "{:?}",
        resolved.diagnostics
    );
    assert!(
        resolved.diagnostics[1]
            .message
            .contains("no SKILL.md at its root"),
        "{:?}",
        resolved.diagnostics
    );
    assert!(!cache.path().join("escape.txt").exists());
}

#[test]
fn a_stalled_server_times_out() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let alpha = skill_md("alpha");
    let slow = skill_md("slow");
    server.route("/alpha.md", Route::ok(alpha.clone()));
    server.route(
        "/slow.md",
        Route::ok(slow.clone()).trickle(8, Duration::from_millis(400)),
    );
    let index = index_of(vec![
        entry("alpha", "skill-md", "/alpha.md", &digest(&alpha)),
        entry("slow", "skill-md", "/slow.md", &digest(&slow)),
    ]);
    let url = server.route(INDEX, Route::ok(index.clone()));
    let short = options(cache.path()).with_read_timeout(Duration::from_millis(100));
    let resolved = resolve_root_detailed(&url, &short).unwrap();
    assert_eq!(valid_names(&resolved.path), ["alpha"]);
    assert_eq!(resolved.diagnostics.len(), 1);
    assert!(resolved.diagnostics[0].message.contains("timed out"));

    // The index itself stalling is an error for the whole root (no earlier copy
    // in a fresh cache).
    let fresh = tempfile::tempdir().unwrap();
    server.route(
        INDEX,
        Route::ok(index).trickle(16, Duration::from_millis(400)),
    );
    let short = options(fresh.path()).with_read_timeout(Duration::from_millis(100));
    expect_err(resolve_root(&url, &short), ErrorKind::Io, "timed out");
}

#[test]
fn a_warm_resolve_reuses_verified_artifacts_and_fetches_new_digests() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let (url, alpha, _) = two_skill_index(&server);
    let first = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    let second = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert_eq!(first.path, second.path);
    assert!(
        matches!(second.source, Source::NotModified),
        "{:?}",
        second.source
    );
    assert_eq!(server.hits(INDEX), 2);
    assert_eq!(server.hits("/files/beta.tar.gz"), 1);
    assert_eq!(server.hits("/.well-known/agent-skills/alpha/SKILL.md"), 1);

    // Upstream publishes a new beta: its new digest is fetched, alpha is reused.
    let beta2 = tgz_of(&[("SKILL.md", &skill_md("beta")), ("new.md", b"v2\n")]);
    server.route("/files/beta.tar.gz", Route::ok(beta2.clone()));
    let index = index_of(vec![
        entry("alpha", "skill-md", "alpha/SKILL.md", &digest(&alpha)),
        entry("beta", "archive", "/files/beta.tar.gz", &digest(&beta2)),
    ]);
    server.route(INDEX, Route::ok(index));
    let third = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert_ne!(third.path, first.path);
    assert!(third.path.join("beta/new.md").is_file());
    assert_eq!(server.hits("/files/beta.tar.gz"), 2);
    assert_eq!(server.hits("/.well-known/agent-skills/alpha/SKILL.md"), 1);

    // Refresh downloads and checks everything again.
    let fourth = resolve_root_detailed(&url, &options(cache.path()).with_refresh(true)).unwrap();
    assert_eq!(fourth.path, third.path);
    assert_eq!(server.hits("/.well-known/agent-skills/alpha/SKILL.md"), 2);

    // Server down: the last verified root is used, marked stale.
    server.route(INDEX, Route::status(503));
    let stale = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert_eq!(stale.path, third.path);
    assert!(
        matches!(stale.source, Source::Stale(_)),
        "{:?}",
        stale.source
    );
    assert_eq!(stale.artifacts, third.artifacts);
}

#[test]
fn plain_url_roots_record_the_digest_of_their_download() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let body = zip_of(&[("one/SKILL.md", &skill_md("one"))]);
    let url = server.route("/one.zip", Route::ok(body.clone()));
    for _ in 0..2 {
        let resolved = resolve_root_detailed(&url, &options(cache.path())).unwrap();
        assert_eq!(resolved.artifacts.len(), 1);
        assert_eq!(resolved.artifacts[0].digest, Some(digest(&body)));
        assert_eq!(resolved.artifacts[0].name, None);
        assert_eq!(resolved.artifacts[0].url, url);
    }
    assert_eq!(server.hits("/one.zip"), 1);
}

#[test]
fn paths_in_an_index_root_map_back_to_the_artifact_urls() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let (url, _, _) = two_skill_index(&server);
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    let shown = |rel: &str| remote_location(&root.join(rel), &options(cache.path()));
    assert_eq!(
        shown("alpha/SKILL.md"),
        Some(server.url("/.well-known/agent-skills/alpha/SKILL.md"))
    );
    assert_eq!(
        shown("beta/scripts/run.sh"),
        Some(format!(
            "{}!/scripts/run.sh",
            server.url("/files/beta.tar.gz")
        ))
    );
    assert_eq!(
        shown("beta/SKILL.md"),
        Some(format!("{}!/SKILL.md", server.url("/files/beta.tar.gz")))
    );
    assert_eq!(shown("nobody/SKILL.md"), None);
}
