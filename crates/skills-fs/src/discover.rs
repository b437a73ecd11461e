//! Discovery: finding skill folders under roots and parsing their `SKILL.md` (F-PRV-3).
//!
//! Rules:
//! * A root is either one skill folder (it has a `SKILL.md`) or a folder searched
//!   recursively for skill folders, down to [`FsOptions::max_depth`] levels and at
//!   most [`FsOptions::max_dirs`] folders.
//! * Folders named in [`FsOptions::skip_dirs`] (version control, tool and
//!   dependency folders: `.git`, `node_modules`, `target`, … see
//!   [`DEFAULT_SKIP_DIRS`](crate::options::DEFAULT_SKIP_DIRS)) are not searched;
//!   other dot folders are (vendor libraries keep skills in `.curated/`,
//!   `.system/`, `.experimental/`).
//! * A skill folder's subfolders are its files, and may hold skills of their
//!   own (`acme/billing/refunds/SKILL.md` inside `acme/billing/`): with
//!   [`FsOptions::nested_skills`] (the default) they are searched too, within
//!   the same depth and folder limits, and each nested skill is listed on its
//!   own while its files stay in the enclosing skill's listing (as in rmcp's
//!   folder catalog). Inside a skill folder only real folders are searched
//!   (no symlinks, no dot folders, none of [`FsOptions::skip_dirs`]), and
//!   nothing there is counted or warned about: those folders are files of the
//!   skill, not a library.
//! * Every skill records its path below its root (`acme/billing`) as
//!   [`SkillMetadata::path`](skills_core::SkillMetadata::path); a root that
//!   is itself a skill folder has its folder name as the path.
//! * Every folder not searched is counted, one warning per reason: by name
//!   (`dirs-skipped`), at the depth limit or after the folder limit
//!   (`discovery-limit`). A folder whose name is not UTF-8 gets a `name-not-utf8`
//!   warning. A folder that cannot be listed, and a `SKILL.md` that cannot be
//!   read, are errors (`io-error`); a root that is not a folder is a
//!   `root-not-folder` error.
//! * `SKILL.md` is read by handle beneath its skill folder, like every resource
//!   (see [`crate::beneath`]): a `SKILL.md` symlink that stays inside the folder
//!   is followed, one leading out is a `path-outside-skill` error.
//! * Children are visited in byte order of their names, so results (and which of two
//!   same-named skills wins) are deterministic.
//! * Symlinked folders are followed; a folder reached twice (a symlink loop or two
//!   links to one place) is visited once.
//! * With [`FsOptions::single_file_skills`] (the default), a Markdown file at
//!   a root's top level (`<root>/notes.md`, opencode's shape) whose
//!   frontmatter has a top-level `description` is a single-file skill, named
//!   by its frontmatter `name`, else by the file's stem. Only regular files
//!   (or links to one inside the root) are read; `README.md`, `AGENTS.md`,
//!   `CLAUDE.md`, `CHANGELOG.md`, `LICENSE.md`, `CONTRIBUTING.md` and
//!   `SKILL.md` (any case) never are, and a file without such a frontmatter
//!   is silently not a skill. Its [`DiscoveredSkill::dir`] is the file
//!   itself; it has no other files. A root's single-file skills come after
//!   its folders, so a folder skill of the same name wins (`skill-duplicate`).
//! * After a skill's `SKILL.md` parsed, Codex's `agents/openai.yaml` beside
//!   it is read into its metadata (see [`crate::openai_yaml`]); a problem
//!   there is an `openai-yaml-invalid` warning, never an error.
//! * A bad skill yields diagnostics and is skipped; it never stops discovery.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use skills_core::{
    Code, Diagnostic, Origin, ResourcePath, SkillDocument, parse_skill_md_bytes,
    parse_skill_md_bytes_metadata,
};

use crate::beneath::Refusal;

use crate::cache::Stamp;
use crate::openai_yaml::{self, AgentsHint};
use crate::options::FsOptions;
use crate::vfs::{FileKind, FileStat, HeldDir, Vfs};

/// One skill folder (or single-file skill) found by discovery, valid or not.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DiscoveredSkill {
    /// The skill folder; for a single-file skill, the Markdown file itself.
    pub dir: PathBuf,
    /// The folder's path below its root, `/`-separated (`acme/billing`);
    /// `None` for a folder loaded on its own. Also set as the parsed
    /// metadata's [`path`](skills_core::SkillMetadata::path).
    pub path: Option<String>,
    /// Its `SKILL.md` (or `skill.md`), when there is one.
    pub skill_md: Option<PathBuf>,
    /// The parsed skill, when it is usable in the chosen mode.
    pub document: Option<SkillDocument>,
    /// Every problem found in this skill.
    pub diagnostics: Vec<Diagnostic>,
    /// `true` for a single-file skill (`<root>/<name>.md`, see
    /// [`FsOptions::single_file_skills`]): [`dir`](Self::dir) and
    /// [`skill_md`](Self::skill_md) are then the same file, and the skill has
    /// no other files.
    pub single_file: bool,
}

impl DiscoveredSkill {
    /// A skill at `dir` with nothing read yet.
    fn empty(dir: PathBuf) -> Self {
        Self {
            dir,
            path: None,
            skill_md: None,
            document: None,
            diagnostics: Vec::new(),
            single_file: false,
        }
    }

    /// `true` when the skill has no error diagnostic.
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The skill's name, when it parsed.
    pub fn name(&self) -> Option<&str> {
        self.document.as_ref().map(|d| d.metadata.name.as_str())
    }
}

/// Everything discovery found under a set of roots.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Discovery {
    /// Skill folders in discovery order (roots in order, then byte order of
    /// paths; each root's single-file skills after its folders).
    pub skills: Vec<DiscoveredSkill>,
    /// Problems not tied to one skill folder (unreadable roots, limits reached,
    /// folders without `SKILL.md`).
    pub diagnostics: Vec<Diagnostic>,
}

