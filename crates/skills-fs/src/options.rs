//! Limits and modes of the file-system provider.

use std::time::Duration;

use skills_core::ValidationOptions;

/// Default cap on a `SKILL.md` file (16 MiB): larger files are refused unread.
pub const DEFAULT_MAX_SKILL_MD_BYTES: u64 = 16 * 1024 * 1024;
/// Default cap on a resource file that may be read at all (16 MiB).
pub const DEFAULT_MAX_RESOURCE_BYTES: u64 = 16 * 1024 * 1024;
/// Default time a catalog snapshot is trusted without looking at the disk (2 s).
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(2);

/// Folder names discovery never searches by default: version control, tool and
/// dependency folders, which can be huge and never hold skills of their own.
/// Other dot folders (`.curated/`, `.system/`, `.agents/`, …) are searched.
pub const DEFAULT_SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".jj",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".cache",
    ".idea",
    ".vscode",
    ".direnv",
];

/// Options for discovery and reads. Every limit has a safe default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FsOptions {
    /// How `SKILL.md` files are judged (lenient by default).
    pub validation: ValidationOptions,
    /// How many folder levels below a root are searched for skills (default 4).
    pub max_depth: usize,
    /// How many folders are searched in all before giving up (default 100 000).
    pub max_dirs: usize,
    /// Larger `SKILL.md` files are refused (default 16 MiB).
    pub max_skill_md_bytes: u64,
    /// Larger resource files are refused (default 16 MiB).
    pub max_resource_bytes: u64,
    /// Bytes returned by one resource read before it is truncated with a marker
    /// (default 256 KiB).
    pub max_read_bytes: usize,
    /// Files listed per skill (default 500); the rest are counted as omitted.
    pub max_listed: usize,
    /// How deep the resource listing looks inside a skill folder (default 6).
    pub max_listing_depth: usize,
    /// How long a catalog snapshot is trusted without any file-system call
    /// (default 2 s). After it, the next call stats the watched folders and
    /// re-scans only if one changed. `Duration::ZERO` checks on every call.
    pub cooldown: Duration,
    /// Also stat every `SKILL.md` in the staleness check (default `false`), so that
    /// a `SKILL.md` edited in place is noticed by `list`. Editing a file in place
    /// does not change its folder's modification time; saving through a temporary
    /// file and a rename (what many editors do) does. Costs a second `stat` per
    /// skill per check. `get` notices in-place edits of its own skill either way.
    pub watch_skill_md: bool,
    /// Folder names discovery does not search (exact names, any depth; default
    /// [`DEFAULT_SKIP_DIRS`]). Every folder skipped this way is counted in a
    /// `dirs-skipped` warning.
    pub skip_dirs: Vec<String>,
    /// Also search a skill folder's subfolders for skills nested in it
    /// (default `true`, as rmcp's folder catalog and Codex do). A nested skill
    /// is listed on its own; its files stay in the enclosing skill's listing.
    /// Costs one `read_dir` per subfolder of every skill per scan, and one
    /// `stat` per subfolder in each staleness check.
    pub nested_skills: bool,
    /// Also read single-file skills (default `true`), opencode's shape: a
    /// Markdown file at a root's top level (`<root>/<name>.md`) whose
    /// frontmatter has a top-level `description` is a skill named by its
    /// frontmatter `name`, else by the file's stem. It has no other files.
    /// `README.md`, `AGENTS.md`, `CLAUDE.md`, `CHANGELOG.md`, `LICENSE.md`,
    /// `CONTRIBUTING.md` and `SKILL.md` (any case) are never read as one, and
    /// a Markdown file without such a frontmatter is silently not a skill.
    /// A folder skill of the same name in the same root wins. Costs one read
    /// per other top-level `.md` file per scan, and one `stat` of each in
    /// every staleness check.
    pub single_file_skills: bool,
}

impl Default for FsOptions {
    fn default() -> Self {
        Self {
            validation: ValidationOptions::lenient(),
            max_depth: 4,
            max_dirs: 100_000,
            max_skill_md_bytes: DEFAULT_MAX_SKILL_MD_BYTES,
            max_resource_bytes: DEFAULT_MAX_RESOURCE_BYTES,
            max_read_bytes: skills_core::DEFAULT_MAX_READ_BYTES,
            max_listed: skills_core::DEFAULT_MAX_LISTED,
            max_listing_depth: 6,
            cooldown: DEFAULT_COOLDOWN,
            watch_skill_md: false,
            skip_dirs: DEFAULT_SKIP_DIRS.iter().map(|d| (*d).to_owned()).collect(),
            nested_skills: true,
            single_file_skills: true,
        }
    }
}

impl FsOptions {
    /// Sets the validation options (e.g. [`ValidationOptions::strict`]).
    #[must_use]
    pub fn with_validation(mut self, validation: ValidationOptions) -> Self {
        self.validation = validation;
        self
    }

    /// Sets the search depth below each root.
    #[must_use]
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets the total folder budget.
    #[must_use]
    pub fn with_max_dirs(mut self, dirs: usize) -> Self {
        self.max_dirs = dirs;
        self
    }

    /// Sets the per-read byte cap.
    #[must_use]
    pub fn with_max_read_bytes(mut self, bytes: usize) -> Self {
        self.max_read_bytes = bytes;
        self
    }

    /// Sets the largest resource file that may be read.
    #[must_use]
    pub fn with_max_resource_bytes(mut self, bytes: u64) -> Self {
        self.max_resource_bytes = bytes;
        self
    }

    /// Sets the staleness cooldown.
    #[must_use]
    pub fn with_cooldown(mut self, cooldown: Duration) -> Self {
        self.cooldown = cooldown;
        self
    }

    /// Sets whether the staleness check also stats every `SKILL.md`.
    #[must_use]
    pub fn with_watch_skill_md(mut self, watch: bool) -> Self {
        self.watch_skill_md = watch;
        self
    }

    /// Sets the largest `SKILL.md` accepted.
    #[must_use]
    pub fn with_max_skill_md_bytes(mut self, bytes: u64) -> Self {
        self.max_skill_md_bytes = bytes;
        self
    }

    /// Sets whether skill folders are searched for nested skills.
    #[must_use]
    pub fn with_nested_skills(mut self, on: bool) -> Self {
        self.nested_skills = on;
        self
    }

    /// Sets whether Markdown files at a root's top level are read as
    /// single-file skills.
    #[must_use]
    pub fn with_single_file_skills(mut self, on: bool) -> Self {
        self.single_file_skills = on;
        self
    }

    /// Sets the folder names discovery does not search (replacing
    /// [`DEFAULT_SKIP_DIRS`]; pass an empty list to search everything).
    #[must_use]
    pub fn with_skip_dirs<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.skip_dirs = names.into_iter().map(Into::into).collect();
        self
    }
}
