//! Fetching a URL into a local file: HTTP(S) with ureq, or a `file://` copy.
//! Both count the bytes they write and stop at the download limit.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};
use skills_core::{Error, ErrorKind};

use super::{ProgressFn, RemoteOptions, io_error, redact};

/// What a cache entry remembers to revalidate itself.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Validators {
    /// The `ETag` response header.
    pub(super) etag: Option<String>,
    /// The `Last-Modified` response header.
    pub(super) last_modified: Option<String>,
    /// For `file://`: the source file's size and modification time.
    pub(super) file_stamp: Option<String>,
}

/// The outcome of a fetch.
#[derive(Debug)]
pub(super) enum Fetched {
    /// The conditional request found the cached copy current.
    NotModified,
    /// The body was written to the destination file, with the SHA-256 of its
    /// raw bytes as `sha256:<64 lowercase hex>` (empty when hashing was off).
    Body(Validators, String),
}

/// Whether [`fetch`] hashes the bytes it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hash {
    /// SHA-256 of the raw bytes, computed while they are written.
    Sha256,
    /// No digest (the index itself, whose bytes are not locked, and the
    /// benchmark baseline).
    Off,
}

/// Fetches `url` into `dest` (created). With `prior`, the request is conditional.
pub(super) fn fetch(
    url: &str,
    dest: &Path,
    prior: Option<&Validators>,
    options: &RemoteOptions,
    hash: Hash,
) -> Result<Fetched, Error> {
    let span = tracing::info_span!(
        "skills.remote.download",
        url = %redact(url),
        conditional = prior.is_some(),
        http_status = tracing::field::Empty,
        status = tracing::field::Empty,
        bytes = tracing::field::Empty,
        elapsed_ms = tracing::field::Empty,
    );
    let _guard = span.enter();
    let started = Instant::now();
    let result = if url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("file://"))
    {
        fetch_file(url, dest, prior, options, started, hash)
    } else {
        fetch_http(url, dest, prior, options, started, &span, hash)
    };
    span.record("elapsed_ms", started.elapsed().as_millis() as u64);
    match &result {
        Ok(Fetched::NotModified) => {
            span.record("status", "not-modified");
            tracing::debug!(
                etag = prior.and_then(|p| p.etag.as_deref()),
                last_modified = prior.and_then(|p| p.last_modified.as_deref()),
                "revalidated: not modified"
            );
        }
        Ok(Fetched::Body(v, _)) => {
            span.record("status", "downloaded");
            let bytes = fs::metadata(dest).map_or(0, |m| m.len());
            span.record("bytes", bytes);
            if prior.is_some() {
                tracing::debug!(
                    etag = v.etag.as_deref(),
                    last_modified = v.last_modified.as_deref(),
                    "revalidated: changed"
                );
            }
        }
        Err(err) => {
            span.record("status", "failed");
            tracing::warn!(error = %err, "download failed");
        }
    }
    result
}

/// The error for a download that ran past [`RemoteOptions::total_timeout`].
fn deadline_error(shown: &str, deadline: Duration, written: u64) -> Error {
    Error::new(
        ErrorKind::Io,
        format!(
            "{shown}: timed out: the download deadline of {deadline:?} passed after {written} bytes (RemoteOptions::total_timeout)"
        ),
    )
}

/// `true` once the deadline (if any) has passed.
fn past_deadline(started: Instant, options: &RemoteOptions) -> bool {
    options
        .total_timeout
        .is_some_and(|deadline| started.elapsed() >= deadline)
}

