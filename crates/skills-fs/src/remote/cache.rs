//! The on-disk cache: entry layout, freshness, versioned installs with one atomic
//! switch, and the removal of replaced versions.
//!
//! An entry is `<cache>/remote/<key>/`, holding versions `v<…>/` (each with
//! `.meta`, `.ready` and `root/`) and a pointer `current` naming one of them. On
//! Unix the pointer is a symbolic link `current -> v<…>` and the path handed out is
//! `<key>/current/root`, which follows every switch; elsewhere it is a small file
//! and the path handed out is the version's own `root`. A switch writes a new
//! pointer beside the old one and renames it over `current`: rename(2) replaces
//! it atomically, so a reader resolves the old or the new version, never none.
//!
//! A replaced version gets a `.superseded` marker when it stops being current and
//! is removed by a later install once the marker is older than
//! [`RemoteOptions::keep_replaced_for`].

use std::fs;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use skills_core::{Error, ErrorKind};

use super::extract::{self, Limits};
use super::fetch::{self, Fetched, Hash, Validators};
use super::{
    Artifact, RemoteOptions, Resolved, Source, StaleCopy, default_cache_dir, io_error, redact,
};

/// Sentinel written last inside a complete version.
pub(super) const READY: &str = ".ready";
/// URL, validators, fetch time and layout of a version.
const META: &str = ".meta";
/// The extracted tree inside a version.
const ROOT: &str = "root";
/// The pointer to the current version.
const CURRENT: &str = "current";
/// Marker whose modification time says when a version stopped being current.
const SUPERSEDED: &str = ".superseded";
/// Prefix of version folders.
const VERSION_PREFIX: char = 'v';
/// Prefix of in-progress versions (inside an entry) and of legacy entries moved
/// aside (in `remote/`).
pub(super) const TMP_PREFIX: &str = ".tmp-";
const OLD_PREFIX: &str = ".old-";
/// Prefix of a pointer being written.
const POINTER_PREFIX: &str = ".current-";
/// Leftover temporary folders older than this are removed (their process died).
const STALE_TMP_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// Hex SHA-256 of the URL.
pub(super) fn cache_key(url: &str) -> String {
    hex(&Sha256::digest(url.as_bytes()))
}

/// Lowercase hex of `bytes`.
pub(super) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `<cache>/remote`, not created.
pub(super) fn remote_dir(options: &RemoteOptions) -> Result<PathBuf, Error> {
    Ok(cache_base(options)?.join("remote"))
}

/// The cache folder itself, not created.
pub(super) fn cache_base(options: &RemoteOptions) -> Result<PathBuf, Error> {
    Ok(match &options.cache_dir {
        Some(dir) => dir.clone(),
        None => default_cache_dir().ok_or_else(|| {
            Error::new(
                ErrorKind::Other,
                "no cache folder for URL roots: set SKILLS_CACHE_DIR (no home folder found)",
            )
        })?,
    })
}

/// What `.meta` records.
#[derive(Debug, Default, Clone)]
struct Meta {
    url: String,
    validators: Validators,
    fetched: u64,
    format: String,
    /// The folder a top-level `SKILL.md` was placed in (not in the archive).
    placed: Option<String>,
    /// `sha256:<hex>` of the downloaded bytes (absent in entries written
    /// before digests were recorded).
    sha256: Option<String>,
}

