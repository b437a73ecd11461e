//! Inputs placed into a workspace before a run: `inputs[]` specs, their
//! URIs, attachments and what staging them reports.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use crate::paths::{WORKSPACE_SCHEME, normalize_relative};

/// How an input is placed into the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(transform = plain_enum)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(description = "A file to place into the workspace")]
#[non_exhaustive]
pub struct InputSpec {
    /// Where the input comes from: `artifact://name[@version]`, `host:///abs/path`,
    /// `workspace://rel/path` or `skill://name/rel/path`.
    #[serde(alias = "src")]
    #[schemars(
        description = "artifact://name[@version], host:///abs/path, workspace://rel/path or \
                       skill://name/rel/path"
    )]
    pub from: String,
    /// Where it goes, relative to the workspace root; by default
    /// `work/inputs/<file name>`.
    #[serde(default, alias = "dst", skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Destination relative to the workspace (default work/inputs/<name>)")]
    pub to: Option<String>,
    /// Copy or link.
    #[serde(default)]
    pub mode: InputMode,
    /// Keep the resolved version for the rest of the session (an
    /// `artifact://name` without a version resolves once, then stays put).
    #[serde(default)]
    #[schemars(description = "Keep the resolved artifact version for the session")]
    pub pin: bool,
}

/// The schema of a unit-only enum as the model reads it best: a string
/// with its values (`{"type": "string", "enum": [...]}`), without the
/// variants' rustdoc.
fn plain_enum(schema: &mut schemars::Schema) {
    let values: Vec<serde_json::Value> = schema
        .get("oneOf")
        .and_then(serde_json::Value::as_array)
        .map(|variants| {
            variants
                .iter()
                .filter_map(|v| v.get("const").or_else(|| v.get("enum")?.get(0)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    if !values.is_empty() {
        schema.remove("oneOf");
        schema.insert("type".to_owned(), "string".into());
        schema.insert("enum".to_owned(), values.into());
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
}
