//! The [`WorkspaceRuntime`] trait (F-EXE-1 … F-EXE-5, F-EXE-9): per-session
//! workspaces where skill scripts run, with the request and result types a
//! `skill_run` / `skill_exec` tool exchanges with a model.
//!
//! This module holds no I/O: it defines the contract, the JSON shapes (field
//! names follow the trpc-agent tools, so the same model prompts work) and the
//! pure path rules every runtime shares ([`resolve_cwd`], [`normalize_output_glob`],
//! [`sanitize_file_name`], [`InputSource::parse`]). Implementations live in
//! `skills-exec` (local processes, a bubblewrap sandbox) or anywhere else (a
//! container engine, a remote runner reached over HTTP from a wasm worker).

use std::collections::BTreeMap;
use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::provider::{MaybeSend, MaybeSync, Skill};

/// `WORKSPACE_DIR`: the workspace root, as the command sees it.
pub const ENV_WORKSPACE_DIR: &str = "WORKSPACE_DIR";
/// `SKILLS_DIR`: the folder holding the staged skills (`$WORKSPACE_DIR/skills`).
pub const ENV_SKILLS_DIR: &str = "SKILLS_DIR";
/// `WORK_DIR`: scratch space shared by the runs of a session (`$WORKSPACE_DIR/work`).
pub const ENV_WORK_DIR: &str = "WORK_DIR";
/// `OUTPUT_DIR`: where commands put files to hand back (`$WORKSPACE_DIR/out`).
pub const ENV_OUTPUT_DIR: &str = "OUTPUT_DIR";
/// `RUN_DIR`: this run's own folder (`$WORKSPACE_DIR/runs/run_<timestamp>`).
pub const ENV_RUN_DIR: &str = "RUN_DIR";
/// `SKILL_NAME`: the name of the skill being run.
pub const ENV_SKILL_NAME: &str = "SKILL_NAME";

/// The folder of staged skills, relative to the workspace root.
pub const SKILLS_SUBDIR: &str = "skills";
/// The shared scratch folder, relative to the workspace root.
pub const WORK_SUBDIR: &str = "work";
/// Where staged inputs land, relative to the workspace root.
pub const INPUTS_SUBDIR: &str = "work/inputs";
/// The output folder, relative to the workspace root.
pub const OUTPUT_SUBDIR: &str = "out";
/// The folder of per-run folders, relative to the workspace root.
pub const RUNS_SUBDIR: &str = "runs";
/// The scheme of references to files inside a workspace.
pub const WORKSPACE_SCHEME: &str = "workspace://";

/// Default cap on the files one run collects (`outputs.max_files`).
pub const DEFAULT_MAX_FILES: usize = 100;
/// Default cap on one collected file (`outputs.max_file_bytes`): 4 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Default cap on all collected files of a run (`outputs.max_total_bytes`): 64 MiB.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Longest accepted session id.
pub const MAX_SESSION_ID_CHARS: usize = 128;

/// What kind of problem a [`WorkspaceError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum WorkspaceErrorKind {
    /// No such workspace, staged skill, exec session or file.
    NotFound,
    /// The request is malformed (bad session id, empty command, bad input URI).
    InvalidRequest,
    /// A path leaves the workspace (a `cwd` of `../..`, an output glob with `..`,
    /// a link pointing out).
    PathEscape,
    /// The command policy refused the command or one of its variables.
    PolicyDenied,
    /// The skill has not been staged (loaded) in this session.
    SkillNotLoaded,
    /// The isolation the runtime needs is not available here (bubblewrap
    /// missing, user namespaces off, no container engine).
    Unavailable,
    /// The command could not be started.
    Spawn,
    /// A file or the output is larger than allowed.
    TooLarge,
    /// The runtime does not offer this operation.
    Unsupported,
    /// A limit of the runtime was reached: the workspace's disk cap, the
    /// number of interactive sessions running at once.
    LimitExceeded,
    /// An I/O error.
    Io,
    /// Anything else.
    Other,
}

impl WorkspaceErrorKind {
    /// A stable lowercase name, e.g. `path-escape`.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceErrorKind::NotFound => "not-found",
            WorkspaceErrorKind::InvalidRequest => "invalid-request",
            WorkspaceErrorKind::PathEscape => "path-escape",
            WorkspaceErrorKind::PolicyDenied => "policy-denied",
            WorkspaceErrorKind::SkillNotLoaded => "skill-not-loaded",
            WorkspaceErrorKind::Unavailable => "unavailable",
            WorkspaceErrorKind::Spawn => "spawn",
            WorkspaceErrorKind::TooLarge => "too-large",
            WorkspaceErrorKind::Unsupported => "unsupported",
            WorkspaceErrorKind::LimitExceeded => "limit-exceeded",
            WorkspaceErrorKind::Io => "io",
            WorkspaceErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for WorkspaceErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a [`WorkspaceRuntime`] operation failed: a [`kind`](WorkspaceError::kind)
/// to branch on and a message written for the model and for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceError {
    kind: WorkspaceErrorKind,
    message: String,
}

impl WorkspaceError {
    /// An error of `kind` with `message`.
    pub fn new(kind: WorkspaceErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> WorkspaceErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for WorkspaceError {}

/// The result type of workspace operations.
pub type WorkspaceResult<T> = std::result::Result<T, WorkspaceError>;

/// Checks a session id: 1 to [`MAX_SESSION_ID_CHARS`] ASCII letters, digits,
/// `-`, `_` or `.`, not `.` or `..`. Runtimes use it as a folder or container
/// name, so nothing else is accepted.
pub fn validate_session_id(id: &str) -> WorkspaceResult<()> {
    let ok = !id.is_empty()
        && id.len() <= MAX_SESSION_ID_CHARS
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!(
                "invalid session id {id:?}: use 1 to {MAX_SESSION_ID_CHARS} ASCII letters, digits, '-', '_' or '.'"
            ),
        ))
    }
}

/// One file of a skill handed to a runtime in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// The path inside the skill folder, `/`-separated (`SKILL.md`, `scripts/run.sh`).
    pub path: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Whether the file is staged executable (mode 0755 instead of 0644).
    pub executable: bool,
}

