//! Archive extraction (zip, tar, tar.gz, bare `SKILL.md`; the format is
//! sniffed from the bytes) through the public `file://` root API
//! `skills_fs::remote::resolve_root`, into a fresh cache folder each run.
//!
//! Checks: nothing panics; an extracted tree stays inside the cache folder
//! and holds only regular files and folders (no symlinks); the caps hold;
//! discovery over the result does not panic.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use skills_core::SkillProvider;
use skills_fs::remote::{RemoteOptions, resolve_root};
use skills_fs::{FsOptions, FsProvider};

const MAX_ENTRY_BYTES: u64 = 256 * 1024;
const MAX_TOTAL_BYTES: u64 = 1024 * 1024;
const MAX_ENTRIES: usize = 200;

struct Fixture {
    dir: tempfile::TempDir,
    url: String,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("file://{}", dir.path().join("download.bin").display());
        Fixture { dir, url }
    })
}

/// Walks `dir`: every entry is a file or folder; returns (entries, bytes).
fn walk(dir: &Path, entries: &mut usize, bytes: &mut u64) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        let kind = entry.file_type().expect("file type");
        assert!(
            kind.is_file() || kind.is_dir(),
            "extraction created {:?}: {}",
            kind,
            entry.path().display()
        );
        *entries += 1;
        if kind.is_dir() {
            walk(&entry.path(), entries, bytes);
        } else {
            let len = entry.metadata().expect("metadata").len();
            assert!(len <= MAX_ENTRY_BYTES, "entry over the cap: {len}");
            *bytes += len;
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let source = fixture.dir.path().join("download.bin");
    std::fs::write(&source, data).expect("write the download");
    let cache: PathBuf = fixture.dir.path().join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let options = RemoteOptions::default()
        .with_cache_dir(&cache)
        .with_max_entry_bytes(MAX_ENTRY_BYTES)
        .with_max_total_bytes(MAX_TOTAL_BYTES)
        .with_max_entries(MAX_ENTRIES);
    let Ok(root) = resolve_root(&fixture.url, &options) else {
        return;
    };
    let root = root.canonicalize().expect("the root exists");
    let cache = cache.canonicalize().expect("the cache exists");
    assert!(
        root.starts_with(&cache),
        "{} is outside the cache",
        root.display()
    );
    let (mut entries, mut bytes) = (0, 0);
    walk(&root, &mut entries, &mut bytes);
    // Folders implied by file paths are not counted as entries by the
    // extractor, so only the byte cap is exact.
    assert!(bytes <= MAX_TOTAL_BYTES, "total over the cap: {bytes}");
    let provider = FsProvider::new([root], FsOptions::default());
    if let Ok(catalog) = pollster::block_on(provider.list()) {
        let _ = catalog.render(&Default::default());
    }
});
