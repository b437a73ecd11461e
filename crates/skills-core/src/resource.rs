//! Skill resources (level 3): safe relative paths, listings, line ranges and
//! bounded text reads (F-PRV-5, F-PRV-6).
//!
//! The lexical checks live here, without I/O, so every provider applies the same
//! rules; file-system providers add the canonicalize-and-contain check on top.

use std::fmt;

use serde::Serialize;

use crate::error::{Error, ErrorKind};

/// Default cap on the bytes returned by one resource read (256 KiB).
pub const DEFAULT_MAX_READ_BYTES: usize = 256 * 1024;
/// Default cap on the number of entries in a resource listing.
pub const DEFAULT_MAX_LISTED: usize = 500;

/// A validated relative path inside a skill, with `/` separators.
///
/// Refused: empty paths, absolute paths (`/x`, `\x`), drive letters (`C:`), any
/// backslash, NUL or other control characters, `..` components, and `.`
/// components; a trailing `/` is refused too (a resource is a file).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ResourcePath(String);

impl ResourcePath {
    /// Checks a path a caller (often a model) sent.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidPath`] saying which rule the path breaks.
    pub fn parse(raw: &str) -> Result<Self, Error> {
        let refuse = |why: &str| {
            Err(Error::new(
                ErrorKind::InvalidPath,
                format!("refused resource path `{}`: {why}", raw.escape_debug()),
            ))
        };
        if raw.is_empty() {
            return refuse("the path is empty");
        }
        if raw.len() > 4096 {
            return refuse("the path is longer than 4096 bytes");
        }
        if raw.contains('\0') {
            return refuse("it contains a NUL byte");
        }
        if raw.chars().any(char::is_control) {
            return refuse("it contains control characters");
        }
        if raw.contains('\\') {
            return refuse("use `/` as the separator; `\\` is not allowed");
        }
        if raw.starts_with('/') {
            return refuse(
                "absolute paths are not allowed; give a path relative to the skill folder",
            );
        }
        let bytes = raw.as_bytes();
        if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
            return refuse(
                "drive letters are not allowed; give a path relative to the skill folder",
            );
        }
        if raw.ends_with('/') {
            return refuse("it names a folder; give a file path");
        }
        for component in raw.split('/') {
            match component {
                "" => return refuse("it contains an empty path component (`//`)"),
                "." => return refuse("`.` components are not allowed"),
                ".." => {
                    return refuse(
                        "`..` components are not allowed; paths may not leave the skill folder",
                    );
                }
                _ => {}
            }
        }
        Ok(ResourcePath(raw.to_owned()))
    }

    /// The path as a string (always `/`-separated).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path's components.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// The group this path belongs to, from its first component.
    pub fn kind(&self) -> ResourceKind {
        ResourceKind::of(&self.0)
    }
}

impl fmt::Display for ResourcePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The group a resource belongs to (F-PRV-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceKind {
    /// Under `references/`: documents to read on demand.
    Reference,
    /// Under `scripts/`: code to run.
    Script,
    /// Under `assets/`: templates, data, images.
    Asset,
    /// Anything else beside `SKILL.md`.
    Other,
}

impl ResourceKind {
    /// The kind of a `/`-separated relative path.
    pub fn of(path: &str) -> Self {
        match path.split('/').next() {
            Some("references") if path.contains('/') => ResourceKind::Reference,
            Some("scripts") if path.contains('/') => ResourceKind::Script,
            Some("assets") if path.contains('/') => ResourceKind::Asset,
            _ => ResourceKind::Other,
        }
    }

    /// `references`, `scripts`, `assets` or `other`.
    pub fn group_name(self) -> &'static str {
        match self {
            ResourceKind::Reference => "references",
            ResourceKind::Script => "scripts",
            ResourceKind::Asset => "assets",
            ResourceKind::Other => "other",
        }
    }
}

/// One file in a skill's listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[non_exhaustive]
pub struct ResourceEntry {
    /// Relative path.
    pub path: ResourcePath,
    /// Its group.
    pub kind: ResourceKind,
    /// Size in bytes, if known without reading it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ResourceEntry {
    /// An entry for `path`, its kind derived from the path.
    pub fn new(path: ResourcePath, size: Option<u64>) -> Self {
        Self {
            kind: path.kind(),
            path,
            size,
        }
    }
}

