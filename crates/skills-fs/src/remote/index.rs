//! Well-known skills indexes: `https://HOST/.well-known/agent-skills/index.json`
//! (the agentskills.io discovery schema 0.2.0), every artifact verified against
//! its `sha256:` digest before it is unpacked.
//!
//! # Steps
//! 1. The index is fetched on every resolve (it is small, capped at
//!    [`MAX_INDEX_BYTES`]) with the download code of the other URL roots (same
//!    timeouts, deadline and redirects). Its `$schema` must be exactly
//!    [`SCHEMA_0_2_0`]; anything else refuses the whole root (`index-invalid`),
//!    so nothing of an index we do not understand is used.
//! 2. Each entry needs `name`, `description`, `type`, `url` and `digest`
//!    (`sha256:` and 64 lowercase hex). An unknown `type` or a malformed entry is
//!    skipped with a warning; other fields are ignored. `url` is resolved against
//!    the index URL (RFC 3986 §5: relative, path-absolute, or absolute on another
//!    host) and must be `http` or `https`.
//! 3. Artifacts are downloaded in parallel (up to [`DOWNLOAD_THREADS`]); the
//!    SHA-256 of the raw bytes is computed while they are written, and compared
//!    with `digest` before anything is unpacked. A mismatch refuses that skill
//!    with a `digest-mismatch` error naming the expected and actual digests and
//!    the URL; the other skills still load. A `skill-md` entry must be a
//!    `SKILL.md`; an `archive` entry a `.tar.gz` or `.zip` (a plain `.tar` is
//!    accepted too) whose `SKILL.md` is at its root, unpacked with the same
//!    hardening as archive roots.
//! 4. The verified skills are assembled into one folder, `<name>/` each, which is
//!    the root handed to [`FsProvider`](crate::FsProvider).
//!
//! # Cache
//! Under the cache folder (see [the module docs](super)):
//! * `blobs/sha256-<hex>.md` is one verified `SKILL.md` and
//!   `blobs/sha256-<hex>/tree/` the unpacked content of one verified archive,
//!   addressed by the digest. It is created (renamed into place) only
//!   after the downloaded bytes matched, so a later index listing the same
//!   digest reuses it without a download; a changed upstream publishes a new
//!   digest, which is a different folder, so it is always fetched.
//! * `index/roots/<key>/root/` is an assembled root, `key` being the SHA-256 of
//!   its sorted `(name, digest, version, url)` list (kept beside it in
//!   `.artifacts`); an unchanged index reuses it as it is.
//! * `index/last/<sha256 of the index URL>` names the last root built for that
//!   index, used when the index cannot be fetched and
//!   [`RemoteOptions::stale_on_error`] is on.
//!
//! **The content address is trusted; stored bytes are not re-hashed.** The raw
//! artifact is not kept after unpacking, so there is nothing to re-hash but the
//! unpacked tree, and a folder only gets its digest name after verification.
//! Whoever can write the cache folder can change what runs anyway (it is the
//! user's own folder, like the cargo or npm cache). A full re-verification is a
//! fresh download: [`RemoteOptions::refresh`] downloads and checks every
//! artifact again (and replaces the stored blob), and a resolve with an empty
//! cache folder (what `skills verify` does) trusts nothing cached. Blobs are not
//! fsynced one by one (that costs more than the download), so a power loss can
//! leave a half-written blob; `refresh` repairs it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest as _, Sha256};
use skills_core::{Code, Diagnostic, Error, ErrorKind};

use super::cache::{self, READY, TMP_PREFIX, TempDir, unique_suffix, write_synced};
use super::extract::{self, Format, Limits};
use super::fetch::{self, Fetched, Hash};
use super::{Artifact, RemoteOptions, Resolved, Source, StaleCopy, io_error, redact};

/// The `$schema` an index must declare, matched exactly.
pub const SCHEMA_0_2_0: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Where an index lives on a host.
pub const WELL_KNOWN_INDEX_PATH: &str = "/.well-known/agent-skills/index.json";
/// Largest index accepted: 8 MiB (or [`RemoteOptions::max_download_bytes`] when
/// smaller).
pub const MAX_INDEX_BYTES: u64 = 8 * 1024 * 1024;
/// Artifacts downloaded at once.
pub const DOWNLOAD_THREADS: usize = 8;

