//! A small server that serves a folder of skills to agents over HTTP: the
//! filesystem provider (`skills-fs`, with its staleness cache, so edits show
//! up without a restart) behind the MCP server of `skills-mcp`, on
//! Streamable HTTP. Any MCP client (Claude Code, Cursor, VS Code, Codex, the
//! official SDKs) connects to `http://ADDR/mcp` and gets the Skills extension
//! (`skills/list`, `skills/get`, `skill://` resources) and the fallback
//! tools `load_skill` and `read_skill_file`.
//!
//! ```text
//! cargo run -p mcp-http-server -- [--check] [ADDR] [SKILLS_DIR]
//! ```
//!
//! `ADDR` defaults to `127.0.0.1:8700`. A non-loopback address needs a bearer
//! token in `SKILLS_MCP_TOKEN`, which clients then send as
//! `Authorization: Bearer …`. `--check` binds a free port, makes one MCP
//! `initialize` request to itself over HTTP, prints what the server said, and
//! exits (CI runs it that way).
//!
//! What it must not depend on: anything beyond the public APIs of
//! `skills-fs` and `skills-mcp` (it is what a user would write).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use skills_core::SkillProvider;
use skills_fs::{FsOptions, FsProvider};
use skills_mcp::{HttpOptions, HttpServer, SkillsServer, TOKEN_ENV};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> ExitCode {
    let mut check = false;
    let mut positional = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            "-h" | "--help" => {
                println!("usage: mcp-http-server [--check] [ADDR] [SKILLS_DIR]");
                return ExitCode::SUCCESS;
            }
            _ => positional.push(arg),
        }
    }
    let default_addr = if check {
        "127.0.0.1:0"
    } else {
        "127.0.0.1:8700"
    };
    let addr = positional.first().map_or(default_addr, String::as_str);
    let dir = positional.get(1).map_or("examples/skills", String::as_str);
    match run(addr, dir, check).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(addr: &str, dir: &str, check: bool) -> Result<(), Error> {
    let addr: SocketAddr = addr.parse()?;
    let provider: Arc<dyn SkillProvider> =
        Arc::new(FsProvider::open([dir], FsOptions::default()).await);
    let server = SkillsServer::builder(provider)
        .server_info("skills-example", env!("CARGO_PKG_VERSION"))
        .build()
        .await?;
    let token = std::env::var(TOKEN_ENV).ok();
    // Refuses a non-loopback address without a token.
    let http = HttpServer::bind(server, HttpOptions::new(addr).token(token.clone())).await?;
    let url = format!("http://{}/mcp", http.local_addr());
    if check {
        let reply = initialize(&url, token.as_deref()).await;
        http.shutdown().await;
        let reply = reply?;
        let info = &reply["result"]["serverInfo"];
        let instructions = reply["result"]["instructions"].as_str().unwrap_or_default();
        println!(
            "{url}: {} {}, {} bytes of instructions (the skill catalog)",
            info["name"].as_str().unwrap_or("?"),
            info["version"].as_str().unwrap_or("?"),
            instructions.len()
        );
        if !instructions.contains("<available_skills>") {
            return Err("the server's instructions carry no catalog".into());
        }
        return Ok(());
    }
    eprintln!("serving the skills of {dir} at {url}; Ctrl-C stops");
    eprintln!("add it to a client, e.g.: claude mcp add --transport http skills {url}");
    tokio::signal::ctrl_c().await?;
    http.shutdown().await;
    Ok(())
}

/// One MCP `initialize` request over Streamable HTTP; the answer comes as
/// JSON or as a server-sent event (after a priming event with no data).
async fn initialize(url: &str, token: Option<&str>) -> Result<serde_json::Value, Error> {
    let request = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp-http-server --check", "version": "0"}
        }
    });
    let mut post = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(request.to_string());
    if let Some(token) = token {
        post = post.bearer_auth(token);
    }
    let response = post.send().await?.error_for_status()?;
    let body = response.text().await?;
    let json = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| data.starts_with('{'))
        .unwrap_or(body.trim());
    Ok(serde_json::from_str(json)?)
}
