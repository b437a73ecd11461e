//! URL and archive roots (F-PRV-8), behind the `remote` cargo feature.
//!
//! A *root spec* is either a plain path (returned as it is) or a URL:
//! `http://`, `https://` or `file://`, naming a `.zip`, `.tar`, `.tar.gz`/`.tgz`
//! archive or a bare `SKILL.md`. [`resolve_root`] turns a spec into a local folder
//! that can be given to [`FsProvider`](crate::FsProvider) as a root.
//!
//! # Format
//! The content decides, not the extension: `PK\x03\x04` is a zip, `1f 8b` a gzip
//! (read as `.tar.gz`), `ustar` at offset 257 a tar, text starting with `---` a
//! `SKILL.md`. Anything else (an HTML error page, say) is an error.
//!
//! # Cache
//! Downloads live under [`RemoteOptions::cache_dir`], else `$SKILLS_CACHE_DIR`,
//! else the platform cache folder (`$XDG_CACHE_HOME/skills` or `~/.cache/skills` on
//! Linux, `~/Library/Caches/skills` on macOS, `%LOCALAPPDATA%\skills\cache` on
//! Windows), in `remote/<sha256 of the URL>/`. That folder holds versions
//! `v<…>/` (each with `root/`, the extracted tree, `.meta` and the `.ready`
//! sentinel) and a pointer `current` to one of them: a symbolic link on Unix,
//! where the path returned is `current/root` and follows later refreshes; a small
//! file elsewhere, where the path returned is the version's own `root`. A version
//! is built in a temporary folder and renamed into place when complete, then
//! `current` is replaced with one rename, so a reader finds the old tree or the
//! new one, never none. A replaced version is kept for
//! [`RemoteOptions::keep_replaced_for`] after it stopped being current, then
//! removed by a later install. When two processes race on a first download, the
//! loser discards its copy and uses the winner's. A failed or interrupted
//! download leaves `current` as it was. Missing cache folders are created.
//!
//! # Revalidation
//! By default an entry never expires (set [`RemoteOptions::max_age`] to change
//! that). An expired entry, or any entry when [`RemoteOptions::refresh`] is set, is
//! revalidated with a conditional GET (`If-None-Match` / `If-Modified-Since` from
//! the stored `ETag` / `Last-Modified`); `304 Not Modified` keeps the tree, a new
//! body replaces it at the same path. A `file://` entry is revalidated by the source
//! file's size and modification time. When revalidation fails (offline, server
//! down) the cached tree is used, unless [`RemoteOptions::stale_on_error`] is off.
//!
//! # Safety
//! Archives are extracted by this module, entry by entry: absolute paths, `..`,
//! drive letters and `:`, backslashes, NUL, symlinks, hardlinks and special files
//! are refused, as are duplicate entries (compared after normalizing `a/./b` and
//! `a//b` and folding case) and over-long or over-deep names. The download, each
//! entry, the total extracted size and the entry count are capped by counting
//! bytes actually read (a gzip bomb stops at the limit); a zip's declared entry
//! count is checked before its central directory is parsed. Every download has
//! a deadline ([`RemoteOptions::total_timeout`], 120 s by default). Executable
//! bits are kept; no other mode bits are.
//!
//! # Well-known indexes
//! `https://host/.well-known/agent-skills/index.json` (agentskills.io discovery
//! schema 0.2.0), or a bare `https://host`, which probes that path, is an index
//! root: every listed artifact is downloaded, its `sha256:` digest checked before
//! it is unpacked, and the verified skills assembled into one folder. A skill
//! whose digest differs is refused with a `digest-mismatch` diagnostic in
//! [`Resolved::diagnostics`]; the others load. See [`index_url`] and the
//! `index` module's documentation in the source for the cache layout.
//!
//! # `SKILLS_ROOT`
//! [`roots_from_env`] reads a list of roots; see [`parse_root_list`] for the rule.
//!
//! ```no_run
//! use skills_fs::remote::{RemoteOptions, resolve_root};
//! use skills_fs::{FsOptions, FsProvider};
//! let options = RemoteOptions::default();
//! let root = resolve_root("https://example.com/skills.tar.gz", &options)?;
//! let provider = FsProvider::new([root], FsOptions::default());
//! # Ok::<(), skills_core::Error>(())
//! ```

