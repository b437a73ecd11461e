//! The server against rmcp's own client, in process over a duplex pipe, and
//! against rmcp's folder catalog (`SkillCatalog`) as the oracle: the same
//! folder served by both must give the same skills, digests and bytes.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, GetSkillRequestParams, Implementation,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceRequestParams,
    ResourceContents, SkillResources,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use skills_fs::{FsOptions, FsProvider};
use skills_mcp::{HttpOptions, HttpServer, SkillsServer, serve_io};
use skills_testkit::fixture::{self, Library, SkillDir};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;

mod limits;

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

fn write(path: &Path, bytes: &[u8]) {
    fixture::write_file(path, bytes).unwrap();
}

/// Two skills: `alpha` with a reference, a script, a binary image and a
/// file whose name needs percent-encoding; `beta` with only `SKILL.md`.
fn fixture() -> tempfile::TempDir {
    Library::new()
        .skill(
            SkillDir::new("alpha", "Does alpha things. Use for alpha tasks.")
                .frontmatter_line("license: MIT")
                .body("# Alpha\n\nRead references/guide.md.\n")
                .file("references/guide.md", "# Guide\nline 2\nline 3\n")
                .file("scripts/run.sh", "#!/bin/sh\necho alpha\n")
                .file("assets/logo.png", PNG)
                .file("assets/my notes.txt", "notes\n"),
        )
        .skill(SkillDir::new("beta", "Does beta things.").body("Beta body.\n"))
        .write_temp()
        .unwrap()
}

async fn server_for(root: &Path, page_size: usize) -> SkillsServer {
    let provider = FsProvider::new(
        vec![root.to_path_buf()],
        FsOptions::default().with_cooldown(Duration::ZERO),
    );
    SkillsServer::builder(Arc::new(provider))
        .page_size(page_size)
        .poll_interval(Duration::from_millis(50))
        .build()
        .await
        .unwrap()
}

/// A client that reports `resources/list_changed` on a channel.
#[derive(Clone)]
struct Watcher(mpsc::UnboundedSender<()>);

