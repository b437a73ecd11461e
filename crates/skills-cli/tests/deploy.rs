//! The deployment files in `deploy/`, checked where they can be:
//!
//! * every Kubernetes manifest of `deploy/k8s/` against the Kubernetes
//!   schemas (PyPI `kubernetes-validate`, strict: unknown fields are errors),
//!   `deploy/compose.yaml` against the compose specification's schema (PyPI
//!   `check-jsonschema`, its bundled `vendor.compose-spec`), both HAProxy
//!   configurations with `haproxy -c`; a broken copy of each is rejected, so
//!   these checks can fail; and what the schemas cannot see: the paths the
//!   pod's server and engine must share, the compose load balancer's file;
//! * the compose file run for real: its `skills mcp --http … --run
//!   container` services started as processes on 127.0.0.1 with the command
//!   lines and environment read from `compose.yaml`, against the Podman
//!   service, behind HAProxy with `deploy/haproxy.cfg` (only the addresses
//!   replaced); the official MCP Python SDK lists the skills and runs
//!   commands through each replica and through the load balancer, and checks
//!   that they ran in a container and that the token is required.
//!
//! Environment: `SKILLS_DEPLOY_CHECK_PYTHON`, the venv's Python with the two
//! validators (`bash .ci/install-deploy-check`, which also installs
//! `haproxy`); `SKILLS_MCP_PYTHON` (the MCP SDK, `bash .ci/install-mcp-client`);
//! `SKILLS_TEST_CONTAINER_HOST` and `SKILLS_TEST_CONTAINER_IMAGE`, the engine
//! socket and the runner image (`bash .ci/podman start` prints them).
//! `bash .ci/test` sets them all. A missing one fails its tests, saying how
//! to get it; nothing is skipped.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mcp_support::{
    HttpServer, client_python, env_path, fixture, ping_status, skills, workspace_root,
};

/// The runner image the compose file names, the runtime's default.
const DEFAULT_RUNNER_IMAGE: &str = "localhost/skills-runner:latest";

fn deploy_dir() -> PathBuf {
    workspace_root().join("deploy")
}

/// The Python of `target/deploy-check-venv`. Panics, with the command that
/// installs it, when it is missing.
fn check_python() -> PathBuf {
    let python = env_path(
        "SKILLS_DEPLOY_CHECK_PYTHON",
        workspace_root().join("target/deploy-check-venv/bin/python"),
    );
    assert!(
        python.exists(),
        "no Python with the deployment validators at {}: run `bash .ci/install-deploy-check` \
         (creates target/deploy-check-venv) or point SKILLS_DEPLOY_CHECK_PYTHON at a Python \
         with kubernetes-validate and check-jsonschema",
        python.display()
    );
    python
}

/// A command-line tool installed beside [`check_python`].
fn venv_tool(name: &str) -> PathBuf {
    let tool = check_python().parent().unwrap().join(name);
    assert!(
        tool.exists(),
        "no {} in the deploy-check venv: run `bash .ci/install-deploy-check`",
        tool.display()
    );
    tool
}

/// Debian's `haproxy` (`SKILLS_DEPLOY_HAPROXY` to use another).
fn haproxy() -> PathBuf {
    let haproxy = env_path("SKILLS_DEPLOY_HAPROXY", PathBuf::from("/usr/sbin/haproxy"));
    assert!(
        haproxy.exists(),
        "no haproxy at {}: run `bash .ci/install-deploy-check` (installs Debian's haproxy) \
         or point SKILLS_DEPLOY_HAPROXY at one",
        haproxy.display()
    );
    haproxy
}