/// The index URL a root spec names: the spec itself when its path is a
/// well-known index (`/.well-known/agent-skills/index.json`, or a versioned
/// snapshot `/.well-known/agent-skills/vX.Y.Z/index.json`), the host's
/// well-known index for a bare `http(s)://host` or `http(s)://host/`, else
/// `None` (an archive or `SKILL.md` URL, a `file://` URL, a path).
///
/// ```
/// use skills_fs::remote::index_url;
/// assert_eq!(
///     index_url("https://example.com").as_deref(),
///     Some("https://example.com/.well-known/agent-skills/index.json")
/// );
/// assert_eq!(
///     index_url("http://127.0.0.1:8080/.well-known/agent-skills/index.json").as_deref(),
///     Some("http://127.0.0.1:8080/.well-known/agent-skills/index.json")
/// );
/// assert_eq!(index_url("https://example.com/skills.tar.gz"), None);
/// ```
pub fn index_url(spec: &str) -> Option<String> {
    let spec = spec.trim();
    let parsed = url::Url::parse(spec).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let path = parsed.path();
    if path.is_empty() || path == "/" {
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return None;
        }
        return parsed
            .join(WELL_KNOWN_INDEX_PATH)
            .ok()
            .map(|u| u.to_string());
    }
    let well_known = path.ends_with(WELL_KNOWN_INDEX_PATH)
        || path
            .rsplit_once("/.well-known/agent-skills/")
            .is_some_and(|(_, rest)| {
                rest.strip_suffix("/index.json")
                    .is_some_and(|v| v.starts_with('v') && !v.contains('/'))
            });
    well_known.then(|| spec.to_owned())
}

/// An entry's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    SkillMd,
    Archive,
}

/// An entry that passed the shape checks.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    kind: Kind,
    /// Resolved against the index URL.
    url: String,
    digest: String,
    version: Option<String>,
}

/// Resolves the well-known index at `index_url` into a local root of verified
/// skills.
pub(super) fn resolve(index_url: &str, options: &RemoteOptions) -> Result<Resolved, Error> {
    let shown = redact(index_url);
    let span = tracing::info_span!(
        "skills.remote.index",
        url = %shown,
        entries = tracing::field::Empty,
        refused = tracing::field::Empty,
        downloaded = tracing::field::Empty,
        elapsed_ms = tracing::field::Empty,
    );
    let _guard = span.enter();
    let started = Instant::now();
    let base = cache::cache_base(options)?;
    let index_dir = base.join("index");
    let last = index_dir.join("last").join(cache::cache_key(index_url));

    let text = match fetch_index(index_url, &index_dir, options) {
        Ok(text) => text,
        Err(err)
            if options.stale_on_error
                && !matches!(err.kind(), ErrorKind::TooLarge | ErrorKind::InvalidPath) =>
        {
            let Some(stale) = last_root(&last, &index_dir) else {
                return Err(err);
            };
            tracing::warn!(url = %shown, error = %err, "index unavailable; using the last verified copy");
            let fetched = fs::metadata(&last)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            return Ok(Resolved {
                path: stale.0,
                url: Some(shown),
                source: Source::Stale(StaleCopy {
                    fetched,
                    error: err,
                }),
                diagnostics: Vec::new(),
                artifacts: stale.1,
            });
        }
        Err(err) => return Err(err),
    };
    let mut diagnostics = Vec::new();
    let entries = parse_index(&text, index_url, &mut diagnostics)?;
    span.record("entries", entries.len() as u64);

    let blobs = base.join("blobs");
    fs::create_dir_all(&blobs)
        .map_err(|e| io_error(format!("cannot create cache folder {}", blobs.display()), e))?;
    let quiet = RemoteOptions {
        on_progress: None,
        ..options.clone()
    };
    let results = crate::parallel::map_on(&entries, DOWNLOAD_THREADS, |entry| {
        fetch_entry(entry, &blobs, &quiet)
    });
    let mut verified = Vec::new();
    let mut downloaded = 0u64;
    let mut refused = 0u64;
    for (entry, result) in entries.iter().zip(results) {
        match result {
            Ok((tree, fresh)) => {
                downloaded += u64::from(fresh);
                verified.push((entry, tree));
            }
            Err(diagnostic) => {
                refused += 1;
                tracing::warn!(skill = %entry.name, code = %diagnostic.code, "{}", diagnostic.message);
                diagnostics.push(diagnostic);
            }
        }
    }
    span.record("downloaded", downloaded);
    span.record("refused", refused);

    let listing: String = verified
        .iter()
        .map(|(e, _)| artifact_line(e))
        .collect::<String>();
    let key = cache::hex(&Sha256::digest(listing.as_bytes()));
    let roots = index_dir.join("roots");
    let dir = roots.join(&key);
    let built = if dir.join(READY).is_file() {
        false
    } else {
        assemble(&roots, &dir, &verified, &listing)?;
        true
    };
    remember(&last, &key)?;
    span.record("elapsed_ms", started.elapsed().as_millis() as u64);
    Ok(Resolved {
        path: dir.join("root"),
        url: Some(shown),
        source: if built || downloaded > 0 {
            Source::Downloaded
        } else {
            Source::NotModified
        },
        diagnostics,
        artifacts: verified
            .iter()
            .map(|(e, _)| Artifact {
                name: Some(e.name.clone()),
                url: redact(&e.url),
                digest: Some(e.digest.clone()),
                version: e.version.clone(),
            })
            .collect(),
    })
}

