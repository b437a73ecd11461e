//! URL roots (F-PRV-8) against a real HTTP server on 127.0.0.1, serving archives
//! built here. The server is hand-written HTTP/1.1 so it can misbehave: trickle
//! bytes, close mid-body, lie about Content-Length, hold responses back.
//!
//! Only with the `remote` feature (`tests.rs` declares the module under it).
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::{Cursor, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;
use skills_core::ErrorKind;
use skills_core::SkillProvider;
use skills_fs::remote::{
    RemoteOptions, Source, cache_entry_dir, parse_root_list, refresh_root, remote_location,
    resolve_root, resolve_root_detailed,
};
use skills_fs::{FsOptions, FsProvider, SkillFs};

// ---------------------------------------------------------------- the server

#[derive(Clone, Copy, Debug)]
enum Length {
    Exact,
    Claim(u64),
    Omit,
}

#[derive(Clone, Debug)]
struct Route {
    status: u16,
    body: Vec<u8>,
    etag: Option<String>,
    length: Length,
    /// Close the connection after this many body bytes.
    cut_after: Option<usize>,
    /// Send the body in chunks of this size with this pause before each.
    trickle: Option<(usize, Duration)>,
    location: Option<String>,
    /// Hold the response until this many requests for the path have arrived.
    wait_for_hits: usize,
}

impl Route {
    fn ok(body: Vec<u8>) -> Self {
        Self {
            status: 200,
            body,
            etag: None,
            length: Length::Exact,
            cut_after: None,
            trickle: None,
            location: None,
            wait_for_hits: 0,
        }
    }
    fn status(status: u16) -> Self {
        Self {
            status,
            ..Self::ok(Vec::new())
        }
    }
    fn redirect(to: &str) -> Self {
        Self {
            status: 302,
            location: Some(to.to_owned()),
            ..Self::ok(Vec::new())
        }
    }
    fn etag(mut self, etag: &str) -> Self {
        self.etag = Some(etag.to_owned());
        self
    }
    fn length(mut self, length: Length) -> Self {
        self.length = length;
        self
    }
    fn cut_after(mut self, n: usize) -> Self {
        self.cut_after = Some(n);
        self
    }
    fn trickle(mut self, chunk: usize, pause: Duration) -> Self {
        self.trickle = Some((chunk, pause));
        self
    }
    fn wait_for_hits(mut self, n: usize) -> Self {
        self.wait_for_hits = n;
        self
    }
}

#[derive(Default)]
struct State {
    routes: Mutex<HashMap<String, Route>>,
    hits: Mutex<HashMap<String, usize>>,
    not_modified: AtomicUsize,
    /// `If-None-Match` values received, in order.
    conditionals: Mutex<Vec<String>>,
}

struct Server {
    addr: SocketAddr,
    state: Arc<State>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&shared);
                thread::spawn(move || handle(stream, &state));
            }
        });
        Self { addr, state }
    }

    fn route(&self, path: &str, route: Route) -> String {
        self.state
            .routes
            .lock()
            .unwrap()
            .insert(path.to_owned(), route);
        self.url(path)
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn hits(&self, path: &str) -> usize {
        self.state
            .hits
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

fn handle(mut stream: TcpStream, state: &State) {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
        if request.len() > 64 * 1024 {
            return;
        }
    }
    let text = String::from_utf8_lossy(&request).into_owned();
    let mut lines = text.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let route = state.routes.lock().unwrap().get(&path).cloned();
    {
        let mut hits = state.hits.lock().unwrap();
        *hits.entry(path.clone()).or_insert(0) += 1;
    }
    let Some(route) = route else {
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    if route.wait_for_hits > 0 {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline
            && state.hits.lock().unwrap().get(&path).copied().unwrap_or(0) < route.wait_for_hits
        {
            thread::sleep(Duration::from_millis(10));
        }
    }
    if let Some(location) = &route.location {
        let head = format!(
            "HTTP/1.1 {} Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            route.status
        );
        let _ = stream.write_all(head.as_bytes());
        return;
    }
    if route.status != 200 {
        let head = format!(
            "HTTP/1.1 {} Nope\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            route.status
        );
        let _ = stream.write_all(head.as_bytes());
        return;
    }
    if let Some(inm) = headers.get("if-none-match") {
        state.conditionals.lock().unwrap().push(inm.clone());
        if route.etag.as_deref() == Some(inm.as_str()) {
            state.not_modified.fetch_add(1, Ordering::SeqCst);
            let head =
                format!("HTTP/1.1 304 Not Modified\r\nETag: {inm}\r\nConnection: close\r\n\r\n");
            let _ = stream.write_all(head.as_bytes());
            return;
        }
    }
    let mut head = String::from("HTTP/1.1 200 OK\r\nConnection: close\r\n");
    match route.length {
        Length::Exact => head.push_str(&format!("Content-Length: {}\r\n", route.body.len())),
        Length::Claim(n) => head.push_str(&format!("Content-Length: {n}\r\n")),
        Length::Omit => {}
    }
    if let Some(etag) = &route.etag {
        head.push_str(&format!("ETag: {etag}\r\n"));
    }
    head.push_str("\r\n");
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let body = &route.body[..route.cut_after.unwrap_or(usize::MAX).min(route.body.len())];
    match route.trickle {
        Some((chunk, pause)) => {
            for part in body.chunks(chunk.max(1)) {
                thread::sleep(pause);
                if stream
                    .write_all(part)
                    .and_then(|()| stream.flush())
                    .is_err()
                {
                    return;
                }
            }
        }
        None => {
            let _ = stream.write_all(body);
        }
    }
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Both);
}

// ---------------------------------------------------------------- archives

fn skill_md(name: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: Test skill {name} for URL roots.\n---\n# {name}\n\nBody of {name}.\n")
        .into_bytes()
}

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn tar_header(name: &[u8], size: u64, kind: tar::EntryType, link: Option<&[u8]>) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    if let Some(link) = link {
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link);
    }
    h.set_size(size);
    h.set_mode(0o644);
    h.set_entry_type(kind);
    h.set_cksum();
    h
}

/// A tar with raw names (no path checks by the builder), regular files.
fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let h = tar_header(
            name.as_bytes(),
            data.len() as u64,
            tar::EntryType::Regular,
            None,
        );
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