/// Standard output and error of a finished command, together.
fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The documents of a YAML file, as JSON (read with the venv's PyYAML,
/// which resolves anchors and `<<` merge keys as compose does).
fn yaml_documents(path: &Path) -> Vec<Value> {
    let output = Command::new(check_python())
        .args([
            "-c",
            "import json, sys, yaml\n\
             print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1], encoding='utf-8')))))",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `deploy/k8s/*.yaml`, sorted.
fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(deploy_dir().join("k8s"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifests in deploy/k8s");
    files
}

/// The oldest Kubernetes the manifests are for: native sidecars
/// (`restartPolicy: Always` on an init container) are on by default from 1.29.
const OLDEST_KUBERNETES: &str = "1.29.0";

/// `kubernetes-validate --strict` on `files`, against the schemas of
/// Kubernetes `version` (`None`: the newest the package has).
fn kubernetes_validate(files: &[PathBuf], version: Option<&str>) -> Output {
    let mut command = Command::new(venv_tool("kubernetes-validate"));
    command.arg("--strict");
    if let Some(version) = version {
        command.args(["--kubernetes-version", version]);
    }
    command.args(files).output().unwrap()
}

fn compose_validate(file: &Path) -> Output {
    Command::new(venv_tool("check-jsonschema"))
        .args(["--builtin-schema", "vendor.compose-spec"])
        .arg(file)
        .output()
        .unwrap()
}

fn haproxy_check(file: &Path) -> Output {
    Command::new(haproxy())
        .args(["-c", "-f"])
        .arg(file)
        .output()
        .unwrap()
}

/// A copy of `path` in `dir` with `from` replaced by `to` (which must occur).
fn broken_copy(dir: &Path, path: &Path, from: &str, to: &str) -> PathBuf {
    let original = std::fs::read_to_string(path).unwrap();
    assert!(
        original.contains(from),
        "{} has no {from:?}",
        path.display()
    );
    let copy = dir.join(path.file_name().unwrap());
    std::fs::write(&copy, original.replacen(from, to, 1)).unwrap();
    copy
}

#[test]
fn every_kubernetes_manifest_passes_the_schemas() {
    let files = manifests();
    let mut expected = BTreeSet::new();
    for file in &files {
        for doc in yaml_documents(file) {
            let kind = doc["kind"].as_str().unwrap().to_ascii_lowercase();
            let name = doc["metadata"]["name"].as_str().unwrap();
            expected.insert(format!("{kind}/{name}"));
        }
    }
    for version in [None, Some(OLDEST_KUBERNETES)] {
        let output = kubernetes_validate(&files, version);
        let report = text(&output);
        assert!(output.status.success(), "{version:?}: {report}");
        // Every document of every file was checked, none left out.
        let passed: BTreeSet<String> = report
            .lines()
            .filter_map(|line| line.split("passed for resource ").nth(1))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
            .collect();
        assert_eq!(passed, expected, "{version:?}: {report}");
    }
    for needed in [
        "namespace/skills",
        "secret/skills-mcp-token",
        "deployment/skills-mcp",
        "service/skills-mcp",
        "service/skills-mcp-replicas",
        "configmap/skills-mcp-lb",
        "deployment/skills-mcp-lb",
    ] {
        assert!(expected.contains(needed), "{needed} missing: {expected:?}");
    }
}

#[test]
fn a_broken_kubernetes_manifest_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = deploy_dir().join("k8s/deployment.yaml");
    // A wrong type.
    let copy = broken_copy(
        dir.path(),
        &deployment,
        "containerPort: 8700",
        "containerPort: \"8700\"",
    );
    let output = kubernetes_validate(&[copy], None);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("containerPort"), "{}", text(&output));
    // A misspelt field (strict mode).
    let copy = broken_copy(dir.path(), &deployment, "replicas: 3", "replica: 3");
    let output = kubernetes_validate(&[copy], None);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("replica"), "{}", text(&output));
}

#[test]
fn the_compose_file_passes_the_compose_specification() {
    let output = compose_validate(&deploy_dir().join("compose.yaml"));
    assert!(output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("ok -- validation done"));
}

#[test]
fn a_broken_compose_file_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let compose = deploy_dir().join("compose.yaml");
    let copy = broken_copy(dir.path(), &compose, "\nservices:", "\nservics:");
    let output = compose_validate(&copy);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("servics"), "{}", text(&output));
    let copy = broken_copy(dir.path(), &compose, "read_only: true", "read_only: [yes]");
    let output = compose_validate(&copy);
    assert!(!output.status.success(), "{}", text(&output));
}