/// A skill's files, grouped and sorted deterministically (by group, then path).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ResourceListing {
    /// The entries, sorted by (kind, path).
    pub entries: Vec<ResourceEntry>,
    /// How many more files were found beyond the listing cap. Exact unless
    /// `truncated` is set; then it is a lower bound.
    pub omitted: usize,
    /// `true` when the walk that produced the listing stopped before it saw
    /// every file (a provider's walk limit): more files than `omitted` may exist.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

impl ResourceListing {
    /// Sorts `entries`, removes duplicates and keeps at most `max` of them.
    pub fn new(mut entries: Vec<ResourceEntry>, max: usize) -> Self {
        entries.sort_by(|a, b| (a.kind, &a.path).cmp(&(b.kind, &b.path)));
        entries.dedup_by(|a, b| a.path == b.path);
        let omitted = entries.len().saturating_sub(max);
        entries.truncate(max);
        Self {
            entries,
            omitted,
            truncated: false,
        }
    }

    /// Adds `more` files that were found but not collected to `omitted`.
    #[must_use]
    pub fn with_more_omitted(mut self, more: usize) -> Self {
        self.omitted = self.omitted.saturating_add(more);
        self
    }

    /// Marks the listing as cut short by the walk (see `truncated`).
    #[must_use]
    pub fn with_truncated(mut self, truncated: bool) -> Self {
        self.truncated = truncated;
        self
    }

    /// `true` when every file is listed: nothing omitted, the walk not cut.
    pub fn is_complete(&self) -> bool {
        self.omitted == 0 && !self.truncated
    }

    /// The note renderers append after the entries when the listing is not
    /// complete: `12 more not listed`, or, when the walk was cut, `more than 12
    /// not listed`. "More than" appears exactly when the walk was cut.
    pub fn omitted_note(&self) -> Option<String> {
        if self.is_complete() {
            None
        } else if self.truncated {
            Some(format!("more than {} not listed", self.omitted))
        } else {
            Some(format!("{} more not listed", self.omitted))
        }
    }

    /// Entries of one kind.
    pub fn of_kind(&self, kind: ResourceKind) -> impl Iterator<Item = &ResourceEntry> {
        self.entries.iter().filter(move |e| e.kind == kind)
    }

    /// `true` when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The paths, in listing order.
    pub fn paths(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| e.path.as_str().to_owned())
            .collect()
    }
}

/// An inclusive, 1-based range of lines; an open end means "to the end".
///
/// Built only through [`LineRange::new`] or [`LineRange::parse`], so a range
/// always starts at line 1 or later and never ends before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct LineRange {
    start: usize,
    end: Option<usize>,
}

impl LineRange {
    /// A range from `start` to `end` inclusive (`None`: to the end of the file).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRange`] when `start` is 0 or `end < start`.
    pub fn new(start: usize, end: Option<usize>) -> Result<Self, Error> {
        if start == 0 {
            return Err(Error::new(
                ErrorKind::InvalidRange,
                "line numbers start at 1",
            ));
        }
        if let Some(end) = end
            && end < start
        {
            return Err(Error::new(
                ErrorKind::InvalidRange,
                format!("the range ends (line {end}) before it starts (line {start})"),
            ));
        }
        Ok(Self { start, end })
    }

    /// The first line, 1-based.
    pub fn start(&self) -> usize {
        self.start
    }

    /// The last line (inclusive), or `None` for "to the end of the file".
    pub fn end(&self) -> Option<usize> {
        self.end
    }

    /// Parses `A:B`, `A:` or `A` (a single line).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRange`] for anything else.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = || {
            Error::new(
                ErrorKind::InvalidRange,
                format!(
                    "invalid line range `{text}`; expected `START:END`, `START:` or `LINE` (1-based)"
                ),
            )
        };
        let num = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
        match text.split_once(':') {
            None => {
                let n = num(text)?;
                Self::new(n, Some(n))
            }
            Some((a, b)) if b.trim().is_empty() => Self::new(num(a)?, None),
            Some((a, b)) => Self::new(num(a)?, Some(num(b)?)),
        }
    }
}