impl ClientHandler for Watcher {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

async fn connect<H: ClientHandler>(
    server: &SkillsServer,
    handler: H,
) -> RunningService<RoleClient, H> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = server.clone();
    tokio::spawn(async move { serve_io(&server, server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    handler.serve((client_read, client_write)).await.unwrap()
}

fn bytes_of(contents: &ResourceContents) -> Vec<u8> {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text.as_bytes().to_vec(),
        ResourceContents::BlobResourceContents { blob, .. } => {
            BASE64_STANDARD.decode(blob).unwrap()
        }
        other => panic!("unexpected contents {other:?}"),
    }
}

/// The server answers like rmcp's folder catalog over the same folder: the
/// same skills in the same order (URI, whole frontmatter, manifest),
/// `skills/get` of each, every listed file's bytes (checked against the
/// manifest), the children of each folder in `folders`, `resources/list`.
pub(crate) async fn assert_like_oracle<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    oracle: &SkillCatalog,
    folders: &[&str],
) -> Vec<rmcp::model::Skill> {
    let ours = client.list_all_skills().await.unwrap();
    let theirs = oracle.skills();
    let uris =
        |skills: &[rmcp::model::Skill]| skills.iter().map(|s| s.uri.clone()).collect::<Vec<_>>();
    assert_eq!(uris(&ours), uris(&theirs));
    for (a, b) in ours.iter().zip(&theirs) {
        // Every field, as the file has it.
        assert_eq!(a.frontmatter, b.frontmatter, "{}", a.uri);
        assert_eq!(a.resources, b.resources, "manifest of {}", a.uri);
        let got = client
            .get_skill(GetSkillRequestParams::new(a.uri.clone()))
            .await
            .unwrap();
        assert_eq!(&got.skill, a);
        let SkillResources::Files(files) = &a.resources else {
            panic!("a static manifest");
        };
        for file in files {
            let read = client
                .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
                .await
                .unwrap();
            let bytes = bytes_of(&read.contents[0]);
            file.verify(&bytes).unwrap();
            let oracle_read = oracle.read_resource(&file.uri).unwrap();
            assert_eq!(bytes, bytes_of(&oracle_read.contents[0]), "{}", file.uri);
        }
    }
    // Folders: the same children (URI, name, size, file or folder).
    for &uri in folders {
        let ours = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(uri))
            .await
            .unwrap();
        let theirs = oracle.read_resource_directory(uri).unwrap();
        let shape = |r: &Vec<rmcp::model::Resource>| {
            r.iter()
                .map(|r| (r.uri.clone(), r.name.clone(), r.size, r.is_directory()))
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&ours.resources), shape(&theirs.resources), "{uri}");
    }
    // resources/list: one SKILL.md per skill.
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(
        listed.iter().map(|r| (&r.uri, r.size)).collect::<Vec<_>>(),
        oracle
            .resources()
            .iter()
            .map(|r| (&r.uri, r.size))
            .collect::<Vec<_>>()
    );
    ours
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_answers_like_rmcps_folder_catalog() {
    let dir = fixture();
    let oracle = SkillCatalog::from_dir(dir.path()).unwrap();
    let server = server_for(dir.path(), 100).await;
    let client = connect(&server, ()).await;

    let info = client.peer_info().unwrap();
    assert!(info.capabilities.supports_directory_read());
    assert!(info.capabilities.resources.is_some());
    assert_eq!(
        info.instructions.as_deref(),
        Some(server.instructions().as_str())
    );

    assert_like_oracle(
        &client,
        &oracle,
        &["skill://alpha", "skill://alpha/assets", "skill://beta"],
    )
    .await;
    // Binary files are blobs, text files text.
    let logo = client
        .read_resource(ReadResourceRequestParams::new(
            "skill://alpha/assets/logo.png",
        ))
        .await
        .unwrap();
    assert!(matches!(
        &logo.contents[0],
        ResourceContents::BlobResourceContents { mime_type: Some(m), .. } if m == "image/png"
    ));
    let guide = client
        .read_resource(ReadResourceRequestParams::new(
            "skill://alpha/references/guide.md",
        ))
        .await
        .unwrap();
    assert!(matches!(
        &guide.contents[0],
        ResourceContents::TextResourceContents { .. }
    ));

    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_use_the_extensions_codes() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let client = connect(&server, ()).await;
    let code = |err: rmcp::ServiceError| match err {
        rmcp::ServiceError::McpError(e) => e.code.0,
        other => panic!("not an MCP error: {other}"),
    };
    // skills/get of an unknown skill or of something that is no skill URI,
    // and resources/directory/read of anything that is no folder: -32602.
    // resources/read of a missing file, a folder or an escape: resource not
    // found (-32002 on this protocol version).
    let cases = [
        ("get", "skill://nope/SKILL.md", -32602),
        ("get", "skill://alpha/../beta/SKILL.md", -32602),
        ("get", "skill://ALPHA/SKILL.md", -32602),
        ("dir", "skill://alpha/SKILL.md", -32602),
        ("dir", "skill://alpha/nothing", -32602),
        ("dir", "skill://nope", -32602),
        ("dir", "file:///etc", -32602),
        ("read", "skill://alpha/missing.md", -32002),
        ("read", "skill://alpha/references", -32002),
        ("read", "skill://alpha/%2e%2e/beta/SKILL.md", -32002),
        ("read", "skill://nope/SKILL.md", -32002),
    ];
    for (method, uri, expected) in cases {
        let err = match method {
            "get" => client
                .get_skill(GetSkillRequestParams::new(uri))
                .await
                .map(drop),
            "dir" => client
                .read_resource_directory(ReadResourceDirectoryRequestParams::new(uri))
                .await
                .map(drop),
            _ => client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .map(drop),
        }
        .unwrap_err();
        assert_eq!(code(err), expected, "{method} {uri}");
    }
    // Unknown tool: -32602.
    let err = client
        .call_tool(CallToolRequestParams::new("rm_rf"))
        .await
        .unwrap_err();
    assert_eq!(code(err), -32602);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_list_pages_by_name() {
    let dir = fixture();
    let server = server_for(dir.path(), 1).await;
    let client = connect(&server, ()).await;
    let first = client.list_skills(None).await.unwrap();
    assert_eq!(first.skills.len(), 1);
    assert_eq!(first.skills[0].frontmatter.name, "alpha");
    let cursor = first.next_cursor.clone().unwrap();
    let second = client
        .list_skills(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.skills[0].frontmatter.name, "beta");
    assert_eq!(second.next_cursor, None);
    assert_eq!(client.list_all_skills().await.unwrap().len(), 2);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fallback_tools_load_and_read() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let client = connect(&server, ()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["load_skill", "read_skill_file"]);
    // Read-only, idempotent, closed-world: clients such as Codex CLI call
    // them without asking (they refuse tools without annotations).
    for tool in &tools {
        let hints = tool.annotations.as_ref().expect("annotated");
        assert!(tool.title.is_some(), "{}", tool.name);
        assert_eq!(hints.title, tool.title);
        assert_eq!(hints.read_only_hint, Some(true), "{}", tool.name);
        assert_eq!(hints.destructive_hint, Some(false), "{}", tool.name);
        assert_eq!(hints.idempotent_hint, Some(true), "{}", tool.name);
        assert_eq!(hints.open_world_hint, Some(false), "{}", tool.name);
    }
    let args = |v: serde_json::Value| v.as_object().unwrap().clone();
    let loaded = client
        .call_tool(
            CallToolRequestParams::new("load_skill")
                .with_arguments(args(serde_json::json!({"name": "alpha"}))),
        )
        .await
        .unwrap();
    assert_ne!(loaded.is_error, Some(true));
    let text = format!("{:?}", loaded.content);
    assert!(text.contains("Read references/guide.md"), "{text}");
    let read = client
        .call_tool(
            CallToolRequestParams::new("read_skill_file").with_arguments(args(
                serde_json::json!({"skill": "alpha", "path": "references/guide.md"}),
            )),
        )
        .await
        .unwrap();
    assert!(format!("{:?}", read.content).contains("line 2"));
    // A bad argument is a tool error the model can read, not a protocol error.
    let bad = client
        .call_tool(
            CallToolRequestParams::new("read_skill_file").with_arguments(args(
                serde_json::json!({"skill": "alpha", "path": "../../etc/passwd"}),
            )),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_skill_is_announced_and_served() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = connect(&server, Watcher(tx)).await;
    let before = server.instructions();
    write(
        &dir.path().join("gamma/SKILL.md"),
        b"---\nname: gamma\ndescription: Does gamma things.\n---\nGamma.\n",
    );
    // The reload task polls every 50 ms; the notification is the signal.
    rx.recv().await.unwrap();
    assert_ne!(server.instructions(), before);
    assert!(server.instructions().contains("gamma"));
    let skills = client.list_all_skills().await.unwrap();
    assert!(skills.iter().any(|s| s.frontmatter.name == "gamma"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_instructions_are_the_sorted_catalog_and_byte_stable() {
    let dir = fixture();
    let a = server_for(dir.path(), 100).await.instructions();
    let b = server_for(dir.path(), 100).await.instructions();
    assert_eq!(a, b);
    let alpha = a.find("name=\"alpha\"").unwrap();
    let beta = a.find("name=\"beta\"").unwrap();
    assert!(alpha < beta);
}

/// Raw lines over the pipe: broken JSON, unknown methods, a request before
/// `initialize`'s answer was read, then a hang-up mid-call. The server
/// answers what it can and ends cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_errors_and_a_clean_end() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let task = tokio::spawn(async move { serve_io(&server, server_read, server_write).await });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    });
    let lines = [
        init.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        "{not json".to_owned(),
        "   ".to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":42}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":4,"method":"skills/list"}"#.to_owned(),
    ];
    for line in &lines {
        client_write.write_all(line.as_bytes()).await.unwrap();
        client_write.write_all(b"\n").await.unwrap();
    }
    let mut reader = BufReader::new(client_read).lines();
    let mut answered = std::collections::BTreeMap::new();
    let mut parse_errors = Vec::new();
    while answered.len() < 4 || parse_errors.is_empty() {
        let line = reader.next_line().await.unwrap().unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = value.get("id").and_then(serde_json::Value::as_i64) {
            answered.insert(id, value);
        } else if value["id"].is_null() && value.get("error").is_some() {
            parse_errors.push(value);
        }
    }
    // The line that is not JSON gets a parse error (id null); the blank line
    // gets nothing.
    assert_eq!(parse_errors.len(), 1, "{parse_errors:?}");
    assert_eq!(parse_errors[0]["error"]["code"], -32700);
    assert_eq!(answered[&2]["error"]["code"], -32601);
    // rmcp cannot type a `skills/get` whose uri is a number: it answers as
    // for an unknown method.
    assert!(answered[&3]["error"]["code"].is_i64());
    assert!(answered[&4]["result"]["skills"].is_array());
    // A call, then the client hangs up before reading the answer.
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"skill://alpha/assets/logo.png\"}}\n")
        .await
        .unwrap();
    drop(client_write);
    drop(reader);
    assert_eq!(task.await.unwrap(), Ok(()));
}

/// A line longer than the limit gets a parse error and ends the session
/// cleanly, without reading the rest of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_long_line_gets_a_parse_error_and_ends_the_session() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let task = tokio::spawn(async move { serve_io(&server, server_read, server_write).await });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let writer = tokio::spawn(async move {
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..(skills_mcp::MAX_LINE_BYTES >> 20) + 1 {
            if client_write.write_all(&chunk).await.is_err() {
                break;
            }
        }
        client_write
    });
    let mut lines = BufReader::new(client_read).lines();
    let answer: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer["id"].is_null());
    assert_eq!(task.await.unwrap(), Ok(()));
    drop(writer.await.unwrap());
}