/// Fetches the index text (capped) through a temporary file.
fn fetch_index(
    index_url: &str,
    index_dir: &Path,
    options: &RemoteOptions,
) -> Result<String, Error> {
    let shown = redact(index_url);
    fs::create_dir_all(index_dir).map_err(|e| {
        io_error(
            format!("cannot create cache folder {}", index_dir.display()),
            e,
        )
    })?;
    let tmp = TempDir {
        path: index_dir.join(format!("{TMP_PREFIX}{}", unique_suffix())),
        keep: false,
    };
    fs::create_dir(&tmp.path)
        .map_err(|e| io_error(format!("cannot create {}", tmp.path.display()), e))?;
    let file = tmp.path.join("index.json");
    let capped = RemoteOptions {
        max_download_bytes: options.max_download_bytes.min(MAX_INDEX_BYTES),
        on_progress: None,
        ..options.clone()
    };
    fetch::fetch(index_url, &file, None, &capped, Hash::Off)?;
    let bytes = fs::read(&file).map_err(|e| io_error(format!("cannot read {shown}"), e))?;
    String::from_utf8(bytes).map_err(|_| invalid(&shown, "the index is not UTF-8"))
}

/// An `index-invalid` error for the whole index.
fn invalid(shown: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::Other,
        format!(
            "{shown}: {}: {why}; nothing from this index is used",
            Code::IndexInvalid
        ),
    )
}