fn tar_with_link(name: &str, target: &str, kind: tar::EntryType) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let md = skill_md("linky");
    let h = tar_header(
        b"linky/SKILL.md",
        md.len() as u64,
        tar::EntryType::Regular,
        None,
    );
    b.append(&h, md.as_slice()).unwrap();
    let h = tar_header(name.as_bytes(), 0, kind, Some(target.as_bytes()));
    b.append(&h, std::io::empty()).unwrap();
    b.into_inner().unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn gzip_best(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn tgz_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    gzip(&tar_of(files))
}

// ---------------------------------------------------------------- helpers

fn options(cache: &Path) -> RemoteOptions {
    RemoteOptions::default()
        .with_cache_dir(cache)
        .with_connect_timeout(Duration::from_secs(5))
        .with_read_timeout(Duration::from_secs(10))
}

fn valid_names(root: &Path) -> Vec<String> {
    let found = SkillFs::new(FsOptions::default()).discover(&[root.to_path_buf()]);
    let mut names: Vec<String> = found
        .skills
        .iter()
        .filter(|s| s.is_valid())
        .filter_map(|s| s.name().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// Names in `<cache>/remote`.
fn cache_listing(cache: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache.join("remote")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn assert_no_entry(cache: &Path, url: &str) {
    let entry = cache_entry_dir(url, &options(cache)).unwrap();
    assert!(
        !entry.join("current").exists(),
        "{} has a current version",
        entry.display()
    );
    let inside: Vec<String> = std::fs::read_dir(&entry)
        .map(|list| {
            list.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let leftovers: Vec<String> = cache_listing(cache)
        .into_iter()
        .chain(inside)
        .filter(|n| n.starts_with(".tmp-") || n.starts_with(".old-") || n.starts_with('v'))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary folders left: {leftovers:?}"
    );
}

fn expect_err(result: Result<PathBuf, skills_core::Error>, kind: ErrorKind, needle: &str) {
    match result {
        Ok(path) => panic!("expected a {kind} error, got {}", path.display()),
        Err(err) => {
            assert_eq!(err.kind(), kind, "{err}");
            assert!(
                err.to_string().contains(needle),
                "`{err}` does not mention `{needle}`"
            );
        }
    }
}

// ---------------------------------------------------------------- formats

#[test]
fn zip_root_with_a_top_level_folder_of_skills() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let (a, b) = (skill_md("alpha"), skill_md("beta"));
    let url = server.route(
        "/bundle.zip",
        Route::ok(zip_of(&[
            ("bundle/alpha/SKILL.md", &a),
            ("bundle/alpha/scripts/run.sh", b"#!/bin/sh\necho hi\n"),
            ("bundle/beta/SKILL.md", &b),
        ])),
    );
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["alpha", "beta"]);
    assert!(root.join("bundle/alpha/scripts/run.sh").is_file());
    // Second call: from the cache, no request.
    let again = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(again, root);
    assert_eq!(server.hits("/bundle.zip"), 1);
}

#[test]
fn tar_root_with_skills_at_the_top() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let (a, b) = (skill_md("alpha"), skill_md("beta"));
    let url = server.route(
        "/skills.tar",
        Route::ok(tar_of(&[("alpha/SKILL.md", &a), ("beta/SKILL.md", &b)])),
    );
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["alpha", "beta"]);
}

#[test]
fn tgz_root_with_one_skill_folder_and_tgz_extension() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("solo");
    let tgz = tgz_of(&[("solo/SKILL.md", &md), ("solo/references/a.md", b"ref\n")]);
    for path in ["/solo.tar.gz", "/solo.tgz"] {
        let url = server.route(path, Route::ok(tgz.clone()));
        let root = resolve_root(&url, &options(cache.path())).unwrap();
        assert_eq!(valid_names(&root), ["solo"]);
        assert!(root.join("solo/references/a.md").is_file());
    }
}

#[test]
fn archive_with_skill_md_at_its_top_gets_a_folder_named_after_the_skill() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("top-level");
    let url = server.route(
        "/whatever.zip",
        Route::ok(zip_of(&[("SKILL.md", &md), ("notes.txt", b"n\n")])),
    );
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["top-level"]);
    assert!(root.join("top-level/notes.txt").is_file());
}

#[test]
fn bare_skill_md() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route("/x/lone-skill/SKILL.md", Route::ok(skill_md("lone-skill")));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["lone-skill"]);
    assert!(root.join("lone-skill/SKILL.md").is_file());
}

#[test]
fn lying_extensions_are_sniffed() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("sniffed");
    let cases = [
        ("/really-a-tgz.zip", tgz_of(&[("sniffed/SKILL.md", &md)])),
        ("/really-a-zip.tar.gz", zip_of(&[("sniffed/SKILL.md", &md)])),
        ("/really-a-tar.md", tar_of(&[("sniffed/SKILL.md", &md)])),
        ("/really-skill-md.zip", md.clone()),
    ];
    for (path, body) in cases {
        let url = server.route(path, Route::ok(body));
        let root = resolve_root(&url, &options(cache.path())).unwrap();
        assert_eq!(valid_names(&root), ["sniffed"], "{path}");
    }
    let url = server.route(
        "/page.zip",
        Route::ok(b"<!doctype html><p>login</p>".to_vec()),
    );
    expect_err(
        resolve_root(&url, &options(cache.path())),
        ErrorKind::Other,
        "looks like an HTML page",
    );
    let url = server.route("/junk.tgz", Route::ok(b"\x00\x01junk".to_vec()));
    expect_err(
        resolve_root(&url, &options(cache.path())),
        ErrorKind::Other,
        "not a zip, tar, tar.gz or SKILL.md",
    );
    assert_no_entry(cache.path(), &url);
}

#[test]
fn file_urls_for_archives_and_folders() {
    let cache = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let md = skill_md("local");
    let archive = src.path().join("local skills.zip");
    std::fs::write(&archive, zip_of(&[("local/SKILL.md", &md)])).unwrap();
    let url = format!(
        "file://{}",
        archive
            .to_str()
            .unwrap()
            .replace('\\', "/")
            .replace(' ', "%20")
    );
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["local"]);
    assert!(root.starts_with(cache.path()));

    // Unchanged file: a refresh keeps the entry (size and mtime match).
    std::fs::write(root.join("marker"), b"kept").unwrap();
    let again = refresh_root(&url, &options(cache.path())).unwrap();
    assert!(again.join("marker").is_file());

    // A folder is used in place.
    let dir_url = format!("file://{}", src.path().to_str().unwrap().replace('\\', "/"));
    let dir_root = resolve_root(&dir_url, &options(cache.path())).unwrap();
    assert_eq!(dir_root, src.path());
}

