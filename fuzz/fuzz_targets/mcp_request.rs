//! Arbitrary bytes as JSON-RPC messages into the MCP server (`skills-mcp`),
//! in process over a duplex pipe, over an in-code provider.
//!
//! The first byte picks whether the session starts with a proper
//! `initialize` handshake (so the bytes reach every handler) or not (so they
//! hit the handshake itself, or the 2026-07-28 inline path). The rest is
//! written as it is, then the client hangs up. The server must answer or
//! drop each message and then end: no panic, no hang (libFuzzer's timeout
//! catches one).
//!
//! With the handshake, a `ping` with a known id follows the fuzzed bytes on
//! a line of its own, and its answer must come back: nothing the bytes hold
//! (a line nested too deep, bad UTF-8, a message of the wrong shape) may
//! stall the session.
#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use skills_core::{InCodeProvider, SkillProvider, define_skill};
use skills_mcp::{SkillsServer, serve_io};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const PROBE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-probe\",\"method\":\"ping\"}\n";

const INIT: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn server() -> &'static SkillsServer {
    static SERVER: OnceLock<SkillsServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let provider = InCodeProvider::new([
            define_skill("pdf-forms", "Fills PDF forms. Use when the user shares a PDF form.")
                .body("# PDF forms\n\nList the fields first.\n")
                .resource("references/fields.md", "Field names are case sensitive.\n")
                .resource("scripts/fill.py", "print('fill')\n")
                .build()
                .expect("valid skill"),
            define_skill("weather", "Answers weather questions.")
                .body("Look the city up.\n")
                .build()
                .expect("valid skill"),
        ])
        .expect("valid provider");
        let provider: Arc<dyn SkillProvider> = Arc::new(provider);
        runtime().block_on(async {
            SkillsServer::builder(provider)
                .page_size(1)
                .poll_interval(Duration::from_secs(3600))
                .build()
                .await
                .expect("the server builds")
        })
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let server = server();
    runtime().block_on(async {
        let (client, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        let session = tokio::spawn({
            let server = server.clone();
            async move { serve_io(&server, server_read, server_write).await }
        });
        let (mut client_read, mut client_write) = tokio::io::split(client);
        // Drain the answers while writing, so a full pipe never blocks the server.
        let drain = tokio::spawn(async move {
            let mut answers = Vec::new();
            let _ = client_read.read_to_end(&mut answers).await;
            answers
        });
        let handshake = mode & 1 == 1;
        if handshake {
            let _ = client_write.write_all(INIT).await;
        }
        let _ = client_write.write_all(rest).await;
        let _ = client_write.write_all(b"\n").await;
        if handshake {
            let _ = client_write.write_all(PROBE).await;
        }
        // The client hangs up (a split half only closes the pipe this way).
        let _ = client_write.shutdown().await;
        drop(client_write);
        // The handshake may fail on garbage (an error, not a panic).
        let _ = session.await.expect("the session task does not panic");
        let answers = drain.await.expect("the reader does not panic");
        if handshake && !probe_answered(&answers) {
            panic!(
                "the ping after the fuzzed bytes got no answer:\n{}",
                String::from_utf8_lossy(&answers)
            );
        }
    });
});

/// Whether an answer to the probe `ping` is among the answers: a line that
/// is a JSON object with the probe's id.
fn probe_answered(answers: &[u8]) -> bool {
    answers.split(|&b| b == b'\n').any(|line| {
        serde_json::from_slice::<serde_json::Value>(line)
            .is_ok_and(|answer| answer["id"] == "fuzz-probe")
    })
}
