//! A well-known index of 3 000 skills served from 127.0.0.1: resolving it with
//! digest verification against downloading the same artifacts without it, in
//! the same run.
//!
//! Run: `cargo bench -p skills-fs --features remote --bench index_verify -- --warm-up-time 1 --measurement-time 3`.
//! Target (issue 23): verifying stays within 2× of the plain download.
//!
//! Cases of the group `index_verify_3000`, each from an empty cache folder:
//! * `download_plain`: the 3 000 artifacts fetched with the download code of
//!   URL roots on the same number of threads, not hashed, not unpacked;
//! * `download_hashed`: the same, hashing each download while it is written
//!   (what verification adds to the transfer);
//! * `resolve_index_verified`: the full index root: the index fetched and
//!   checked, every artifact downloaded, hashed and compared with its digest,
//!   then unpacked into the blob store and assembled into one root folder;
//! * `resolve_index_warm`: the same index again with the blobs cached (one
//!   index fetch, no artifact download).
//!
//! The server is a pool of std threads on one `TcpListener` answering
//! `Connection: close` responses from memory. Two skills in three are a bare
//! `SKILL.md` (`skill-md`), one in three a `.tar.gz` (`archive`).

use std::collections::HashMap;
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use sha2::{Digest as _, Sha256};
use skills_fs::remote::{RemoteOptions, download_all, resolve_root_detailed};

const SKILLS: usize = 3_000;
const SERVER_THREADS: usize = 16;
const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn skill_md(i: usize) -> Vec<u8> {
    format!(
        "---\nname: skill-{i}\ndescription: Generated skill number {i} for the index bench.\n---\n# Skill {i}\n\n{}\n",
        "Some body text for the skill. ".repeat(20 + i % 40)
    )
    .into_bytes()
}

fn tgz(md: &[u8]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(md.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, "SKILL.md", md).expect("tar");
    let raw = tar.into_inner().expect("tar");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).expect("gzip");
    gz.finish().expect("gzip")
}

/// Paths and bodies: the index and every artifact.
fn library() -> (HashMap<String, Vec<u8>>, Vec<String>) {
    let mut files = HashMap::new();
    let mut entries = Vec::new();
    let mut paths = Vec::new();
    for i in 0..SKILLS {
        let md = skill_md(i);
        let (kind, path, body) = if i % 3 == 2 {
            ("archive", format!("/a/skill-{i}.tar.gz"), tgz(&md))
        } else {
            ("skill-md", format!("/s/skill-{i}/SKILL.md"), md)
        };
        entries.push(serde_json::json!({
            "name": format!("skill-{i}"),
            "description": format!("Generated skill number {i}."),
            "type": kind,
            "url": path,
            "digest": digest(&body),
        }));
        paths.push(path.clone());
        files.insert(path, body);
    }
    let index = serde_json::json!({ "$schema": SCHEMA, "skills": entries });
    files.insert(
        "/.well-known/agent-skills/index.json".to_owned(),
        serde_json::to_vec(&index).expect("json"),
    );
    (files, paths)
}

fn serve(files: HashMap<String, Vec<u8>>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let files = Arc::new(files);
    for _ in 0..SERVER_THREADS {
        let listener = listener.try_clone().expect("clone");
        let files = Arc::clone(&files);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer(stream, &files);
            }
        });
    }
    addr
}

fn answer(mut stream: TcpStream, files: &HashMap<String, Vec<u8>>) {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&request);
    let path = text.split(' ').nth(1).unwrap_or("/");
    match files.get(path) {
        Some(body) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body);
        }
        None => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    }
    let _ = stream.flush();
}

fn options(cache: &std::path::Path) -> RemoteOptions {
    RemoteOptions::default()
        .with_cache_dir(cache)
        .with_connect_timeout(Duration::from_secs(10))
}

fn bench(c: &mut Criterion) {
    let (files, paths) = library();
    let addr = serve(files);
    let urls: Vec<String> = paths.iter().map(|p| format!("http://{addr}{p}")).collect();
    let index = format!("http://{addr}/.well-known/agent-skills/index.json");

    let mut group = c.benchmark_group("index_verify_3000");
    group.sample_size(10);
    for (case, hash) in [("download_plain", false), ("download_hashed", true)] {
        group.bench_function(case, |b| {
            b.iter_batched(
                || tempfile::tempdir().expect("tempdir"),
                |dir| {
                    let got = download_all(&urls, dir.path(), &options(dir.path()), hash)
                        .expect("download");
                    black_box(got);
                    dir
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.bench_function("resolve_index_verified", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                let resolved = resolve_root_detailed(&index, &options(dir.path())).expect("index");
                assert_eq!(
                    resolved.artifacts.len(),
                    SKILLS,
                    "{:?}",
                    resolved.diagnostics
                );
                black_box(resolved);
                dir
            },
            BatchSize::PerIteration,
        );
    });
    let warm = tempfile::tempdir().expect("tempdir");
    resolve_root_detailed(&index, &options(warm.path())).expect("index");
    group.bench_function("resolve_index_warm", |b| {
        b.iter(|| {
            let resolved = resolve_root_detailed(&index, &options(warm.path())).expect("index");
            black_box(resolved)
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