mod cache;
mod extract;
mod fetch;
mod index;
mod tree;

pub use tree::tree_digest;

pub use index::{
    DOWNLOAD_THREADS, MAX_INDEX_BYTES, SCHEMA_0_2_0, WELL_KNOWN_INDEX_PATH, index_url,
};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use skills_core::{Diagnostic, Error, ErrorKind};

/// Default cap on the downloaded (compressed) size: 64 MiB.
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 64 * 1024 * 1024;
/// Default cap on one extracted file: 64 MiB.
pub const DEFAULT_MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;
/// Default cap on all extracted files together: 256 MiB.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Default cap on archive entries (files, folders and metadata entries): 10 000.
pub const DEFAULT_MAX_ENTRIES: usize = 10_000;
/// Default cap on the length of an archive entry's name, in bytes: 1 024.
pub const DEFAULT_MAX_PATH_BYTES: usize = 1024;
/// Default cap on the number of folders an archive entry's name goes through: 32.
pub const DEFAULT_MAX_DEPTH: usize = 32;
/// Default deadline for one download, redirects and body included: 120 s.
pub const DEFAULT_DOWNLOAD_DEADLINE: Duration = Duration::from_secs(120);
/// Default time a replaced cache version is kept for readers that may still be
/// using it: 5 minutes.
pub const DEFAULT_KEEP_REPLACED_FOR: Duration = Duration::from_secs(5 * 60);

/// Called while downloading with the bytes received so far and the total size when
/// the server announced it. Called from the downloading thread.
pub type ProgressFn = Arc<dyn Fn(u64, Option<u64>) + Send + Sync>;

/// How URL roots are fetched, cached and checked. Every limit has a safe default.
#[derive(Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// Where downloads are cached; `None` means `$SKILLS_CACHE_DIR`, else the
    /// platform cache folder (see the [module docs](self)).
    pub cache_dir: Option<PathBuf>,
    /// Largest download accepted, in bytes (default 64 MiB).
    pub max_download_bytes: u64,
    /// Largest extracted file, in bytes (default 64 MiB).
    pub max_entry_bytes: u64,
    /// Largest total of extracted files, in bytes (default 256 MiB).
    pub max_total_bytes: u64,
    /// Most archive entries accepted (default 10 000).
    pub max_entries: usize,
    /// Longest archive entry name accepted, in bytes (default 1 024).
    pub max_path_bytes: usize,
    /// Most path components in an archive entry name (default 32).
    pub max_depth: usize,
    /// Time allowed to connect, TLS included (default 30 s).
    pub connect_timeout: Duration,
    /// Time allowed for each read from the network; restarts on every read, so a
    /// slow but steady download is not cut (default 30 s).
    pub read_timeout: Duration,
    /// Deadline for the whole download, redirects and body included (default
    /// 120 s, [`DEFAULT_DOWNLOAD_DEADLINE`]). Unlike [`read_timeout`](Self::read_timeout)
    /// it does not restart on each byte, so a server that dribbles bytes cannot keep
    /// a download alive forever. `None` means no deadline.
    pub total_timeout: Option<Duration>,
    /// Redirects followed (default 5).
    pub max_redirects: u32,
    /// Age after which a cached entry is revalidated; `None` (the default) means
    /// never.
    pub max_age: Option<Duration>,
    /// Revalidate cached entries now, whatever their age (default off).
    pub refresh: bool,
    /// When revalidating a cached entry fails (network down, server error), use
    /// the cached tree instead of failing (default on).
    pub stale_on_error: bool,
    /// How long a replaced version of a cache entry is kept after it stopped
    /// being current, for readers that may still be inside it (default 5
    /// minutes). It is removed by a later install once that time has passed.
    /// Zero removes it at once, which is only safe when one process uses the
    /// cache entry.
    pub keep_replaced_for: Duration,
    /// Progress hook for downloads (default none).
    pub on_progress: Option<ProgressFn>,
}