#[test]
fn plain_paths_pass_through() {
    let opts = RemoteOptions::default().with_cache_dir("/nonexistent/never/created");
    assert_eq!(
        resolve_root("examples/skills", &opts).unwrap(),
        PathBuf::from("examples/skills")
    );
    assert!(!Path::new("/nonexistent/never/created").exists());
}

#[test]
fn redirects_are_followed_and_http_errors_are_reported() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("moved");
    server.route("/new.zip", Route::ok(zip_of(&[("moved/SKILL.md", &md)])));
    let url = server.route("/old.zip", Route::redirect("/new.zip"));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["moved"]);

    let url = server.route("/gone.zip", Route::status(404));
    expect_err(
        resolve_root(&url, &options(cache.path())),
        ErrorKind::Other,
        "HTTP 404",
    );
    let url = server.url("/never-routed.zip");
    expect_err(
        resolve_root(&url, &options(cache.path())),
        ErrorKind::Other,
        "404",
    );
    assert_no_entry(cache.path(), &url);
}

#[test]
fn progress_hook_sees_every_byte() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("progress");
    let filler = vec![b'x'; 300_000];
    let body = tar_of(&[("progress/SKILL.md", &md), ("progress/big.txt", &filler)]);
    let len = body.len() as u64;
    let url = server.route("/p.tar", Route::ok(body));
    type Calls = Mutex<Vec<(u64, Option<u64>)>>;
    let calls: Arc<Calls> = Arc::default();
    let sink = Arc::clone(&calls);
    let opts = options(cache.path()).with_on_progress(Arc::new(move |done, total| {
        sink.lock().unwrap().push((done, total));
    }));
    resolve_root(&url, &opts).unwrap();
    let calls = calls.lock().unwrap();
    assert_eq!(calls.first(), Some(&(0, Some(len))));
    assert_eq!(calls.last(), Some(&(len, Some(len))));
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
}

// ---------------------------------------------------------------- bad networks

#[test]
fn slow_server_times_out_with_a_short_read_timeout_and_succeeds_otherwise() {
    let server = Server::start();
    let md = skill_md("slow");
    let body = zip_of(&[("slow/SKILL.md", &md)]);
    let chunk = body.len() / 4 + 1;
    let url = server.route(
        "/slow.zip",
        Route::ok(body).trickle(chunk, Duration::from_millis(400)),
    );

    let cache = tempfile::tempdir().unwrap();
    let short = options(cache.path()).with_read_timeout(Duration::from_millis(100));
    expect_err(resolve_root(&url, &short), ErrorKind::Io, "timed out");
    assert_no_entry(cache.path(), &url);

    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["slow"]);
}

#[test]
fn server_closing_mid_body_leaves_no_entry_and_a_retry_succeeds() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("retry");
    let filler = vec![b'y'; 100_000];
    let body = tgz_of(&[("retry/SKILL.md", &md), ("retry/f.txt", &filler)]);
    let half = body.len() / 2;
    let url = server.route("/cut.tgz", Route::ok(body.clone()).cut_after(half));
    let err = resolve_root(&url, &options(cache.path())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    assert_no_entry(cache.path(), &url);

    server.route("/cut.tgz", Route::ok(body));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["retry"]);
    assert!(
        cache_entry_dir(&url, &options(cache.path()))
            .unwrap()
            .join("current/.ready")
            .is_file()
    );
}

#[test]
fn wrong_content_length_is_an_error() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("length");
    let body = zip_of(&[("length/SKILL.md", &md)]);
    let len = body.len() as u64;

    // Claims more than it sends, then closes.
    let url = server.route(
        "/long.zip",
        Route::ok(body.clone()).length(Length::Claim(len + 500)),
    );
    expect_err(
        resolve_root(&url, &options(cache.path())),
        ErrorKind::Io,
        "long.zip",
    );
    assert_no_entry(cache.path(), &url);

    // Claims less than the archive: the archive is cut and does not open.
    let url = server.route(
        "/short.zip",
        Route::ok(body.clone()).length(Length::Claim(len - 40)),
    );
    let err = resolve_root(&url, &options(cache.path())).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Other | ErrorKind::Io),
        "{err}"
    );
    assert_no_entry(cache.path(), &url);

    // No Content-Length at all (close-delimited) is fine.
    let url = server.route("/nolen.zip", Route::ok(body).length(Length::Omit));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["length"]);
}

// ---------------------------------------------------------------- limits

#[test]
fn download_limit_by_header_and_by_counting() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("big");
    let noise: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let body = tar_of(&[("big/SKILL.md", &md), ("big/noise.bin", &noise)]);
    let opts = options(cache.path()).with_max_download_bytes(100_000);

    let url = server.route("/big.tar", Route::ok(body.clone()));
    expect_err(
        resolve_root(&url, &opts),
        ErrorKind::TooLarge,
        "limit of 100000 bytes",
    );
    assert_no_entry(cache.path(), &url);

    // Without Content-Length the count stops it.
    let url = server.route("/big-nolen.tar", Route::ok(body).length(Length::Omit));
    expect_err(
        resolve_root(&url, &opts),
        ErrorKind::TooLarge,
        "limit of 100000 bytes",
    );
    assert_no_entry(cache.path(), &url);
}

#[test]
fn per_entry_total_and_entry_count_limits() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("limits");
    let big = vec![b'z'; 5000];
    let mid = vec![b'm'; 3000];

    let url = server.route(
        "/entry.zip",
        Route::ok(zip_of(&[("limits/SKILL.md", &md), ("limits/big", &big)])),
    );
    let opts = options(cache.path()).with_max_entry_bytes(4000);
    expect_err(
        resolve_root(&url, &opts),
        ErrorKind::TooLarge,
        "larger than the limit of 4000",
    );
    assert_no_entry(cache.path(), &url);

    let files: Vec<(&str, &[u8])> = vec![
        ("limits/SKILL.md", &md),
        ("limits/a", &mid),
        ("limits/b", &mid),
        ("limits/c", &mid),
    ];
    let url = server.route("/total.tgz", Route::ok(tgz_of(&files)));
    let opts = options(cache.path()).with_max_total_bytes(8000);
    expect_err(
        resolve_root(&url, &opts),
        ErrorKind::TooLarge,
        "more than 8000 bytes",
    );
    assert_no_entry(cache.path(), &url);

    let names: Vec<String> = (0..20).map(|i| format!("limits/f{i}")).collect();
    let mut many: Vec<(&str, &[u8])> = vec![("limits/SKILL.md", &md)];
    many.extend(names.iter().map(|n| (n.as_str(), b"x".as_slice())));
    let opts = options(cache.path()).with_max_entries(10);
    for (path, body) in [("/many.zip", zip_of(&many)), ("/many.tar", tar_of(&many))] {
        let url = server.route(path, Route::ok(body));
        expect_err(
            resolve_root(&url, &opts),
            ErrorKind::TooLarge,
            "more than 10 entries",
        );
        assert_no_entry(cache.path(), &url);
    }
    // The same archives pass with the default limits.
    let root = resolve_root(&server.url("/many.tar"), &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["limits"]);
}

