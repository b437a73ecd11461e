//! Format sniffing and hardened extraction of zip, tar and tar.gz archives.
//!
//! No helper that trusts entry paths is used: every entry name is checked here,
//! only regular files and folders are created, and sizes are enforced by counting
//! the bytes actually read.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use skills_core::{Error, ErrorKind};

use super::{io_error, redact};

/// What a download turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Zip,
    Tar,
    TarGz,
    SkillMd,
}

impl Format {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Format::Zip => "zip",
            Format::Tar => "tar",
            Format::TarGz => "tar.gz",
            Format::SkillMd => "skill-md",
        }
    }
}

/// Extraction caps.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_entry_bytes: u64,
    pub(super) max_total_bytes: u64,
    pub(super) max_entries: usize,
    pub(super) max_path_bytes: usize,
    pub(super) max_depth: usize,
}

impl Limits {
    /// The caps set in `options`.
    pub(super) fn of(options: &super::RemoteOptions) -> Self {
        Self {
            max_entry_bytes: options.max_entry_bytes,
            max_total_bytes: options.max_total_bytes,
            max_entries: options.max_entries,
            max_path_bytes: options.max_path_bytes,
            max_depth: options.max_depth,
        }
    }
}

/// Decides the format from the first bytes, whatever the URL's extension says.
pub(super) fn sniff(path: &Path, url: &str) -> Result<Format, Error> {
    let mut head = [0u8; 512];
    let mut len = 0;
    let mut file =
        fs::File::open(path).map_err(|e| io_error(format!("cannot read {}", path.display()), e))?;
    while len < head.len() {
        match file.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(format!("cannot read {}", path.display()), e)),
        }
    }
    let head = &head[..len];
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Ok(Format::Zip);
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(Format::TarGz);
    }
    if head.get(257..262) == Some(b"ustar".as_slice()) {
        return Ok(Format::Tar);
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if text.starts_with(b"---") {
        return Ok(Format::SkillMd);
    }
    let shown = redact(url);
    if head.is_empty() {
        return Err(Error::new(
            ErrorKind::Other,
            format!("{shown}: the download is empty"),
        ));
    }
    let first: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let html = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .is_some_and(|i| text[i] == b'<');
    Err(Error::new(
        ErrorKind::Other,
        format!(
            "{shown}: not a zip, tar, tar.gz or SKILL.md (starts with bytes {}){}",
            first.join(" "),
            if html {
                "; it looks like an HTML page"
            } else {
                ""
            }
        ),
    ))
}

/// Extracts `archive` of `format` into `dest` (created).
pub(super) fn extract(
    archive: &Path,
    format: Format,
    dest: &Path,
    limits: &Limits,
    url: &str,
) -> Result<(), Error> {
    let span = tracing::info_span!(
        "skills.remote.extract",
        url = %redact(url),
        format = format.as_str(),
        entries = tracing::field::Empty,
        bytes = tracing::field::Empty,
        elapsed_ms = tracing::field::Empty,
    );
    let _guard = span.enter();
    let started = Instant::now();
    fs::create_dir(dest).map_err(|e| io_error(format!("cannot create {}", dest.display()), e))?;
    let mut ex = Extractor {
        dest,
        limits,
        shown: redact(url),
        entries: 0,
        total: 0,
        files: HashMap::new(),
        dirs: HashSet::new(),
        tripped: Rc::new(Cell::new(false)),
    };
    let result = extract_format(archive, format, &mut ex);
    span.record("entries", ex.entries as u64);
    span.record("bytes", ex.total);
    span.record("elapsed_ms", started.elapsed().as_millis() as u64);
    if let Err(err) = &result {
        tracing::warn!(error = %err, "refused archive");
    }
    result
}