impl SkillFile {
    /// A file at `path` holding `bytes`, not executable.
    pub fn new(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            path: path.into(),
            bytes: bytes.into(),
            executable: false,
        }
    }

    /// Marks the file executable.
    #[must_use]
    pub fn executable(mut self, executable: bool) -> Self {
        self.executable = executable;
        self
    }
}

/// Where a runtime gets a skill's files from when staging it.
///
/// A folder path suits runtimes on the same machine as the files (the file
/// system provider's skills); in-memory files suit in-code skills and remote
/// runners (the caller ships the bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillSource {
    /// A skill folder on the runtime's host.
    Folder {
        /// The skill's name (the folder name inside `skills/`).
        name: String,
        /// The host path of the folder holding `SKILL.md`.
        path: String,
    },
    /// The skill's files, in memory.
    Files {
        /// The skill's name.
        name: String,
        /// Every file of the skill, `SKILL.md` included.
        files: Vec<SkillFile>,
        /// A content digest the caller already knows (a version, a hash); when
        /// given, the runtime compares it instead of hashing the bytes.
        digest: Option<String>,
    },
}

impl SkillSource {
    /// A skill folder on the runtime's host.
    pub fn folder(name: impl Into<String>, path: impl Into<String>) -> Self {
        SkillSource::Folder {
            name: name.into(),
            path: path.into(),
        }
    }

    /// A skill given as files in memory.
    pub fn files(name: impl Into<String>, files: Vec<SkillFile>) -> Self {
        SkillSource::Files {
            name: name.into(),
            files,
            digest: None,
        }
    }

    /// Sets the digest of an in-memory skill (ignored for folders).
    #[must_use]
    pub fn with_digest(self, digest: impl Into<String>) -> Self {
        match self {
            SkillSource::Files { name, files, .. } => SkillSource::Files {
                name,
                files,
                digest: Some(digest.into()),
            },
            other => other,
        }
    }

    /// The folder of a skill whose [`location`](Skill::location) is a local
    /// `SKILL.md` path or folder (as the file system provider reports it);
    /// `None` for in-code skills and URLs.
    pub fn from_skill_location(skill: &Skill) -> Option<Self> {
        let location = skill.location.as_deref()?;
        if location.contains("://") {
            return None;
        }
        let file_name = location.rsplit(['/', '\\']).next().unwrap_or(location);
        let folder = if file_name.eq_ignore_ascii_case("SKILL.md") {
            &location[..location.len() - file_name.len()]
        } else {
            location
        };
        let folder = folder.trim_end_matches(['/', '\\']);
        let folder = if folder.is_empty() { "." } else { folder };
        Some(SkillSource::folder(skill.name(), folder))
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        match self {
            SkillSource::Folder { name, .. } | SkillSource::Files { name, .. } => name,
        }
    }
}

/// A workspace, as [`WorkspaceRuntime::create_workspace`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorkspaceInfo {
    /// The session the workspace belongs to.
    pub session_id: String,
    /// Where the workspace lives, in the runtime's terms (a host path, a
    /// container path, a URL).
    pub root: String,
    /// `true` when this call created it, `false` when it already existed.
    pub created: bool,
}

impl WorkspaceInfo {
    /// A workspace description.
    pub fn new(session_id: impl Into<String>, root: impl Into<String>, created: bool) -> Self {
        Self {
            session_id: session_id.into(),
            root: root.into(),
            created,
        }
    }
}

/// A skill staged into a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StagedSkill {
    /// The skill's name.
    pub name: String,
    /// Its folder, relative to the workspace root (`skills/<name>`).
    pub path: String,
    /// The content digest the copy was made from.
    pub digest: String,
    /// `true` when files were copied by this call, `false` when the staged copy
    /// was already current.
    pub copied: bool,
}

impl StagedSkill {
    /// A staged-skill description.
    pub fn new(name: impl Into<String>, digest: impl Into<String>, copied: bool) -> Self {
        let name = name.into();
        Self {
            path: format!("{SKILLS_SUBDIR}/{name}"),
            name,
            digest: digest.into(),
            copied,
        }
    }
}

/// How an input is placed into the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum InputMode {
    /// A copy (the default): the command cannot change the original.
    #[default]
    Copy,
    /// A symbolic link to the original where the runtime can make one (a copy
    /// otherwise, e.g. across a sandbox boundary).
    Link,
}

/// One input to place into the workspace before a run (`inputs[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputSpec {
    /// Where the input comes from: `artifact://name[@version]`, `host:///abs/path`,
    /// `workspace://rel/path` or `skill://name/rel/path`.
    #[serde(alias = "src")]
    pub from: String,
    /// Where it goes, relative to the workspace root; by default
    /// `work/inputs/<file name>`.
    #[serde(default, alias = "dst", skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Copy or link.
    #[serde(default)]
    pub mode: InputMode,
    /// Keep the resolved version for the rest of the session (an
    /// `artifact://name` without a version resolves once, then stays put).
    #[serde(default)]
    pub pin: bool,
}

impl InputSpec {
    /// An input copied from `from` to the default place.
    pub fn new(from: impl Into<String>) -> Self {
        Self {
            from: from.into(),
            to: None,
            mode: InputMode::Copy,
            pin: false,
        }
    }

    /// Sets the destination, relative to the workspace root.
    #[must_use]
    pub fn to(mut self, to: impl Into<String>) -> Self {
        self.to = Some(to.into());
        self
    }

    /// Sets the mode.
    #[must_use]
    pub fn mode(mut self, mode: InputMode) -> Self {
        self.mode = mode;
        self
    }

    /// Pins the resolved version.
    #[must_use]
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// The parsed source.
    pub fn source(&self) -> WorkspaceResult<InputSource> {
        InputSource::parse(&self.from)
    }
}

/// A parsed [`InputSpec::from`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputSource {
    /// `artifact://name[@version]`.
    Artifact {
        /// The artifact's name.
        name: String,
        /// A version; `None` for the latest.
        version: Option<u64>,
    },
    /// `host:///absolute/path`: a file or folder on the runtime's host.
    Host(String),
    /// `workspace://rel/path`: a file already in the workspace.
    Workspace(String),
    /// `skill://name/rel/path`: a file of a staged skill.
    Skill {
        /// The skill.
        name: String,
        /// The path inside it.
        path: String,
    },
}