#[test]
fn gzip_bomb_stops_at_the_limit() {
    // A tar entry claiming 1 GiB of zeros, as a stream of gzip members: about
    // 1 MiB on the wire.
    let header = tar_header(b"bomb/SKILL.md", 1 << 30, tar::EntryType::Regular, None);
    let mut body = gzip(header.as_bytes());
    let zeros = gzip_best(&vec![0u8; 1 << 20]);
    for _ in 0..1024 {
        body.extend_from_slice(&zeros);
    }
    assert!(body.len() < 2 << 20, "bomb is {} bytes", body.len());

    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route("/bomb.tgz", Route::ok(body));
    let opts = options(cache.path())
        .with_max_entry_bytes(4 << 20)
        .with_max_total_bytes(8 << 20);
    let started = Instant::now();
    expect_err(
        resolve_root(&url, &opts),
        ErrorKind::TooLarge,
        "larger than the limit",
    );
    assert_no_entry(cache.path(), &url);
    // Inflating the whole GiB would take far longer than stopping at 4 MiB.
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn bomb_hidden_in_skipped_entry_data_stops_at_the_cap() {
    // A pax global header (skipped by the extractor) claiming 1 GiB: the tar
    // reader would inflate it all to skip it; the inflated-stream cap stops it.
    let header = tar_header(
        b"pax_global_header",
        1 << 30,
        tar::EntryType::XGlobalHeader,
        None,
    );
    let mut body = gzip(header.as_bytes());
    let zeros = gzip_best(&vec![0u8; 1 << 20]);
    for _ in 0..1024 {
        body.extend_from_slice(&zeros);
    }
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route("/skipbomb.tgz", Route::ok(body));
    let opts = options(cache.path())
        .with_max_total_bytes(4 << 20)
        .with_max_entries(10);
    expect_err(resolve_root(&url, &opts), ErrorKind::TooLarge, "more than");
    assert_no_entry(cache.path(), &url);
}

// ---------------------------------------------------------------- hostile entries

#[test]
fn hostile_entry_names_are_refused() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("victim");
    let bad_names = [
        ("../evil", "`..`"),
        ("victim/../../evil", "`..`"),
        ("/abs/evil", "absolute path"),
        ("C:/evil", "drive letter"),
        ("victim\\..\\evil", "backslash"),
    ];
    for (i, (bad, why)) in bad_names.iter().enumerate() {
        let files: Vec<(&str, &[u8])> = vec![("victim/SKILL.md", &md), (bad, b"pwned")];
        for (kind, body) in [("zip", zip_of(&files)), ("tgz", tgz_of(&files))] {
            let url = server.route(&format!("/bad{i}.{kind}"), Route::ok(body));
            expect_err(
                resolve_root(&url, &options(cache.path())),
                ErrorKind::InvalidPath,
                why,
            );
            assert_no_entry(cache.path(), &url);
        }
    }
    // Nothing escaped into or beside the cache.
    for dir in [cache.path().to_path_buf(), cache.path().join("remote")] {
        assert!(!dir.join("evil").exists());
    }
    assert!(!Path::new("/abs/evil").exists());
}

#[test]
fn tar_symlink_and_hardlink_entries_are_refused() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let cases = [
        ("sym", tar::EntryType::Symlink, "symbolic link"),
        ("hard", tar::EntryType::Link, "hard link"),
    ];
    for (name, kind, why) in cases {
        let body = tar_with_link("linky/passwd", "/etc/passwd", kind);
        let url = server.route(&format!("/{name}.tar"), Route::ok(body.clone()));
        expect_err(
            resolve_root(&url, &options(cache.path())),
            ErrorKind::InvalidPath,
            why,
        );
        assert_no_entry(cache.path(), &url);
        let url = server.route(&format!("/{name}.tgz"), Route::ok(gzip(&body)));
        expect_err(
            resolve_root(&url, &options(cache.path())),
            ErrorKind::InvalidPath,
            why,
        );
    }
}

#[test]
fn zip_symlink_entry_is_refused() {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    w.start_file("linky/SKILL.md", opts).unwrap();
    w.write_all(&skill_md("linky")).unwrap();
    w.add_symlink("linky/passwd", "/etc/passwd", opts).unwrap();
    let body = w.finish().unwrap().into_inner();

    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route("/sym.zip", Route::ok(body));
    expect_err(
        resolve_root(&url, &options(cache.path())),
        ErrorKind::InvalidPath,
        "symbolic link",
    );
    assert_no_entry(cache.path(), &url);
}

// ---------------------------------------------------------------- cache

#[test]
fn first_run_without_a_cache_folder() {
    let server = Server::start();
    let base = tempfile::tempdir().unwrap();
    let cache = base.path().join("does/not/exist/yet");
    let md = skill_md("fresh");
    let url = server.route("/fresh.zip", Route::ok(zip_of(&[("fresh/SKILL.md", &md)])));
    let root = resolve_root(&url, &options(&cache)).unwrap();
    assert_eq!(valid_names(&root), ["fresh"]);
    assert!(root.starts_with(&cache));
}

#[test]
fn etag_revalidation_keeps_the_entry_on_304_and_replaces_it_on_change() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let v1 = zip_of(&[("etag-one/SKILL.md", &skill_md("etag-one"))]);
    let url = server.route("/e.zip", Route::ok(v1).etag("\"v1\""));
    let opts = options(cache.path());
    let root = resolve_root(&url, &opts).unwrap();
    std::fs::write(root.join("marker"), b"kept").unwrap();

    let again = refresh_root(&url, &opts).unwrap();
    assert_eq!(again, root);
    assert!(root.join("marker").is_file(), "304 must keep the tree");
    assert_eq!(server.state.not_modified.load(Ordering::SeqCst), 1);
    assert_eq!(*server.state.conditionals.lock().unwrap(), ["\"v1\""]);

    let v2 = zip_of(&[("etag-two/SKILL.md", &skill_md("etag-two"))]);
    server.route("/e.zip", Route::ok(v2).etag("\"v2\""));
    let replaced = refresh_root(&url, &opts).unwrap();
    assert_eq!(replaced, root, "same path after replacement");
    assert_eq!(valid_names(&replaced), ["etag-two"]);
    assert!(!root.join("marker").exists());
    assert_eq!(server.hits("/e.zip"), 3);
    let listing = cache_listing(cache.path());
    assert_eq!(listing.len(), 1, "{listing:?}");
}

