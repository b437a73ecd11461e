//! The on-disk cache: entry layout, freshness, atomic install and replacement.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use skills_core::{Error, ErrorKind};

use super::extract::{self, Limits};
use super::fetch::{self, Fetched, Validators};
use super::{RemoteOptions, default_cache_dir, io_error, redact};

/// Sentinel written last inside a complete entry.
const READY: &str = ".ready";
/// URL, validators and fetch time of an entry.
const META: &str = ".meta";
/// The extracted tree inside an entry (the path handed out).
const ROOT: &str = "root";
/// Prefix of in-progress entries and of replaced entries awaiting removal.
const TMP_PREFIX: &str = ".tmp-";
const OLD_PREFIX: &str = ".old-";
/// Leftover temporary folders older than this are removed (their process died).
const STALE_TMP_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// Hex SHA-256 of the URL.
pub(super) fn cache_key(url: &str) -> String {
    let digest = Sha256::digest(url.as_bytes());
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `<cache>/remote`, not created.
pub(super) fn remote_dir(options: &RemoteOptions) -> Result<PathBuf, Error> {
    let base = match &options.cache_dir {
        Some(dir) => dir.clone(),
        None => default_cache_dir().ok_or_else(|| {
            Error::new(
                ErrorKind::Other,
                "no cache folder for URL roots: set SKILLS_CACHE_DIR (no home folder found)",
            )
        })?,
    };
    Ok(base.join("remote"))
}

/// What `.meta` records.
#[derive(Debug, Default, Clone)]
struct Meta {
    url: String,
    validators: Validators,
    fetched: u64,
    format: String,
}

impl Meta {
    fn render(&self) -> String {
        let mut out = format!("url {}\nfetched {}\n", self.url, self.fetched);
        if !self.format.is_empty() {
            out.push_str(&format!("format {}\n", self.format));
        }
        if let Some(etag) = &self.validators.etag {
            out.push_str(&format!("etag {etag}\n"));
        }
        if let Some(lm) = &self.validators.last_modified {
            out.push_str(&format!("last-modified {lm}\n"));
        }
        if let Some(v) = &self.validators.file_stamp {
            out.push_str(&format!("file-stamp {v}\n"));
        }
        out
    }

    fn parse(text: &str) -> Self {
        let mut meta = Self::default();
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            let value = value.to_owned();
            match key {
                "url" => meta.url = value,
                "fetched" => meta.fetched = value.parse().unwrap_or(0),
                "format" => meta.format = value,
                "etag" => meta.validators.etag = Some(value),
                "last-modified" => meta.validators.last_modified = Some(value),
                "file-stamp" => meta.validators.file_stamp = Some(value),
                _ => {}
            }
        }
        meta
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Fetches `url` into the cache (or finds it there) and returns the tree's path.
pub(super) fn resolve_url(url: &str, options: &RemoteOptions) -> Result<PathBuf, Error> {
    // A `file://` folder is used in place.
    if url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("file://"))
    {
        let path = fetch::file_url_path(url)?;
        if path.is_dir() {
            return Ok(path);
        }
    }
    let remote = remote_dir(options)?;
    let key = cache_key(url);
    let entry = remote.join(&key);

    if entry.join(READY).is_file() {
        let meta = read_meta(&entry);
        let expired = options.max_age.is_some_and(|max| {
            let age = now_secs().saturating_sub(meta.fetched);
            Duration::from_secs(age) >= max
        });
        if !options.refresh && !expired {
            return Ok(entry.join(ROOT));
        }
        return match revalidate(url, &remote, &key, &entry, &meta, options) {
            Ok(path) => Ok(path),
            Err(err)
                if options.stale_on_error
                    && !matches!(err.kind(), ErrorKind::TooLarge | ErrorKind::InvalidPath)
                    && entry.join(READY).is_file() =>
            {
                Ok(entry.join(ROOT))
            }
            Err(err) => Err(err),
        };
    }

    fs::create_dir_all(&remote).map_err(|e| {
        io_error(
            format!("cannot create cache folder {}", remote.display()),
            e,
        )
    })?;
    sweep_stale(&remote);
    let tmp = build(url, &remote, &key, None, options)?;
    let Some(tmp) = tmp else {
        // Only a conditional request can answer "not modified".
        return Err(Error::new(
            ErrorKind::Other,
            format!("{}: unexpected 304 Not Modified", redact(url)),
        ));
    };
    install(tmp, &entry, &remote, &key, false)
}

fn read_meta(entry: &Path) -> Meta {
    fs::read_to_string(entry.join(META))
        .map(|t| Meta::parse(&t))
        .unwrap_or_default()
}

/// Conditional fetch for an existing entry.
fn revalidate(
    url: &str,
    remote: &Path,
    key: &str,
    entry: &Path,
    meta: &Meta,
    options: &RemoteOptions,
) -> Result<PathBuf, Error> {
    sweep_stale(remote);
    match build(url, remote, key, Some(&meta.validators), options)? {
        None => {
            // 304: keep the tree, restart the clock.
            let mut fresh = meta.clone();
            fresh.fetched = now_secs();
            if fresh.url.is_empty() {
                fresh.url = redact(url);
            }
            let tmp_meta = entry.join(format!("{META}.{}", unique_suffix()));
            fs::write(&tmp_meta, fresh.render())
                .and_then(|()| fs::rename(&tmp_meta, entry.join(META)))
                .map_err(|e| {
                    let _ = fs::remove_file(&tmp_meta);
                    io_error(format!("cannot update {}", entry.join(META).display()), e)
                })?;
            Ok(entry.join(ROOT))
        }
        Some(tmp) => install(tmp, entry, remote, key, true),
    }
}

/// A temporary folder removed on drop unless kept.
struct TempDir {
    path: PathBuf,
    keep: bool,
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}-{nanos}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Downloads and extracts into a fresh temporary folder in `remote`, complete with
/// `.meta` and `.ready`. `None` when the server answered "not modified".
fn build(
    url: &str,
    remote: &Path,
    key: &str,
    prior: Option<&Validators>,
    options: &RemoteOptions,
) -> Result<Option<TempDir>, Error> {
    let tmp = TempDir {
        path: remote.join(format!("{TMP_PREFIX}{key}-{}", unique_suffix())),
        keep: false,
    };
    fs::create_dir(&tmp.path).map_err(|e| {
        io_error(
            format!("cannot create temporary folder {}", tmp.path.display()),
            e,
        )
    })?;
    let download = tmp.path.join("download");
    let validators = match fetch::fetch(url, &download, prior, options)? {
        Fetched::NotModified => return Ok(None),
        Fetched::Body(v) => v,
    };

    let format = extract::sniff(&download, url)?;
    let content = tmp.path.join("content");
    let limits = Limits {
        max_entry_bytes: options.max_entry_bytes,
        max_total_bytes: options.max_total_bytes,
        max_entries: options.max_entries,
    };
    extract::extract(&download, format, &content, &limits, url)?;
    let _ = fs::remove_file(&download);

    // A skill at the top level gets a folder named after it, so its name matches
    // its folder as the specification asks.
    let root = tmp.path.join(ROOT);
    let top_skill_md = ["SKILL.md", "skill.md"]
        .into_iter()
        .map(|n| content.join(n))
        .find(|p| p.is_file());
    let placed = match top_skill_md {
        Some(skill_md) => {
            let name = extract::skill_folder_name(&skill_md, url);
            fs::create_dir(&root).and_then(|()| fs::rename(&content, root.join(name)))
        }
        None => fs::rename(&content, &root),
    };
    placed.map_err(|e| io_error(format!("cannot arrange {}", tmp.path.display()), e))?;

    let meta = Meta {
        url: redact(url),
        validators,
        fetched: now_secs(),
        format: format.as_str().to_owned(),
    };
    write_synced(&tmp.path.join(META), meta.render().as_bytes())?;
    write_synced(&tmp.path.join(READY), b"ok\n")?;
    Ok(Some(tmp))
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    fs::File::create(path)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .map_err(|e| io_error(format!("cannot write {}", path.display()), e))
}

/// Renames the complete temporary folder to `entry`. With `replace`, an existing
/// entry is moved aside first. A lost race leaves the winner's entry in place.
fn install(
    mut tmp: TempDir,
    entry: &Path,
    remote: &Path,
    key: &str,
    replace: bool,
) -> Result<PathBuf, Error> {
    let mut old = None;
    if replace || (entry.exists() && !entry.join(READY).is_file()) {
        // Move the old (or broken) entry aside; it may already be gone.
        let aside = remote.join(format!("{OLD_PREFIX}{key}-{}", unique_suffix()));
        if fs::rename(entry, &aside).is_ok() {
            old = Some(TempDir {
                path: aside,
                keep: false,
            });
        }
    }
    match fs::rename(&tmp.path, entry) {
        Ok(()) => {
            tmp.keep = true;
            drop(old);
            Ok(entry.join(ROOT))
        }
        Err(_) if entry.join(READY).is_file() => {
            // Another process won the race: use its entry, discard ours.
            drop(tmp);
            drop(old);
            Ok(entry.join(ROOT))
        }
        Err(err) => Err(io_error(
            format!(
                "cannot move {} into place at {}",
                tmp.path.display(),
                entry.display()
            ),
            err,
        )),
    }
}

/// Removes temporary and replaced folders left by processes that died.
fn sweep_stale(remote: &Path) {
    let Ok(entries) = fs::read_dir(remote) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(TMP_PREFIX) || name.starts_with(OLD_PREFIX)) {
            continue;
        }
        let old_enough = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STALE_TMP_AGE);
        if name.starts_with(OLD_PREFIX) || old_enough {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}