impl InputSource {
    /// Parses an input URI; refuses unknown schemes, empty parts, relative host
    /// paths and workspace or skill paths that leave their root.
    pub fn parse(uri: &str) -> WorkspaceResult<Self> {
        let bad = |why: &str| {
            WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("input {uri:?}: {why}"),
            )
        };
        if let Some(rest) = uri.strip_prefix("artifact://") {
            let (name, version) = match rest.rsplit_once('@') {
                Some((name, v)) => {
                    let v = v.parse::<u64>().map_err(|_| bad("bad version"))?;
                    (name, Some(v))
                }
                None => (rest, None),
            };
            if name.is_empty() {
                return Err(bad("empty artifact name"));
            }
            Ok(InputSource::Artifact {
                name: name.to_owned(),
                version,
            })
        } else if let Some(rest) = uri.strip_prefix("host://") {
            if !rest.starts_with('/') {
                return Err(bad("host paths must be absolute (host:///abs/path)"));
            }
            if rest.contains('\0') {
                return Err(bad("NUL in path"));
            }
            Ok(InputSource::Host(rest.to_owned()))
        } else if let Some(rest) = uri.strip_prefix(WORKSPACE_SCHEME) {
            Ok(InputSource::Workspace(
                normalize_relative(rest).map_err(|e| bad(e.message()))?,
            ))
        } else if let Some(rest) = uri.strip_prefix("skill://") {
            let (name, path) = rest
                .split_once('/')
                .ok_or_else(|| bad("expected skill://name/path"))?;
            if name.is_empty() || path.is_empty() {
                return Err(bad("expected skill://name/path"));
            }
            let path = normalize_relative(path).map_err(|e| bad(e.message()))?;
            Ok(InputSource::Skill {
                name: name.to_owned(),
                path,
            })
        } else {
            Err(bad(
                "unknown scheme; use artifact://, host://, workspace:// or skill://",
            ))
        }
    }
}

/// A file attached to the conversation, to stage into `work/inputs`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attachment {
    /// The name the user gave it (sanitized before use).
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl Attachment {
    /// An attachment.
    pub fn new(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            name: name.into(),
            bytes: bytes.into(),
        }
    }
}

/// An input placed into the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StagedInput {
    /// Where it came from (the input URI or the attachment's name).
    pub from: String,
    /// Where it is, relative to the workspace root.
    pub path: String,
    /// Its size in bytes (of a file; the total for a folder).
    pub size_bytes: u64,
    /// The artifact version used, for `artifact://` inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
}

impl StagedInput {
    /// A staged-input description.
    pub fn new(from: impl Into<String>, path: impl Into<String>, size_bytes: u64) -> Self {
        Self {
            from: from.into(),
            path: path.into(),
            size_bytes,
            version: None,
        }
    }

    /// Sets the artifact version.
    #[must_use]
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }
}

/// The `outputs` manifest of a run: which files to collect and what to do
/// with them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutputSpec {
    /// Globs relative to the workspace root (`out/**/*.json`, `$OUTPUT_DIR/a.txt`).
    #[serde(default, alias = "Globs")]
    pub globs: Vec<String>,
    /// Inline text contents in the result.
    #[serde(default, alias = "Inline")]
    pub inline: bool,
    /// Save the files as artifacts.
    #[serde(default, alias = "Save")]
    pub save: bool,
    /// A prefix for artifact names (`reports/` gives `reports/a.txt`).
    #[serde(
        default,
        alias = "NameTemplate",
        skip_serializing_if = "Option::is_none"
    )]
    pub name_template: Option<String>,
    /// At most this many files ([`DEFAULT_MAX_FILES`]).
    #[serde(default, alias = "MaxFiles", skip_serializing_if = "Option::is_none")]
    pub max_files: Option<usize>,
    /// At most this many bytes per file ([`DEFAULT_MAX_FILE_BYTES`]); larger
    /// files are cut and marked `truncated`.
    #[serde(
        default,
        alias = "MaxFileBytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_file_bytes: Option<u64>,
    /// At most this many bytes in all ([`DEFAULT_MAX_TOTAL_BYTES`]).
    #[serde(
        default,
        alias = "MaxTotalBytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_total_bytes: Option<u64>,
}

impl OutputSpec {
    /// A manifest collecting `globs`, inlined, not saved, default limits.
    pub fn new<I, S>(globs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            globs: globs.into_iter().map(Into::into).collect(),
            inline: true,
            ..Self::default()
        }
    }

    /// Sets whether text is inlined.
    #[must_use]
    pub fn inline(mut self, inline: bool) -> Self {
        self.inline = inline;
        self
    }

    /// Sets whether files are saved as artifacts.
    #[must_use]
    pub fn save(mut self, save: bool) -> Self {
        self.save = save;
        self
    }

    /// Sets the artifact name prefix.
    #[must_use]
    pub fn name_template(mut self, template: impl Into<String>) -> Self {
        self.name_template = Some(template.into());
        self
    }

    /// Sets the file count cap.
    #[must_use]
    pub fn max_files(mut self, n: usize) -> Self {
        self.max_files = Some(n);
        self
    }

    /// Sets the per-file byte cap.
    #[must_use]
    pub fn max_file_bytes(mut self, n: u64) -> Self {
        self.max_file_bytes = Some(n);
        self
    }

    /// Sets the total byte cap.
    #[must_use]
    pub fn max_total_bytes(mut self, n: u64) -> Self {
        self.max_total_bytes = Some(n);
        self
    }
}

/// A `skill_run` request, as the model sends it (trpc field names).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunRequest {
    /// The skill to run in (staged under `skills/<skill>`).
    pub skill: String,
    /// The command, run with `bash -c` (or without a shell under a policy).
    pub command: String,
    /// The working folder: relative to the skill root, or starting with
    /// `$WORKSPACE_DIR`, `$SKILLS_DIR`, `$WORK_DIR`, `$OUTPUT_DIR` or `$RUN_DIR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Text written to standard input; standard input is closed when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Text an `$EDITOR` invoked by the command "types": the runtime sets
    /// `EDITOR`/`VISUAL` to a helper that writes this text into the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_text: Option<String>,
    /// Timeout in seconds; the runtime's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Globs of files to collect (`out/*.txt`, `$OUTPUT_DIR/**`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_files: Vec<String>,
    /// The declarative outputs manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<OutputSpec>,
    /// Inputs to stage before running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputSpec>,
    /// Save collected files as artifacts.
    #[serde(default)]
    pub save_as_artifacts: bool,
    /// Leave file contents out of the result (refs and sizes only).
    #[serde(default)]
    pub omit_inline_content: bool,
    /// A prefix for the names of saved artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_prefix: Option<String>,
}