/// Checks the index's shape and returns its usable entries, sorted by name;
/// skipped entries become warnings in `out`.
fn parse_index(
    text: &str,
    index_url: &str,
    out: &mut Vec<Diagnostic>,
) -> Result<Vec<Entry>, Error> {
    let shown = redact(index_url);
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(&shown, &format!("not JSON ({e})")))?;
    let Some(top) = value.as_object() else {
        return Err(invalid(&shown, "not a JSON object"));
    };
    match top.get("$schema").and_then(|s| s.as_str()) {
        Some(SCHEMA_0_2_0) => {}
        Some(other) => {
            return Err(invalid(
                &shown,
                &format!("`$schema` is `{other}`, expected `{SCHEMA_0_2_0}`"),
            ));
        }
        None => {
            return Err(invalid(
                &shown,
                &format!("no `$schema` (expected `{SCHEMA_0_2_0}`)"),
            ));
        }
    }
    let Some(list) = top.get("skills").and_then(|s| s.as_array()) else {
        return Err(invalid(&shown, "no `skills` array"));
    };
    let base = url::Url::parse(index_url).map_err(|e| invalid(&shown, &e.to_string()))?;
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, item) in list.iter().enumerate() {
        let warn = |why: String| {
            Diagnostic::warning(Code::IndexInvalid, format!("skills[{i}]: {why}; skipped"))
                .in_file(shown.clone())
        };
        let field = |key: &str| item.get(key).and_then(|v| v.as_str());
        let (Some(name), Some(_description), Some(kind), Some(url), Some(digest)) = (
            field("name"),
            field("description"),
            field("type"),
            field("url"),
            field("digest"),
        ) else {
            out.push(warn(
                "needs string fields `name`, `description`, `type`, `url` and `digest`".into(),
            ));
            continue;
        };
        let kind = match kind {
            "skill-md" => Kind::SkillMd,
            "archive" => Kind::Archive,
            other => {
                out.push(warn(format!(
                    "`{name}` has unknown type `{other}` (known: skill-md, archive)"
                )));
                continue;
            }
        };
        if !extract::is_plain_component(name) {
            out.push(warn(format!("`{name}` is not usable as a folder name")));
            continue;
        }
        if !is_sha256(digest) {
            out.push(warn(format!(
                "`{name}` has digest `{digest}`; expected `sha256:` and 64 lowercase hex digits"
            )));
            continue;
        }
        let resolved = match base.join(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u.to_string(),
            Ok(u) => {
                out.push(warn(format!(
                    "`{name}` has URL scheme `{}`; only http and https are fetched",
                    u.scheme()
                )));
                continue;
            }
            Err(e) => {
                out.push(warn(format!("`{name}` has a bad URL `{url}` ({e})")));
                continue;
            }
        };
        if !seen.insert(name.to_owned()) {
            out.push(warn(format!("`{name}` is listed twice; the first wins")));
            continue;
        }
        entries.push(Entry {
            name: name.to_owned(),
            kind,
            url: resolved,
            digest: digest.to_owned(),
            version: field("version").map(str::to_owned),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// `sha256:` and 64 lowercase hex digits.
fn is_sha256(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The verified, unpacked tree of `entry` (from the blob store, or downloaded,
/// verified and unpacked now: the `bool`), or the diagnostic refusing it.
fn fetch_entry(
    entry: &Entry,
    blobs: &Path,
    options: &RemoteOptions,
) -> Result<(PathBuf, bool), Diagnostic> {
    let shown = redact(&entry.url);
    let hex = entry.digest.trim_start_matches("sha256:");
    // A `SKILL.md` is stored as one file, an archive as an unpacked tree.
    let blob = match entry.kind {
        Kind::SkillMd => blobs.join(format!("sha256-{hex}.md")),
        Kind::Archive => blobs.join(format!("sha256-{hex}")),
    };
    let stored = match entry.kind {
        Kind::SkillMd => blob.is_file(),
        Kind::Archive => blob.join(READY).is_file(),
    };
    if !options.refresh && stored {
        return Ok((tree_of(entry.kind, &blob), false));
    }
    let refuse = |code: Code, why: String| {
        Diagnostic::error(code, format!("{}: {why}; the skill is refused", entry.name))
            .in_file(shown.clone())
    };
    let io = |err: Error| refuse(Code::IoError, err.to_string());
    let tmp = TempDir {
        path: blobs.join(format!("{TMP_PREFIX}{}", unique_suffix())),
        keep: false,
    };
    let download = match entry.kind {
        // The download is the blob: no folder to make.
        Kind::SkillMd => tmp.path.with_extension("md"),
        Kind::Archive => {
            fs::create_dir(&tmp.path)
                .map_err(|e| io(io_error(format!("cannot create {}", tmp.path.display()), e)))?;
            tmp.path.join("download")
        }
    };
    let _download_guard = TempFile(&download);
    let actual = match fetch::fetch(&entry.url, &download, None, options, Hash::Sha256) {
        Ok(Fetched::Body(_, digest)) => digest,
        Ok(Fetched::NotModified) => {
            return Err(io(Error::new(ErrorKind::Other, "unexpected 304")));
        }
        Err(err) => return Err(io(err)),
    };
    if actual != entry.digest {
        return Err(refuse(
            Code::DigestMismatch,
            format!(
                "digest mismatch: expected {}, got {actual} ({shown})",
                entry.digest
            ),
        ));
    }
    let format = extract::sniff(&download, &entry.url).map_err(io)?;
    let fits = match entry.kind {
        Kind::SkillMd => format == Format::SkillMd,
        Kind::Archive => matches!(format, Format::TarGz | Format::Zip | Format::Tar),
    };
    if !fits {
        return Err(refuse(
            Code::IndexInvalid,
            format!(
                "listed as {} but the download is {}",
                match entry.kind {
                    Kind::SkillMd => "skill-md",
                    Kind::Archive => "archive",
                },
                format.as_str()
            ),
        ));
    }
    if entry.kind == Kind::SkillMd {
        let size = fs::metadata(&download).map_or(0, |m| m.len());
        if size > options.max_entry_bytes {
            return Err(refuse(
                Code::IoError,
                format!(
                    "SKILL.md is {size} bytes, over the limit of {} (max_entry_bytes)",
                    options.max_entry_bytes
                ),
            ));
        }
        // Not synced (see below). A rename over an existing blob (with
        // `refresh`) replaces it atomically.
        fs::rename(&download, &blob).map_err(|e| {
            io(io_error(
                format!("cannot move {} into place", blob.display()),
                e,
            ))
        })?;
        return Ok((blob, true));
    }
    let tree = tmp.path.join("tree");
    extract::extract(&download, format, &tree, &Limits::of(options), &entry.url).map_err(io)?;
    let _ = fs::remove_file(&download);
    if !tree.join("SKILL.md").is_file() {
        return Err(refuse(
            Code::IndexInvalid,
            "the archive has no SKILL.md at its root (contents must not sit in a wrapper folder)"
                .into(),
        ));
    }
    // Not synced: one fsync per artifact would cost more than the download.
    // A power loss can leave a blob half written under its digest name;
    // `refresh` downloads, verifies and replaces it.
    fs::write(tmp.path.join(READY), b"ok\n")
        .map_err(|e| io(io_error(format!("cannot write {}", tmp.path.display()), e)))?;
    if options.refresh && blob.exists() {
        // Replace the stored copy with the one just verified.
        let aside = blobs.join(format!("{TMP_PREFIX}{}", unique_suffix()));
        if fs::rename(&blob, &aside).is_ok() {
            let _ = fs::remove_dir_all(&aside);
        }
    }
    match fs::rename(&tmp.path, &blob) {
        Ok(()) => {}
        // Another process (or an earlier run, with `refresh`) stored the same
        // digest: same bytes, keep theirs.
        Err(_) if blob.join(READY).is_file() => {}
        Err(e) => {
            return Err(io(io_error(
                format!("cannot move {} into place", tmp.path.display()),
                e,
            )));
        }
    }
    Ok((blob.join("tree"), true))
}

/// What an assembled root copies for a stored blob: the `SKILL.md` file, or
/// the archive's unpacked tree.
fn tree_of(kind: Kind, blob: &Path) -> PathBuf {
    match kind {
        Kind::SkillMd => blob.to_path_buf(),
        Kind::Archive => blob.join("tree"),
    }
}

/// Removes a file on drop if it is still there (a download not moved into
/// place).
struct TempFile<'a>(&'a Path);

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        let _ = fs::remove_file(self.0);
    }
}

/// One line of an assembled root's `.artifacts` listing.
fn artifact_line(e: &Entry) -> String {
    format!(
        "{}\t{}\t{}\t{}\n",
        e.name,
        e.digest,
        e.version.as_deref().unwrap_or(""),
        e.url
    )
}

/// Builds `dir` (`<key>/root/<name>/…`, `.artifacts`, `.ready`) from verified
/// trees, in a temporary folder renamed into place.
fn assemble(
    roots: &Path,
    dir: &Path,
    verified: &[(&Entry, PathBuf)],
    listing: &str,
) -> Result<(), Error> {
    fs::create_dir_all(roots)
        .map_err(|e| io_error(format!("cannot create cache folder {}", roots.display()), e))?;
    let tmp = TempDir {
        path: roots.join(format!("{TMP_PREFIX}{}", unique_suffix())),
        keep: false,
    };
    let root = tmp.path.join("root");
    fs::create_dir_all(&root)
        .map_err(|e| io_error(format!("cannot create {}", root.display()), e))?;
    for (entry, tree) in verified {
        let dest = root.join(&entry.name);
        if entry.kind == Kind::SkillMd {
            fs::create_dir(&dest)
                .map_err(|e| io_error(format!("cannot create {}", dest.display()), e))?;
            link_or_copy(tree, &dest.join("SKILL.md"))?;
        } else {
            copy_tree(tree, &dest)?;
        }
    }
    write_synced(&tmp.path.join(".artifacts"), listing.as_bytes())?;
    write_synced(&tmp.path.join(READY), b"ok\n")?;
    match fs::rename(&tmp.path, dir) {
        Ok(()) => Ok(()),
        Err(_) if dir.join(READY).is_file() => Ok(()),
        Err(e) => Err(io_error(
            format!("cannot move {} into place", dir.display()),
            e,
        )),
    }
}

/// Copies a verified tree (regular files and folders only), hard-linking files
/// where the file system allows.
fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
    fs::create_dir(to).map_err(|e| io_error(format!("cannot create {}", to.display()), e))?;
    let list =
        fs::read_dir(from).map_err(|e| io_error(format!("cannot list {}", from.display()), e))?;
    for item in list {
        let item = item.map_err(|e| io_error(format!("cannot list {}", from.display()), e))?;
        let kind = item
            .file_type()
            .map_err(|e| io_error(format!("cannot stat {}", item.path().display()), e))?;
        let target = to.join(item.file_name());
        if kind.is_dir() {
            copy_tree(&item.path(), &target)?;
        } else if kind.is_file() {
            link_or_copy(&item.path(), &target)?;
        }
    }
    Ok(())
}

/// Hard-links `from` at `to`, or copies it where links are not possible.
fn link_or_copy(from: &Path, to: &Path) -> Result<(), Error> {
    if fs::hard_link(from, to).is_err() {
        fs::copy(from, to).map_err(|e| io_error(format!("cannot copy to {}", to.display()), e))?;
    }
    Ok(())
}

/// Points `last` at the root `key`.
fn remember(last: &Path, key: &str) -> Result<(), Error> {
    let parent = last.parent().unwrap_or(last);
    fs::create_dir_all(parent)
        .map_err(|e| io_error(format!("cannot create {}", parent.display()), e))?;
    let tmp = parent.join(format!("{TMP_PREFIX}{}", unique_suffix()));
    fs::write(&tmp, key)
        .and_then(|()| fs::rename(&tmp, last))
        .map_err(|e| {
            let _ = fs::remove_file(&tmp);
            io_error(format!("cannot write {}", last.display()), e)
        })
}

/// The artifact URL (and, for an archive, `!/` and the path inside it) of a
/// path inside an assembled index root: `<cache>/index/roots/<key>/root/<name>/…`.
pub(super) fn location_of(path: &Path, options: &RemoteOptions) -> Option<String> {
    let roots = cache::cache_base(options).ok()?.join("index").join("roots");
    let rest = path.strip_prefix(&roots).ok().or_else(|| {
        let real = fs::canonicalize(&roots).ok()?;
        path.strip_prefix(real).ok()
    })?;
    let mut parts = rest.components().map(|c| match c {
        std::path::Component::Normal(s) => s.to_str(),
        _ => None,
    });
    let key = parts.next()??;
    if parts.next()?? != "root" {
        return None;
    }
    let name = parts.next()??;
    let inner: Vec<&str> = parts.collect::<Option<_>>()?;
    let listing = fs::read_to_string(roots.join(key).join(".artifacts")).ok()?;
    let url = listing.lines().find_map(|line| {
        let mut fields = line.splitn(4, '\t');
        (fields.next()? == name).then(|| fields.nth(2).map(redact))?
    })?;
    let skill_md = inner.len() == 1 && inner[0] == "SKILL.md";
    if inner.is_empty() || (skill_md && is_markdown_url(&url)) {
        return Some(url);
    }
    Some(format!("{url}!/{}", inner.join("/")))
}

/// `true` when a URL's path ends in `.md`: a `skill-md` entry, whose `SKILL.md`
/// is the download itself and maps to the URL alone.
fn is_markdown_url(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or("");
    path.to_ascii_lowercase().ends_with(".md")
}

/// The last root built for an index and its artifacts, if still complete.
fn last_root(last: &Path, index_dir: &Path) -> Option<(PathBuf, Vec<Artifact>)> {
    let key = fs::read_to_string(last).ok()?;
    let key = key.trim();
    if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let dir = index_dir.join("roots").join(key);
    if !dir.join(READY).is_file() {
        return None;
    }
    let listing = fs::read_to_string(dir.join(".artifacts")).ok()?;
    let artifacts = listing
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(4, '\t');
            let (name, digest, version, url) =
                (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            Some(Artifact {
                name: Some(name.to_owned()),
                url: redact(url),
                digest: Some(digest.to_owned()),
                version: (!version.is_empty()).then(|| version.to_owned()),
            })
        })
        .collect();
    Some((dir.join("root"), artifacts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_specs() {
        assert_eq!(
            index_url("https://h/").as_deref(),
            Some("https://h/.well-known/agent-skills/index.json")
        );
        assert_eq!(
            index_url("https://h/.well-known/agent-skills/v1.2.0/index.json").as_deref(),
            Some("https://h/.well-known/agent-skills/v1.2.0/index.json")
        );
        assert_eq!(index_url("https://h/?x=1"), None);
        assert_eq!(index_url("https://h/a/index.json"), None);
        assert_eq!(index_url("file:///"), None);
    }

    #[test]
    fn digests_must_be_lowercase_sha256() {
        assert!(is_sha256(&format!("sha256:{}", "a".repeat(64))));
        assert!(!is_sha256(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_sha256(&format!("sha512:{}", "a".repeat(64))));
        assert!(!is_sha256("sha256:abc"));
    }
}