impl Meta {
    fn render(&self) -> String {
        let mut out = format!("url {}\nfetched {}\n", self.url, self.fetched);
        if !self.format.is_empty() {
            out.push_str(&format!("format {}\n", self.format));
        }
        if let Some(placed) = &self.placed {
            out.push_str(&format!("placed {placed}\n"));
        }
        if let Some(sha256) = &self.sha256 {
            out.push_str(&format!("sha256 {sha256}\n"));
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
                "placed" => meta.placed = Some(value),
                "sha256" => meta.sha256 = Some(value),
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

/// The version `current` names, if it names a complete one.
fn current_version(entry: &Path) -> Option<String> {
    let pointer = entry.join(CURRENT);
    #[cfg(unix)]
    let target = fs::read_link(&pointer).ok()?.to_str()?.to_owned();
    #[cfg(not(unix))]
    let target = fs::read_to_string(&pointer).ok()?.trim().to_owned();
    let plain = target.starts_with(VERSION_PREFIX) && !target.contains(['/', '\\']);
    (plain && entry.join(&target).join(READY).is_file()).then_some(target)
}

/// The path handed out for `version` of `entry`.
fn tree_path(entry: &Path, version: &str) -> PathBuf {
    if cfg!(unix) {
        // Through the link, so a holder of the path follows later switches.
        let _ = version;
        entry.join(CURRENT).join(ROOT)
    } else {
        entry.join(version).join(ROOT)
    }
}

/// Fetches `url` into the cache (or finds it there) and returns the tree's path,
/// with the digest of the downloaded bytes as its one [`Artifact`].
pub(super) fn resolve_url(url: &str, options: &RemoteOptions) -> Result<Resolved, Error> {
    let mut resolved = resolve_tree(url, options)?;
    if !matches!(resolved.source, Source::Local) {
        let entry = remote_dir(options)?.join(cache_key(url));
        let digest = current_version(&entry).and_then(|v| read_meta(&entry.join(v)).sha256);
        resolved.artifacts.push(Artifact {
            name: None,
            url: redact(url),
            digest,
            version: None,
        });
    }
    Ok(resolved)
}

/// [`resolve_url`] without the artifact.
fn resolve_tree(url: &str, options: &RemoteOptions) -> Result<Resolved, Error> {
    let shown = redact(url);
    let resolved = |path: PathBuf, source: Source| Resolved {
        path,
        url: Some(shown.clone()),
        source,
        diagnostics: Vec::new(),
        artifacts: Vec::new(),
    };
    // A `file://` folder is used in place.
    if url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("file://"))
    {
        let path = fetch::file_url_path(url)?;
        if path.is_dir() {
            return Ok(resolved(path, Source::Local));
        }
    }
    let remote = remote_dir(options)?;
    let key = cache_key(url);
    let entry = remote.join(&key);

    if let Some(version) = current_version(&entry) {
        let meta = read_meta(&entry.join(&version));
        let expired = options.max_age.is_some_and(|max| {
            let age = now_secs().saturating_sub(meta.fetched);
            Duration::from_secs(age) >= max
        });
        if !options.refresh && !expired {
            return Ok(resolved(tree_path(&entry, &version), Source::Cached));
        }
        return match revalidate(url, &entry, &version, &meta, options) {
            Ok(done) => Ok(resolved(done.0, done.1)),
            Err(err)
                if options.stale_on_error
                    && !matches!(err.kind(), ErrorKind::TooLarge | ErrorKind::InvalidPath) =>
            {
                tracing::warn!(url = %shown, error = %err, fetched = meta.fetched, "revalidation failed; using the cached copy");
                let fetched = UNIX_EPOCH + Duration::from_secs(meta.fetched);
                Ok(resolved(
                    tree_path(&entry, &version),
                    Source::Stale(StaleCopy {
                        fetched,
                        error: err,
                    }),
                ))
            }
            Err(err) => Err(err),
        };
    }

    // An entry of the layout before versions (`<key>/.ready`): move it aside.
    if entry.join(READY).exists() {
        let aside = remote.join(format!("{OLD_PREFIX}{key}-{}", unique_suffix()));
        if fs::rename(&entry, &aside).is_ok() {
            let _ = fs::remove_dir_all(&aside);
        }
    }
    fs::create_dir_all(&entry)
        .map_err(|e| io_error(format!("cannot create cache folder {}", entry.display()), e))?;
    sweep(&entry);
    let Some(tmp) = build(url, &entry, None, options)? else {
        // Only a conditional request can answer "not modified".
        return Err(Error::new(
            ErrorKind::Other,
            format!("{shown}: unexpected 304 Not Modified"),
        ));
    };
    let path = install(tmp, &entry, false, options)?;
    Ok(resolved(path, Source::Downloaded))
}

fn read_meta(version: &Path) -> Meta {
    fs::read_to_string(version.join(META))
        .map(|t| Meta::parse(&t))
        .unwrap_or_default()
}

/// Conditional fetch for an existing entry whose current version is `version`.
fn revalidate(
    url: &str,
    entry: &Path,
    version: &str,
    meta: &Meta,
    options: &RemoteOptions,
) -> Result<(PathBuf, Source), Error> {
    let span = tracing::info_span!("skills.remote.revalidate", url = %redact(url), result = tracing::field::Empty);
    let _guard = span.enter();
    sweep(entry);
    match build(url, entry, Some(&meta.validators), options)? {
        None => {
            span.record("result", "not-modified");
            // 304: keep the tree, restart the clock.
            let dir = entry.join(version);
            let mut fresh = meta.clone();
            fresh.fetched = now_secs();
            if fresh.url.is_empty() {
                fresh.url = redact(url);
            }
            let tmp_meta = dir.join(format!("{META}.{}", unique_suffix()));
            fs::write(&tmp_meta, fresh.render())
                .and_then(|()| fs::rename(&tmp_meta, dir.join(META)))
                .map_err(|e| {
                    let _ = fs::remove_file(&tmp_meta);
                    io_error(format!("cannot update {}", dir.join(META).display()), e)
                })?;
            Ok((tree_path(entry, version), Source::NotModified))
        }
        Some(tmp) => {
            span.record("result", "changed");
            let path = install(tmp, entry, true, options)?;
            Ok((path, Source::Downloaded))
        }
    }
}

/// A temporary folder removed on drop unless kept.
pub(super) struct TempDir {
    pub(super) path: PathBuf,
    pub(super) keep: bool,
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

pub(super) fn unique_suffix() -> String {
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

/// Downloads and extracts into a fresh temporary folder in `entry`, complete with
/// `.meta` and `.ready`. `None` when the server answered "not modified".
fn build(
    url: &str,
    entry: &Path,
    prior: Option<&Validators>,
    options: &RemoteOptions,
) -> Result<Option<TempDir>, Error> {
    let tmp = TempDir {
        path: entry.join(format!("{TMP_PREFIX}{}", unique_suffix())),
        keep: false,
    };
    fs::create_dir(&tmp.path).map_err(|e| {
        io_error(
            format!("cannot create temporary folder {}", tmp.path.display()),
            e,
        )
    })?;
    let download = tmp.path.join("download");
    let (validators, sha256) = match fetch::fetch(url, &download, prior, options, Hash::Sha256)? {
        Fetched::NotModified => return Ok(None),
        Fetched::Body(v, digest) => (v, digest),
    };

    let format = extract::sniff(&download, url)?;
    let content = tmp.path.join("content");
    extract::extract(&download, format, &content, &Limits::of(options), url)?;
    let _ = fs::remove_file(&download);

    // A skill at the top level gets a folder named after it, so its name matches
    // its folder as the specification asks.
    let root = tmp.path.join(ROOT);
    let top_skill_md = ["SKILL.md", "skill.md"]
        .into_iter()
        .map(|n| content.join(n))
        .find(|p| p.is_file());
    let mut placed_name = None;
    let placed = match top_skill_md {
        Some(skill_md) => {
            let name = extract::skill_folder_name(&skill_md, url);
            let done = fs::create_dir(&root).and_then(|()| fs::rename(&content, root.join(&name)));
            placed_name = Some(name);
            done
        }
        None => fs::rename(&content, &root),
    };
    placed.map_err(|e| io_error(format!("cannot arrange {}", tmp.path.display()), e))?;

    let meta = Meta {
        url: redact(url),
        validators,
        fetched: now_secs(),
        format: format.as_str().to_owned(),
        placed: placed_name,
        sha256: Some(sha256),
    };
    write_synced(&tmp.path.join(META), meta.render().as_bytes())?;
    write_synced(&tmp.path.join(READY), b"ok\n")?;
    Ok(Some(tmp))
}

pub(super) fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    fs::File::create(path)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .map_err(|e| io_error(format!("cannot write {}", path.display()), e))
}

/// Renames the complete temporary folder to a new version of `entry` and points
/// `current` at it in one rename. Without `replace` (a first download), a version
/// another process installed meanwhile wins and ours is discarded.
fn install(
    mut tmp: TempDir,
    entry: &Path,
    replace: bool,
    options: &RemoteOptions,
) -> Result<PathBuf, Error> {
    let span = tracing::info_span!(
        "skills.remote.install",
        entry = %entry.display(),
        version = tracing::field::Empty,
        replaced = tracing::field::Empty,
        elapsed_ms = tracing::field::Empty,
    );
    let _guard = span.enter();
    let started = Instant::now();
    if !replace && let Some(theirs) = current_version(entry) {
        tracing::debug!(version = %theirs, "another process installed this entry first");
        return Ok(tree_path(entry, &theirs));
    }
    let version = format!(
        "{VERSION_PREFIX}{:020}-{}",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
        unique_suffix()
    );
    span.record("version", version.as_str());
    let dir = entry.join(&version);
    fs::rename(&tmp.path, &dir).map_err(|e| {
        io_error(
            format!(
                "cannot move {} into place at {}",
                tmp.path.display(),
                dir.display()
            ),
            e,
        )
    })?;
    tmp.keep = true;
    // Removed again if the switch fails.
    let mut installed = TempDir {
        path: dir,
        keep: false,
    };
    let previous = current_version(entry);
    switch(entry, &version)?;
    installed.keep = true;
    if let Some(previous) = &previous {
        span.record("replaced", previous.as_str());
        mark_superseded(&entry.join(previous));
    }
    collect(entry, &version, options);
    span.record("elapsed_ms", started.elapsed().as_millis() as u64);
    Ok(tree_path(entry, &version))
}

/// Points `entry/current` at `version` with one rename over the old pointer.
fn switch(entry: &Path, version: &str) -> Result<(), Error> {
    let pending = entry.join(format!("{POINTER_PREFIX}{}", unique_suffix()));
    #[cfg(unix)]
    let written = std::os::unix::fs::symlink(version, &pending);
    #[cfg(not(unix))]
    let written = fs::write(&pending, version);
    written
        .and_then(|()| fs::rename(&pending, entry.join(CURRENT)))
        .map_err(|e| {
            let _ = fs::remove_file(&pending);
            io_error(
                format!(
                    "cannot switch {} to {version}",
                    entry.join(CURRENT).display()
                ),
                e,
            )
        })?;
    tracing::debug!(entry = %entry.display(), version, "switched current version");
    Ok(())
}

/// Starts (or restarts) the clock of a version that is no longer current. A
/// version marked while it waited to become current gets a fresh mark when it
/// is replaced.
fn mark_superseded(version_dir: &Path) {
    let _ = fs::write(version_dir.join(SUPERSEDED), b"");
}

/// Removes versions that stopped being current more than
/// [`RemoteOptions::keep_replaced_for`] ago. A non-current version without a
/// marker (a lost race, a process that died before marking) gets one now.
fn collect(entry: &Path, installed: &str, options: &RemoteOptions) {
    let Ok(list) = fs::read_dir(entry) else {
        return;
    };
    let current = current_version(entry);
    let now = SystemTime::now();
    for item in list.flatten() {
        let name = item.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(VERSION_PREFIX)
            || name == installed
            || current.as_deref() == Some(name)
        {
            continue;
        }
        let marker = item.path().join(SUPERSEDED);
        let age = fs::metadata(&marker)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| now.duration_since(t).unwrap_or(Duration::ZERO));
        match age {
            None => mark_superseded(&item.path()),
            Some(age) if age >= options.keep_replaced_for => {
                // Recheck: a concurrent switch may have made it current again.
                if current_version(entry).as_deref() != Some(name) {
                    tracing::debug!(version = name, "removing replaced version");
                    let _ = fs::remove_dir_all(item.path());
                }
            }
            Some(_) => {}
        }
    }
}

/// Removes temporary folders and pointers left in `entry` by processes that died.
fn sweep(entry: &Path) {
    let Ok(list) = fs::read_dir(entry) else {
        return;
    };
    let now = SystemTime::now();
    for item in list.flatten() {
        let name = item.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(TMP_PREFIX) || name.starts_with(POINTER_PREFIX)) {
            continue;
        }
        let old_enough = item
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STALE_TMP_AGE);
        if old_enough {
            if name.starts_with(TMP_PREFIX) {
                let _ = fs::remove_dir_all(item.path());
            } else {
                let _ = fs::remove_file(item.path());
            }
        }
    }
}