fn extract_format(archive: &Path, format: Format, ex: &mut Extractor<'_>) -> Result<(), Error> {
    let limits = ex.limits;
    let open = || {
        fs::File::open(archive)
            .map(BufReader::new)
            .map_err(|e| io_error(format!("cannot read {}", archive.display()), e))
    };
    match format {
        Format::SkillMd => {
            ex.count()?;
            let mut file = open()?;
            ex.file("SKILL.md", Path::new("SKILL.md"), &mut file, false)
        }
        Format::Tar => extract_tar(open()?, ex),
        Format::TarGz => {
            // The inflated stream is capped too: the tar layer may skip entry data
            // it is not asked to read, and that must not inflate without bound.
            let slack = (limits.max_entries as u64)
                .saturating_add(2)
                .saturating_mul(4096)
                .saturating_add(1024 * 1024);
            let cap = limits.max_total_bytes.saturating_add(slack);
            let inflated = CappedReader {
                inner: flate2::bufread::MultiGzDecoder::new(open()?),
                remaining: cap,
                tripped: Rc::clone(&ex.tripped),
            };
            extract_tar(inflated, ex)
        }
        Format::Zip => extract_zip(open()?, ex),
    }
}

/// Reads at most `remaining` bytes, then fails and sets `tripped`.
struct CappedReader<R> {
    inner: R,
    remaining: u64,
    tripped: Rc<Cell<bool>>,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            // One probe byte tells a stream that ends exactly at the cap from one
            // that goes on.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => {
                    self.tripped.set(true);
                    Err(io::Error::other("inflated archive exceeds the size limit"))
                }
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.remaining -= n as u64;
        Ok(n)
    }
}

struct Extractor<'a> {
    dest: &'a Path,
    limits: &'a Limits,
    shown: String,
    entries: usize,
    total: u64,
    /// Files extracted so far, by case-folded path, with the name as written.
    files: HashMap<String, String>,
    /// Folders (explicit or implied by a file), by case-folded path.
    dirs: HashSet<String>,
    tripped: Rc<Cell<bool>>,
}