impl Discovery {
    /// `true` when no skill and no root has an error diagnostic.
    pub fn is_valid(&self) -> bool {
        self.skills.iter().all(DiscoveredSkill::is_valid)
            && !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Picks the first usable skill of each name and adds a `skill-duplicate`
    /// warning to every later one. Returns name → index into `skills`.
    pub fn index_by_name(&mut self) -> BTreeMap<String, usize> {
        // Sorted by name, equal names in the order found (a stable sort):
        // the first of each run wins. Names mostly come in folder order,
        // nearly sorted already, and the map is built from sorted keys
        // without a search per key.
        let mut order: Vec<(&str, usize)> = self
            .skills
            .iter()
            .enumerate()
            .filter_map(|(i, skill)| skill.name().map(|name| (name, i)))
            .collect();
        order.sort_by(|a, b| a.0.cmp(b.0));
        let mut index = Vec::with_capacity(order.len());
        let mut losers = Vec::new();
        for (k, &(name, i)) in order.iter().enumerate() {
            match k.checked_sub(1).map(|prev| order[prev]) {
                Some((previous, _)) if previous == name => {
                    let winner = index
                        .last()
                        .map_or(i, |&(_, first): &(String, usize)| first);
                    losers.push((name.to_owned(), i, winner));
                }
                _ => index.push((name.to_owned(), i)),
            }
        }
        for (name, i, first) in losers {
            let winner = self.skills[first].dir.display().to_string();
            let loser = &mut self.skills[i];
            let message = format!(
                "skill `{name}` in `{}` is ignored: `{winner}` has the same name and was found first",
                loser.dir.display()
            );
            let mut diag = Diagnostic::warning(Code::SkillDuplicate, message);
            if let Some(md) = &loser.skill_md {
                diag = diag.in_file(md.display().to_string());
            }
            loser.diagnostics.push(diag);
        }
        index.into_iter().collect()
    }
}

/// Finds and parses every skill under `roots`, through `vfs`.
pub(crate) fn discover_in(vfs: &dyn Vfs, roots: &[PathBuf], options: &FsOptions) -> Discovery {
    discover_watched(vfs, roots, options).discovery
}

/// A discovery and what the staleness check needs to tell whether it is still
/// current.
#[derive(Debug)]
pub(crate) struct Watched {
    pub(crate) discovery: Discovery,
    /// One stat per folder looked into (roots, searched folders, skill folders),
    /// taken before the folder was read.
    pub(crate) dirs: Vec<Stamp>,
    /// One stat per `SKILL.md` read, taken before it was read; parallel to
    /// `discovery.skills`.
    pub(crate) skill_mds: Vec<Stamp>,
    /// One stat per `agents/openai.yaml` of a skill with an `agents/` folder
    /// (`None` when the file is absent): always checked.
    pub(crate) sidecars: Vec<Stamp>,
}

/// Discovery that also records the stats it made.
pub(crate) fn discover_watched(vfs: &dyn Vfs, roots: &[PathBuf], options: &FsOptions) -> Watched {
    discover_watched_with(vfs, roots, options, true)
}

/// [`discover_watched`]; without `bodies`, for a caller that keeps only
/// metadata, no document keeps its body (it is never copied) and a skill
/// with a document has its path in the metadata only
/// ([`DiscoveredSkill::path`] is `None`).
pub(crate) fn discover_watched_with(
    vfs: &dyn Vfs,
    roots: &[PathBuf],
    options: &FsOptions,
    bodies: bool,
) -> Watched {
    let _span = tracing::debug_span!("discover", roots = roots.len()).entered();
    // The skills found so far are read and parsed on other threads while the
    // walk lists the next folders.
    let ((mut out, dirs, dirs_seen), loaded) = crate::parallel::map_streamed(
        |feed| {
            let mut sink = |found: Vec<Pending>| feed.send(found);
            let mut walk = Walk {
                vfs,
                options,
                out: Discovery::default(),
                visited: HashSet::new(),
                dirs_seen: 0,
                skipped: Skipped::default(),
                dirs: Vec::new(),
                pending: Vec::new(),
                sent: 0,
                sink: &mut sink,
                files: Vec::new(),
            };
            for root in roots {
                walk.root(root);
            }
            walk.report_skipped();
            walk.flush(0);
            (walk.out, walk.dirs, walk.dirs_seen)
        },
        |p| load_one(vfs, options, p, bodies),
    );
    let mut skill_mds = Vec::with_capacity(loaded.len());
    let mut sidecars = Vec::new();
    out.skills.reserve(loaded.len());
    // `None`: a Markdown file at the top level that is not a skill.
    for loaded in loaded.into_iter().flatten() {
        out.skills.push(loaded.skill);
        skill_mds.push(loaded.md);
        sidecars.extend(loaded.sidecar);
    }
    tracing::debug!(skills = out.skills.len(), folders = dirs_seen, "discovered");
    Watched {
        discovery: out,
        dirs,
        skill_mds,
        sidecars,
    }
}

/// A skill folder (or a candidate single-file skill) the walk found, to be
/// read and parsed.
struct Pending {
    dir: PathBuf,
    /// Below its root, `/`-separated.
    path: String,
    md: PathBuf,
    stat: Option<FileStat>,
    /// What the walk saw of the folder's `agents` entry; `None` for a
    /// candidate single-file skill (`md` is `dir`).
    agents: Option<AgentsHint>,
    /// The folder, still open from its listing when the file system keeps it.
    held: HeldDir,
}

/// One skill read: the skill, the stat of its `SKILL.md` taken before it was
/// read, and the stamp of its `agents/openai.yaml` when it has an `agents/`
/// folder.
pub(crate) struct LoadedMd {
    pub(crate) skill: DiscoveredSkill,
    pub(crate) md: Stamp,
    pub(crate) sidecar: Option<Stamp>,
}

/// Reads and parses one skill the walk found, and gives it its path below
/// the root; `None` for a Markdown file that is not a skill. Without
/// `bodies`, the document comes back with an empty body, and a skill with
/// a document has its path in the document's metadata only.
fn load_one(vfs: &dyn Vfs, options: &FsOptions, p: Pending, bodies: bool) -> Option<LoadedMd> {
    let mut loaded = match p.agents {
        Some(hint) => {
            let before = Before {
                stat: p.stat,
                held: p.held,
            };
            // The folder's path moves into the skill.
            Some(load_skill_md(
                vfs, p.dir, p.md, before, hint, options, bodies,
            ))
        }
        None => load_skill_file(vfs, &p.dir, p.stat, options),
    }?;
    match &mut loaded.skill.document {
        // Without bodies (a snapshot, which keeps the metadata and drops the
        // rest), only the metadata holds the path.
        Some(document) if !bodies => {
            document.body = String::new();
            document.metadata.path = Some(p.path);
        }
        Some(document) => {
            document.metadata.path = Some(p.path.clone());
            loaded.skill.path = Some(p.path);
        }
        None => loaded.skill.path = Some(p.path),
    }
    Some(loaded)
}

/// Finds the `SKILL.md` of a folder (`skill.md` as a fallback), through `vfs`.
pub(crate) fn find_skill_md_in(vfs: &dyn Vfs, dir: &Path) -> Option<PathBuf> {
    ["SKILL.md", "skill.md"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| vfs.symlink_metadata(p).is_ok())
}

/// Reads and parses one skill folder, through `vfs`.
pub(crate) fn load_skill_dir_in(vfs: &dyn Vfs, dir: &Path, options: &FsOptions) -> DiscoveredSkill {
    load_skill_dir_stamped(vfs, dir, AgentsHint::Unknown, options).0
}

/// [`load_skill_dir_in`], also returning the stats taken before reading: of
/// the `SKILL.md`, and of `agents/openai.yaml` when there is an `agents/`
/// folder (`hint`: what the caller knows of it; [`AgentsHint::Absent`] does
/// not read it).
pub(crate) fn load_skill_dir_stamped(
    vfs: &dyn Vfs,
    dir: &Path,
    hint: AgentsHint,
    options: &FsOptions,
) -> (DiscoveredSkill, Vec<Stamp>) {
    match find_skill_md_in(vfs, dir) {
        Some(md) => {
            let loaded = load_skill_md(
                vfs,
                dir.to_path_buf(),
                md,
                Before::default(),
                hint,
                options,
                true,
            );
            let stamps = std::iter::once(loaded.md).chain(loaded.sidecar).collect();
            (loaded.skill, stamps)
        }
        None => {
            let mut skill = DiscoveredSkill::empty(dir.to_path_buf());
            skill.diagnostics.push(Diagnostic::error(
                Code::SkillMdMissing,
                format!("`{}` has no SKILL.md", dir.display()),
            ));
            (skill, Vec::new())
        }
    }
}

/// Reads the single-file skill `file` again (for `get`), with the stat of the
/// file taken before it was read. A file that is no longer a skill (gone, or
/// without a frontmatter `description`) gives a skill without a document and
/// a `skill-md-missing` error.
pub(crate) fn load_skill_file_stamped(
    vfs: &dyn Vfs,
    file: &Path,
    options: &FsOptions,
) -> (DiscoveredSkill, Vec<Stamp>) {
    match load_skill_file(vfs, file, None, options) {
        Some(loaded) => (loaded.skill, vec![loaded.md]),
        None => {
            let mut skill = DiscoveredSkill::empty(file.to_path_buf());
            skill.single_file = true;
            skill.diagnostics.push(Diagnostic::error(
                Code::SkillMdMissing,
                format!(
                    "`{}` is not a single-file skill (any more): it is gone, unreadable or has no frontmatter `description`",
                    file.display()
                ),
            ));
            (skill, vec![Stamp::new(file, vfs.metadata(file).ok())])
        }
    }
}

/// Names of Markdown files at a root's top level that are never single-file
/// skills (compared without regard to case).
const NOT_SKILL_FILES: &[&str] = &[
    "skill.md",
    "readme.md",
    "agents.md",
    "claude.md",
    "changelog.md",
    "license.md",
    "contributing.md",
];

/// Whether a top-level file named `name` may be a single-file skill: a
/// `.md` file (any case) not in [`NOT_SKILL_FILES`], not hidden.
fn single_file_candidate(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.len() > 3
        && lower.ends_with(".md")
        && !lower.starts_with('.')
        && !NOT_SKILL_FILES.contains(&lower.as_str())
}

/// Reads the Markdown file `file` at a root's top level (`stat`: its
/// `metadata`, when the caller has it); `None` when it cannot be read (a link
/// leading out of the root, too large, gone) or is not a skill (no
/// frontmatter with a top-level `description`).
fn load_skill_file(
    vfs: &dyn Vfs,
    file: &Path,
    stat: Option<FileStat>,
    options: &FsOptions,
) -> Option<LoadedMd> {
    let shown = file.display().to_string();
    let _span = tracing::debug_span!("skill_file", path = %shown).entered();
    let root = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = file.file_name()?.to_str()?;
    let rel = ResourcePath::parse(name).ok()?;
    let (meta, bytes) = match vfs.read_beneath(root, &rel, options.max_skill_md_bytes) {
        Ok(read) => read,
        Err(err) => {
            tracing::debug!(error = %err, "not read as a single-file skill");
            return None;
        }
    };
    let md = Stamp::new(file, Some(meta).or(stat));
    let keys = frontmatter_keys(&bytes);
    if !keys.description {
        tracing::trace!("no frontmatter description: not a skill");
        return None;
    }
    let stem = Path::new(name).file_stem().and_then(|s| s.to_str());
    // Named by the frontmatter, else by the stem (then a missing `name` is
    // this shape's rule, not a problem to report).
    let dir_name = if keys.name { None } else { stem };
    let outcome = parse_skill_md_bytes(
        &bytes,
        Origin::new(Some(&shown), dir_name),
        &options.validation,
    );
    let mut skill = DiscoveredSkill::empty(file.to_path_buf());
    skill.single_file = true;
    skill.skill_md = Some(file.to_path_buf());
    skill.document = outcome.document;
    skill.diagnostics = outcome.diagnostics;
    if !keys.name {
        skill
            .diagnostics
            .retain(|d| d.code != Code::NameMissing || d.is_error());
    }
    Some(LoadedMd {
        skill,
        md,
        sidecar: None,
    })
}

/// Which keys the frontmatter of a Markdown file has at its top level.
#[derive(Debug, Default, PartialEq, Eq)]
struct FrontmatterKeys {
    name: bool,
    description: bool,
}

/// Looks at the text only: a first line `---`, then lines up to a closing
/// `---`; a key counts when its line starts with it (no indentation),
/// quoted or not, followed by `:`. Anything else (no fence, no closing fence,
/// not UTF-8) has no keys.
fn frontmatter_keys(bytes: &[u8]) -> FrontmatterKeys {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return FrontmatterKeys::default();
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().map(|l| l.trim_end_matches(['\r', ' ', '\t']));
    if lines.next() != Some("---") {
        return FrontmatterKeys::default();
    }
    let mut found = FrontmatterKeys::default();
    for line in lines {
        if line == "---" {
            return found;
        }
        let Some((key, _)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim_end();
        let key = ["\"", "'"]
            .iter()
            .find_map(|q| key.strip_prefix(q).and_then(|k| k.strip_suffix(q)))
            .unwrap_or(key);
        match key {
            "name" => found.name = true,
            "description" => found.description = true,
            _ => {}
        }
    }
    // Not closed: not a frontmatter.
    FrontmatterKeys::default()
}

/// Reads and parses the `SKILL.md` at `md` of the skill folder `dir` (`stat`:
/// its `metadata`, when the caller has it), then its `agents/openai.yaml`
/// (`hint`: what the walk saw of `agents`); also returns the stats taken
/// before reading them.
fn load_skill_md(
    vfs: &dyn Vfs,
    dir: PathBuf,
    md: PathBuf,
    before: Before,
    hint: AgentsHint,
    options: &FsOptions,
    body: bool,
) -> LoadedMd {
    let mut skill = DiscoveredSkill::empty(dir);
    let dir = skill.dir.as_path();
    let failed = |skill: DiscoveredSkill, md: &Path, stat: Option<FileStat>| LoadedMd {
        skill,
        md: Stamp::new(md, stat),
        sidecar: None,
    };
    skill.skill_md = Some(md.clone());
    // A UTF-8 path is borrowed as it is (`display` goes through the
    // formatter and a lossy decode); each diagnostic copies it.
    let file: Cow<'_, str> = skill
        .skill_md
        .as_deref()
        .and_then(Path::to_str)
        .map_or_else(|| Cow::Owned(md.display().to_string()), Cow::Borrowed);
    let error = |code: Code, message: String| Diagnostic::error(code, message).in_file(&*file);
    let _span = tracing::debug_span!("skill_md", path = %file).entered();
    // Read by handle beneath the skill folder, like every resource: a link
    // inside the folder is followed, one leading out is refused.
    // `SKILL.md` itself (nearly always) is parsed once per process.
    static SKILL_MD: std::sync::LazyLock<Option<ResourcePath>> =
        std::sync::LazyLock::new(|| ResourcePath::parse("SKILL.md").ok());
    let name = match md.file_name().and_then(|n| n.to_str()) {
        Some("SKILL.md") => SKILL_MD.as_ref().map(Cow::Borrowed),
        Some(other) => ResourcePath::parse(other).ok().map(Cow::Owned),
        None => None,
    };
    let Some(name) = name else {
        skill.diagnostics.push(error(
            Code::IoError,
            "cannot read SKILL.md: its path has no file name".to_owned(),
        ));
        // Nothing is read: whatever the file holds, the outcome is the same.
        let stat = before.stat.or_else(|| vfs.metadata(&md).ok());
        return failed(skill, &md, stat);
    };
    let mut bytes = take_read_buffer();
    let read = read_stamped(
        vfs,
        dir,
        &name,
        &md,
        before,
        options.max_skill_md_bytes,
        &mut bytes,
    );
    let meta = match read {
        Ok(meta) => meta,
        Err((stamp, err)) => {
            let diag = match Refusal::of(&err) {
                Some(Refusal::NotRegular(kind)) => {
                    tracing::warn!(kind = ?kind, "refused SKILL.md: not a regular file");
                    error(
                        Code::SkillMdNotFile,
                        format!(
                            "SKILL.md is not a regular file (it is {})",
                            match kind {
                                FileKind::Dir => "a directory",
                                FileKind::Symlink => "a symbolic link",
                                _ => "a pipe, device or socket",
                            }
                        ),
                    )
                }
                Some(Refusal::TooLarge { len, cap }) => {
                    tracing::warn!(bytes = len, cap, "refused SKILL.md: too large");
                    error(
                        Code::SkillMdTooLarge,
                        format!("SKILL.md is {len} bytes; the limit is {cap} bytes"),
                    )
                }
                Some(Refusal::OutsideRoot) => {
                    tracing::warn!("refused SKILL.md: a symlink leading outside the skill folder");
                    error(
                        Code::PathOutsideSkill,
                        "SKILL.md is a symlink leading outside the skill folder; it is not read"
                            .to_owned(),
                    )
                }
                None => error(Code::IoError, format!("cannot read SKILL.md: {err}")),
            };
            skill.diagnostics.push(diag);
            return failed(skill, &md, stamp);
        }
    };
    tracing::debug!(bytes = bytes.len(), "read SKILL.md");
    let stamp = Stamp {
        path: md,
        stat: Some(meta),
    };
    // `.` or `..` have no file name: use the real folder's name.
    let canonical = dir
        .file_name()
        .is_none()
        .then(|| vfs.canonicalize(dir).ok())
        .flatten();
    let dir_name = canonical
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .and_then(|n| n.to_str());
    let parse = if body {
        parse_skill_md_bytes
    } else {
        parse_skill_md_bytes_metadata
    };
    let outcome = parse(
        &bytes,
        Origin::new(Some(&file), dir_name),
        &options.validation,
    );
    give_back_read_buffer(bytes);
    skill.document = outcome.document;
    skill.diagnostics = outcome.diagnostics;
    let sidecar = match &mut skill.document {
        Some(document) => openai_yaml::apply(
            vfs,
            dir,
            hint,
            &mut document.metadata,
            &mut skill.diagnostics,
        ),
        None => None,
    };
    LoadedMd {
        skill,
        md: stamp,
        sidecar,
    }
}

/// The largest read buffer a thread keeps between two `SKILL.md` reads:
/// most files are a few KiB; a rare large one is not held on to.
const KEPT_READ_BUFFER: usize = 256 * 1024;

thread_local! {
    /// This thread's buffer for reading `SKILL.md` files: reused, so that
    /// thousands of reads make no allocation of a few KiB each (each of
    /// which, as a "large" request to the C allocator, also merges its
    /// free lists).
    static READ_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// This thread's read buffer (empty if another read holds it).
fn take_read_buffer() -> Vec<u8> {
    READ_BUFFER.with(std::cell::Cell::take)
}

/// Gives `buf` back for the next read on this thread, unless it grew large.
fn give_back_read_buffer(mut buf: Vec<u8>) {
    if buf.capacity() <= KEPT_READ_BUFFER {
        buf.clear();
        READ_BUFFER.with(|kept| kept.set(buf));
    }
}

/// What the walk has of a file before [`read_stamped`] reads it.
#[derive(Debug, Default)]
pub(crate) struct Before {
    /// The file's `metadata`, when the caller took one.
    pub(crate) stat: Option<FileStat>,
    /// Its folder, still open from the listing (the first read opens the
    /// file beneath it).
    pub(crate) held: HeldDir,
}

/// Reads the watched file `rel` beneath the skill folder `dir` (at `path`;
/// `before.stat`: its `metadata` when the caller took one before) into `buf`. On
/// success, the stat is the `fstat` of the handle that was read, taken
/// before reading.
///
/// On failure, the error comes with the stat to stamp the file with, which
/// must not be taken after the read that failed: a fix landing between the
/// two (in place, keeping the modification time) would be recorded as the
/// broken state, and never looked at again. So, without a `stat` from
/// before, the file is stat'ed and then read once more, and that second
/// read decides. A missing file is stamped as missing (any file appearing
/// there later differs from that), without a second read. Broken files are
/// rare: a successful read costs nothing more.
pub(crate) fn read_stamped(
    vfs: &dyn Vfs,
    dir: &Path,
    rel: &ResourcePath,
    path: &Path,
    before: Before,
    cap: u64,
    buf: &mut Vec<u8>,
) -> Result<FileStat, (Option<FileStat>, io::Error)> {
    let Before { stat, held } = before;
    let err = match vfs.read_beneath_held_into(held, dir, rel, cap, buf) {
        Ok(read) => return Ok(read),
        Err(err) => err,
    };
    if stat.is_some() || err.kind() == io::ErrorKind::NotFound {
        return Err((stat, err));
    }
    let before = vfs.metadata(path).ok();
    vfs.read_beneath_into(dir, rel, cap, buf)
        .map_err(|err| (before, err))
}

/// `dir.join(name)` in one allocation (`Path::join` copies `dir`, then
/// grows the copy for `name`).
fn join(dir: &Path, name: impl AsRef<OsStr>) -> PathBuf {
    let name = name.as_ref();
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
    path.push(dir);
    path.push(name);
    path
}

/// How many found skills the walk gathers before handing them over.
const FLUSH_AT: usize = 16;

struct Walk<'a> {
    vfs: &'a dyn Vfs,
    options: &'a FsOptions,
    out: Discovery,
    visited: HashSet<DirId>,
    dirs_seen: usize,
    skipped: Skipped,
    dirs: Vec<Stamp>,
    /// Skill folders found and not yet handed to `sink`.
    pending: Vec<Pending>,
    /// How many were handed to `sink` (the index of `pending[0]`).
    sent: usize,
    /// Takes found skills, in order, to be read and parsed while the walk
    /// goes on.
    sink: &'a mut dyn FnMut(Vec<Pending>),
    /// The current root's candidate single-file skills, queued after its
    /// folders.
    files: Vec<Pending>,
}

/// Folders discovery did not search, per reason.
#[derive(Debug, Default)]
struct Skipped {
    /// By name ([`FsOptions::skip_dirs`]): how many of each name.
    by_name: BTreeMap<String, usize>,
    /// Folders at the depth limit whose contents were not searched.
    by_depth: usize,
    /// Folders not searched because the folder limit was reached.
    by_count: usize,
}

impl Walk<'_> {
    fn root(&mut self, root: &Path) {
        let meta = self.vfs.metadata(root);
        // A missing root is recorded too, so that creating it is noticed.
        self.dirs
            .push(Stamp::new(root, meta.as_ref().ok().copied()));
        let meta = match meta {
            Ok(meta) if meta.is_dir() => meta,
            Ok(_) => {
                self.out.diagnostics.push(Diagnostic::error(
                    Code::RootNotFolder,
                    format!("skills root `{}` is not a folder", root.display()),
                ));
                return;
            }
            Err(err) => {
                self.out.diagnostics.push(Diagnostic::error(
                    Code::IoError,
                    format!("cannot read skills root `{}`: {err}", root.display()),
                ));
                return;
            }
        };
        if let Some((md, stat)) = self.probe(root) {
            if self.first_visit(root, &meta) {
                let path = folder_name(self.vfs, root);
                let at = self.load(root, &path, md, stat);
                self.nested_in(root, 1, &path, at);
            }
            return;
        }
        self.first_visit(root, &meta);
        self.children(root, 1, "");
        // After the root's folders, so a folder skill of the same name wins.
        let files = std::mem::take(&mut self.files);
        self.pending.extend(files);
    }

    /// [`find_skill_md_in`], trying the common case first: one `stat` of
    /// `SKILL.md`, whose result the load reuses.
    fn probe(&self, dir: &Path) -> Option<(PathBuf, Option<FileStat>)> {
        let md = dir.join("SKILL.md");
        match self.vfs.metadata(&md) {
            Ok(stat) => Some((md, Some(stat))),
            // Missing, or a dangling link (reported when loaded), or `skill.md`.
            Err(_) => find_skill_md_in(self.vfs, dir).map(|md| (md, None)),
        }
    }

    /// Hands the skills found so far to `sink` once there are at least
    /// `min` of them. Only called where every one is complete: between two
    /// entries of a folder being searched, and at the end.
    fn flush(&mut self, min: usize) {
        if !self.pending.is_empty() && self.pending.len() >= min {
            let found = std::mem::take(&mut self.pending);
            self.sent += found.len();
            (self.sink)(found);
        }
    }

    /// The found skill [`Walk::load`] numbered `at`, while it is not yet
    /// handed over (always, where it is asked for).
    fn pending_mut(&mut self, at: usize) -> Option<&mut Pending> {
        let i = at.checked_sub(self.sent)?;
        self.pending.get_mut(i)
    }

    /// Queues the skill folder `dir` for loading; returns its number (its
    /// index among all found skills).
    fn load(&mut self, dir: &Path, path: &str, md: PathBuf, stat: Option<FileStat>) -> usize {
        self.pending.push(Pending {
            dir: dir.to_path_buf(),
            path: path.to_owned(),
            md,
            stat,
            agents: Some(AgentsHint::Unknown),
            held: HeldDir::default(),
        });
        self.sent + self.pending.len() - 1
    }

    /// [`Walk::load`] of a skill folder whose listing was made: takes the
    /// folder's path and name, and its `agents` hint.
    fn queue(
        &mut self,
        dir: PathBuf,
        path: String,
        md: PathBuf,
        agents: Option<AgentsHint>,
        held: HeldDir,
    ) {
        self.pending.push(Pending {
            dir,
            path,
            md,
            stat: None,
            agents,
            held,
        });
    }

    /// Queues the Markdown file `file` at the root's top level (named `name`,
    /// stat'ed as `meta`) as a candidate single-file skill, and stamps it:
    /// editing it in place can turn it into a skill or change one.
    fn candidate_file(&mut self, file: PathBuf, name: &str, meta: FileStat) {
        self.dirs.push(Stamp::new(&file, Some(meta)));
        self.files.push(Pending {
            md: file.clone(),
            dir: file,
            path: name.to_owned(),
            stat: Some(meta),
            agents: None,
            held: HeldDir::default(),
        });
    }

    /// Counts the folder `path` against the folder limit and records its
    /// stamp (`meta`, taken before it is read: any later change shows);
    /// `false` when it is not to be searched (the limit is reached, counted
    /// in the warning, or it was visited already).
    fn enter(&mut self, path: &Path, meta: FileStat) -> bool {
        if self.dirs_seen >= self.options.max_dirs {
            self.skipped.by_count += 1;
            return false;
        }
        self.dirs_seen += 1;
        if !self.first_visit(path, &meta) {
            return false;
        }
        self.dirs.push(Stamp::new(path, Some(meta)));
        true
    }

    /// Records a folder; `false` when it was already visited (loop or alias).
    fn first_visit(&mut self, dir: &Path, meta: &FileStat) -> bool {
        match dir_id(self.vfs, dir, meta) {
            Some(id) => self.visited.insert(id),
            None => true,
        }
    }

    /// Searches the children of `dir` (at `depth` below the root, at `rel`
    /// below it); returns how many skill folders were found.
    fn children(&mut self, dir: &Path, depth: usize, rel: &str) -> usize {
        self.children_listed(dir, None, depth, rel)
    }

    /// [`Walk::children`], with the names of `dir`'s entries when the caller
    /// listed it already.
    fn children_listed(
        &mut self,
        dir: &Path,
        listed: Option<Vec<OsString>>,
        depth: usize,
        rel: &str,
    ) -> usize {
        let listing = match listed {
            Some(names) => Ok(names),
            None => self.vfs.read_dir(dir),
        };
        let entries = match listing {
            Ok(entries) => entries,
            Err(err) => {
                // Vanished since it was seen: a race, not a broken library.
                let diag = if err.kind() == std::io::ErrorKind::NotFound {
                    Diagnostic::warning
                } else {
                    Diagnostic::error
                };
                tracing::warn!(folder = %dir.display(), error = %err, "cannot list a folder");
                self.out.diagnostics.push(diag(
                    Code::IoError,
                    format!("cannot list `{}`: {err}", dir.display()),
                ));
                return 0;
            }
        };
        let mut names = entries;
        // A listing holds no name twice: an unstable sort gives the one
        // order, without the stable sort's buffer.
        names.sort_unstable();
        tracing::trace!(folder = %dir.display(), entries = names.len(), "searching");
        let mut found = 0;
        for name in names {
            // Every skill found under the entries before is complete.
            self.flush(FLUSH_AT);
            let path = join(dir, &name);
            let text = name.to_str();
            if let Some(text) = text
                && self.options.skip_dirs.iter().any(|d| d == text)
            {
                if self.vfs.metadata(&path).is_ok_and(|m| m.is_dir()) {
                    *self.skipped.by_name.entry(text.to_owned()).or_default() += 1;
                }
                continue;
            }
            // A folder whose skills will be searched is stat'ed and listed
            // in one go (one lookup of its path); the listing is used below,
            // once the folder is entered.
            let search = self.options.nested_skills
                && depth < self.options.max_depth
                && self.dirs_seen < self.options.max_dirs;
            let (stat, mut listing, held) = if search {
                match self.vfs.metadata_list_and_hold(&path) {
                    Ok((meta, listing, held)) => (Ok(meta), listing, held),
                    Err(err) => (Err(err), None, HeldDir::default()),
                }
            } else {
                (self.vfs.metadata(&path), None, HeldDir::default())
            };
            let meta = match stat {
                Ok(meta) if meta.is_dir() => meta,
                Ok(meta) => {
                    if depth == 1
                        && meta.is_file()
                        && self.options.single_file_skills
                        && let Some(text) = text
                        && single_file_candidate(text)
                    {
                        self.candidate_file(path, text, meta);
                    }
                    continue;
                }
                Err(_) => continue,
            };
            let Some(text) = text else {
                self.out.diagnostics.push(Diagnostic::warning(
                    Code::NameNotUtf8,
                    format!(
                        "skipped the folder `{}`: its name is not valid UTF-8",
                        path.display()
                    ),
                ));
                continue;
            };
            let child_rel = if rel.is_empty() {
                text.to_owned()
            } else {
                format!("{rel}/{text}")
            };
            if !self.enter(&path, meta) {
                continue;
            }
            // When its skills would be searched anyway, one listing of the
            // folder tells whether it is a skill folder (no `stat` of
            // `SKILL.md`) and is reused below.
            let mut listed = None;
            let mut ask = true;
            if self.options.nested_skills
                && depth < self.options.max_depth
                && let Ok(entries) = listing
                    .take()
                    .unwrap_or_else(|| self.vfs.read_dir_kinds(&path))
            {
                let manifest = manifest_in(&entries);
                if let Manifest::Found(md) = manifest {
                    let md = join(&path, md);
                    let agents = Some(AgentsHint::from_listing(&entries));
                    // The folder's path and name move into the queue unless
                    // a nested search still needs them.
                    if entries
                        .iter()
                        .any(|(name, kind)| nest_candidate(self.options, name, *kind).is_some())
                    {
                        self.queue(path.clone(), child_rel.clone(), md, agents, held);
                        found += 1 + self.nested(&path, entries, depth + 1, &child_rel);
                    } else {
                        self.queue(path, child_rel, md, agents, held);
                        found += 1;
                    }
                    continue;
                }
                // A name a case-insensitive file system might take for
                // `SKILL.md`: only a `stat` tells. If it is no skill folder,
                // the listing is searched below, not made again.
                ask = manifest == Manifest::Ask;
                listed = Some(entries.into_iter().map(|(name, _)| name).collect());
            }
            // Not a skill folder by its listing: nothing is read beneath
            // the handle, which is not kept while its folders are searched.
            drop(held);
            if ask && let Some((md, stat)) = self.probe(&path) {
                let at = self.load(&path, &child_rel, md, stat);
                found += 1 + self.nested_in(&path, depth + 1, &child_rel, at);
                continue;
            }
            let below = if depth < self.options.max_depth {
                self.children_listed(&path, listed, depth + 1, &child_rel)
            } else {
                self.skipped.by_depth += 1;
                0
            };
            if below == 0 && depth == 1 && looks_like_skill(self.vfs, &path) {
                self.out.diagnostics.push(Diagnostic::warning(
                    Code::SkillMdMissing,
                    format!(
                        "`{}` looks like a skill folder but has no SKILL.md; it is skipped",
                        path.display()
                    ),
                ));
            }
            found += below;
        }
        found
    }

    /// Searches the skill folder `skill` (at `rel` below the root, `pending`
    /// entry `at`) for nested skills, its subfolders being at `depth`; returns
    /// how many were found. Nothing when [`FsOptions::nested_skills`] is off
    /// or `depth` is past the limit. The listing also tells whether the skill
    /// has an `agents` folder to read `openai.yaml` from.
    fn nested_in(&mut self, skill: &Path, depth: usize, rel: &str, at: usize) -> usize {
        if !self.options.nested_skills || depth > self.options.max_depth {
            return 0;
        }
        match self.vfs.read_dir_kinds(skill) {
            Ok(entries) => {
                if let Some(found) = self.pending_mut(at) {
                    found.agents = Some(AgentsHint::from_listing(&entries));
                }
                self.nested(skill, entries, depth, rel)
            }
            Err(err) => {
                tracing::debug!(folder = %skill.display(), error = %err, "cannot list a skill folder");
                0
            }
        }
    }

    /// Searches the `entries` of `dir`, a skill folder or a folder inside
    /// one (its subfolders at `depth`, at `rel` below the root), for nested
    /// skills. Only real, visible folders are searched (the files the listing
    /// shows), and nothing skipped here is counted or warned about: a skill's
    /// folders are its files, not a library. The listing tells folders from
    /// files, so files cost no `stat`; each folder costs one `lstat` (its
    /// stamp for the staleness check) and one `read_dir`, which also tells
    /// whether it holds a `SKILL.md`.
    fn nested(
        &mut self,
        dir: &Path,
        mut entries: Vec<(OsString, Option<FileKind>)>,
        depth: usize,
        rel: &str,
    ) -> usize {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut found = 0;
        for (name, kind) in entries {
            let Some(text) = nest_candidate(self.options, &name, kind) else {
                continue;
            };
            let path = join(dir, &name);
            let meta = match self.vfs.symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => meta,
                _ => continue,
            };
            if !self.enter(&path, meta) {
                continue;
            }
            let children = match self.vfs.read_dir_kinds(&path) {
                Ok(children) => children,
                Err(err) => {
                    tracing::debug!(folder = %path.display(), error = %err, "cannot list a folder inside a skill");
                    continue;
                }
            };
            let child_rel = format!("{rel}/{text}");
            let manifest = ["SKILL.md", "skill.md"].into_iter().find(|md| {
                children
                    .iter()
                    .any(|(n, k)| n == md && *k != Some(FileKind::Dir))
            });
            if let Some(md) = manifest {
                let at = self.load(&path, &child_rel, join(&path, md), None);
                if let Some(found) = self.pending_mut(at) {
                    found.agents = Some(AgentsHint::from_listing(&children));
                }
                found += 1;
            }
            if depth < self.options.max_depth {
                found += self.nested(&path, children, depth + 1, &child_rel);
            }
        }
        found
    }