/// The URL (and path inside the archive) of a path inside a cached tree.
pub(super) fn location_of(path: &Path, options: &RemoteOptions) -> Option<String> {
    if let Some(shown) = super::index::location_of(path, options) {
        return Some(shown);
    }
    let remote = remote_dir(options).ok()?;
    let rest = path.strip_prefix(&remote).ok().or_else(|| {
        let real = fs::canonicalize(&remote).ok()?;
        path.strip_prefix(real).ok()
    })?;
    let mut parts = rest.components().map(|c| match c {
        Component::Normal(s) => s.to_str(),
        _ => None,
    });
    let key = parts.next()??;
    let version = parts.next()??;
    if parts.next()?? != ROOT {
        return None;
    }
    let inner: Vec<&str> = parts.collect::<Option<_>>()?;
    let meta = read_meta(&remote.join(key).join(version));
    if meta.url.is_empty() {
        return None;
    }
    let inner: &[&str] = match &meta.placed {
        // The placed folder is not in the archive.
        Some(placed) if inner.first() == Some(&placed.as_str()) => &inner[1..],
        _ => &inner,
    };
    if meta.format == "skill-md" || inner.is_empty() {
        return Some(meta.url);
    }
    Some(format!("{}!/{}", meta.url, inner.join("/")))
}