impl fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("cache_dir", &self.cache_dir)
            .field("max_download_bytes", &self.max_download_bytes)
            .field("max_entry_bytes", &self.max_entry_bytes)
            .field("max_total_bytes", &self.max_total_bytes)
            .field("max_entries", &self.max_entries)
            .field("max_path_bytes", &self.max_path_bytes)
            .field("max_depth", &self.max_depth)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("total_timeout", &self.total_timeout)
            .field("max_redirects", &self.max_redirects)
            .field("max_age", &self.max_age)
            .field("refresh", &self.refresh)
            .field("stale_on_error", &self.stale_on_error)
            .field("keep_replaced_for", &self.keep_replaced_for)
            .field("on_progress", &self.on_progress.as_ref().map(|_| "Fn"))
            .finish()
    }
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            cache_dir: None,
            max_download_bytes: DEFAULT_MAX_DOWNLOAD_BYTES,
            max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            max_entries: DEFAULT_MAX_ENTRIES,
            max_path_bytes: DEFAULT_MAX_PATH_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(30),
            total_timeout: Some(DEFAULT_DOWNLOAD_DEADLINE),
            max_redirects: 5,
            max_age: None,
            refresh: false,
            stale_on_error: true,
            keep_replaced_for: DEFAULT_KEEP_REPLACED_FOR,
            on_progress: None,
        }
    }
}

impl RemoteOptions {
    /// Sets the cache folder (instead of `$SKILLS_CACHE_DIR` or the platform one).
    #[must_use]
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Sets the download cap.
    #[must_use]
    pub fn with_max_download_bytes(mut self, bytes: u64) -> Self {
        self.max_download_bytes = bytes;
        self
    }

    /// Sets the per-file extraction cap.
    #[must_use]
    pub fn with_max_entry_bytes(mut self, bytes: u64) -> Self {
        self.max_entry_bytes = bytes;
        self
    }

    /// Sets the total extraction cap.
    #[must_use]
    pub fn with_max_total_bytes(mut self, bytes: u64) -> Self {
        self.max_total_bytes = bytes;
        self
    }

    /// Sets the entry-count cap.
    #[must_use]
    pub fn with_max_entries(mut self, entries: usize) -> Self {
        self.max_entries = entries;
        self
    }

    /// Sets the cap on an entry name's length in bytes.
    #[must_use]
    pub fn with_max_path_bytes(mut self, bytes: usize) -> Self {
        self.max_path_bytes = bytes;
        self
    }

    /// Sets the cap on an entry name's number of path components.
    #[must_use]
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets how long a replaced cache version is kept for readers still in it.
    #[must_use]
    pub fn with_keep_replaced_for(mut self, keep: Duration) -> Self {
        self.keep_replaced_for = keep;
        self
    }

    /// Sets the connect timeout.
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the per-read timeout.
    #[must_use]
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Sets (or clears) the download deadline.
    #[must_use]
    pub fn with_total_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.total_timeout = timeout;
        self
    }

    /// Sets how many redirects are followed.
    #[must_use]
    pub fn with_max_redirects(mut self, redirects: u32) -> Self {
        self.max_redirects = redirects;
        self
    }

    /// Sets (or clears) the age after which cached entries are revalidated.
    #[must_use]
    pub fn with_max_age(mut self, max_age: Option<Duration>) -> Self {
        self.max_age = max_age;
        self
    }

    /// Revalidates cached entries on the next resolve, whatever their age.
    #[must_use]
    pub fn with_refresh(mut self, refresh: bool) -> Self {
        self.refresh = refresh;
        self
    }

    /// Chooses whether a failed revalidation falls back to the cached tree.
    #[must_use]
    pub fn with_stale_on_error(mut self, stale_on_error: bool) -> Self {
        self.stale_on_error = stale_on_error;
        self
    }

    /// Sets the download progress hook.
    #[must_use]
    pub fn with_on_progress(mut self, hook: ProgressFn) -> Self {
        self.on_progress = Some(hook);
        self
    }
}

/// `true` when `spec` starts with `http://`, `https://` or `file://` (any case).
pub fn is_url(spec: &str) -> bool {
    scheme_len(spec).is_some()
}