/// The text of a resource (or a part of it) as returned to a caller.
///
/// Built by [`text_content`]; the fields are for reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ResourceContent {
    /// The path that was read.
    pub path: ResourcePath,
    /// The selected text (possibly truncated; see `truncated`).
    pub text: String,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// The first line included (1-based).
    pub first_line: usize,
    /// The last line included (1-based, inclusive; 0 when empty).
    pub last_line: usize,
    /// `true` when the text was cut at the byte cap; the text then ends with a
    /// marker line saying so.
    pub truncated: bool,
}

/// Returns `true` when `bytes` look binary: a NUL byte in the first 8 KiB, or
/// invalid UTF-8.
pub fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    head.contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// Decodes `bytes` as text, selects `range` and caps the result at `max_bytes`
/// (cut on a UTF-8 boundary, then a visible truncation marker line is added).
///
/// # Errors
/// [`ErrorKind::Binary`] for binary content, [`ErrorKind::InvalidRange`] when the
/// range starts after the last line.
pub fn text_content(
    path: ResourcePath,
    bytes: &[u8],
    range: Option<LineRange>,
    max_bytes: usize,
) -> Result<ResourceContent, Error> {
    if bytes
        .get(..bytes.len().min(8192))
        .is_some_and(|h| h.contains(&0))
    {
        return Err(binary_error(&path, bytes));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| binary_error(&path, bytes))?;
    let total_lines = text.lines().count();
    let (first_line, selected) = match range {
        None => (1, text),
        Some(r) => {
            if r.start > total_lines.max(1) {
                return Err(Error::new(
                    ErrorKind::InvalidRange,
                    format!(
                        "`{path}` has {total_lines} lines; the range starts at line {}",
                        r.start
                    ),
                ));
            }
            let start = line_offset(text, r.start - 1);
            let end = match r.end {
                Some(end) => line_offset(text, end),
                None => text.len(),
            };
            (r.start, &text[start..end])
        }
    };
    let mut selected = selected;
    let truncated = selected.len() > max_bytes;
    if truncated {
        let mut cut = max_bytes;
        while !selected.is_char_boundary(cut) {
            cut -= 1;
        }
        // Prefer ending on a whole line, so "read from last_line + 1" loses nothing.
        if let Some(nl) = selected[..cut].rfind('\n') {
            cut = nl + 1;
        }
        selected = &selected[..cut];
    }
    let shown_lines = selected.lines().count();
    let last_line = if shown_lines == 0 {
        0
    } else {
        first_line + shown_lines - 1
    };
    let mut out = selected.to_owned();
    if truncated {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "[truncated: output capped at {max_bytes} bytes after line {last_line} of {total_lines}; read a line range to see more]\n"
        ));
    }
    Ok(ResourceContent {
        path,
        text: out,
        total_lines,
        first_line,
        last_line,
        truncated,
    })
}

/// The refusal for binary content: names the type and the size, so a caller (often a
/// model) knows what the file is without reading it.
fn binary_error(path: &ResourcePath, bytes: &[u8]) -> Error {
    let mime = sniff_mime(bytes).unwrap_or_else(|| guess_mime(path.as_str()));
    Error::new(
        ErrorKind::Binary,
        format!(
            "`{path}` is a binary file ({mime}, {} bytes) and cannot be read as text",
            bytes.len()
        ),
    )
}

/// A resource's raw bytes with a MIME type, for callers that need binary files
/// (scripts to stage, images and archives to serve).
///
/// Returned by [`SkillProvider::read_resource_bytes`](crate::SkillProvider::read_resource_bytes).
/// Cloning is cheap: the bytes are reference-counted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceBytes {
    /// The path that was read.
    pub path: ResourcePath,
    /// The whole file.
    pub bytes: bytes::Bytes,
    /// The MIME type: sniffed from well-known signatures, otherwise guessed from
    /// the extension (see [`guess_mime`]).
    pub mime: String,
}

impl ResourceBytes {
    /// Bytes read from `path`; the MIME type is sniffed from the content, then
    /// guessed from the extension.
    pub fn new(path: ResourcePath, bytes: impl Into<bytes::Bytes>) -> Self {
        let bytes = bytes.into();
        let mime = sniff_mime(&bytes)
            .unwrap_or_else(|| guess_mime(path.as_str()))
            .to_owned();
        Self { path, bytes, mime }
    }