    /// One diagnostic per reason folders were not searched, with counts.
    fn report_skipped(&mut self) {
        let skipped = std::mem::take(&mut self.skipped);
        if !skipped.by_name.is_empty() {
            let total: usize = skipped.by_name.values().sum();
            let names: Vec<String> = skipped
                .by_name
                .iter()
                .map(|(name, n)| {
                    if *n == 1 {
                        name.clone()
                    } else {
                        format!("{name} ×{n}")
                    }
                })
                .collect();
            tracing::debug!(folders = total, "skipped folders by name");
            self.out.diagnostics.push(Diagnostic::warning(
                Code::DirsSkipped,
                format!(
                    "skipped {total} folder{} by name ({}); change `skip_dirs` to search them",
                    plural(total),
                    names.join(", ")
                ),
            ));
        }
        if skipped.by_depth > 0 {
            let n = skipped.by_depth;
            tracing::info!(
                folders = n,
                depth = self.options.max_depth,
                "folders at the depth limit not searched"
            );
            self.out.diagnostics.push(Diagnostic::warning(
                Code::DiscoveryLimit,
                format!(
                    "{n} folder{} at the depth limit ({} levels) {} not searched further; skills below {} may be missing",
                    plural(n),
                    self.options.max_depth,
                    if n == 1 { "was" } else { "were" },
                    if n == 1 { "it" } else { "them" },
                ),
            ));
        }
        if skipped.by_count > 0 {
            let n = skipped.by_count;
            tracing::warn!(
                folders = n,
                limit = self.options.max_dirs,
                "folder limit reached"
            );
            self.out.diagnostics.push(Diagnostic::warning(
                Code::DiscoveryLimit,
                format!(
                    "stopped searching after {} folders (the limit): {n} more folder{} (and what is below {}) {} not searched; some skills may be missing",
                    self.options.max_dirs,
                    plural(n),
                    if n == 1 { "it" } else { "them" },
                    if n == 1 { "was" } else { "were" },
                ),
            ));
        }
    }
}