impl Extractor<'_> {
    fn count(&mut self) -> Result<(), Error> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(self.too_many_entries());
        }
        Ok(())
    }

    fn too_many_entries(&self) -> Error {
        Error::new(
            ErrorKind::TooLarge,
            format!(
                "{}: the archive has more than {} entries",
                self.shown, self.limits.max_entries
            ),
        )
    }

    fn too_large_total(&self) -> Error {
        Error::new(
            ErrorKind::TooLarge,
            format!(
                "{}: the archive extracts to more than {} bytes",
                self.shown, self.limits.max_total_bytes
            ),
        )
    }

    fn refuse(&self, name: &str, why: &str) -> Error {
        Error::new(
            ErrorKind::InvalidPath,
            format!(
                "{}: archive entry `{}` refused: {why}",
                self.shown,
                name.escape_debug()
            ),
        )
    }

    fn malformed(&self, err: impl std::fmt::Display) -> Error {
        if self.tripped.get() {
            return self.too_large_total();
        }
        Error::new(
            ErrorKind::Other,
            format!("{}: malformed or unsupported archive: {err}", self.shown),
        )
    }

    /// The checked relative path of an entry name; `None` for the archive root.
    fn rel_path(&self, name: &str) -> Result<Option<PathBuf>, Error> {
        if name.is_empty() {
            return Err(self.refuse(name, "empty name"));
        }
        if name.contains('\0') {
            return Err(self.refuse(name, "NUL in name"));
        }
        if name.contains('\\') {
            return Err(self.refuse(name, "backslash in name"));
        }
        if name.starts_with('/') {
            return Err(self.refuse(name, "absolute path"));
        }
        if name.len() > self.limits.max_path_bytes {
            return Err(self.refuse_too_large(
                name,
                &format!(
                    "name longer than the limit of {} bytes",
                    self.limits.max_path_bytes
                ),
            ));
        }
        let mut out = PathBuf::new();
        let mut depth = 0usize;
        for part in name.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(self.refuse(name, "`..` leaves the archive")),
                _ if part.contains(':') => {
                    return Err(self.refuse(name, "drive letter or `:` in name"));
                }
                _ => {
                    depth += 1;
                    if depth > self.limits.max_depth {
                        return Err(self.refuse_too_large(
                            name,
                            &format!(
                                "more than {} path components (the depth limit)",
                                self.limits.max_depth
                            ),
                        ));
                    }
                    out.push(part);
                }
            }
        }
        Ok((!out.as_os_str().is_empty()).then_some(out))
    }

    fn refuse_too_large(&self, name: &str, why: &str) -> Error {
        let shown: String = name.chars().take(120).collect();
        Error::new(
            ErrorKind::TooLarge,
            format!(
                "{}: archive entry `{}{}` refused: {why}",
                self.shown,
                shown.escape_debug(),
                if shown.len() < name.len() { "…" } else { "" }
            ),
        )
    }

    /// The key two names collide on: the normalized path (`a/./b` and `a//b` are
    /// `a/b`), case-folded because case-insensitive file systems (macOS, Windows)
    /// would store `SKILL.md` and `skill.md` as one file.
    fn key(rel: &Path) -> String {
        rel.to_string_lossy().to_lowercase()
    }

    /// Records a folder (and its parents), refusing one that is already a file.
    fn claim_dir(&mut self, rel: &Path) -> Result<(), Error> {
        for dir in rel.ancestors().filter(|a| !a.as_os_str().is_empty()) {
            let key = Self::key(dir);
            if let Some(first) = self.files.get(&key) {
                return Err(self.refuse(
                    &rel.to_string_lossy(),
                    &format!("`{first}` is both a file and a folder"),
                ));
            }
            if !self.dirs.insert(key) {
                break;
            }
        }
        Ok(())
    }

    fn dir(&mut self, rel: &Path) -> Result<(), Error> {
        self.claim_dir(rel)?;
        let path = self.dest.join(rel);
        fs::create_dir_all(&path)
            .map_err(|e| io_error(format!("cannot create {}", path.display()), e))
    }

    /// Extracts one file; `name` is its name as written in the archive.
    fn file(
        &mut self,
        name: &str,
        rel: &Path,
        reader: &mut dyn Read,
        executable: bool,
    ) -> Result<(), Error> {
        let written = name.to_owned();
        let key = Self::key(rel);
        if let Some(first) = self.files.get(&key) {
            let why = if *first == written {
                "duplicate entry (the archive holds this path twice)".to_owned()
            } else {
                format!("duplicate entry (same path as `{first}` once normalized)")
            };
            return Err(self.refuse(&written, &why));
        }
        if self.dirs.contains(&key) {
            return Err(self.refuse(&written, "the path is both a file and a folder"));
        }
        if let Some(parent) = rel.parent() {
            self.claim_dir(parent)?;
        }
        self.files.insert(key, written);
        let path = self.dest.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| io_error(format!("cannot create {}", parent.display()), e))?;
        }
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error(format!("cannot create {}", path.display()), e))?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut size: u64 = 0;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.malformed(e)),
            };
            size += n as u64;
            if size > self.limits.max_entry_bytes {
                return Err(Error::new(
                    ErrorKind::TooLarge,
                    format!(
                        "{}: archive entry `{}` is larger than the limit of {} bytes",
                        self.shown,
                        rel.display(),
                        self.limits.max_entry_bytes
                    ),
                ));
            }
            self.total += n as u64;
            if self.total > self.limits.max_total_bytes {
                return Err(self.too_large_total());
            }
            out.write_all(&buf[..n])
                .map_err(|e| io_error(format!("cannot write {}", path.display()), e))?;
        }
        set_executable(&path, executable)
    }
}

#[cfg(unix)]
fn set_executable(path: &Path, executable: bool) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt as _;
    if !executable {
        return Ok(());
    }
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| io_error(format!("cannot set permissions of {}", path.display()), e))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path, _executable: bool) -> Result<(), Error> {
    Ok(())
}