/// The scheme of `spec` when it looks like a URL, supported or not: letters,
/// digits, `+`, `-` and `.` starting with a letter, then `://` (`ftp` for
/// `ftp://host/x`). One letter is a Windows drive (`C://x`), not a scheme.
///
/// ```
/// use skills_fs::remote::url_scheme;
/// assert_eq!(url_scheme("ftp://host/x.zip"), Some("ftp"));
/// assert_eq!(url_scheme("HTTPS://host/x.zip"), Some("HTTPS"));
/// assert_eq!(url_scheme("./skills"), None);
/// assert_eq!(url_scheme("C://skills"), None);
/// ```
pub fn url_scheme(spec: &str) -> Option<&str> {
    let end = spec.find("://")?;
    let scheme = &spec[..end];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && scheme.len() > 1
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Length of the recognised scheme prefix (`https://` is 8), if any.
fn scheme_len(spec: &str) -> Option<usize> {
    ["http://", "https://", "file://"]
        .into_iter()
        .find_map(|p| {
            spec.get(..p.len())
                .filter(|head| head.eq_ignore_ascii_case(p))
                .map(|_| p.len())
        })
}

/// The error for a URL whose scheme is not `http`, `https` or `file`.
fn unsupported_scheme(scheme: &str) -> Error {
    Error::new(
        ErrorKind::InvalidPath,
        format!("unsupported URL scheme `{scheme}`; use http(s):// or file://"),
    )
}

/// Turns a root spec into a local folder: a path is returned unchanged (not
/// checked), a URL is fetched into the cache (or taken from it) and the folder of
/// its extracted tree is returned.
///
/// A `file://` URL naming a folder returns that folder.
///
/// # Errors
/// [`ErrorKind::Io`] for network and file-system failures (timeouts and the
/// deadline included), [`ErrorKind::TooLarge`] when a limit is exceeded,
/// [`ErrorKind::InvalidPath`] for unsafe archive entries and unsupported URL
/// schemes (`ftp://`), [`ErrorKind::Other`] for HTTP errors, unknown formats,
/// malformed archives and a missing cache folder.
pub fn resolve_root(spec: &str, options: &RemoteOptions) -> Result<PathBuf, Error> {
    resolve_root_detailed(spec, options).map(|r| r.path)
}

/// [`resolve_root`], also saying where the folder came from: see [`Resolved`].
/// Use it to warn when a stale cached copy was used because revalidation failed.
///
/// # Errors
/// As [`resolve_root`].
pub fn resolve_root_detailed(spec: &str, options: &RemoteOptions) -> Result<Resolved, Error> {
    let spec = spec.trim();
    if let Some(index) = index_url(spec) {
        index::resolve(&index, options)
    } else if is_url(spec) {
        cache::resolve_url(spec, options)
    } else if let Some(scheme) = url_scheme(spec) {
        tracing::warn!(scheme, "refused URL root: unsupported scheme");
        Err(unsupported_scheme(scheme))
    } else {
        Ok(Resolved {
            path: PathBuf::from(spec),
            url: None,
            source: Source::Local,
            diagnostics: Vec::new(),
            artifacts: Vec::new(),
        })
    }
}

/// Downloads every URL of `urls` into `dir` (files `0`, `1`, … in order) with
/// the download code of URL roots, on [`DOWNLOAD_THREADS`] threads, computing
/// each SHA-256 (returned as `sha256:<hex>`) when `hash` is set, else returning
/// empty strings. Nothing is verified or unpacked: it is the baseline the
/// benchmarks compare an index resolve with.
///
/// # Errors
/// The first download that failed.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub fn download_all(
    urls: &[String],
    dir: &Path,
    options: &RemoteOptions,
    hash: bool,
) -> Result<Vec<String>, Error> {
    let numbered: Vec<(usize, &String)> = urls.iter().enumerate().collect();
    let mode = if hash {
        fetch::Hash::Sha256
    } else {
        fetch::Hash::Off
    };
    crate::parallel::map_on(&numbered, DOWNLOAD_THREADS, |(i, url)| match fetch::fetch(
        url,
        &dir.join(i.to_string()),
        None,
        options,
        mode,
    )? {
        fetch::Fetched::Body(_, digest) => Ok(digest),
        fetch::Fetched::NotModified => Err(Error::new(ErrorKind::Other, "unexpected 304")),
    })
    .into_iter()
    .collect()
}

/// [`resolve_root`] with [`RemoteOptions::refresh`] set: a cached URL is
/// revalidated now (a conditional GET; `304` keeps the tree).
///
/// # Errors
/// As [`resolve_root`].
pub fn refresh_root(spec: &str, options: &RemoteOptions) -> Result<PathBuf, Error> {
    let options = options.clone().with_refresh(true);
    resolve_root(spec, &options)
}