    /// Replaces the MIME type (for providers that know better).
    #[must_use]
    pub fn with_mime(mut self, mime: impl Into<String>) -> Self {
        self.mime = mime.into();
        self
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// `true` for an empty file.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// `true` when the bytes are text (UTF-8 without NUL in the first 8 KiB).
    pub fn is_text(&self) -> bool {
        !looks_binary(&self.bytes)
    }
}

/// The MIME type of a file named `path`, from its extension (a fixed table of the
/// types skills commonly ship); `application/octet-stream` when unknown.
///
/// Pure and deterministic, so every provider and target agrees.
pub fn guess_mime(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((_, ext)) = name.rsplit_once('.') else {
        return "application/octet-stream";
    };
    let ext = ext.to_ascii_lowercase();
    MIME_TABLE
        .binary_search_by(|(e, _)| (*e).cmp(ext.as_str()))
        .map_or("application/octet-stream", |i| MIME_TABLE[i].1)
}

/// Extension → MIME type, sorted by extension (binary-searched).
const MIME_TABLE: &[(&str, &str)] = &[
    ("7z", "application/x-7z-compressed"),
    ("bash", "text/x-shellscript"),
    ("bmp", "image/bmp"),
    ("c", "text/x-c"),
    ("cfg", "text/plain"),
    ("cjs", "text/javascript"),
    ("cpp", "text/x-c++"),
    ("css", "text/css"),
    ("csv", "text/csv"),
    ("doc", "application/msword"),
    ("gif", "image/gif"),
    ("go", "text/x-go"),
    ("gz", "application/gzip"),
    ("h", "text/x-c"),
    ("htm", "text/html"),
    ("html", "text/html"),
    ("ico", "image/vnd.microsoft.icon"),
    ("ini", "text/plain"),
    ("ipynb", "application/x-ipynb+json"),
    ("java", "text/x-java"),
    ("jpeg", "image/jpeg"),
    ("jpg", "image/jpeg"),
    ("js", "text/javascript"),
    ("json", "application/json"),
    ("jsonl", "application/jsonl"),
    ("log", "text/plain"),
    ("markdown", "text/markdown"),
    ("md", "text/markdown"),
    ("mjs", "text/javascript"),
    ("mp3", "audio/mpeg"),
    ("mp4", "video/mp4"),
    ("ogg", "audio/ogg"),
    ("otf", "font/otf"),
    ("pdf", "application/pdf"),
    ("pl", "text/x-perl"),
    ("png", "image/png"),
    ("ps1", "text/plain"),
    ("py", "text/x-python"),
    ("rb", "text/x-ruby"),
    ("rs", "text/x-rust"),
    ("sh", "text/x-shellscript"),
    ("sql", "application/sql"),
    ("svg", "image/svg+xml"),
    ("tar", "application/x-tar"),
    ("text", "text/plain"),
    ("tgz", "application/gzip"),
    ("toml", "application/toml"),
    ("ts", "text/x-typescript"),
    ("tsv", "text/tab-separated-values"),
    ("ttf", "font/ttf"),
    ("txt", "text/plain"),
    ("wasm", "application/wasm"),
    ("wav", "audio/wav"),
    ("webm", "video/webm"),
    ("webp", "image/webp"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("xml", "application/xml"),
    ("yaml", "application/yaml"),
    ("yml", "application/yaml"),
    ("zip", "application/zip"),
];

/// The MIME type of well-known binary signatures (PNG, JPEG, GIF, PDF, ZIP, gzip,
/// WebP, wasm), or `None`.
fn sniff_mime(bytes: &[u8]) -> Option<&'static str> {
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"%PDF-", "application/pdf"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
        (b"\0asm", "application/wasm"),
    ];
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    SIGNATURES
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map(|(_, mime)| *mime)
}