/// The name of the folder `dir` (of the real folder for `.` or `..`), for the
/// path of a root that is itself a skill folder.
/// The name of the entry `name` (of kind `kind`, `None` when the listing did
/// not tell) of a skill folder, or of a folder inside one, when a search for
/// nested skills looks into it: a visible folder (or an entry of unknown
/// kind) with a UTF-8 name not in [`FsOptions::skip_dirs`].
fn nest_candidate<'n>(
    options: &FsOptions,
    name: &'n OsString,
    kind: Option<FileKind>,
) -> Option<&'n str> {
    let text = name.to_str()?;
    let skipped = text.starts_with('.')
        || options.skip_dirs.iter().any(|d| d == text)
        || kind.is_some_and(|k| k != FileKind::Dir);
    (!skipped).then_some(text)
}

fn folder_name(vfs: &dyn Vfs, dir: &Path) -> String {
    let canonical = dir
        .file_name()
        .is_none()
        .then(|| vfs.canonicalize(dir).ok())
        .flatten();
    canonical
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What a folder's listing says about its `SKILL.md`.
#[derive(Debug, PartialEq, Eq)]
enum Manifest {
    /// `SKILL.md`, else `skill.md`, is listed (of any kind, as a `stat`
    /// would find it: a folder or a dangling link is reported when loaded).
    Found(&'static str),
    /// Neither is listed, nor any name a file system might take for one.
    Absent,
    /// A name a case-insensitive file system might open as `SKILL.md`
    /// (`Skill.md`, or any name that is not ASCII): ask it with a `stat`.
    Ask,
}

/// [`find_skill_md_in`] from a listing of the folder.
///
/// Folding ASCII case is all this does itself, yet it is not all that a
/// case-insensitive file system may do: ext4's casefold and APFS fold with
/// Unicode rules, which map two non-ASCII letters onto ASCII ones (`ſ`,
/// U+017F, to `s`; the Kelvin sign, U+212A, to `k`: `ſkill.md` opens as
/// `SKILL.md`), ZFS may normalize with compatibility forms (fullwidth
/// letters), and HFS+ ignores some code points when comparing. Rather than
/// copy any of those rules, a listing with a name that is not ASCII asks the
/// file system, with the `stat` every folder cost before listings were used
/// for this; such names are rare in skill libraries.
fn manifest_in(entries: &[(OsString, Option<FileKind>)]) -> Manifest {
    for md in ["SKILL.md", "skill.md"] {
        if entries.iter().any(|(name, _)| name == md) {
            return Manifest::Found(md);
        }
    }
    let ask = entries.iter().any(|(name, _)| {
        let name = name.as_encoded_bytes();
        !name.is_ascii() || name.eq_ignore_ascii_case(b"skill.md")
    });
    if ask { Manifest::Ask } else { Manifest::Absent }
}

/// What identifies a folder however it was reached (through symlinks or not).
#[derive(Debug, PartialEq, Eq, Hash)]
enum DirId {
    Inode(u64, u64),
    Path(PathBuf),
}

/// The device and inode of a folder, from the `stat` the caller already has
/// (canonicalizing would cost one per path component); the canonical path when
/// the file system does not report inodes.
fn dir_id(vfs: &dyn Vfs, dir: &Path, meta: &FileStat) -> Option<DirId> {
    match meta.file_id {
        Some((dev, ino)) => Some(DirId::Inode(dev, ino)),
        None => vfs.canonicalize(dir).ok().map(DirId::Path),
    }
}

/// A folder with `scripts/`, `references/` or `assets/`, or Markdown files, but no
/// skills below it, is probably a skill missing its `SKILL.md`.
fn looks_like_skill(vfs: &dyn Vfs, dir: &Path) -> bool {
    let Ok(entries) = vfs.read_dir(dir) else {
        return false;
    };
    entries.iter().any(|name| {
        let name = name.to_string_lossy();
        matches!(name.as_ref(), "scripts" | "references" | "assets")
            || name.to_ascii_lowercase().ends_with(".md")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(names: &[&str]) -> Manifest {
        let entries: Vec<(OsString, Option<FileKind>)> = names
            .iter()
            .map(|n| (OsString::from(n), Some(FileKind::File)))
            .collect();
        manifest_in(&entries)
    }

    /// Exact names decide; a name equal but for ASCII case asks the file
    /// system; so does any name that is not ASCII, because file systems
    /// that fold case beyond ASCII map some non-ASCII letters onto ASCII
    /// ones (`ſ` to `s`, the Kelvin sign to `k`) or ignore some code points
    /// altogether, and only a `stat` knows what this one does.
    #[test]
    fn a_listing_asks_for_names_a_file_system_might_fold_into_skill_md() {
        assert_eq!(
            manifest(&["SKILL.md", "skill.md"]),
            Manifest::Found("SKILL.md")
        );
        assert_eq!(
            manifest(&["notes.md", "skill.md"]),
            Manifest::Found("skill.md")
        );
        assert_eq!(manifest(&["notes.md", "README.md"]), Manifest::Absent);
        assert_eq!(manifest(&[]), Manifest::Absent);
        assert_eq!(manifest(&["Skill.md"]), Manifest::Ask);
        assert_eq!(manifest(&["SKILL.MD", "notes.md"]), Manifest::Ask);
        // Casefolded to `skill.md` (ext4 casefold, APFS): U+017F LATIN SMALL
        // LETTER LONG S, U+212A KELVIN SIGN.
        assert_eq!(manifest(&["\u{17f}kill.md"]), Manifest::Ask);
        assert_eq!(manifest(&["S\u{212a}ILL.md"]), Manifest::Ask);
        // Ignored by HFS+ when comparing: U+200B ZERO WIDTH SPACE.
        assert_eq!(manifest(&["SKILL\u{200b}.md"]), Manifest::Ask);
        // Not folded by ASCII rules into anything else: never `Found`.
        assert_eq!(manifest(&["\u{17f}KILL.md", "notes.md"]), Manifest::Ask);
    }
}