/// The entry of the list `list` (of a manifest) whose `name` is `name`.
fn named<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|entry| entry["name"] == name)
}

/// The mount path of volume `name` in `container`, if mounted there.
fn mount_path<'a>(container: &'a Value, name: &str) -> Option<&'a str> {
    named(&container["volumeMounts"], name)?["mountPath"].as_str()
}

/// The value of the variable `name` in `container`'s `env`.
fn env_value<'a>(container: &'a Value, name: &str) -> Option<&'a str> {
    named(&container["env"], name)?["value"].as_str()
}

/// What the schemas cannot see in the Deployment: the server runs what the
/// compose file runs; the engine is a native sidecar; the socket's folder
/// and the workspace folder (`TMPDIR`) are the same volumes at the same
/// paths in the server and the engine (the engine bind-mounts a workspace
/// by its path); the token comes from the Secret.
#[test]
fn the_kubernetes_pod_shares_the_socket_and_the_workspace_paths() {
    let deployment = yaml_documents(&deploy_dir().join("k8s/deployment.yaml"))
        .pop()
        .unwrap();
    let pod = &deployment["spec"]["template"]["spec"];
    let mcp = &pod["containers"][0];
    assert_eq!(mcp["name"], "mcp");
    let engine = named(&pod["initContainers"], "engine").expect("an engine init container");
    assert_eq!(engine["restartPolicy"], "Always", "a native sidecar");

    let compose = yaml_documents(&deploy_dir().join("compose.yaml"))
        .pop()
        .unwrap();
    let command = &compose["services"]["mcp-1"]["command"];
    let args = mcp["args"].as_array().unwrap();
    assert_eq!(
        args[..],
        command.as_array().unwrap()[..args.len()],
        "the Deployment runs what compose.yaml runs"
    );

    let socket = env_value(mcp, "DOCKER_HOST")
        .unwrap()
        .trim_start_matches("unix://");
    let socket_dir = Path::new(socket).parent().unwrap().to_str().unwrap();
    assert_eq!(mount_path(mcp, "engine-socket"), Some(socket_dir));
    assert_eq!(mount_path(engine, "engine-socket"), Some(socket_dir));
    assert!(
        engine["command"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == &format!("unix://{socket}")),
        "the engine serves {socket}"
    );
    let tmpdir = env_value(mcp, "TMPDIR").unwrap();
    assert_eq!(mount_path(mcp, "workspaces"), Some(tmpdir));
    assert_eq!(mount_path(engine, "workspaces"), Some(tmpdir));

    let token = named(&mcp["env"], "SKILLS_MCP_TOKEN").unwrap();
    assert_eq!(
        token["valueFrom"]["secretKeyRef"]["name"],
        "skills-mcp-token"
    );
}

/// The compose file's load balancer runs `deploy/haproxy.cfg` (the file the
/// compose test runs) and starts after every replica it names.
#[test]
fn the_compose_load_balancer_runs_the_tested_haproxy_cfg() {
    let compose = yaml_documents(&deploy_dir().join("compose.yaml"))
        .pop()
        .unwrap();
    let lb = &compose["services"]["lb"];
    let volumes = lb["volumes"].as_array().unwrap();
    assert!(
        volumes.iter().any(|v| v
            .as_str()
            .unwrap()
            .starts_with("./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg")),
        "{volumes:?}"
    );
    let config = std::fs::read_to_string(deploy_dir().join("haproxy.cfg")).unwrap();
    for replica in lb["depends_on"].as_array().unwrap() {
        let name = replica.as_str().unwrap();
        assert!(
            config.contains(&format!("server {name} {name}:8700")),
            "haproxy.cfg has no server for {name}"
        );
    }
}

/// The HAProxy configuration the Kubernetes ConfigMap carries, in a file.
fn kubernetes_haproxy_cfg(dir: &Path) -> PathBuf {
    let docs = yaml_documents(&deploy_dir().join("k8s/haproxy.yaml"));
    let config = docs
        .iter()
        .find(|doc| doc["kind"] == "ConfigMap")
        .and_then(|doc| doc["data"]["haproxy.cfg"].as_str())
        .expect("a ConfigMap with haproxy.cfg in deploy/k8s/haproxy.yaml");
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, config).unwrap();
    path
}