impl RunRequest {
    /// Runs `command` in `skill`.
    pub fn new(skill: impl Into<String>, command: impl Into<String>) -> Self {
        Self {
            skill: skill.into(),
            command: command.into(),
            ..Self::default()
        }
    }

    /// Sets the working folder.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets standard input.
    #[must_use]
    pub fn stdin(mut self, stdin: impl Into<String>) -> Self {
        self.stdin = Some(stdin.into());
        self
    }

    /// Sets the editor text.
    #[must_use]
    pub fn editor_text(mut self, text: impl Into<String>) -> Self {
        self.editor_text = Some(text.into());
        self
    }

    /// Sets the timeout in seconds.
    #[must_use]
    pub fn timeout_secs(mut self, secs: u64) -> Self {
        self.timeout = Some(secs);
        self
    }

    /// Adds an output glob.
    #[must_use]
    pub fn output_file(mut self, glob: impl Into<String>) -> Self {
        self.output_files.push(glob.into());
        self
    }

    /// Sets the outputs manifest.
    #[must_use]
    pub fn outputs(mut self, outputs: OutputSpec) -> Self {
        self.outputs = Some(outputs);
        self
    }

    /// Adds an input.
    #[must_use]
    pub fn input(mut self, input: InputSpec) -> Self {
        self.inputs.push(input);
        self
    }

    /// Sets `save_as_artifacts`.
    #[must_use]
    pub fn save_as_artifacts(mut self, save: bool) -> Self {
        self.save_as_artifacts = save;
        self
    }

    /// Sets `omit_inline_content`.
    #[must_use]
    pub fn omit_inline_content(mut self, omit: bool) -> Self {
        self.omit_inline_content = omit;
        self
    }

    /// Sets the artifact prefix.
    #[must_use]
    pub fn artifact_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.artifact_prefix = Some(prefix.into());
        self
    }
}

/// A file collected after a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutputFile {
    /// Its path relative to the workspace root (`out/report.txt`).
    pub name: String,
    /// `workspace://<name>`, for other tools to read it later.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The text, when inlined (text files only, never binary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The sniffed MIME type.
    pub mime_type: String,
    /// The file's full size.
    pub size_bytes: u64,
    /// `true` when `content` is cut (the file is larger than the cap).
    #[serde(default)]
    pub truncated: bool,
}

impl OutputFile {
    /// A collected file without content.
    pub fn new(name: impl Into<String>, mime_type: impl Into<String>, size_bytes: u64) -> Self {
        let name = name.into();
        Self {
            reference: format!("{WORKSPACE_SCHEME}{name}"),
            name,
            content: None,
            mime_type: mime_type.into(),
            size_bytes,
            truncated: false,
        }
    }

    /// Sets the inline content.
    #[must_use]
    pub fn with_content(mut self, content: impl Into<String>, truncated: bool) -> Self {
        self.content = Some(content.into());
        self.truncated = truncated;
        self
    }
}

/// A file saved as an artifact by a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedArtifact {
    /// The artifact's name.
    pub name: String,
    /// The version this save created.
    pub version: u64,
    /// The workspace file it came from.
    pub source: String,
    /// Its MIME type.
    pub mime_type: String,
    /// Its size.
    pub size_bytes: u64,
}

impl SavedArtifact {
    /// A saved-artifact description.
    pub fn new(
        name: impl Into<String>,
        version: u64,
        source: impl Into<String>,
        mime_type: impl Into<String>,
        size_bytes: u64,
    ) -> Self {
        Self {
            name: name.into(),
            version,
            source: source.into(),
            mime_type: mime_type.into(),
            size_bytes,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunResult {
    /// Standard output (head and tail kept when over the cap, with a note).
    pub stdout: String,
    /// Standard error, capped the same way.
    pub stderr: String,
    /// The exit code; `None` when the command was killed by a signal.
    pub exit_code: Option<i32>,
    /// `true` when the timeout ended the command.
    pub timed_out: bool,
    /// Wall-clock time from spawn to exit.
    pub duration_ms: u64,
    /// The run's folder, relative to the workspace root (`runs/run_<timestamp>`).
    pub run_dir: String,
    /// Collected files.
    #[serde(default)]
    pub output_files: Vec<OutputFile>,
    /// The one output that best answers the request (the only text file, or
    /// the first of the manifest's files), inlined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_output: Option<OutputFile>,
    /// Files saved as artifacts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifact_files: Vec<SavedArtifact>,
    /// Inputs staged for the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub staged_inputs: Vec<StagedInput>,
    /// Things the model should know (truncation, refused links, limits hit,
    /// no artifact service).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl RunResult {
    /// `true` when the command exited with code 0 in time.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// A `skill_exec` request: start an interactive command.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecRequest {
    /// The skill to run in.
    pub skill: String,
    /// The command, run with `bash -c`.
    pub command: String,
    /// The working folder (same rules as [`RunRequest::cwd`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Run on a terminal (a PTY) rather than pipes; default `true`.
    #[serde(default = "default_true")]
    pub tty: bool,
    /// Seconds before the session is killed; the runtime's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// How long to wait for first output before answering, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
    /// Inputs to stage before starting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputSpec>,
}

fn default_true() -> bool {
    true
}

impl ExecRequest {
    /// Starts `command` in `skill` on a terminal.
    pub fn new(skill: impl Into<String>, command: impl Into<String>) -> Self {
        Self {
            skill: skill.into(),
            command: command.into(),
            tty: true,
            ..Self::default()
        }
    }

    /// Sets the working folder.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets whether a terminal is used.
    #[must_use]
    pub fn tty(mut self, tty: bool) -> Self {
        self.tty = tty;
        self
    }

    /// Sets the timeout in seconds.
    #[must_use]
    pub fn timeout_secs(mut self, secs: u64) -> Self {
        self.timeout = Some(secs);
        self
    }

    /// Sets the first wait in milliseconds.
    #[must_use]
    pub fn yield_ms(mut self, ms: u64) -> Self {
        self.yield_ms = Some(ms);
        self
    }
}

/// A `skill_write_stdin` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WriteStdinRequest {
    /// The exec session.
    pub session_id: String,
    /// Text to type.
    #[serde(default)]
    pub chars: String,
    /// Press Enter after the text.
    #[serde(default)]
    pub submit: bool,
    /// How long to wait for output afterwards, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
}

impl WriteStdinRequest {
    /// Types `chars` into `session_id`.
    pub fn new(session_id: impl Into<String>, chars: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            chars: chars.into(),
            submit: false,
            yield_ms: None,
        }
    }

    /// Presses Enter after the text.
    #[must_use]
    pub fn submit(mut self, submit: bool) -> Self {
        self.submit = submit;
        self
    }

    /// Sets the wait in milliseconds.
    #[must_use]
    pub fn yield_ms(mut self, ms: u64) -> Self {
        self.yield_ms = Some(ms);
        self
    }
}

/// The state of an exec session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExecStatus {
    /// Still running.
    Running,
    /// Exited on its own.
    Exited,
    /// Killed by [`WorkspaceRuntime::kill_exec`] or a cleanup.
    Killed,
    /// Killed by its timeout.
    TimedOut,
}