#[test]
fn max_age_expiry_refetches_and_fresh_entries_are_not_requested() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let v1 = tar_of(&[("aged-one/SKILL.md", &skill_md("aged-one"))]);
    let url = server.route("/aged.tar", Route::ok(v1));
    let fresh = options(cache.path()).with_max_age(Some(Duration::from_secs(3600)));
    resolve_root(&url, &fresh).unwrap();
    resolve_root(&url, &fresh).unwrap();
    assert_eq!(server.hits("/aged.tar"), 1);

    let v2 = tar_of(&[("aged-two/SKILL.md", &skill_md("aged-two"))]);
    server.route("/aged.tar", Route::ok(v2));
    let expired = options(cache.path()).with_max_age(Some(Duration::ZERO));
    let root = resolve_root(&url, &expired).unwrap();
    assert_eq!(server.hits("/aged.tar"), 2);
    assert_eq!(valid_names(&root), ["aged-two"]);
}

#[test]
fn failed_revalidation_uses_the_cached_tree_unless_told_not_to() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let body = zip_of(&[("offline/SKILL.md", &skill_md("offline"))]);
    let url = server.route("/off.zip", Route::ok(body));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    server.route("/off.zip", Route::status(503));
    assert_eq!(refresh_root(&url, &options(cache.path())).unwrap(), root);
    let strict = options(cache.path()).with_stale_on_error(false);
    expect_err(refresh_root(&url, &strict), ErrorKind::Other, "HTTP 503");
    assert_eq!(valid_names(&root), ["offline"]);
}

/// Child-process mode for [`two_processes_download_the_same_url_at_once`],
/// which runs it with `--ignored` and the two variables set.
#[test]
#[ignore = "child process of two_processes_download_the_same_url_at_once, which runs it"]
fn helper_resolve() {
    let (Ok(url), Ok(cache)) = (
        std::env::var("SKILLS_REMOTE_TEST_URL"),
        std::env::var("SKILLS_REMOTE_TEST_CACHE"),
    ) else {
        panic!(
            "run by two_processes_download_the_same_url_at_once, with SKILLS_REMOTE_TEST_URL and SKILLS_REMOTE_TEST_CACHE set"
        );
    };
    let root = resolve_root(&url, &options(Path::new(&cache))).unwrap();
    println!("\nROOT={}", root.display());
}

#[test]
fn two_processes_download_the_same_url_at_once() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("shared");
    let filler = vec![b'q'; 200_000];
    let body = tgz_of(&[("shared/SKILL.md", &md), ("shared/data.txt", &filler)]);
    // Both requests are held until both have arrived, so both really download.
    let url = server.route(
        "/shared.tgz",
        Route::ok(body)
            .wait_for_hits(2)
            .trickle(16 * 1024, Duration::from_millis(5)),
    );
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args([
                    "it::remote::helper_resolve",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("SKILLS_REMOTE_TEST_URL", &url)
                .env("SKILLS_REMOTE_TEST_CACHE", cache.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut roots = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let root = stdout
            .lines()
            .find_map(|l| l.split_once("ROOT=").map(|(_, root)| root))
            .expect("child printed its root")
            .to_owned();
        roots.push(root);
    }
    assert_eq!(server.hits("/shared.tgz"), 2);
    assert_eq!(roots[0], roots[1]);
    let listing = cache_listing(cache.path());
    assert_eq!(
        listing.len(),
        1,
        "exactly one entry, no temporary folders: {listing:?}"
    );
    assert!(!listing[0].starts_with('.'));
    let root = PathBuf::from(&roots[0]);
    assert!(root.parent().unwrap().join(".ready").is_file());
    assert_eq!(valid_names(&root), ["shared"]);
    assert_eq!(
        std::fs::read(root.join("shared/data.txt")).unwrap().len(),
        200_000
    );
}

// ---------------------------------------------------------------- SKILLS_ROOT

#[test]
fn root_lists_keep_urls_whole() {
    let list = "https://h.example:8443/a.tgz\nfile:///tmp/x.zip, ./local\n  http://[::1]:80/s.zip";
    assert_eq!(
        parse_root_list(list),
        [
            "https://h.example:8443/a.tgz",
            "file:///tmp/x.zip",
            "./local",
            "http://[::1]:80/s.zip"
        ]
    );
    #[cfg(unix)]
    assert_eq!(
        parse_root_list("/a:/b c:https://x/y.zip ,/d"),
        ["/a", "/b c", "https://x/y.zip", "/d"]
    );
}

// ---------------------------------------------------------------- deadline

#[test]
fn a_server_dribbling_bytes_hits_the_download_deadline() {
    // One byte every 100 ms never trips the read timeout, but the whole body
    // would take about a minute: the deadline cuts it.
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let body = zip_of(&[("drip/SKILL.md", &skill_md("drip"))]);
    assert!(body.len() > 100);
    let url = server.route(
        "/drip.zip",
        Route::ok(body).trickle(1, Duration::from_millis(100)),
    );
    let opts = options(cache.path())
        .with_read_timeout(Duration::from_secs(5))
        .with_total_timeout(Some(Duration::from_secs(1)));
    expect_err(
        resolve_root(&url, &opts),
        ErrorKind::Io,
        "download deadline of 1s",
    );
    assert_no_entry(cache.path(), &url);
}

#[test]
fn the_default_deadline_is_two_minutes() {
    assert_eq!(
        RemoteOptions::default().total_timeout,
        Some(Duration::from_secs(120))
    );
}

// ---------------------------------------------------------------- atomic switch

#[test]
fn readers_never_miss_the_skill_while_it_is_refreshed() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("steady");
    let body = zip_of(&[
        ("bundle/steady/SKILL.md", &md),
        ("bundle/steady/references/r.md", b"ref\n"),
    ]);
    // No ETag: every refresh downloads and installs a new version.
    let url = server.route("/steady.zip", Route::ok(body));
    let opts = options(cache.path());
    let first = resolve_root(&url, &opts).unwrap();

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let refresher = {
        let (url, opts, done) = (url.clone(), opts.clone(), Arc::clone(&done));
        thread::spawn(move || {
            let mut refreshes = 0;
            for _ in 0..40 {
                assert_eq!(refresh_root(&url, &opts).unwrap(), first);
                refreshes += 1;
            }
            done.store(true, Ordering::SeqCst);
            refreshes
        })
    };
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (url, opts, done) = (url.clone(), opts.clone(), Arc::clone(&done));
            thread::spawn(move || {
                let (mut reads, mut failures) = (0usize, Vec::new());
                while !done.load(Ordering::SeqCst) || reads < 20 {
                    let root = resolve_root(&url, &opts).unwrap();
                    let provider = FsProvider::new([root], FsOptions::default());
                    match pollster::block_on(provider.get("steady")) {
                        Ok(skill) => assert!(skill.body.contains("Body of steady")),
                        Err(err) => failures.push(err.to_string()),
                    }
                    match pollster::block_on(provider.read_resource(
                        "steady",
                        "references/r.md",
                        None,
                    )) {
                        Ok(content) => assert_eq!(content.text, "ref\n"),
                        Err(err) => failures.push(err.to_string()),
                    }
                    reads += 2;
                }
                (reads, failures)
            })
        })
        .collect();
    assert_eq!(refresher.join().unwrap(), 40);
    let mut total = 0;
    for reader in readers {
        let (reads, failures) = reader.join().unwrap();
        total += reads;
        assert!(
            failures.is_empty(),
            "{} failures: {failures:?}",
            failures.len()
        );
    }
    assert!(total >= 60);
    eprintln!("{total} reads, none failed, during 40 refreshes");
    assert_eq!(server.hits("/steady.zip"), 41);
    // Replaced versions are kept for the default five minutes.
    let entry = cache_entry_dir(&url, &opts).unwrap();
    assert_eq!(versions(&entry).len(), 41);
}