fn fetch_http(
    url: &str,
    dest: &Path,
    prior: Option<&Validators>,
    options: &RemoteOptions,
    started: Instant,
    span: &tracing::Span,
    hash: Hash,
) -> Result<Fetched, Error> {
    let shown = redact(url);
    let config = ureq::Agent::config_builder()
        .timeout_connect(Some(options.connect_timeout))
        .timeout_per_read(Some(options.read_timeout))
        .timeout_global(options.total_timeout)
        .max_redirects(options.max_redirects)
        .http_status_as_error(false)
        .user_agent(concat!("skills-fs/", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let mut request = agent.get(url);
    if let Some(prior) = prior {
        if let Some(etag) = &prior.etag {
            request = request.header("If-None-Match", etag.as_str());
        }
        if let Some(lm) = &prior.last_modified {
            request = request.header("If-Modified-Since", lm.as_str());
        }
    }
    let response = request.call().map_err(|e| {
        if past_deadline(started, options)
            && let Some(deadline) = options.total_timeout
        {
            return deadline_error(&shown, deadline, 0).with_source(e);
        }
        http_error(&shown, e, options)
    })?;
    let status = response.status();
    span.record("http_status", status.as_u16());
    if status.as_u16() == 304 && prior.is_some() {
        return Ok(Fetched::NotModified);
    }
    if !status.is_success() {
        return Err(Error::new(
            ErrorKind::Other,
            format!(
                "{shown}: HTTP {} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("")
            )
            .trim_end()
            .to_owned(),
        ));
    }
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let validators = Validators {
        etag: header("etag"),
        last_modified: header("last-modified"),
        file_stamp: None,
    };
    let body = response.into_body();
    let total = body.content_length();
    if let Some(total) = total
        && total > options.max_download_bytes
    {
        return Err(too_large_download(&shown, options.max_download_bytes));
    }
    let mut reader = body.into_reader();
    let (written, digest) =
        copy_download(&mut reader, dest, total, &shown, options, started, hash)?;
    if let Some(total) = total
        && written != total
    {
        return Err(Error::new(
            ErrorKind::Io,
            format!("{shown}: received {written} bytes but Content-Length said {total}"),
        ));
    }
    Ok(Fetched::Body(validators, digest))
}

fn http_error(shown: &str, err: ureq::Error, options: &RemoteOptions) -> Error {
    let (kind, message) = match &err {
        ureq::Error::Timeout(which) => (
            ErrorKind::Io,
            format!(
                "{shown}: timed out ({which}); connect timeout {:?}, read timeout {:?}",
                options.connect_timeout, options.read_timeout
            ),
        ),
        ureq::Error::Io(_) | ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => {
            (ErrorKind::Io, format!("{shown}: {err}"))
        }
        _ => (ErrorKind::Other, format!("{shown}: {err}")),
    };
    Error::new(kind, message).with_source(err)
}

fn too_large_download(shown: &str, max: u64) -> Error {
    Error::new(
        ErrorKind::TooLarge,
        format!("{shown}: the download is larger than the limit of {max} bytes"),
    )
}

/// Copies `reader` to a new file at `dest`, counting bytes against the download
/// limit and reporting progress. With [`Hash::Sha256`] every chunk also feeds a
/// SHA-256 hasher on its way to the file, so the digest costs no second read;
/// it is returned as `sha256:<hex>` (empty with [`Hash::Off`]).
fn copy_download(
    reader: &mut dyn Read,
    dest: &Path,
    total: Option<u64>,
    shown: &str,
    options: &RemoteOptions,
    started: Instant,
    hash: Hash,
) -> Result<(u64, String), Error> {
    let mut hasher = (hash == Hash::Sha256).then(Sha256::new);
    let mut out = fs::File::create(dest)
        .map_err(|e| io_error(format!("cannot create {}", dest.display()), e))?;
    let progress: Option<&ProgressFn> = options.on_progress.as_ref();
    if let Some(progress) = progress {
        progress(0, total);
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut written: u64 = 0;
    loop {
        let read = reader.read(&mut buf);
        if past_deadline(started, options)
            && let Some(deadline) = options.total_timeout
            && !matches!(read, Ok(0))
        {
            let err = deadline_error(shown, deadline, written);
            return Err(match read {
                Err(e) => err.with_source(e),
                Ok(_) => err,
            });
        }
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_timeout(&e) => {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!(
                        "{shown}: timed out after {written} bytes: no data for {:?} (read timeout)",
                        options.read_timeout
                    ),
                )
                .with_source(e));
            }
            Err(e) => {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("{shown}: download broke off after {written} bytes: {e}"),
                )
                .with_source(e));
            }
        };
        written += n as u64;
        if written > options.max_download_bytes {
            return Err(too_large_download(shown, options.max_download_bytes));
        }
        if let Some(hasher) = &mut hasher {
            hasher.update(&buf[..n]);
        }
        out.write_all(&buf[..n])
            .map_err(|e| io_error(format!("cannot write {}", dest.display()), e))?;
        if let Some(progress) = progress {
            progress(written, total);
        }
    }
    out.flush()
        .map_err(|e| io_error(format!("cannot write {}", dest.display()), e))?;
    let digest = hasher.map_or_else(String::new, |h| {
        format!("sha256:{}", super::cache::hex(&h.finalize()))
    });
    Ok((written, digest))
}