/// What an exec session printed since the last look, and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecOutput {
    /// The exec session's id.
    pub session_id: String,
    /// Its state.
    pub status: ExecStatus,
    /// Output since the previous answer (capped, with a note when cut).
    pub output: String,
    /// The exit code once it has exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Best effort: the output ends like a prompt and nothing arrived for a
    /// while, so the program probably waits for input.
    #[serde(default)]
    pub waiting_for_input: bool,
}

impl ExecOutput {
    /// An answer for `session_id`.
    pub fn new(
        session_id: impl Into<String>,
        status: ExecStatus,
        output: impl Into<String>,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            status,
            output: output.into(),
            exit_code: None,
            waiting_for_input: false,
        }
    }

    /// Sets the exit code.
    #[must_use]
    pub fn with_exit_code(mut self, code: Option<i32>) -> Self {
        self.exit_code = code;
        self
    }

    /// Sets the waiting-for-input hint.
    #[must_use]
    pub fn with_waiting_for_input(mut self, waiting: bool) -> Self {
        self.waiting_for_input = waiting;
        self
    }
}

/// A file read back from a workspace (a `workspace://` reference).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorkspaceFile {
    /// Its path relative to the workspace root.
    pub name: String,
    /// The sniffed MIME type.
    pub mime_type: String,
    /// The full size.
    pub size_bytes: u64,
    /// Up to the requested number of bytes.
    pub bytes: Vec<u8>,
    /// `true` when `bytes` is shorter than the file.
    pub truncated: bool,
}

impl WorkspaceFile {
    /// A file read back.
    pub fn new(
        name: impl Into<String>,
        mime_type: impl Into<String>,
        size_bytes: u64,
        bytes: Vec<u8>,
    ) -> Self {
        let truncated = (bytes.len() as u64) < size_bytes;
        Self {
            name: name.into(),
            mime_type: mime_type.into(),
            size_bytes,
            bytes,
            truncated,
        }
    }
}

/// What [`WorkspaceRuntime::cleanup`] removed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CleanupReport {
    /// The session.
    pub session_id: String,
    /// `true` when a workspace existed and was removed.
    pub removed: bool,
    /// How many exec sessions were killed.
    pub killed_sessions: usize,
}

impl CleanupReport {
    /// A cleanup report.
    pub fn new(session_id: impl Into<String>, removed: bool, killed_sessions: usize) -> Self {
        Self {
            session_id: session_id.into(),
            removed,
            killed_sessions,
        }
    }
}

/// A runtime that gives each session a workspace, stages skills into it and
/// runs their commands.
///
/// # Contract
/// * Every method takes the agent session's id (checked with
///   [`validate_session_id`]); a session has at most one workspace, created on
///   first use by any method or explicitly by
///   [`create_workspace`](WorkspaceRuntime::create_workspace). Sessions are
///   independent: nothing one session does is visible in another's workspace,
///   and one session's slow run never blocks another's.
/// * The layout seen by commands is `skills/<name>` (the staged skill, read-only
///   where the runtime can enforce it, holding `out`, `work` and `inputs` links
///   to the shared folders and a writable `.venv/`), `work/` (with
///   `work/inputs/`), `out/` and `runs/run_<timestamp>/`, with the variables
///   [`ENV_WORKSPACE_DIR`] … [`ENV_SKILL_NAME`] set. The runtime keeps its own
///   records out of the workspace: the command can change anything there.
/// * [`stage_skill`](WorkspaceRuntime::stage_skill) copies a skill only when
///   its content changed since the last staging in that workspace.
/// * [`run`](WorkspaceRuntime::run) refuses a skill that has not been staged in
///   the session ([`WorkspaceErrorKind::SkillNotLoaded`]) unless the runtime was
///   configured to stage on demand; refuses a `cwd` or output glob leaving the
///   workspace ([`WorkspaceErrorKind::PathEscape`]); kills the whole process
///   tree on timeout and reports it as `timed_out` (not as an error); never
///   follows a link out of the workspace when collecting files.
/// * A command's failure (non-zero exit, timeout) is a successful
///   [`RunResult`]; errors are for requests that could not be carried out.
/// * [`cleanup`](WorkspaceRuntime::cleanup) kills the session's exec sessions
///   and removes its workspace; it never deletes anything outside the
///   runtime's workspace root.
///
/// Interactive sessions (`*_exec`, [`write_stdin`](WorkspaceRuntime::write_stdin))
/// default to [`WorkspaceErrorKind::Unsupported`], so a batch-only runtime (a
/// Kubernetes Job) implements only the first five methods.
///
/// The trait is object safe; agents hold an `Arc<dyn WorkspaceRuntime>`. On
/// `wasm32` its futures need not be `Send` (implement it with
/// `#[async_trait(?Send)]`), so a worker can forward calls to a remote runner.
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
pub trait WorkspaceRuntime: MaybeSend + MaybeSync + fmt::Debug {
    /// A short name for logs and tool descriptions (`local`, `sandbox`, `docker`).
    fn name(&self) -> &str;