/// A resolved root: the local folder and how it was obtained.
#[derive(Debug)]
#[non_exhaustive]
pub struct Resolved {
    /// The local folder to give to [`FsProvider`](crate::FsProvider).
    pub path: PathBuf,
    /// The URL without user and password, for a URL root.
    pub url: Option<String>,
    /// Where the folder came from.
    pub source: Source,
    /// Problems that refused part of the root but not all of it: for a
    /// well-known index, entries skipped (`index-invalid`, unknown `type`) and
    /// skills refused because their digest did not match (`digest-mismatch`).
    /// Empty for other roots.
    pub diagnostics: Vec<Diagnostic>,
    /// What was downloaded, with digests: one per verified index entry (sorted
    /// by name), one for an archive or `SKILL.md` URL, none for a local folder.
    /// This is what a lockfile records.
    pub artifacts: Vec<Artifact>,
}

/// One downloaded artifact of a URL root, as a lockfile records it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Artifact {
    /// The skill's name in a well-known index; `None` for an archive or
    /// `SKILL.md` URL root (its skills share the artifact).
    pub name: Option<String>,
    /// The artifact's URL, without user and password.
    pub url: String,
    /// `sha256:<64 lowercase hex>` of the raw bytes downloaded. `None` only for
    /// a URL root cached before digests were recorded (refresh it to get one).
    pub digest: Option<String>,
    /// The `version` an index entry declared.
    pub version: Option<String>,
}

/// Where a [`Resolved`] folder came from.
#[derive(Debug)]
#[non_exhaustive]
pub enum Source {
    /// A plain path (or a `file://` folder), used in place.
    Local,
    /// Downloaded and extracted now.
    Downloaded,
    /// Taken from the cache without asking the server.
    Cached,
    /// Revalidated with the server, which said it had not changed.
    NotModified,
    /// Revalidation failed and the cached copy was used
    /// ([`RemoteOptions::stale_on_error`]).
    Stale(StaleCopy),
}

/// A cached copy used because revalidating it failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct StaleCopy {
    /// When the cached copy was last fetched or confirmed by the server.
    pub fetched: SystemTime,
    /// Why revalidation failed.
    pub error: Error,
}

impl StaleCopy {
    /// [`fetched`](Self::fetched) as `YYYY-MM-DD HH:MM:SS UTC`.
    pub fn fetched_utc(&self) -> String {
        format_utc(self.fetched)
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` for a time after 1970 (earlier times print as the
/// epoch).
fn format_utc(time: SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Maps a path inside a cached URL root back to what a user recognises: the URL
/// (without credentials) and, for an archive, `!/` and the path inside it, such as
/// `https://host/x.zip!/skill-a/SKILL.md`. A bare `SKILL.md` download maps to its
/// URL. `None` when `path` is not inside the cache of `options`.
///
/// Use it to rewrite the file of diagnostics (`Diagnostic::file`) and other
/// locations printed for URL roots.
pub fn remote_location(path: &Path, options: &RemoteOptions) -> Option<String> {
    cache::location_of(path, options)
}

/// The cache folder used when [`RemoteOptions::cache_dir`] is `None`:
/// `$SKILLS_CACHE_DIR` when set and not empty, else the platform cache folder.
/// `None` when neither can be found (no home folder).
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SKILLS_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    platform_cache_dir()
}

#[cfg(windows)]
fn platform_cache_dir() -> Option<PathBuf> {
    std::env::var_os("LOCALAPPDATA")
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join("skills").join("cache"))
}

#[cfg(target_os = "macos")]
fn platform_cache_dir() -> Option<PathBuf> {
    home_dir().map(|h| h.join("Library").join("Caches").join("skills"))
}

#[cfg(not(any(windows, target_os = "macos")))]
fn platform_cache_dir() -> Option<PathBuf> {
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from)
        && xdg.is_absolute()
    {
        return Some(xdg.join("skills"));
    }
    home_dir().map(|h| h.join(".cache").join("skills"))
}

#[cfg(not(windows))]
fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The folder in the cache that holds `url`'s entry (whether or not it exists):
/// `<cache>/remote/<sha256 of url, hex>`. The tree is its `current/root`
/// subfolder (see the [module docs](self)).
///
/// # Errors
/// [`ErrorKind::Other`] when no cache folder is configured or found.
pub fn cache_entry_dir(url: &str, options: &RemoteOptions) -> Result<PathBuf, Error> {
    Ok(cache::remote_dir(options)?.join(cache::cache_key(url.trim())))
}