/// Byte offset of the start of 0-based line `n` (or the end of the text).
fn line_offset(text: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    text.match_indices('\n')
        .nth(n - 1)
        .map_or(text.len(), |(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_hostile_paths() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/..",
            "..",
            "a\\b",
            "\\\\server\\x",
            "C:x",
            "c:/windows",
            "a\0b",
            "a//b",
            "./a",
            "a/./b",
            "dir/",
            "a\nb",
        ] {
            let err = ResourcePath::parse(bad).expect_err(bad);
            assert_eq!(err.kind(), ErrorKind::InvalidPath, "{bad}");
        }
        for ok in [
            "SKILL.md",
            "references/guide.md",
            "scripts/run.py",
            "a..b",
            "..a",
            "ünï/cödé.txt",
        ] {
            assert!(ResourcePath::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn kinds_and_listing_order() {
        let e = |p: &str| ResourceEntry::new(ResourcePath::parse(p).expect("path"), None);
        let listing = ResourceListing::new(
            vec![
                e("scripts/b.sh"),
                e("notes.md"),
                e("references/z.md"),
                e("assets/t.txt"),
                e("references/a.md"),
                e("references"),
            ],
            4,
        );
        assert_eq!(
            listing.paths(),
            vec![
                "references/a.md",
                "references/z.md",
                "scripts/b.sh",
                "assets/t.txt"
            ]
        );
        assert_eq!(listing.omitted, 2);
        assert_eq!(listing.omitted_note().as_deref(), Some("2 more not listed"));
        let cut = listing.clone().with_more_omitted(3).with_truncated(true);
        assert_eq!(
            cut.omitted_note().as_deref(),
            Some("more than 5 not listed")
        );
        assert!(!cut.is_complete());
        let all = ResourceListing::new(vec![e("a.md")], 4);
        assert!(all.is_complete());
        assert_eq!(all.omitted_note(), None);
    }

    #[test]
    fn line_ranges() {
        let parsed = |t: &str| LineRange::parse(t).ok().map(|r| (r.start(), r.end()));
        assert_eq!(parsed("2:3"), Some((2, Some(3))));
        assert_eq!(parsed("4:"), Some((4, None)));
        assert_eq!(parsed("5"), Some((5, Some(5))));
        for bad in ["0:1", "3:2", "a:b", "", ":"] {
            assert_eq!(
                LineRange::parse(bad).map_err(|e| e.kind()).err(),
                Some(ErrorKind::InvalidRange),
                "{bad}"
            );
        }
    }

    #[test]
    fn text_content_ranges_and_truncation() {
        let p = || ResourcePath::parse("a.txt").expect("path");
        let c = text_content(
            p(),
            b"one\ntwo\nthree\n",
            LineRange::parse("2:3").ok(),
            1000,
        )
        .expect("read");
        assert_eq!(
            (c.text.as_str(), c.first_line, c.last_line, c.total_lines),
            ("two\nthree\n", 2, 3, 3)
        );
        let c = text_content(p(), "ééééé".as_bytes(), None, 3).expect("read");
        assert!(c.truncated);
        assert!(c.text.starts_with("é\n[truncated"));
        let err = text_content(p(), b"x\n", LineRange::parse("5:").ok(), 10).expect_err("past end");
        assert_eq!(err.kind(), ErrorKind::InvalidRange);
        assert_eq!(
            text_content(p(), b"a\0b", None, 10)
                .map_err(|e| e.kind())
                .err(),
            Some(ErrorKind::Binary)
        );
        assert_eq!(
            text_content(p(), b"\xff\xfe", None, 10)
                .map_err(|e| e.kind())
                .err(),
            Some(ErrorKind::Binary)
        );
        assert!(looks_binary(b"\x89PNG\0"));
    }

    #[test]
    fn binary_refusals_name_type_and_size() {
        let p = ResourcePath::parse("assets/logo.png").expect("path");
        let err = text_content(p, b"\x89PNG\r\n\x1a\n\0\0", None, 10).expect_err("binary");
        assert_eq!(
            err.message(),
            "`assets/logo.png` is a binary file (image/png, 10 bytes) and cannot be read as text"
        );
        let p = ResourcePath::parse("data/blob.bin").expect("path");
        let err = text_content(p, b"\xff\xfe", None, 10).expect_err("binary");
        assert!(
            err.message()
                .contains("(application/octet-stream, 2 bytes)")
        );
    }

    #[test]
    fn mime_table_is_sorted_and_guesses() {
        assert!(MIME_TABLE.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(guess_mime("scripts/run.PY"), "text/x-python");
        assert_eq!(guess_mime("a/b.tar.gz"), "application/gzip");
        assert_eq!(guess_mime("Makefile"), "application/octet-stream");
        assert_eq!(guess_mime(".hidden"), "application/octet-stream");
        let b = ResourceBytes::new(
            ResourcePath::parse("x.dat").expect("path"),
            &b"%PDF-1.7"[..],
        );
        assert_eq!(
            (b.mime.as_str(), b.len(), b.is_text()),
            ("application/pdf", 8, true)
        );
    }
}