/// The version folders of a cache entry.
fn versions(entry: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(entry)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('v'))
        .collect();
    names.sort();
    names
}

#[test]
fn replaced_versions_are_removed_after_the_grace_period() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route(
        "/grace.tar",
        Route::ok(tar_of(&[("grace/SKILL.md", &skill_md("grace"))])),
    );
    let opts = options(cache.path()).with_keep_replaced_for(Duration::from_secs(3600));
    let root = resolve_root(&url, &opts).unwrap();
    refresh_root(&url, &opts).unwrap();
    let entry = cache_entry_dir(&url, &opts).unwrap();
    let kept = versions(&entry);
    assert_eq!(kept.len(), 2, "the replaced version is kept: {kept:?}");
    // A version pinned through the real path stays readable meanwhile.
    let pinned = std::fs::canonicalize(&root).unwrap();

    let eager = opts.clone().with_keep_replaced_for(Duration::ZERO);
    refresh_root(&url, &eager).unwrap();
    let left = versions(&entry);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(!pinned.exists());
    assert_eq!(valid_names(&root), ["grace"]);
    assert!(!left.contains(&kept[0]) && !left.contains(&kept[1]));
}

// ---------------------------------------------------------------- hostile zips

/// A stored (uncompressed) zip written by hand, so it may hold what writers
/// refuse: duplicate names, lying counts.
struct RawZip {
    data: Vec<u8>,
    central: Vec<u8>,
    count: u16,
}

impl RawZip {
    fn new() -> Self {
        Self {
            data: Vec::new(),
            central: Vec::new(),
            count: 0,
        }
    }

    fn file(mut self, name: &str, body: &[u8]) -> Self {
        let mut crc = flate2::Crc::new();
        crc.update(body);
        let crc = crc.sum();
        let offset = self.data.len() as u32;
        let (size, name_len) = (body.len() as u32, name.len() as u16);
        self.data.extend_from_slice(b"PK\x03\x04");
        self.data.extend_from_slice(&20u16.to_le_bytes()); // version needed
        self.data.extend_from_slice(&0u16.to_le_bytes()); // flags
        self.data.extend_from_slice(&0u16.to_le_bytes()); // stored
        self.data.extend_from_slice(&[0, 0, 0x21, 0]); // time, date
        self.data.extend_from_slice(&crc.to_le_bytes());
        self.data.extend_from_slice(&size.to_le_bytes());
        self.data.extend_from_slice(&size.to_le_bytes());
        self.data.extend_from_slice(&name_len.to_le_bytes());
        self.data.extend_from_slice(&0u16.to_le_bytes());
        self.data.extend_from_slice(name.as_bytes());
        self.data.extend_from_slice(body);

        self.central.extend_from_slice(b"PK\x01\x02");
        self.central.extend_from_slice(&0x031eu16.to_le_bytes()); // made by: Unix
        self.central.extend_from_slice(&20u16.to_le_bytes());
        self.central.extend_from_slice(&0u16.to_le_bytes());
        self.central.extend_from_slice(&0u16.to_le_bytes());
        self.central.extend_from_slice(&[0, 0, 0x21, 0]);
        self.central.extend_from_slice(&crc.to_le_bytes());
        self.central.extend_from_slice(&size.to_le_bytes());
        self.central.extend_from_slice(&size.to_le_bytes());
        self.central.extend_from_slice(&name_len.to_le_bytes());
        self.central.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attrs
        self.central
            .extend_from_slice(&(0o100_644u32 << 16).to_le_bytes());
        self.central.extend_from_slice(&offset.to_le_bytes());
        self.central.extend_from_slice(name.as_bytes());
        self.count += 1;
        self
    }

    /// The archive; `claim` overrides the entry count in the end record, and
    /// `zip64_claim` adds a ZIP64 end record with that count.
    fn finish(self, claim: Option<u16>, zip64_claim: Option<u64>) -> Vec<u8> {
        let mut out = self.data;
        let cd_start = out.len() as u64;
        out.extend_from_slice(&self.central);
        let cd_size = self.central.len() as u64;
        if let Some(n) = zip64_claim {
            let record_at = out.len() as u64;
            out.extend_from_slice(b"PK\x06\x06");
            out.extend_from_slice(&44u64.to_le_bytes());
            out.extend_from_slice(&45u16.to_le_bytes());
            out.extend_from_slice(&45u16.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&cd_size.to_le_bytes());
            out.extend_from_slice(&cd_start.to_le_bytes());
            out.extend_from_slice(b"PK\x06\x07");
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&record_at.to_le_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
        }
        let count = if zip64_claim.is_some() {
            0xFFFF
        } else {
            claim.unwrap_or(self.count)
        };
        out.extend_from_slice(b"PK\x05\x06");
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&(cd_size as u32).to_le_bytes());
        out.extend_from_slice(&(cd_start as u32).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }
}