    /// Creates the session's workspace, or reports the existing one.
    async fn create_workspace(&self, session_id: &str) -> WorkspaceResult<WorkspaceInfo>;

    /// Stages a skill into `skills/<name>`, copying only when its content changed.
    async fn stage_skill(
        &self,
        session_id: &str,
        skill: &SkillSource,
    ) -> WorkspaceResult<StagedSkill>;

    /// Places inputs into the workspace (also done by [`run`](WorkspaceRuntime::run)
    /// for [`RunRequest::inputs`]).
    async fn stage_inputs(
        &self,
        session_id: &str,
        inputs: &[InputSpec],
    ) -> WorkspaceResult<Vec<StagedInput>>;

    /// Stages files attached to the conversation into `work/inputs`, with
    /// sanitized, de-duplicated names (see [`sanitize_file_name`]).
    async fn stage_attachments(
        &self,
        session_id: &str,
        attachments: &[Attachment],
    ) -> WorkspaceResult<Vec<StagedInput>>;

    /// Runs a command to completion and collects its outputs.
    async fn run(&self, session_id: &str, request: &RunRequest) -> WorkspaceResult<RunResult>;

    /// Reads a workspace file (`out/a.txt` or `workspace://out/a.txt`), at most
    /// `max_bytes` of it, beneath the workspace root only.
    async fn read_file(
        &self,
        session_id: &str,
        path: &str,
        max_bytes: u64,
    ) -> WorkspaceResult<WorkspaceFile>;

    /// Starts an interactive command and answers with its first output.
    async fn start_exec(
        &self,
        session_id: &str,
        request: &ExecRequest,
    ) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, request);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Types into an exec session and answers with what it printed.
    async fn write_stdin(
        &self,
        session_id: &str,
        request: &WriteStdinRequest,
    ) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, request);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Output of an exec session since the last look, waiting up to `yield_ms`
    /// for some.
    async fn poll_exec(
        &self,
        session_id: &str,
        exec_id: &str,
        yield_ms: Option<u64>,
    ) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, exec_id, yield_ms);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Kills an exec session and its whole process tree.
    async fn kill_exec(&self, session_id: &str, exec_id: &str) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, exec_id);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Kills the session's exec sessions and removes its workspace.
    async fn cleanup(&self, session_id: &str) -> WorkspaceResult<CleanupReport>;
}

fn unsupported(runtime: &str, what: &str) -> WorkspaceError {
    WorkspaceError::new(
        WorkspaceErrorKind::Unsupported,
        format!("the `{runtime}` runtime does not offer {what}"),
    )
}

/// Normalizes a `/`-separated relative path lexically: drops `.` and empty
/// parts, applies `..`, and refuses absolute paths, NUL bytes, backslashes and
/// any `..` above the start.
pub fn normalize_relative(path: &str) -> WorkspaceResult<String> {
    let escape = |why: &str| {
        WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("path {path:?}: {why}"),
        )
    };
    if path.starts_with('/') {
        return Err(escape("absolute paths are not allowed"));
    }
    if path.contains('\0') || path.contains('\\') {
        return Err(escape("NUL bytes and backslashes are not allowed"));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(escape("it leaves the workspace"));
                }
            }
            other => parts.push(other),
        }
    }
    Ok(parts.join("/"))
}

const DIR_VARS: [(&str, &str); 4] = [
    (ENV_WORKSPACE_DIR, ""),
    (ENV_SKILLS_DIR, SKILLS_SUBDIR),
    (ENV_WORK_DIR, WORK_SUBDIR),
    (ENV_OUTPUT_DIR, OUTPUT_SUBDIR),
];

/// Splits a leading `$VAR` or `${VAR}` off `path`: `(VAR, rest)`.
fn leading_var(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix('$')?;
    let (name, after) = if let Some(braced) = rest.strip_prefix('{') {
        let end = braced.find('}')?;
        (&braced[..end], &braced[end + 1..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    if !(after.is_empty() || after.starts_with('/')) {
        return None;
    }
    Some((name, after.trim_start_matches('/')))
}

/// Resolves a run's `cwd` to a path relative to the workspace root.
///
/// * `None` or empty: the skill's folder, `skills/<skill>`.
/// * A path starting with `$WORKSPACE_DIR`, `$SKILLS_DIR`, `$WORK_DIR`,
///   `$OUTPUT_DIR` or `$RUN_DIR` (also `${…}`): relative to that folder.
/// * `workspace_root` itself or a path below it (an absolute path a command
///   printed): relative to the root.
/// * Anything else: relative to the skill's folder.
///
/// Any result outside the workspace is an error
/// ([`WorkspaceErrorKind::PathEscape`]), never silently reset.
pub fn resolve_cwd(
    cwd: Option<&str>,
    skill: &str,
    run_dir: &str,
    workspace_root: &str,
) -> WorkspaceResult<String> {
    let cwd = cwd.unwrap_or("").trim();
    let skill_dir = format!("{SKILLS_SUBDIR}/{skill}");
    if cwd.is_empty() {
        return Ok(skill_dir);
    }
    let joined = if let Some((var, rest)) = leading_var(cwd) {
        let base = if var == ENV_RUN_DIR {
            run_dir.to_owned()
        } else if var == ENV_SKILL_NAME {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("cwd {cwd:?}: $SKILL_NAME is a name, not a folder"),
            ));
        } else if let Some((_, sub)) = DIR_VARS.iter().find(|(v, _)| *v == var) {
            (*sub).to_owned()
        } else {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!(
                    "cwd {cwd:?}: unknown variable ${var}; use $WORKSPACE_DIR, $SKILLS_DIR, $WORK_DIR, $OUTPUT_DIR or $RUN_DIR"
                ),
            ));
        };
        if base.is_empty() {
            rest.to_owned()
        } else {
            format!("{base}/{rest}")
        }
    } else if cwd.starts_with('/') {
        let root = workspace_root.trim_end_matches('/');
        match cwd.strip_prefix(root) {
            Some(rest) if !root.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
                rest.trim_start_matches('/').to_owned()
            }
            _ => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::PathEscape,
                    format!("cwd {cwd:?} is outside the workspace"),
                ));
            }
        }
    } else {
        format!("{skill_dir}/{cwd}")
    };
    normalize_relative(&joined).map_err(|e| {
        WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("cwd {cwd:?} leaves the workspace ({})", e.message()),
        )
    })
}

