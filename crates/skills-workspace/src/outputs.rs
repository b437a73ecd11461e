//! The output manifest of a run and the files it collects or saves.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::paths::WORKSPACE_SCHEME;

/// Default cap on the files one run collects (`outputs.max_files`).
pub const DEFAULT_MAX_FILES: usize = 100;
/// Default cap on one collected file (`outputs.max_file_bytes`): 4 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Default cap on all collected files of a run (`outputs.max_total_bytes`): 64 MiB.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;

/// The `outputs` manifest of a run: which files to collect and what to do
/// with them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct OutputSpec {
    /// Globs relative to the workspace root (`out/**/*.json`, `$OUTPUT_DIR/a.txt`).
    #[serde(default, alias = "Globs")]
    #[schemars(description = "Globs of files to collect, relative to the workspace")]
    pub globs: Vec<String>,
    /// Inline text contents in the result.
    #[serde(default, alias = "Inline")]
    #[schemars(description = "Put text file contents in the result")]
    pub inline: bool,
    /// Save the files as artifacts.
    #[serde(default, alias = "Save")]
    #[schemars(description = "Save the files as artifacts")]
    pub save: bool,
    /// A prefix for artifact names (`reports/` gives `reports/a.txt`).
    #[serde(
        default,
        alias = "NameTemplate",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(description = "Prefix of saved artifact names")]
    pub name_template: Option<String>,
    /// At most this many files ([`DEFAULT_MAX_FILES`]).
    #[serde(default, alias = "MaxFiles", skip_serializing_if = "Option::is_none")]
    #[schemars(description = "At most this many files")]
    pub max_files: Option<usize>,
    /// At most this many bytes per file ([`DEFAULT_MAX_FILE_BYTES`]); larger
    /// files are cut and marked `truncated`.
    #[serde(
        default,
        alias = "MaxFileBytes",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(description = "At most this many bytes per file (longer files are cut)")]
    pub max_file_bytes: Option<u64>,
    /// At most this many bytes in all ([`DEFAULT_MAX_TOTAL_BYTES`]).
    #[serde(
        default,
        alias = "MaxTotalBytes",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(description = "At most this many bytes in all")]
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
