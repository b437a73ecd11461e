//! Codex's `agents/openai.yaml`: the file beside a skill's `SKILL.md` where
//! Codex keeps what the Agent Skills frontmatter has no field for.
//!
//! Read after `SKILL.md`, only for a skill that parsed:
//! * `policy.allow_implicit_invocation` (a boolean) becomes
//!   [`Extensions::allow_implicit_invocation`](skills_core::Extensions::allow_implicit_invocation):
//!   `false` makes the skill manual (out of the model's catalog, loaded by
//!   explicit mention);
//! * `interface.display_name` (a string) becomes the skill's
//!   [`title`](skills_core::SkillMetadata::title) when `SKILL.md` set none;
//! * each `dependencies.tools[]` entry (`{type, value, ...}`) adds its `value`
//!   to [`Requirements::tools`](skills_core::Requirements::tools), once.
//!
//! Every other key is ignored (`short_description`, icons, colours, prompts,
//! transports: what a UI shows, not what the skill needs). A value of the
//! wrong shape is ignored with an `openai-yaml-invalid` warning naming the
//! file, and so is a file that cannot be read or parsed: the skill always
//! loads on its `SKILL.md` alone.
//!
//! The file is read like every resource: by handle beneath the skill folder
//! (a symlink leading out, through `agents/` or the file, is refused), only a
//! regular file, at most [`MAX_OPENAI_YAML_BYTES`] (64 KiB). Its YAML goes
//! through the frontmatter's hardened parser
//! ([`skills_core::parse_yaml_json`]): nesting depth, node and byte budgets,
//! so an alias bomb ends in a warning.
//!
//! # Staleness
//! The skill folder's own stamp already shows an `agents/` folder appearing
//! or going away. For a skill that has an `agents/` folder, the scan also
//! stamps `agents/openai.yaml` itself (its stat when read, taken before the
//! read that decided what the file gives, or "absent"); the
//! staleness check always compares those stamps, so creating, editing in
//! place or removing the file is noticed by `list` for one extra `stat` per
//! such skill. Skills without an `agents/` folder cost nothing: when the walk
//! has listed the skill folder (nested skills on, the default) it knows there
//! is no `agents` entry and makes no call at all; otherwise one failed open
//! per skill per scan, never in the check.

use std::path::Path;

use serde_json::Value;
use skills_core::{Code, Diagnostic, ResourceListing, ResourcePath, SkillMetadata};

use crate::beneath::Refusal;
use crate::cache::Stamp;
use crate::discover::{Before, read_stamped};
use crate::vfs::{FileKind, Vfs};

/// The file's path inside the skill folder.
pub(crate) const OPENAI_YAML: &str = "agents/openai.yaml";

/// Larger `agents/openai.yaml` files are ignored unread (64 KiB).
pub const MAX_OPENAI_YAML_BYTES: u64 = 64 * 1024;

/// What the walk knows about a skill folder's `agents` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentsHint {
    /// The folder was not listed: look.
    Unknown,
    /// The folder's listing has an `agents` entry that may be a folder.
    Present,
    /// The folder's listing has no `agents` folder: nothing to read.
    Absent,
}

impl AgentsHint {
    /// The hint from a listing of the skill folder.
    pub(crate) fn from_listing<N: AsRef<std::ffi::OsStr>>(
        entries: &[(N, Option<FileKind>)],
    ) -> Self {
        let present = entries.iter().any(|(name, kind)| {
            name.as_ref() == std::ffi::OsStr::new("agents")
                && !matches!(kind, Some(FileKind::File | FileKind::Other))
        });
        if present { Self::Present } else { Self::Absent }
    }
}

impl AgentsHint {
    /// The hint from a skill's resource listing: present when it lists
    /// `agents/openai.yaml`, absent when it lists everything without it,
    /// unknown when it was cut.
    pub(crate) fn from_resources(listing: &ResourceListing) -> Self {
        if listing
            .entries
            .iter()
            .any(|e| e.path.as_str() == OPENAI_YAML)
        {
            Self::Present
        } else if listing.truncated || listing.omitted > 0 {
            Self::Unknown
        } else {
            Self::Absent
        }
    }
}