/// Without `initialize` first, a request is taken as a 2026-07-28 inline
/// request: one that lacks the required `_meta` gets -32602, and the
/// session goes on until the client hangs up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_initialize_gets_an_error() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let task = tokio::spawn(async move { serve_io(&server, server_read, server_write).await });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"skills/list\"}\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(client_read).lines();
    let answer: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["error"]["code"], -32602);
    drop(client_write);
    drop(lines);
    assert!(task.await.unwrap().is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_a_public_address_without_a_token() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let err = HttpServer::bind(server, HttpOptions::new("0.0.0.0:0".parse().unwrap()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), skills_mcp::ErrorKind::Config);
    assert!(err.message().contains("SKILLS_MCP_TOKEN"), "{err}");
}

/// A raw HTTP/1.1 POST to the server, returning the status line.
async fn post_status(addr: std::net::SocketAddr, auth: Option<&str>, body: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(stream).lines();
    lines.next_line().await.unwrap().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_checks_the_bearer_token_and_the_body_size() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let http = HttpServer::bind(
        server,
        HttpOptions::new("127.0.0.1:0".parse().unwrap())
            .token(Some("s3cret".to_owned()))
            .max_request_bytes(64 * 1024),
    )
    .await
    .unwrap();
    let addr = http.local_addr();
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    })
    .to_string();
    assert!(post_status(addr, None, &init).await.contains(" 401 "));
    assert!(
        post_status(addr, Some("Bearer nope"), &init)
            .await
            .contains(" 401 ")
    );
    assert!(
        post_status(addr, Some("Bearer s3cret"), &init)
            .await
            .contains(" 200 ")
    );
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "a".repeat(100 * 1024)
    );
    assert!(
        post_status(addr, Some("Bearer s3cret"), &huge)
            .await
            .contains(" 413 ")
    );
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_connections_share_one_server() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(
            connect(
                &server,
                ClientConfig::new(ClientCapabilities::default(), Implementation::new("c", "1")),
            )
            .await,
        );
    }
    for client in &clients {
        assert_eq!(client.list_all_skills().await.unwrap().len(), 2);
    }
    for client in clients {
        client.cancel().await.unwrap();
    }
}

