//! Located validation diagnostics with stable codes.

use std::fmt;

use serde::Serialize;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The skill is invalid (strict mode) or cannot be loaded (lenient mode).
    Error,
    /// The skill loads, but something should be fixed.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident => $text:literal,)*) => {
        /// A stable diagnostic code. The string form (see [`Code::as_str`]) never changes
        /// once released; tools may match on it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable kebab-case form, e.g. `name-too-long`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }
        }
    };
}

codes! {
    /// A skill directory has no `SKILL.md` (or `skill.md`).
    SkillMdMissing => "skill-md-missing",
    /// `SKILL.md` exists but is not a regular file (e.g. a directory).
    SkillMdNotFile => "skill-md-not-file",
    /// `SKILL.md` is larger than the configured cap.
    SkillMdTooLarge => "skill-md-too-large",
    /// `SKILL.md` is not valid UTF-8.
    NotUtf8 => "not-utf8",
    /// The file does not open with a `---` frontmatter fence.
    FrontmatterMissing => "frontmatter-missing",
    /// The frontmatter has no closing `---` line.
    FrontmatterUnclosed => "frontmatter-unclosed",
    /// The frontmatter is larger than the configured cap.
    FrontmatterTooLarge => "frontmatter-too-large",
    /// The frontmatter is not valid YAML.
    YamlInvalid => "yaml-invalid",
    /// Flow-style collections (strict mode).
    YamlFlowStyle => "yaml-flow-style",
    /// Anchors or aliases (strict mode).
    YamlAnchor => "yaml-anchor",
    /// Explicit tags (strict mode).
    YamlTag => "yaml-tag",
    /// A key appears twice in one mapping.
    YamlDuplicateKey => "yaml-duplicate-key",
    /// The YAML nests deeper than allowed.
    YamlTooDeep => "yaml-too-deep",
    /// Alias expansion (or the node count) exceeds the node budget.
    YamlAliasBudget => "yaml-alias-budget",
    /// The frontmatter is not a mapping.
    FrontmatterNotMapping => "frontmatter-not-mapping",
    /// A frontmatter field the spec does not define (strict mode).
    FieldUnknown => "field-unknown",
    /// No `name` field.
    NameMissing => "name-missing",
    /// `name` is empty or not a string.
    NameEmpty => "name-empty",
    /// `name` is longer than 64 characters.
    NameTooLong => "name-too-long",
    /// `name` has uppercase characters.
    NameNotLowercase => "name-not-lowercase",
    /// `name` starts or ends with a hyphen.
    NameHyphenEdge => "name-hyphen-edge",
    /// `name` contains `--`.
    NameConsecutiveHyphens => "name-consecutive-hyphens",
    /// `name` has characters other than letters, digits and hyphens.
    NameInvalidChars => "name-invalid-chars",
    /// `name` differs from the directory name.
    NameDirMismatch => "name-dir-mismatch",
    /// `name` is refused by the reserved-name policy.
    NameReserved => "name-reserved",
    /// No `description` field.
    DescriptionMissing => "description-missing",
    /// `description` is empty or not a string.
    DescriptionEmpty => "description-empty",
    /// `description` is longer than 1024 characters.
    DescriptionTooLong => "description-too-long",
    /// `compatibility` is not a string.
    CompatibilityNotString => "compatibility-not-string",
    /// `compatibility` is longer than 500 characters.
    CompatibilityTooLong => "compatibility-too-long",
    /// `metadata` is not a mapping.
    MetadataNotMapping => "metadata-not-mapping",
    /// A `metadata` value is not a string.
    MetadataValueNotString => "metadata-value-not-string",
    /// `allowed-tools` is not a space-separated string.
    AllowedToolsNotString => "allowed-tools-not-string",
    /// A known extension field has a value of the wrong shape.
    ExtensionInvalid => "extension-invalid",
    /// Two skills with the same name were found by one provider.
    SkillDuplicate => "skill-duplicate",
    /// A layered provider found the same skill in two layers.
    LayerCollision => "layer-collision",
    /// A file-system error while discovering or reading a skill.
    IoError => "io-error",
    /// A path of a skill (e.g. a `SKILL.md` symlink) leads outside its folder.
    PathOutsideSkill => "path-outside-skill",
    /// A skills root is not a folder.
    RootNotFolder => "root-not-folder",
    /// Discovery stopped at a limit (folder count or depth); some skills may be missing.
    DiscoveryLimit => "discovery-limit",
    /// Discovery skipped folders by name (version control, dependencies, build output).
    DirsSkipped => "dirs-skipped",
    /// A folder or file name that is not valid UTF-8 was skipped.
    NameNotUtf8 => "name-not-utf8",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One problem found in a skill, with a stable code and its location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The stable code.
    pub code: Code,
    /// A human-readable message that says what is wrong and how to fix it.
    pub message: String,
    /// The file the problem is in (as given by the caller), if known.
    pub file: Option<String>,
    /// The 1-based line, if known.
    pub line: Option<u32>,
}

impl Diagnostic {
    /// A new error diagnostic without a location.
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// A new warning diagnostic without a location.
    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    /// A new diagnostic without a location.
    pub fn new(severity: Severity, code: Code, message: impl Into<String>) -> Self {
        Self {
            severity,
            code,
            message: message.into(),
            file: None,
            line: None,
        }
    }

    /// Sets the line.
    #[must_use]
    pub fn at_line(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    /// Sets the file.
    #[must_use]
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// `true` for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// `file:line: severity[code]: message`, leaving out what is unknown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: ")?,
            (Some(file), None) => write!(f, "{file}: ")?,
            (None, Some(line)) => write!(f, "line {line}: ")?,
            (None, None) => {}
        }
        write!(
            f,
            "{}[{}]: {}",
            self.severity.as_str(),
            self.code,
            self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-' || b.is_ascii_digit())
            );
        }
    }

    #[test]
    fn display_includes_location() {
        let d = Diagnostic::error(Code::NameEmpty, "name is empty")
            .in_file("a/SKILL.md")
            .at_line(2);
        assert_eq!(
            d.to_string(),
            "a/SKILL.md:2: error[name-empty]: name is empty"
        );
        let d = Diagnostic::warning(Code::LayerCollision, "x");
        assert_eq!(d.to_string(), "warning[layer-collision]: x");
    }
}