#[test]
fn both_haproxy_configurations_pass_haproxy_check() {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        deploy_dir().join("haproxy.cfg"),
        kubernetes_haproxy_cfg(dir.path()),
    ] {
        let output = haproxy_check(&file);
        assert!(
            output.status.success(),
            "{}: {}",
            file.display(),
            text(&output)
        );
        let config = std::fs::read_to_string(&file).unwrap();
        // The session stickiness the MCP sessions need.
        assert!(
            config.contains("stick store-response res.hdr(mcp-session-id)")
                && config.contains("stick match req.hdr(mcp-session-id)"),
            "{}",
            file.display()
        );
    }
    let broken = tempfile::tempdir().unwrap();
    let copy = broken_copy(
        broken.path(),
        &deploy_dir().join("haproxy.cfg"),
        "stick store-response res.hdr",
        "stick store-responce res.hdr",
    );
    let output = haproxy_check(&copy);
    assert!(!output.status.success(), "{}", text(&output));
}

// ---------------------------------------------------------------------------
// The compose file, run for real.

/// The engine socket and runner image the container tests use. Panics, saying
/// how to start them, when they are not set.
fn container_engine() -> (String, String) {
    let get = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| {
                panic!(
                    "{name} is not set: this test runs skill commands in containers. Run \
                     `bash .ci/podman start` (it starts a Podman service and prints \
                     DOCKER_HOST=… and SKILLS_CONTAINER_IMAGE=…) and set \
                     SKILLS_TEST_CONTAINER_HOST and SKILLS_TEST_CONTAINER_IMAGE to them; \
                     `bash .ci/test` does it for you"
                )
            })
    };
    (
        get("SKILLS_TEST_CONTAINER_HOST"),
        get("SKILLS_TEST_CONTAINER_IMAGE"),
    )
}

/// What the test puts in place of the compose file's values.
struct Stand {
    token: String,
    skills_root: String,
    docker_host: String,
    image: String,
    tmpdir: PathBuf,
    cache: PathBuf,
}