mod it {
    mod in_code;
    mod paths;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiers_decide_what_clients_and_models_see() {
    use skills_core::{Tier, VisibilityPolicy};
    let dir = Library::new()
        .skill(SkillDir::new("alpha", "Does alpha things.").body("Alpha body.\n"))
        .skill(SkillDir::new("beta", "Does beta things.").body("Beta body.\n"))
        .skill(SkillDir::new("gamma", "Does gamma things.").body("Gamma body.\n"))
        .write_temp()
        .unwrap();
    let provider = FsProvider::new(vec![dir.path().to_path_buf()], FsOptions::default());
    let server = SkillsServer::builder(Arc::new(provider))
        .visibility(
            VisibilityPolicy::new()
                .with_tier("alpha", Tier::NameOnly)
                .with_tier("beta", Tier::Off)
                .with_tier("gamma", Tier::Manual),
        )
        .build()
        .await
        .unwrap();
    let instructions = server.instructions();
    assert!(
        instructions.contains("<skill name=\"alpha\"/>"),
        "{instructions}"
    );
    assert!(
        !instructions.contains("beta") && !instructions.contains("gamma"),
        "{instructions}"
    );
    let client = connect(&server, ()).await;
    // Off is served nowhere; manual stays a resource for the client's user.
    let uris: Vec<String> = client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert!(
        uris.iter().any(|u| u.starts_with("skill://alpha")),
        "{uris:?}"
    );
    assert!(
        uris.iter().any(|u| u.starts_with("skill://gamma")),
        "{uris:?}"
    );
    assert!(!uris.iter().any(|u| u.contains("beta")), "{uris:?}");
    assert!(
        client
            .read_resource(ReadResourceRequestParams::new("skill://beta/SKILL.md"))
            .await
            .is_err()
    );
    let load = |name: &'static str| {
        let client = &client;
        async move {
            let args = serde_json::json!({ "name": name });
            client
                .call_tool(
                    CallToolRequestParams::new("load_skill")
                        .with_arguments(args.as_object().unwrap().clone()),
                )
                .await
                .unwrap()
        }
    };
    let beta = load("beta").await;
    assert_eq!(beta.is_error, Some(true));
    assert!(format!("{:?}", beta.content).contains("no skill is named `beta`"));
    let gamma = load("gamma").await;
    assert_eq!(gamma.is_error, Some(true));
    assert!(format!("{:?}", gamma.content).contains("can only be invoked by the user"));
    let alpha = load("alpha").await;
    assert_ne!(alpha.is_error, Some(true));
    assert!(format!("{:?}", alpha.content).contains("Alpha body."));
    client.cancel().await.unwrap();

    // A budget shortens the instructions in the give-way order.
    let provider = FsProvider::new(vec![dir.path().to_path_buf()], FsOptions::default());
    let full = SkillsServer::builder(Arc::new(provider.clone()))
        .build()
        .await
        .unwrap()
        .instructions();
    let budget = full.chars().count() - 5;
    let server = SkillsServer::builder(Arc::new(provider))
        .catalog_budget(skills_core::Budget::chars(budget))
        .build()
        .await
        .unwrap();
    let short = server.instructions();
    assert!(short.chars().count() <= budget, "{short}");
    assert!(short.contains("<skill name=\"gamma\"/>"), "{short}");
    assert!(
        short.contains("<skill name=\"alpha\">Does alpha things."),
        "{short}"
    );
}