/// The roots listed in `$SKILLS_ROOT` (see [`parse_root_list`]); empty when unset.
pub fn roots_from_env() -> Vec<String> {
    std::env::var_os("SKILLS_ROOT")
        .map(|v| parse_root_list(&v.to_string_lossy()))
        .unwrap_or_default()
}

/// The platform's path-list separator: `:` on Unix, `;` on Windows.
const LIST_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// Splits a list of root specs (the `SKILLS_ROOT` syntax).
///
/// * Entries are separated by newlines, commas, or the platform's path-list
///   separator (`:` on Unix, `;` on Windows).
/// * An entry that starts with `scheme://` (`http://`, `https://`, `file://`, or
///   an unsupported one such as `ftp://`, which [`resolve_root`] refuses) is a URL: it runs
///   to the next whitespace or comma (or `;` on Windows), so the `:` of the scheme
///   and of a port does not split it. Put a comma, space or newline after a URL
///   (on Unix, `url:/path` reads as one URL); write a comma inside a URL as `%2C`.
/// * A path keeps inner spaces; leading and trailing whitespace is trimmed, and
///   empty entries are dropped.
///
/// ```
/// use skills_fs::remote::parse_root_list;
/// # #[cfg(unix)] {
/// let roots = parse_root_list("/a/skills:~/b, https://x.org:8443/s.zip /c");
/// assert_eq!(roots, ["/a/skills", "~/b", "https://x.org:8443/s.zip", "/c"]);
/// # }
/// ```
pub fn parse_root_list(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = list;
    loop {
        rest =
            rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c == LIST_SEPARATOR);
        if rest.is_empty() {
            return out;
        }
        let end = if is_url(rest) || url_scheme(rest).is_some() {
            rest.find(|c: char| c.is_whitespace() || c == ',' || (cfg!(windows) && c == ';'))
        } else {
            rest.find(['\n', '\r', ',', LIST_SEPARATOR])
        }
        .unwrap_or(rest.len());
        let entry = rest[..end].trim();
        if !entry.is_empty() {
            out.push(entry.to_owned());
        }
        rest = &rest[end..];
    }
}

/// A URL without its user and password, for messages.
fn redact(url: &str) -> String {
    let Some(start) = scheme_len(url) else {
        return url.to_owned();
    };
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    match url[start..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..start], &url[start + at + 1..]),
        None => url.to_owned(),
    }
}

fn io_error(context: impl fmt::Display, err: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("{context}: {err}")).with_source(err)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn redacts_credentials() {
        assert_eq!(redact("https://u:p@host/x.zip"), "https://***@host/x.zip");
        assert_eq!(redact("https://host/a@b"), "https://host/a@b");
    }

    #[test]
    fn url_detection_ignores_case() {
        assert!(is_url("HTTPS://x/y"));
        assert!(is_url("file:///tmp/x"));
        assert!(!is_url("/tmp/http://x"));
        assert!(!is_url("ftp://x"));
    }

    #[test]
    fn unsupported_schemes_are_named() {
        let err = resolve_root("ftp://host/x.zip", &RemoteOptions::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPath);
        assert_eq!(
            err.to_string(),
            "unsupported URL scheme `ftp`; use http(s):// or file://"
        );
        assert_eq!(
            parse_root_list("ftp://h:21/x.zip,/a"),
            ["ftp://h:21/x.zip", "/a"]
        );
    }

    #[test]
    fn utc_dates() {
        let t = std::time::UNIX_EPOCH + Duration::from_secs(1_795_434_720);
        assert_eq!(format_utc(t), "2026-11-23 11:52:00 UTC");
        assert_eq!(format_utc(std::time::UNIX_EPOCH), "1970-01-01 00:00:00 UTC");
        let leap = std::time::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(format_utc(leap), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn list_splits_on_newlines_and_commas() {
        let roots = parse_root_list("a\n\nhttp://h:1/x.tgz,b\r\n  c d  ");
        assert_eq!(roots, ["a", "http://h:1/x.tgz", "b", "c d"]);
    }
}