/// Normalizes an output glob to a pattern relative to the workspace root:
/// `$OUTPUT_DIR/x` → `out/x` (likewise the other folder variables),
/// `workspace://x` → `x`; refuses absolute patterns and `..`.
pub fn normalize_output_glob(glob: &str) -> WorkspaceResult<String> {
    let glob = glob.trim();
    let glob = glob.strip_prefix(WORKSPACE_SCHEME).unwrap_or(glob);
    let joined = match leading_var(glob) {
        Some((var, rest)) => match DIR_VARS.iter().find(|(v, _)| *v == var) {
            Some((_, "")) => rest.to_owned(),
            Some((_, sub)) => format!("{sub}/{rest}"),
            None => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    format!("output glob {glob:?}: unknown variable ${var}"),
                ));
            }
        },
        None => glob.to_owned(),
    };
    if joined.split('/').any(|p| p == "..") {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("output glob {glob:?} leaves the workspace"),
        ));
    }
    let normalized = normalize_relative(&joined)?;
    if normalized.is_empty() {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!("output glob {glob:?} is empty"),
        ));
    }
    Ok(normalized)
}

/// A safe file name for an attachment: the last path part, with every
/// character other than ASCII letters, digits, `.`, `-` and `_` replaced by
/// `_`, leading dots removed, at most 100 bytes; `file` when nothing is left.
pub fn sanitize_file_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut out: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = out.trim_start_matches('.').len();
    out.drain(..out.len() - trimmed);
    out.truncate(100);
    if out.is_empty() || out.chars().all(|c| c == '_') {
        return "file".to_owned();
    }
    out
}