/// A `skills mcp` service of the compose file as a process on 127.0.0.1:
/// its command line, with `0.0.0.0:8700` replaced by `127.0.0.1:0` and the
/// runner image by the test's, and its environment, each variable given
/// the test's value. A variable the test does not know fails the test, so
/// the file cannot grow a setting that is never run.
fn replica_command(service: &Value, stand: &Stand) -> Command {
    let args: Vec<&str> = service["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let http = args.iter().position(|a| *a == "--http").unwrap();
    assert_eq!(args[http + 1], "0.0.0.0:8700", "{args:?}");
    let image = args.iter().position(|a| *a == "--container-image").unwrap();
    assert_eq!(args[image + 1], DEFAULT_RUNNER_IMAGE, "{args:?}");
    let mut command = Command::new(skills());
    for (i, arg) in args.iter().enumerate() {
        command.arg(if i == http + 1 {
            "127.0.0.1:0"
        } else if i == image + 1 {
            stand.image.as_str()
        } else {
            *arg
        });
    }
    for name in [
        "SKILLS_MCP_TOKEN",
        "SKILLS_ROOT",
        "DOCKER_HOST",
        "SKILLS_CONTAINER_IMAGE",
        "SKILLS_CACHE_DIR",
        "TMPDIR",
        "RUST_LOG",
    ] {
        command.env_remove(name);
    }
    let environment = service["environment"].as_object().unwrap();
    for (name, value) in environment {
        let value = value.as_str().unwrap();
        let ours = match name.as_str() {
            "SKILLS_MCP_TOKEN" => {
                assert!(value.starts_with("${SKILLS_MCP_TOKEN:?"), "{value}");
                stand.token.clone()
            }
            "SKILLS_ROOT" => {
                assert!(value.starts_with("${SKILLS_ROOT:?"), "{value}");
                stand.skills_root.clone()
            }
            "DOCKER_HOST" => {
                assert!(value.starts_with("unix:///"), "{value}");
                stand.docker_host.clone()
            }
            "TMPDIR" => stand.tmpdir.display().to_string(),
            "SKILLS_CACHE_DIR" => stand.cache.display().to_string(),
            other => panic!(
                "compose.yaml sets {other}={value}, which this test does not know: give it a \
                 value here, so what the file says is what runs"
            ),
        };
        command.env(name, ours);
    }
    command
}

/// The engine bind-mounts workspaces by their path: the workspace folder
/// (`TMPDIR`) must be mounted at the same path inside and outside, and the
/// socket named by `DOCKER_HOST` must be mounted.
fn check_same_path_mounts(service: &Value) {
    let volumes: Vec<&str> = service["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let env = &service["environment"];
    let tmpdir = env["TMPDIR"].as_str().unwrap();
    assert!(
        volumes.contains(&format!("{tmpdir}:{tmpdir}").as_str()),
        "TMPDIR {tmpdir} is not mounted at the same path: {volumes:?}"
    );
    let socket = env["DOCKER_HOST"]
        .as_str()
        .unwrap()
        .trim_start_matches("unix://");
    assert!(
        volumes.iter().any(|v| v.ends_with(&format!(":{socket}"))),
        "the socket {socket} is not mounted: {volumes:?}"
    );
}

/// A free port on 127.0.0.1 (free when asked; HAProxy binds it next).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// HAProxy in the foreground; killed on drop.
struct Haproxy {
    child: Child,
    url: String,
}

impl Haproxy {
    /// Runs `deploy/haproxy.cfg` with its listening address and each
    /// replica's address replaced (`replicas`: compose service name and
    /// `http://127.0.0.1:PORT/mcp`); `sticky: false` also drops the `stick`
    /// lines, for the control run.
    fn start(dir: &Path, replicas: &[(String, String)], sticky: bool) -> Self {
        let mut config = std::fs::read_to_string(deploy_dir().join("haproxy.cfg")).unwrap();
        let port = free_port();
        assert!(config.contains("bind :8700"));
        config = config.replace("bind :8700", &format!("bind 127.0.0.1:{port}"));
        for (name, url) in replicas {
            let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
            let from = format!("{name}:8700");
            assert!(config.contains(&from), "haproxy.cfg has no server {from}");
            config = config.replace(&from, addr);
        }
        if !sticky {
            config = config
                .lines()
                .filter(|line| !line.trim_start().starts_with("stick "))
                .map(|line| format!("{line}\n"))
                .collect();
        }
        let name = if sticky { "sticky" } else { "loose" };
        let path = dir.join(format!("{name}.cfg"));
        std::fs::write(&path, config).unwrap();
        let log = dir.join(format!("{name}.log"));
        let child = Command::new(haproxy())
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "haproxy never listened on {port}: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `tests/mcp_clients/deploy_client.py`: `sessions` client sessions
/// against `url`; `Ok(summary)` or `Err(output)` when the client failed.
fn deploy_client(url: &str, token: &str, mode: &str, sessions: u32) -> Result<Value, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/deploy_client.py");
    let output = Command::new(client_python())
        .arg(script)
        .args([url, token, mode, &sessions.to_string()])
        .output()
        .unwrap();
    if !output.status.success() {
        return Err(text(&output));
    }
    let stdout = String::from_utf8(output.stdout).unwrap();
    Ok(serde_json::from_str(stdout.lines().last().unwrap()).unwrap())
}

/// Every session of `summary` listed the fixture's skills, ran its commands
/// in a container (the runtime's host name, not the host's; not root; no
/// `/etc/os-release` of the host), and found its file again when `kept`
/// (one workspace per session) or not (2026-07-28: a fresh workspace per
/// call).
fn check_sessions(summary: &Value, protocol: &str, kept: bool) {
    let host = summary["host"].as_str().unwrap();
    let sessions = summary["sessions"].as_array().unwrap();
    assert!(!sessions.is_empty(), "{summary}");
    for session in sessions {
        assert_eq!(session["protocol"], protocol, "{session}");
        assert_eq!(session["skills"], serde_json::json!(["charts", "notes"]));
        let where_ = &session["where"];
        assert_ne!(where_["host"], host, "ran on the host: {session}");
        assert_eq!(where_["host"], skills_exec::CONTAINER_HOSTNAME, "{session}");
        assert_ne!(where_["uid"], "0", "ran as root: {session}");
        assert_eq!(
            where_["os-release"], "no",
            "not the runner image: {session}"
        );
        let marker = if kept { "charts-kept" } else { "none" };
        assert_eq!(session["marker"], marker, "{session}");
    }
}

/// A private folder (the runtime refuses a workspace root beneath a folder
/// others may write).
fn private_dir(parent: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = parent.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

#[test]
fn the_compose_replicas_run_skills_in_containers_behind_haproxy() {
    let (docker_host, image) = container_engine();
    let compose = yaml_documents(&deploy_dir().join("compose.yaml"))
        .pop()
        .unwrap();
    let services = compose["services"].as_object().unwrap();
    let replicas: Vec<(&String, &Value)> = services
        .iter()
        .filter(|(_, service)| {
            let command = service["command"].as_array();
            command.is_some_and(|c| c.first().is_some_and(|a| a == "mcp"))
        })
        .collect();
    assert!(
        replicas.len() >= 2,
        "compose.yaml should run two replicas or more: {services:?}"
    );

    // The skills: the fixture library as a .tar.gz URL root.
    let library = fixture();
    let scratch = tempfile::tempdir().unwrap();
    let archive = scratch.path().join("team-skills.tar.gz");
    let tar = Command::new("tar")
        .arg("-C")
        .arg(library.path())
        .arg("-czf")
        .arg(&archive)
        .arg(".")
        .output()
        .unwrap();
    assert!(tar.status.success(), "{}", text(&tar));
    let stand = Stand {
        token: "deploy-t0ken".to_owned(),
        skills_root: format!("file://{}", archive.display()),
        docker_host,
        image,
        tmpdir: private_dir(scratch.path(), "tmp"),
        cache: private_dir(scratch.path(), "cache"),
    };

    let mut servers = Vec::new();
    for (name, service) in &replicas {
        check_same_path_mounts(service);
        let server = HttpServer::spawn(replica_command(service, &stand));
        servers.push(((*name).clone(), server));
    }

    // Each replica, directly: skills from the URL root, commands in
    // containers, one workspace per session, the token required.
    for (name, server) in &servers {
        let summary = deploy_client(&server.url, &stand.token, "legacy", 1)
            .unwrap_or_else(|err| panic!("{name}: {err}\nserver: {}", server.stderr()));
        check_sessions(&summary, "2025-11-25", true);
        assert!(ping_status(&server.url, "").contains(" 401 "), "{name}");
        assert!(
            ping_status(&server.url, "Authorization: Bearer wrong\r\n").contains(" 401 "),
            "{name}"
        );
    }

    // Through HAProxy: several sessions, each many requests, every one on
    // the replica that created its session; 2026-07-28 calls stand alone.
    let addresses: Vec<(String, String)> = servers
        .iter()
        .map(|(name, server)| (name.clone(), server.url.clone()))
        .collect();
    let lb = Haproxy::start(scratch.path(), &addresses, true);
    let summary = deploy_client(&lb.url, &stand.token, "legacy", 4)
        .unwrap_or_else(|err| panic!("through haproxy: {err}"));
    check_sessions(&summary, "2025-11-25", true);
    let summary = deploy_client(&lb.url, &stand.token, "auto", 2)
        .unwrap_or_else(|err| panic!("through haproxy, 2026-07-28: {err}"));
    check_sessions(&summary, "2026-07-28", false);
    assert!(ping_status(&lb.url, "").contains(" 401 "));
    drop(lb);

    // The control: without the `stick` lines, round-robin sends a
    // session's requests to a replica that does not know it.
    let loose = Haproxy::start(scratch.path(), &addresses, false);
    let result = deploy_client(&loose.url, &stand.token, "legacy", 2);
    assert!(
        result.is_err(),
        "legacy sessions worked without stickiness: {result:?}"
    );
}
