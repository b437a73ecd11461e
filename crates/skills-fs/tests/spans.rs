//! The `tracing` spans of `FsProvider`'s I/O steps and their fields.
//!
//! A test binary of its own with one test: the subscriber is the process-wide
//! default, because `tracing` caches per call site whether anyone listens, and a
//! thread-scoped subscriber can miss spans that tests on other threads
//! registered first.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use skills_core::SkillProvider;
use skills_fs::{FsOptions, FsProvider};

const GUIDE: &str = "line one\nline two\n";

/// Sets every modification time under `path` an hour back, so no stat is racy.
fn backdate(path: &Path) {
    let past = SystemTime::now() - Duration::from_secs(3600);
    if fs::symlink_metadata(path).expect("stat").is_dir() {
        for entry in fs::read_dir(path).expect("read_dir") {
            backdate(&entry.expect("entry").path());
        }
    }
    fs::File::open(path)
        .expect("open")
        .set_times(fs::FileTimes::new().set_modified(past).set_accessed(past))
        .expect("set times");
}

/// A `tracing` writer into a shared buffer.
#[derive(Debug, Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn every_io_step_has_a_span_with_its_fields() {
    use tracing_subscriber::fmt::format::FmtSpan;

    let base = tempfile::tempdir().expect("temp dir");
    let root = base.path().join("root");
    fs::create_dir_all(root.join("good/references")).expect("mkdir");
    fs::write(
        root.join("good/SKILL.md"),
        "---\nname: good\ndescription: A good skill. Use it always.\n---\nGood body.\n",
    )
    .expect("write");
    fs::write(root.join("good/references/guide.md"), GUIDE).expect("write");
    backdate(&root);
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .with_span_events(FmtSpan::CLOSE)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    let provider = FsProvider::new([&root], FsOptions::default().with_cooldown(Duration::ZERO));
    pollster::block_on(async {
        provider.list().await.expect("list");
        provider.get("good").await.expect("get");
        provider.get("good").await.expect("get");
        provider
            .read_resource("good", "references/guide.md", None)
            .await
            .expect("read");
        provider.rescan().await;
    });
    let out = String::from_utf8(captured.0.lock().expect("buffer").clone()).expect("utf-8");
    let line = |needles: &[&str]| {
        assert!(
            out.lines().any(|l| needles.iter().all(|n| l.contains(n))),
            "no line with {needles:?} in:\n{out}"
        );
    };
    let root_path = format!("{root:?}");
    line(&[
        "skills_fs.scan",
        &root_path,
        "skills=1",
        "diagnostics=0",
        "elapsed_us=",
    ]);
    line(&[
        "skills_fs.staleness_check",
        "result=\"unchanged\"",
        "elapsed_us=",
    ]);
    line(&["skills_fs.refresh", "shared=false"]);
    line(&["skills_fs.list", "skills=1"]);
    line(&[
        "skills_fs.get",
        "skill=\"good\"",
        "cached=false",
        "elapsed_us=",
    ]);
    line(&["skills_fs.get", "skill=\"good\"", "cached=true"]);
    let bytes = format!("bytes={}", GUIDE.len());
    line(&[
        "skills_fs.read_resource",
        "skill=\"good\"",
        "path=\"references/guide.md\"",
        &bytes,
    ]);
    line(&["skills_fs.rescan", "waited_us="]);
}