/// `name` made unique against `taken`: `a.txt`, then `a-1.txt`, `a-2.txt`, ….
pub fn dedupe_file_name(name: &str, taken: &dyn Fn(&str) -> bool) -> String {
    if !taken(name) {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let mut n = 1u64;
    loop {
        let candidate = format!("{stem}-{n}{ext}");
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// JSON Schemas of the tool arguments a model sends, matching the serde field
/// names of [`RunRequest`], [`ExecRequest`] and [`WriteStdinRequest`], for a
/// `skill_run` / `skill_exec` tool built on an `Arc<dyn WorkspaceRuntime>`.
pub mod schema {
    use serde_json::{Value, json};

    fn input_spec() -> Value {
        json!({
            "type": "object",
            "properties": {
                "from": {"type": "string", "description": "artifact://name[@version], host:///abs/path, workspace://rel/path or skill://name/rel/path"},
                "to": {"type": "string", "description": "Destination relative to the workspace (default work/inputs/<name>)"},
                "mode": {"type": "string", "enum": ["copy", "link"]},
                "pin": {"type": "boolean", "description": "Keep the resolved artifact version for the session"}
            },
            "required": ["from"]
        })
    }

    fn env() -> Value {
        json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "Extra environment variables"})
    }

    /// The arguments of `skill_run` ([`RunRequest`](super::RunRequest)).
    pub fn run_request() -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill to run in"},
                "command": {"type": "string", "description": "Shell command, run with bash -c in the skill's folder"},
                "cwd": {"type": "string", "description": "Working folder: relative to the skill, or starting with $WORKSPACE_DIR, $SKILLS_DIR, $WORK_DIR, $OUTPUT_DIR or $RUN_DIR"},
                "env": env(),
                "stdin": {"type": "string", "description": "Text for standard input (closed when absent)"},
                "editor_text": {"type": "string", "description": "Text an $EDITOR opened by the command writes"},
                "timeout": {"type": "integer", "minimum": 0, "description": "Seconds"},
                "output_files": {"type": "array", "items": {"type": "string"}, "description": "Globs of files to collect, relative to the workspace (out/*.txt, $OUTPUT_DIR/**)"},
                "outputs": {
                    "type": "object",
                    "properties": {
                        "globs": {"type": "array", "items": {"type": "string"}},
                        "inline": {"type": "boolean"},
                        "save": {"type": "boolean"},
                        "name_template": {"type": "string"},
                        "max_files": {"type": "integer", "minimum": 0},
                        "max_file_bytes": {"type": "integer", "minimum": 0},
                        "max_total_bytes": {"type": "integer", "minimum": 0}
                    }
                },
                "inputs": {"type": "array", "items": input_spec()},
                "save_as_artifacts": {"type": "boolean", "description": "Persist collected files via the artifact service"},
                "omit_inline_content": {"type": "boolean", "description": "Leave file contents out (refs and sizes only)"},
                "artifact_prefix": {"type": "string", "description": "Prefix of saved artifact names"}
            },
            "required": ["skill", "command"]
        })
    }

    /// The arguments of `skill_exec` ([`ExecRequest`](super::ExecRequest)).
    pub fn exec_request() -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string"},
                "command": {"type": "string", "description": "Shell command, run with bash -c"},
                "cwd": {"type": "string"},
                "env": env(),
                "tty": {"type": "boolean", "description": "Run on a terminal (default true)"},
                "timeout": {"type": "integer", "minimum": 0, "description": "Seconds before the session is killed"},
                "yield_ms": {"type": "integer", "minimum": 0, "description": "How long to wait for first output"},
                "inputs": {"type": "array", "items": input_spec()}
            },
            "required": ["skill", "command"]
        })
    }

    /// The arguments of `skill_write_stdin`
    /// ([`WriteStdinRequest`](super::WriteStdinRequest)).
    pub fn write_stdin_request() -> Value {
        json!({
            "type": "object",
            "properties": {
                "session_id": {"type": "string"},
                "chars": {"type": "string", "description": "Text to type"},
                "submit": {"type": "boolean", "description": "Press Enter after the text"},
                "yield_ms": {"type": "integer", "minimum": 0}
            },
            "required": ["session_id"]
        })
    }

    /// The arguments of `skill_poll_session`.
    pub fn poll_request() -> Value {
        json!({
            "type": "object",
            "properties": {
                "session_id": {"type": "string"},
                "yield_ms": {"type": "integer", "minimum": 0}
            },
            "required": ["session_id"]
        })
    }

    /// The arguments of `skill_kill_session`.
    pub fn kill_request() -> Value {
        json!({
            "type": "object",
            "properties": {"session_id": {"type": "string"}},
            "required": ["session_id"]
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cwd_rules() {
        let r = |c: &str| resolve_cwd(Some(c), "demo", "runs/run_1", "/ws/s1");
        assert_eq!(
            resolve_cwd(None, "demo", "runs/run_1", "/ws").unwrap(),
            "skills/demo"
        );
        assert_eq!(r("scripts").unwrap(), "skills/demo/scripts");
        assert_eq!(r("$OUTPUT_DIR").unwrap(), "out");
        assert_eq!(r("${WORK_DIR}/inputs").unwrap(), "work/inputs");
        assert_eq!(r("$RUN_DIR").unwrap(), "runs/run_1");
        assert_eq!(r("$WORKSPACE_DIR").unwrap(), "");
        assert_eq!(r("../../out").unwrap(), "out");
        assert_eq!(r("/ws/s1/work").unwrap(), "work");
        for bad in [
            "../../..",
            "/etc",
            "/ws/s10",
            "$WORK_DIR/../../x",
            "a/../../../..",
        ] {
            assert_eq!(
                r(bad).unwrap_err().kind(),
                WorkspaceErrorKind::PathEscape,
                "{bad}"
            );
        }
        assert_eq!(
            r("$HOME").unwrap_err().kind(),
            WorkspaceErrorKind::InvalidRequest
        );
    }

    #[test]
    fn output_globs() {
        assert_eq!(
            normalize_output_glob("$OUTPUT_DIR/*.txt").unwrap(),
            "out/*.txt"
        );
        assert_eq!(
            normalize_output_glob("workspace://out/**").unwrap(),
            "out/**"
        );
        assert_eq!(normalize_output_glob("./out/a").unwrap(), "out/a");
        assert!(normalize_output_glob("../x").is_err());
        assert!(normalize_output_glob("out/../../x").is_err());
        assert!(normalize_output_glob("/etc/*").is_err());
        assert!(normalize_output_glob("").is_err());
    }

    #[test]
    fn input_sources() {
        assert_eq!(
            InputSource::parse("artifact://report@3").unwrap(),
            InputSource::Artifact {
                name: "report".into(),
                version: Some(3)
            }
        );
        assert_eq!(
            InputSource::parse("skill://demo/a/./b.txt").unwrap(),
            InputSource::Skill {
                name: "demo".into(),
                path: "a/b.txt".into()
            }
        );
        assert_eq!(
            InputSource::parse("host:///tmp/x").unwrap(),
            InputSource::Host("/tmp/x".into())
        );
        for bad in [
            "host://rel",
            "workspace://../x",
            "skill://demo",
            "ftp://x",
            "artifact://",
            "artifact://a@x",
        ] {
            assert!(InputSource::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names() {
        assert_eq!(sanitize_file_name("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_file_name("my report (1).pdf"), "my_report__1_.pdf");
        assert_eq!(sanitize_file_name("..."), "file");
        assert_eq!(sanitize_file_name(".bashrc"), "bashrc");
        let taken = |n: &str| n == "a.txt" || n == "a-1.txt";
        assert_eq!(dedupe_file_name("a.txt", &taken), "a-2.txt");
        assert!(validate_session_id("s-1_a.b").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", &"x".repeat(129)] {
            assert!(validate_session_id(bad).is_err());
        }
    }

    #[test]
    fn run_request_json() {
        let req: RunRequest = serde_json::from_str(
            r#"{"skill":"demo","command":"echo hi","timeout":5,"inputs":[{"src":"host:///tmp/a","dst":"work/inputs/a"}],
               "outputs":{"globs":["$OUTPUT_DIR/*"],"MaxFiles":3,"inline":true},"omit_inline_content":true}"#,
        )
        .unwrap();
        assert_eq!(req.timeout, Some(5));
        assert_eq!(req.inputs[0].to.as_deref(), Some("work/inputs/a"));
        assert_eq!(req.outputs.as_ref().unwrap().max_files, Some(3));
        let file = OutputFile::new("out/a.txt", "text/plain", 2);
        let json = serde_json::to_value(&file).unwrap();
        assert_eq!(json["ref"], "workspace://out/a.txt");
    }

    #[test]
    fn source_from_location() {
        let meta = crate::SkillMetadata::new(
            crate::SkillName::parse("demo").unwrap(),
            "Demo. Use when testing.",
        );
        let skill = Skill::new(meta, "", crate::ResourceListing::default())
            .with_location("/srv/skills/demo/SKILL.md");
        assert_eq!(
            SkillSource::from_skill_location(&skill),
            Some(SkillSource::folder("demo", "/srv/skills/demo"))
        );
    }

    fn keys(v: &serde_json::Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    }

    #[test]
    fn schemas_match_the_serde_names() {
        let run = RunRequest::new("s", "c")
            .cwd("x")
            .env("A", "b")
            .stdin("i")
            .editor_text("e")
            .timeout_secs(1)
            .output_file("out/*")
            .outputs(
                OutputSpec::new(["out/*"])
                    .save(true)
                    .name_template("t")
                    .max_files(1)
                    .max_file_bytes(1)
                    .max_total_bytes(1),
            )
            .input(InputSpec::new("workspace://a").to("b").pin(true))
            .save_as_artifacts(true)
            .omit_inline_content(true)
            .artifact_prefix("p");
        let json = serde_json::to_value(&run).unwrap();
        let schema = schema::run_request();
        assert_eq!(keys(&json), keys(&schema["properties"]));
        assert_eq!(
            keys(&json["outputs"]),
            keys(&schema["properties"]["outputs"]["properties"])
        );
        assert_eq!(
            keys(&json["inputs"][0]),
            keys(&schema["properties"]["inputs"]["items"]["properties"])
        );
        let exec = ExecRequest::new("s", "c")
            .cwd("x")
            .env("A", "b")
            .timeout_secs(1)
            .yield_ms(1);
        let mut exec_json = serde_json::to_value(&exec).unwrap();
        exec_json["inputs"] = serde_json::json!([]);
        assert_eq!(
            keys(&exec_json),
            keys(&schema::exec_request()["properties"])
        );
        let w = serde_json::to_value(WriteStdinRequest::new("x", "y").yield_ms(1)).unwrap();
        assert_eq!(keys(&w), keys(&schema::write_stdin_request()["properties"]));
    }
}
