//! Format sniffing and hardened extraction of zip, tar and tar.gz archives.
//!
//! No helper that trusts entry paths is used: every entry name is checked here,
//! only regular files and folders are created, and sizes are enforced by counting
//! the bytes actually read.

use std::cell::Cell;
use std::collections::HashSet;
use std::fs;
use std::io::{self, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use skills_core::{Error, ErrorKind, Origin, ValidationOptions, parse_skill_md_bytes};

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
    fs::create_dir(dest).map_err(|e| io_error(format!("cannot create {}", dest.display()), e))?;
    let mut ex = Extractor {
        dest,
        limits,
        shown: redact(url),
        entries: 0,
        total: 0,
        seen: HashSet::new(),
        tripped: Rc::new(Cell::new(false)),
    };
    let open = || {
        fs::File::open(archive)
            .map(BufReader::new)
            .map_err(|e| io_error(format!("cannot read {}", archive.display()), e))
    };
    match format {
        Format::SkillMd => {
            ex.count()?;
            let mut file = open()?;
            ex.file(Path::new("SKILL.md"), &mut file, false)
        }
        Format::Tar => extract_tar(open()?, &mut ex),
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
            extract_tar(inflated, &mut ex)
        }
        Format::Zip => extract_zip(open()?, &mut ex),
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
    seen: HashSet<PathBuf>,
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
        let mut out = PathBuf::new();
        for part in name.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(self.refuse(name, "`..` leaves the archive")),
                _ if part.contains(':') => {
                    return Err(self.refuse(name, "drive letter or `:` in name"));
                }
                _ => out.push(part),
            }
        }
        Ok((!out.as_os_str().is_empty()).then_some(out))
    }

    fn dir(&mut self, rel: &Path) -> Result<(), Error> {
        let path = self.dest.join(rel);
        fs::create_dir_all(&path)
            .map_err(|e| io_error(format!("cannot create {}", path.display()), e))
    }

    fn file(&mut self, rel: &Path, reader: &mut dyn Read, executable: bool) -> Result<(), Error> {
        if !self.seen.insert(rel.to_path_buf()) {
            return Err(self.refuse(&rel.to_string_lossy(), "duplicate entry"));
        }
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
                ex.file(&rel, &mut entry, executable)?;
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

fn extract_zip<R: Read + io::Seek>(reader: R, ex: &mut Extractor<'_>) -> Result<(), Error> {
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| ex.malformed(e))?;
    if archive.len() > ex.limits.max_entries {
        return Err(ex.too_many_entries());
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
        ex.file(&rel, &mut entry, executable)?;
    }
    Ok(())
}

/// The folder name for a skill whose `SKILL.md` sits at the top of a download:
/// its `name` when it parses, else the URL's last path segment without extension,
/// else `skill`.
pub(super) fn skill_folder_name(skill_md: &Path, url: &str) -> String {
    let from_doc = fs::read(skill_md).ok().and_then(|bytes| {
        parse_skill_md_bytes(&bytes, Origin::default(), &ValidationOptions::lenient())
            .document
            .map(|d| d.metadata.name.as_str().to_owned())
    });
    if let Some(name) = from_doc.filter(|n| is_plain_component(n)) {
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

fn is_plain_component(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.starts_with('.')
        && !name.contains(['/', '\\', ':', '\0'])
}