/// A read timeout, as std reports it or as ureq wraps its own.
fn is_timeout(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    ) || err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
        .is_some_and(|inner| matches!(inner, ureq::Error::Timeout(_)))
}

fn fetch_file(
    url: &str,
    dest: &Path,
    prior: Option<&Validators>,
    options: &RemoteOptions,
    started: Instant,
    hash: Hash,
) -> Result<Fetched, Error> {
    let path = file_url_path(url)?;
    let shown = path.display().to_string();
    let meta = fs::metadata(&path).map_err(|e| io_error(format!("cannot read {shown}"), e))?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::Other,
            format!(
                "{shown}: not a file (a file:// root must be an archive, a SKILL.md or a folder)"
            ),
        ));
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let stamp = format!("{}-{mtime}", meta.len());
    if prior.is_some_and(|p| p.file_stamp.as_deref() == Some(stamp.as_str())) {
        return Ok(Fetched::NotModified);
    }
    if meta.len() > options.max_download_bytes {
        return Err(too_large_download(&shown, options.max_download_bytes));
    }
    let mut file =
        fs::File::open(&path).map_err(|e| io_error(format!("cannot read {shown}"), e))?;
    let (_, digest) = copy_download(
        &mut file,
        dest,
        Some(meta.len()),
        &shown,
        options,
        started,
        hash,
    )?;
    Ok(Fetched::Body(
        Validators {
            file_stamp: Some(stamp),
            ..Validators::default()
        },
        digest,
    ))
}

/// The local path of a `file://` URL (`file:///p` or `file://localhost/p`),
/// percent-decoded.
pub(super) fn file_url_path(url: &str) -> Result<PathBuf, Error> {
    let bad = |why: &str| Error::new(ErrorKind::InvalidPath, format!("{}: {why}", redact(url)));
    let rest = url.get(7..).unwrap_or("");
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let path = if rest.starts_with('/') {
        rest
    } else if rest
        .get(..9)
        .is_some_and(|h| h.eq_ignore_ascii_case("localhost"))
        && rest[9..].starts_with('/')
    {
        &rest[9..]
    } else {
        return Err(bad(
            "file URLs must be file:///absolute/path (a host other than localhost is not supported)",
        ));
    };
    let bytes = percent_decode(path).ok_or_else(|| bad("malformed percent-encoding"))?;
    if bytes.contains(&0) {
        return Err(bad("NUL in path"));
    }
    bytes_to_path(bytes).ok_or_else(|| bad("path is not valid UTF-8"))
}

#[cfg(unix)]
fn bytes_to_path(bytes: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt as _;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(not(unix))]
fn bytes_to_path(bytes: Vec<u8>) -> Option<PathBuf> {
    let text = String::from_utf8(bytes).ok()?;
    // `file:///C:/x` names `C:/x`.
    let b = text.as_bytes();
    let text = if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        text[1..].to_owned()
    } else {
        text
    };
    Some(PathBuf::from(text))
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn file_urls() {
        assert_eq!(
            file_url_path("file:///tmp/a%20b.zip").ok(),
            Some(PathBuf::from("/tmp/a b.zip"))
        );
        assert_eq!(
            file_url_path("FILE://localhost/x").ok(),
            Some(PathBuf::from("/x"))
        );
        assert!(file_url_path("file://host/x").is_err());
        assert!(file_url_path("file:///x%2").is_err());
        assert!(file_url_path("file:///x%00").is_err());
    }
}
