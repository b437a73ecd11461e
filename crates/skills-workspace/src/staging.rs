//! Skills handed to a runtime and what staging them reports.

use serde::{Deserialize, Serialize};
use skills_core::{Skill, SkillProvider};

use crate::error::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use crate::paths::SKILLS_SUBDIR;

/// Largest skill (bytes of all its files) [`SkillSource::from_provider`]
/// reads into memory for a skill without a local folder.
pub const MAX_IN_MEMORY_SKILL_BYTES: u64 = 64 * 1024 * 1024;

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

    /// The skill `name` of `provider`, ready to stage: its folder when it
    /// has a local one ([`SkillSource::from_skill_location`]), else its files
    /// read through the provider (`SKILL.md` rebuilt from the frontmatter and
    /// body; files under `scripts/` executable), at most
    /// [`MAX_IN_MEMORY_SKILL_BYTES`] in all.
    ///
    /// # Errors
    /// [`WorkspaceErrorKind::NotFound`] when the provider has no such skill
    /// or cannot read it, [`WorkspaceErrorKind::Io`] when one of its files
    /// cannot be read, [`WorkspaceErrorKind::TooLarge`] past the size cap.
    pub async fn from_provider(provider: &dyn SkillProvider, name: &str) -> WorkspaceResult<Self> {
        let skill = provider.get(name).await.map_err(|err| {
            WorkspaceError::new(
                WorkspaceErrorKind::NotFound,
                format!("the skill cannot be staged: {}", err.message()),
            )
        })?;
        if let Some(source) = Self::from_skill_location(&skill) {
            return Ok(source);
        }
        let mut files = vec![SkillFile::new(
            "SKILL.md",
            format!(
                "---\n{}\n---\n{}\n",
                skill.metadata.raw_frontmatter.trim_end(),
                skill.body
            ),
        )];
        let mut total = 0u64;
        for path in skill.resources.paths() {
            let bytes = provider
                .read_resource_bytes(skill.name(), &path)
                .await
                .map_err(|err| {
                    WorkspaceError::new(
                        WorkspaceErrorKind::Io,
                        format!(
                            "the file `{path}` of the skill cannot be staged: {}",
                            err.message()
                        ),
                    )
                })?;
            total += bytes.bytes.len() as u64;
            if total > MAX_IN_MEMORY_SKILL_BYTES {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::TooLarge,
                    format!(
                        "the skill `{}` is larger than {MAX_IN_MEMORY_SKILL_BYTES} bytes and cannot be staged",
                        skill.name()
                    ),
                ));
            }
            let executable = path.starts_with("scripts/");
            files.push(SkillFile::new(path, bytes.bytes.to_vec()).executable(executable));
        }
        Ok(Self::files(skill.name(), files))
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        match self {
            SkillSource::Folder { name, .. } | SkillSource::Files { name, .. } => name,
        }
    }
}

/// A workspace, as [`WorkspaceRuntime::create_workspace`](crate::WorkspaceRuntime::create_workspace) reports it.
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn source_from_location() {
        let meta = skills_core::SkillMetadata::new(
            skills_core::SkillName::parse("demo").unwrap(),
            "Demo. Use when testing.",
        );
        let skill = Skill::new(meta, "", skills_core::ResourceListing::default())
            .with_location("/srv/skills/demo/SKILL.md");
        assert_eq!(
            SkillSource::from_skill_location(&skill),
            Some(SkillSource::folder("demo", "/srv/skills/demo"))
        );
    }
}