fn extract_tar<R: Read>(reader: R, ex: &mut Extractor<'_>) -> Result<(), Error> {
    use tar::EntryType;
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(|e| ex.malformed(e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| ex.malformed(e))?;
        ex.count()?;
        let name_bytes = entry.path_bytes().into_owned();
        let Ok(name) = String::from_utf8(name_bytes) else {
            return Err(ex.refuse(
                &String::from_utf8_lossy(&entry.path_bytes()),
                "name is not UTF-8",
            ));
        };
        let kind = entry.header().entry_type();
        match kind {
            EntryType::Symlink => return Err(ex.refuse(&name, "symbolic link")),
            EntryType::Link => return Err(ex.refuse(&name, "hard link")),
            // Metadata entries the tar reader does not fold in itself.
            EntryType::XGlobalHeader | EntryType::XHeader => continue,
            EntryType::Directory => {
                if let Some(rel) = ex.rel_path(&name)? {
                    ex.dir(&rel)?;
                }
            }
            EntryType::Regular | EntryType::Continuous if name.ends_with('/') => {
                if let Some(rel) = ex.rel_path(&name)? {
                    ex.dir(&rel)?;
                }
            }
            EntryType::Regular | EntryType::Continuous => {
                let Some(rel) = ex.rel_path(&name)? else {
                    return Err(ex.refuse(&name, "a file without a name"));
                };
                let executable = entry.header().mode().is_ok_and(|m| m & 0o111 != 0);
                ex.file(&name, &rel, &mut entry, executable)?;
            }
            other => {
                return Err(ex.refuse(&name, &format!("unsupported entry type {other:?}")));
            }
        }
    }
    if ex.tripped.get() {
        return Err(ex.too_large_total());
    }
    Ok(())
}

fn extract_zip<R: Read + Seek>(mut reader: R, ex: &mut Extractor<'_>) -> Result<(), Error> {
    // Refuse a huge entry count before the zip reader parses the central
    // directory.
    if let Some(declared) = zip_declared_entries(&mut reader).map_err(|e| ex.malformed(e))?
        && declared > ex.limits.max_entries as u64
    {
        return Err(ex.too_many_entries());
    }
    reader
        .seek(SeekFrom::Start(0))
        .map_err(|e| ex.malformed(e))?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| ex.malformed(e))?;
    if archive.len() > ex.limits.max_entries {
        return Err(ex.too_many_entries());
    }
    if archive.has_duplicate_names() {
        // The zip reader keeps one entry per name (the last one's data), while
        // `unzip` shows the first: a reviewer and an agent would read different
        // text.
        let mut seen = HashSet::new();
        let dup = archive
            .file_names_raw()
            .find(|n| !seen.insert(n.to_vec()))
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default();
        return Err(ex.refuse(&dup, "duplicate entry (the archive holds this path twice)"));
    }

    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| ex.malformed(e))?;
        ex.count()?;
        let name = match entry.name() {
            Ok(name) => name.into_owned(),
            Err(_) => {
                return Err(ex.refuse(
                    &String::from_utf8_lossy(entry.name_raw()),
                    "undecodable name",
                ));
            }
        };
        let mode = entry.unix_mode();
        if entry.is_symlink() || mode.is_some_and(|m| m & 0o170000 == 0o120000) {
            return Err(ex.refuse(&name, "symbolic link"));
        }
        if let Some(m) = mode {
            let ty = m & 0o170000;
            if ty != 0 && ty != 0o100000 && ty != 0o040000 {
                return Err(ex.refuse(&name, "special file"));
            }
        }
        if entry.is_dir() {
            if let Some(rel) = ex.rel_path(&name)? {
                ex.dir(&rel)?;
            }
            continue;
        }
        let Some(rel) = ex.rel_path(&name)? else {
            return Err(ex.refuse(&name, "a file without a name"));
        };
        let executable = mode.is_some_and(|m| m & 0o111 != 0);
        ex.file(&name, &rel, &mut entry, executable)?;
    }
    Ok(())
}

/// Signature of the End Of Central Directory record.
const EOCD_SIG: [u8; 4] = *b"PK\x05\x06";
/// Signature of the ZIP64 End Of Central Directory locator.
const EOCD64_LOCATOR_SIG: [u8; 4] = *b"PK\x06\x07";
/// Signature of the ZIP64 End Of Central Directory record.
const EOCD64_SIG: [u8; 4] = *b"PK\x06\x06";