#[test]
fn the_hand_written_zip_is_a_valid_zip() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let body = RawZip::new()
        .file("raw/SKILL.md", &skill_md("raw"))
        .file("raw/notes.txt", b"n\n")
        .finish(None, None);
    let url = server.route("/raw.zip", Route::ok(body));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["raw"]);
}

#[test]
fn duplicate_entries_are_refused_in_zip_and_tar_after_normalizing() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let (good, evil) = (skill_md("dup"), skill_md("dup-evil"));
    let pairs = [
        ("dup/SKILL.md", "dup/SKILL.md", "holds this path twice"),
        ("dup/SKILL.md", "dup/./SKILL.md", "once normalized"),
        ("dup/SKILL.md", "dup//SKILL.md", "once normalized"),
        ("dup/SKILL.md", "./dup/SKILL.md", "once normalized"),
        ("dup/SKILL.md", "DUP/skill.md", "once normalized"),
        ("dup/SKILL.md/x", "dup/SKILL.md", "both a file and a folder"),
        ("dup/SKILL.md", "dup/SKILL.md/x", "both a file and a folder"),
    ];
    for (i, (first, second, why)) in pairs.iter().enumerate() {
        let zip = RawZip::new()
            .file(first, &good)
            .file(second, &evil)
            .finish(None, None);
        let tar = tar_of(&[(first, &good), (second, &evil)]);
        for (kind, body) in [("zip", zip), ("tgz", gzip(&tar))] {
            let url = server.route(&format!("/dup{i}.{kind}"), Route::ok(body));
            expect_err(
                resolve_root(&url, &options(cache.path())),
                ErrorKind::InvalidPath,
                why,
            );
            assert_no_entry(cache.path(), &url);
        }
    }
}

#[test]
fn a_zip_claiming_a_huge_entry_count_is_refused_before_parsing() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("claim");
    // The counts are lies: the zip reader would call these archives malformed;
    // the count check comes first and says what is wrong.
    let cases = [
        (
            "/claim16.zip",
            RawZip::new()
                .file("claim/SKILL.md", &md)
                .finish(Some(0xFFFE), None),
        ),
        (
            "/claim64.zip",
            RawZip::new()
                .file("claim/SKILL.md", &md)
                .finish(None, Some(1 << 40)),
        ),
    ];
    for (path, body) in cases {
        let url = server.route(path, Route::ok(body));
        expect_err(
            resolve_root(&url, &options(cache.path())),
            ErrorKind::TooLarge,
            "more than 10000 entries",
        );
        assert_no_entry(cache.path(), &url);
    }
    // A truthful ZIP64 record with a small count passes.
    let body = RawZip::new()
        .file("claim/SKILL.md", &md)
        .finish(None, Some(1));
    let url = server.route("/zip64.zip", Route::ok(body));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert_eq!(valid_names(&root), ["claim"]);
}

// ---------------------------------------------------------------- hostile tars

#[test]
fn a_tar_with_100_000_tiny_entries_stops_at_the_entry_cap() {
    // 100 000 folder entries (the same folder, which is allowed) as 100 gzip
    // members of 1 000 entries each: 51 MB of tar in about 230 KB.
    let h = tar_header(b"many/", 0, tar::EntryType::Directory, None);
    let block: Vec<u8> = h.as_bytes().repeat(1000);
    let member = gzip_best(&block);
    let mut body =
        gzip_best(tar_header(b"many/SKILL.md", 0, tar::EntryType::Regular, None).as_bytes());
    for _ in 0..100 {
        body.extend_from_slice(&member);
    }
    body.extend_from_slice(&gzip(&[0; 1024]));
    assert!(body.len() < 512 * 1024, "{}", body.len());
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route("/many.tgz", Route::ok(body));
    expect_err(
        resolve_root(&url, &options(cache.path())),
        ErrorKind::TooLarge,
        "more than 10000 entries",
    );
    assert_no_entry(cache.path(), &url);
}

#[test]
fn long_and_deep_entry_names_are_refused() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let md = skill_md("deep");
    let long = format!("deep/{}", "n".repeat(2000));
    let deep = format!("deep/{}f", "d/".repeat(40));
    for (i, (name, why)) in [
        (long.as_str(), "longer than the limit of 1024 bytes"),
        (deep.as_str(), "more than 32 path components"),
    ]
    .into_iter()
    .enumerate()
    {
        // The tar builder writes long names as GNU long-name entries.
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(md.len() as u64);
        h.set_mode(0o644);
        b.append_data(&mut h, "deep/SKILL.md", md.as_slice())
            .unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_mode(0o644);
        b.append_data(&mut h, name, b"x".as_slice()).unwrap();
        let tgz = gzip(&b.into_inner().unwrap());
        let zip = RawZip::new()
            .file("deep/SKILL.md", &md)
            .file(name, b"x")
            .finish(None, None);
        for (kind, body) in [("tgz", tgz), ("zip", zip)] {
            let url = server.route(&format!("/deep{i}.{kind}"), Route::ok(body));
            expect_err(
                resolve_root(&url, &options(cache.path())),
                ErrorKind::TooLarge,
                why,
            );
            assert_no_entry(cache.path(), &url);
        }
    }
}

#[test]
fn a_small_tgz_with_a_hostile_top_level_skill_md_does_not_hurt_extraction() {
    // 8 MiB of nesting and aliases in the frontmatter compress to a few KB. The
    // folder is named without parsing the YAML (from the URL here).
    let mut md = b"---\nname: [".to_vec();
    md.extend(std::iter::repeat_n(b'[', 4 << 20));
    md.extend_from_slice(b"\na: &a [*a, *a]\n");
    md.extend(std::iter::repeat_n(b'*', 4 << 20));
    md.extend_from_slice(b"\n---\nbody\n");
    let body = gzip_best(&tar_of(&[("SKILL.md", &md)]));
    assert!(body.len() < 64 * 1024, "{}", body.len());
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route("/hostile-top.tgz", Route::ok(body));
    let root = resolve_root(&url, &options(cache.path())).unwrap();
    assert!(root.join("hostile-top/SKILL.md").is_file());
}

// ---------------------------------------------------------------- reporting

