//! The server's own cost, without a Python client: rmcp's client over an
//! in-process pipe against `SkillsServer` on the filesystem provider.
//!
//! * `round_trip`: `skills/get` of a cached skill, `resources/read` of a
//!   2 KiB file and the fallback tool `load_skill` (`tools/call`), one
//!   request at a time, against `ping` (the SDK and pipe cost) as the
//!   baseline.
//! * `concurrent_16`: 16 clients (16 sessions) each sending one
//!   `resources/read` at once, against 16 concurrent `ping`s.
//!
//! `cargo bench -p skills-mcp --bench mcp -- --warm-up-time 1 --measurement-time 4`
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, GetSkillRequestParams, ReadResourceRequestParams};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt as _};
use skills_fs::{FsOptions, FsProvider};
use skills_mcp::{SkillsServer, serve_io};

async fn connect(server: &SkillsServer) -> RunningService<RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = server.clone();
    tokio::spawn(async move { serve_io(&server, server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    ().serve((client_read, client_write)).await.unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("bench-skill");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: bench-skill\ndescription: Bench. Use when benchmarking.\n---\nBody.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("references/guide.md"),
        "line of text\n".repeat(160),
    )
    .unwrap();
    let provider = FsProvider::new(vec![dir.path().to_path_buf()], FsOptions::default());
    let (server, clients) = rt.block_on(async {
        let server = SkillsServer::builder(Arc::new(provider))
            .poll_interval(Duration::from_secs(3600))
            .build()
            .await
            .unwrap();
        let mut clients = Vec::new();
        for _ in 0..16 {
            clients.push(connect(&server).await);
        }
        (server, clients)
    });
    let _ = &server;
    let one = &clients[0];
    let get = || GetSkillRequestParams::new("skill://bench-skill/SKILL.md");
    let read = || ReadResourceRequestParams::new("skill://bench-skill/references/guide.md");
    rt.block_on(one.get_skill(get())).unwrap();

    let mut group = c.benchmark_group("round_trip");
    group.bench_function("ping (baseline)", |b| {
        b.to_async(&rt).iter(|| async {
            one.send_request(rmcp::model::ClientRequest::PingRequest(Default::default()))
                .await
                .unwrap()
        })
    });
    group.bench_function("skills_get_cached", |b| {
        b.to_async(&rt)
            .iter(|| async { one.get_skill(get()).await.unwrap() })
    });
    group.bench_function("resources_read_2k", |b| {
        b.to_async(&rt)
            .iter(|| async { one.read_resource(read()).await.unwrap() })
    });
    let load = || {
        let args = serde_json::json!({"name": "bench-skill"});
        CallToolRequestParams::new("load_skill").with_arguments(args.as_object().unwrap().clone())
    };
    group.bench_function("tools_call_load_skill", |b| {
        b.to_async(&rt).iter(|| async {
            let result = one.call_tool(load()).await.unwrap();
            assert_ne!(result.is_error, Some(true));
            result
        })
    });
    group.finish();

    let mut group = c.benchmark_group("concurrent_16");
    group.bench_function("ping (baseline)", |b| {
        b.to_async(&rt).iter(|| async {
            futures_util::future::join_all(clients.iter().map(|c| {
                c.send_request(rmcp::model::ClientRequest::PingRequest(Default::default()))
            }))
            .await
        })
    });
    group.bench_function("resources_read_2k", |b| {
        b.to_async(&rt).iter(|| async {
            futures_util::future::join_all(clients.iter().map(|c| c.read_resource(read()))).await
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