/// The entry count a zip declares in its End Of Central Directory record (the
/// ZIP64 one when present), read from the file's tail. `None` when no record is
/// found (the zip reader then reports the archive as malformed).
fn zip_declared_entries<R: Read + Seek>(reader: &mut R) -> io::Result<Option<u64>> {
    let len = reader.seek(SeekFrom::End(0))?;
    // The record is 22 bytes plus a comment of up to 65 535 bytes.
    let tail_len = len.min(22 + 65_535);
    let tail_start = len - tail_len;
    reader.seek(SeekFrom::Start(tail_start))?;
    let mut tail = vec![0u8; usize::try_from(tail_len).unwrap_or(0)];
    reader.read_exact(&mut tail)?;
    let Some(at) = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..i + 4] == EOCD_SIG)
    else {
        return Ok(None);
    };
    let u16_at = |b: &[u8], i: usize| u64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let on_disk = u16_at(&tail, at + 8);
    let total = u16_at(&tail, at + 10);
    let mut count = on_disk.max(total);
    let mut zip64_found = false;
    // A ZIP64 locator sits just before the record.
    let eocd_pos = tail_start + at as u64;
    if eocd_pos >= 20 {
        let mut locator = [0u8; 20];
        reader.seek(SeekFrom::Start(eocd_pos - 20))?;
        reader.read_exact(&mut locator)?;
        if locator[..4] == EOCD64_LOCATOR_SIG {
            let mut off = [0u8; 8];
            off.copy_from_slice(&locator[8..16]);
            let offset = u64::from_le_bytes(off);
            let mut record = [0u8; 40];
            if offset.checked_add(40).is_some_and(|end| end <= len) {
                reader.seek(SeekFrom::Start(offset))?;
                reader.read_exact(&mut record)?;
                if record[..4] == EOCD64_SIG {
                    let u64_at = |i: usize| {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(&record[i..i + 8]);
                        u64::from_le_bytes(b)
                    };
                    // The ZIP64 counts replace the 16-bit ones (0xFFFF there).
                    count = u64_at(24).max(u64_at(32));
                    zip64_found = true;
                }
            }
            if !zip64_found && count == 0xFFFF {
                // A ZIP64 archive whose record is not where the locator says:
                // trust neither.
                return Ok(Some(u64::MAX));
            }
        }
    }
    Ok(Some(count))
}

/// The folder name for a skill whose `SKILL.md` sits at the top of a download:
/// its `name` when it parses, else the URL's last path segment without extension,
/// else `skill`.
pub(super) fn skill_folder_name(skill_md: &Path, url: &str) -> String {
    if let Some(name) = frontmatter_name(skill_md).filter(|n| is_plain_component(n)) {
        return name;
    }
    let path = url.split(['?', '#']).next().unwrap_or("");
    let mut segments = path
        .rsplit('/')
        .filter(|s| !s.is_empty())
        .filter(|s| !s.eq_ignore_ascii_case("skill.md"));
    let stem = segments.next().map_or("", |last| {
        let lower = last.to_ascii_lowercase();
        [".tar.gz", ".tgz", ".zip", ".tar", ".md"]
            .into_iter()
            .find(|ext| lower.ends_with(ext))
            .map_or(last, |ext| &last[..last.len() - ext.len()])
    });
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if is_plain_component(&clean) && !clean.contains("//") {
        clean
    } else {
        "skill".to_owned()
    }
}

/// The `name:` of a SKILL.md's frontmatter, found by a plain line scan of its
/// first 64 KiB: no YAML parser runs on untrusted input here (a deeply nested or
/// alias-bomb frontmatter cannot hurt), and the full parse happens later, under
/// the provider's limits.
fn frontmatter_name(skill_md: &Path) -> Option<String> {
    let mut head = Vec::new();
    fs::File::open(skill_md)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    for line in lines {
        if line.trim_end() == "---" {
            return None;
        }
        if let Some(value) = line.strip_prefix("name:") {
            let value = value.split(" #").next().unwrap_or("").trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            let plain = !value.is_empty()
                && value
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_' || c == '.');
            return plain.then(|| value.to_owned());
        }
    }
    None
}

pub(super) fn is_plain_component(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.starts_with('.')
        && !name.contains(['/', '\\', ':', '\0'])
}