#[test]
fn a_failed_refresh_reports_the_stale_copy_and_its_date() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route(
        "/stale.zip",
        Route::ok(zip_of(&[("stale/SKILL.md", &skill_md("stale"))])),
    );
    let before = std::time::SystemTime::now() - Duration::from_secs(2);
    let first = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert!(matches!(first.source, Source::Downloaded), "{first:?}");
    let again = resolve_root_detailed(&url, &options(cache.path())).unwrap();
    assert!(matches!(again.source, Source::Cached), "{again:?}");

    server.route("/stale.zip", Route::status(503));
    let stale = resolve_root_detailed(&url, &options(cache.path()).with_refresh(true)).unwrap();
    assert_eq!(stale.path, first.path);
    assert_eq!(stale.url.as_deref(), Some(url.as_str()));
    let Source::Stale(copy) = &stale.source else {
        panic!("expected a stale copy: {stale:?}");
    };
    assert!(copy.fetched >= before && copy.fetched <= std::time::SystemTime::now());
    assert!(
        copy.error.to_string().contains("HTTP 503"),
        "{}",
        copy.error
    );
    assert!(copy.fetched_utc().ends_with(" UTC"));
}

#[test]
fn cache_paths_map_back_to_the_url_and_the_path_in_the_archive() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let opts = options(cache.path());
    let md = skill_md("mapped");
    let url = server.route(
        "/m.zip",
        Route::ok(zip_of(&[("bundle/mapped/SKILL.md", &md)])),
    );
    let root = resolve_root(&url, &opts).unwrap();
    assert_eq!(
        remote_location(&root.join("bundle/mapped/SKILL.md"), &opts).as_deref(),
        Some(format!("{url}!/bundle/mapped/SKILL.md").as_str())
    );
    // Through the real version folder too.
    let real = std::fs::canonicalize(root.join("bundle/mapped/SKILL.md")).unwrap();
    assert_eq!(
        remote_location(&real, &opts),
        Some(format!("{url}!/bundle/mapped/SKILL.md"))
    );
    assert_eq!(remote_location(&root, &opts), Some(url.clone()));

    // A top-level SKILL.md was placed in a folder that is not in the archive.
    let url = server.route("/top.tgz", Route::ok(tgz_of(&[("SKILL.md", &md)])));
    let root = resolve_root(&url, &opts).unwrap();
    assert_eq!(
        remote_location(&root.join("mapped/SKILL.md"), &opts),
        Some(format!("{url}!/SKILL.md"))
    );
    // A bare SKILL.md is its URL.
    let url = server.route("/x/mapped/SKILL.md", Route::ok(md.clone()));
    let root = resolve_root(&url, &opts).unwrap();
    assert_eq!(
        remote_location(&root.join("mapped/SKILL.md"), &opts),
        Some(url)
    );
    // Elsewhere: nothing.
    assert_eq!(remote_location(Path::new("/etc/passwd"), &opts), None);
}

// ---------------------------------------------------------------- tracing

/// Records span names with their fields, and events with their level, as text.
#[derive(Default)]
struct Recorder {
    lines: Mutex<Vec<String>>,
    spans: Mutex<Vec<String>>,
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut fields = Fields(span.metadata().name().to_owned());
        span.record(&mut fields);
        let mut spans = self.spans.lock().unwrap();
        spans.push(fields.0);
        tracing::span::Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut fields = Fields(String::new());
        values.record(&mut fields);
        let mut spans = self.spans.lock().unwrap();
        if let Some(line) = spans.get_mut(span.into_u64() as usize - 1) {
            line.push_str(&fields.0);
        }
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(event.metadata().level().to_string());
        event.record(&mut fields);
        self.lines.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Runs [`trace_check`] in a child process of its own: tracing caches per call
/// site whether anyone listens, and other tests running in parallel threads
/// without a subscriber would race with the scoped one used here.
#[test]
fn downloads_extraction_and_installs_are_traced_and_refusals_are_warned() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "it::remote::helper_trace",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SKILLS_REMOTE_TRACE_TEST", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("TRACE-CHECK-DONE"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Child-process mode for
/// [`downloads_extraction_and_installs_are_traced_and_refusals_are_warned`]: does
/// nothing unless the parent set the variable.
#[test]
fn helper_trace() {
    if std::env::var_os("SKILLS_REMOTE_TRACE_TEST").is_some() {
        trace_check();
        println!("\nTRACE-CHECK-DONE");
    }
}

fn trace_check() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let body = zip_of(&[("traced/SKILL.md", &skill_md("traced"))]);
    let len = body.len();
    let url = server.route("/traced.zip", Route::ok(body));
    let bad = server.route(
        "/refused.tgz",
        Route::ok(tgz_of(&[("../evil", b"x".as_slice())])),
    );
    let recorder = Arc::new(Recorder::default());
    tracing::subscriber::with_default(Arc::clone(&recorder), || {
        resolve_root(&url, &options(cache.path())).unwrap();
        resolve_root(&bad, &options(cache.path())).unwrap_err();
    });
    let spans = recorder.spans.lock().unwrap().join("\n");
    let lines = recorder.lines.lock().unwrap().join("\n");
    for needle in [
        format!("skills.remote.download url={url} conditional=false"),
        "http_status=200".to_owned(),
        "status=\"downloaded\"".to_owned(),
        format!("bytes={len}"),
        "skills.remote.extract".to_owned(),
        "entries=1".to_owned(),
        "skills.remote.install".to_owned(),
    ] {
        assert!(spans.contains(&needle), "no `{needle}` in spans:\n{spans}");
    }
    assert!(
        lines.contains("WARN message=refused archive error=")
            && lines.contains("`..` leaves the archive"),
        "no refusal event:\n{lines}"
    );
}

#[test]
fn an_entry_of_the_layout_before_versions_is_replaced() {
    let server = Server::start();
    let cache = tempfile::tempdir().unwrap();
    let url = server.route(
        "/legacy.zip",
        Route::ok(zip_of(&[("legacy/SKILL.md", &skill_md("legacy"))])),
    );
    let opts = options(cache.path());
    let entry = cache_entry_dir(&url, &opts).unwrap();
    std::fs::create_dir_all(entry.join("root/old")).unwrap();
    std::fs::write(entry.join("root/old/SKILL.md"), skill_md("old")).unwrap();
    std::fs::write(entry.join(".ready"), b"ok\n").unwrap();
    std::fs::write(entry.join(".meta"), format!("url {url}\nfetched 1\n")).unwrap();

    let root = resolve_root(&url, &opts).unwrap();
    assert_eq!(valid_names(&root), ["legacy"]);
    assert_eq!(server.hits("/legacy.zip"), 1);
    assert!(!entry.join(".ready").exists());
    assert!(!entry.join("root").exists());
    assert_eq!(cache_listing(cache.path()).len(), 1);
}

mod index;