/// Reads `agents/openai.yaml` of the skill folder `dir` (when `hint` allows
/// one) into `metadata`, adding a warning to `diagnostics` for each problem.
/// Returns the file's stamp for the staleness check: `None` when the skill has
/// no `agents/` folder.
pub(crate) fn apply(
    vfs: &dyn Vfs,
    dir: &Path,
    hint: AgentsHint,
    metadata: &mut SkillMetadata,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Stamp> {
    if hint == AgentsHint::Absent {
        return None;
    }
    let path = dir.join("agents").join("openai.yaml");
    let file = path.display().to_string();
    let warn = |message: String| {
        Diagnostic::warning(Code::OpenaiYamlInvalid, message).in_file(file.clone())
    };
    let rel = ResourcePath::parse(OPENAI_YAML).ok()?;
    let _span = tracing::debug_span!("openai_yaml", path = %file).entered();
    // Stamped before the read that decides (see `read_stamped`).
    let mut bytes = Vec::new();
    let read = read_stamped(
        vfs,
        dir,
        &rel,
        &path,
        Before::default(),
        MAX_OPENAI_YAML_BYTES,
        &mut bytes,
    );
    let (stamp, err) = match read {
        Ok(stat) => {
            tracing::debug!(bytes = bytes.len(), "read agents/openai.yaml");
            diagnostics.extend(map_into(&bytes, metadata).into_iter().map(warn));
            return Some(Stamp::new(&path, Some(stat)));
        }
        Err(failed) => failed,
    };
    let why = match Refusal::of(&err) {
        Some(Refusal::OutsideRoot) => {
            "it is a symlink (or in a folder) leading outside the skill folder".to_owned()
        }
        Some(Refusal::NotRegular(_)) => "it is not a regular file".to_owned(),
        Some(Refusal::TooLarge { len, cap }) => format!("it is {len} bytes; the limit is {cap}"),
        None if matches!(
            err.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        ) =>
        {
            // No file: stamp its absence when there is a folder it could
            // appear in, so creating it is noticed.
            let folder = vfs.metadata(&dir.join("agents")).is_ok_and(|m| m.is_dir());
            return folder.then(|| Stamp::new(&path, None));
        }
        None => format!("it cannot be read: {err}"),
    };
    tracing::warn!(reason = %why, "ignored agents/openai.yaml");
    diagnostics.push(warn(format!("agents/openai.yaml is ignored: {why}")));
    Some(Stamp::new(&path, stamp))
}

/// Parses the file's bytes and applies what it says to `metadata`; returns
/// one message per problem.
fn map_into(bytes: &[u8], metadata: &mut SkillMetadata) -> Vec<String> {
    let mut problems = Vec::new();
    let Ok(text) = std::str::from_utf8(bytes) else {
        problems.push("agents/openai.yaml is not UTF-8 text; it is ignored".to_owned());
        return problems;
    };
    let root = match skills_core::parse_yaml_json(text) {
        Ok(Some(Value::Object(root))) => root,
        Ok(None | Some(Value::Null)) => return problems,
        Ok(Some(other)) => {
            problems.push(format!(
                "agents/openai.yaml must be a mapping, found {}; it is ignored",
                kind(&other)
            ));
            return problems;
        }
        Err(diag) => {
            let at = diag
                .line
                .map(|l| format!(" (line {l})"))
                .unwrap_or_default();
            problems.push(format!(
                "agents/openai.yaml is not valid YAML{at}: {}; it is ignored",
                diag.message
            ));
            return problems;
        }
    };
    if let Some(policy) = section(&root, "policy", &mut problems) {
        match policy.get("allow_implicit_invocation") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(allow)) => {
                metadata.extensions.allow_implicit_invocation = Some(*allow);
            }
            Some(other) => problems.push(format!(
                "`policy.allow_implicit_invocation` must be true or false, found {}; it is ignored",
                kind(other)
            )),
        }
    }
    if let Some(interface) = section(&root, "interface", &mut problems) {
        match interface.get("display_name") {
            None | Some(Value::Null) => {}
            Some(Value::String(title)) => {
                let title = title.trim();
                if metadata.title.is_none() && !title.is_empty() {
                    metadata.title = Some(title.to_owned());
                }
            }
            Some(other) => problems.push(format!(
                "`interface.display_name` must be a string, found {}; it is ignored",
                kind(other)
            )),
        }
    }
    if let Some(dependencies) = section(&root, "dependencies", &mut problems) {
        tools_into(dependencies.get("tools"), metadata, &mut problems);
    }
    problems
}

/// The mapping at `key` of `root`; `None` (with a problem when it has another
/// shape) otherwise.
fn section<'a>(
    root: &'a serde_json::Map<String, Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<&'a serde_json::Map<String, Value>> {
    match root.get(key)? {
        Value::Object(map) => Some(map),
        Value::Null => None,
        other => {
            problems.push(format!(
                "`{key}` must be a mapping, found {}; it is ignored",
                kind(other)
            ));
            None
        }
    }
}

/// `dependencies.tools`: each entry's `value` joins the required tools.
fn tools_into(tools: Option<&Value>, metadata: &mut SkillMetadata, problems: &mut Vec<String>) {
    let items = match tools {
        None | Some(Value::Null) => return,
        Some(Value::Array(items)) => items,
        Some(other) => {
            problems.push(format!(
                "`dependencies.tools` must be a list, found {}; it is ignored",
                kind(other)
            ));
            return;
        }
    };
    let required = &mut metadata.extensions.requires.tools;
    for (i, item) in items.iter().enumerate() {
        let Value::Object(entry) = item else {
            problems.push(format!(
                "`dependencies.tools[{i}]` must be a mapping (`type`, `value`, ...), found {}; it is ignored",
                kind(item)
            ));
            continue;
        };
        match entry.get("value") {
            Some(Value::String(value)) if !value.trim().is_empty() => {
                let value = value.trim();
                if !required.iter().any(|t| t == value) {
                    required.push(value.to_owned());
                }
            }
            found => problems.push(format!(
                "`dependencies.tools[{i}].value` must be the tool's name, found {}; the entry is ignored",
                match found {
                    None => "nothing",
                    Some(Value::String(_)) => "an empty string",
                    Some(other) => kind(other),
                }
            )),
        }
    }
}

/// A short name of a JSON value's kind, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}
