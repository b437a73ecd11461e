//! Located validation diagnostics with stable codes.
//!
//! A [`Diagnostic`] says what is wrong (a stable [`Code`] and a message), where
//! (file, 1-based line and column, when known) and, for problems in the text of a
//! file, can quote the offending line as an [`Excerpt`] with a caret under the
//! column. [`Diagnostic`]'s `Display` renders all of that:
//!
//! ```text
//! skills/pdf/SKILL.md:5:1: error[yaml-invalid]: tab character used for indentation: YAML indents with spaces; replace the tab with spaces
//!    5 |     author: me
//!      | ^
//! ```
//!
//! The first line is always `file:line:col: severity[code]: message` (leaving out
//! what is unknown); the excerpt lines follow only when an excerpt is attached, so
//! callers that indent diagnostics must indent every line.

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
    /// Alias expansion exceeds the node or byte budget, or the YAML has too many nodes.
    YamlAliasBudget => "yaml-alias-budget",
    /// The frontmatter is not a mapping.
    FrontmatterNotMapping => "frontmatter-not-mapping",
    /// A frontmatter field the spec does not define (strict mode).
    FieldUnknown => "field-unknown",
    /// No `name` field (lenient mode: a warning when the skill loads under its
    /// folder name).
    NameMissing => "name-missing",
    /// `name` is empty or not a string (lenient mode: a warning when the skill
    /// loads under its folder name).
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
    /// No `description` field (lenient mode: a warning, the body's first
    /// paragraph stands in).
    DescriptionMissing => "description-missing",
    /// `description` is empty or not a string (lenient mode: a warning, the
    /// body's first paragraph stands in).
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
    /// A layer of a layered provider could not list its skills.
    LayerUnavailable => "layer-unavailable",
    /// A resource path given in code breaks the path rules (`..`, absolute, …).
    ResourcePathInvalid => "resource-path-invalid",
    /// A file-system error while discovering or reading a skill.
    IoError => "io-error",
    /// Lenient mode: `name` is not a valid skill name (a display title such as
    /// `PDF Tools`); the skill loads under the folder name, or a name derived
    /// from it when the folder name is not a valid name either.
    PortabilityTitleAsName => "portability-title-as-name",
    /// Lenient mode: fields outside the specification, which strict mode and other
    /// clients reject.
    PortabilityExtensionField => "portability-extension-field",
    /// Lenient mode: YAML flow style, anchors or tags, which strict mode and the
    /// reference validator reject.
    PortabilityYamlStyle => "portability-yaml-style",
    /// Lint: the body names a file that is not in the skill.
    LintMissingFile => "lint-missing-file",
    /// Lint: the body names a file whose name differs from a file of the skill
    /// only in letter case.
    LintFileCase => "lint-file-case",
    /// Lint: the body is longer than 500 lines or about 5 000 tokens.
    LintBodyTooLong => "lint-body-too-long",
    /// Lint: a file is reached only through another file the body links to.
    LintNestedReference => "lint-nested-reference",
    /// Lint: the description does not say when to use the skill.
    LintDescriptionNoTrigger => "lint-description-no-trigger",
    /// Lint: the description narrates the skill's steps (`…, then …, then …`)
    /// instead of saying what the skill is for and when to use it.
    LintDescriptionWorkflow => "lint-description-workflow",
    /// Lint: a script has no `#!` line.
    LintScriptNoShebang => "lint-script-no-shebang",
    /// Lint: a script with a `#!` line is not executable.
    LintScriptNotExecutable => "lint-script-not-executable",
    /// A path of a skill (e.g. a `SKILL.md` symlink) leads outside its folder.
    PathOutsideSkill => "path-outside-skill",
    /// A skills root is not a folder.
    RootNotFolder => "root-not-folder",
    /// No home folder (`HOME` is not set), so the user-scope standard roots are
    /// skipped.
    HomeUnset => "home-unset",
    /// Discovery stopped at a limit (folder count or depth); some skills may be missing.
    DiscoveryLimit => "discovery-limit",
    /// Discovery skipped folders by name (version control, dependencies, build output).
    DirsSkipped => "dirs-skipped",
    /// A folder or file name that is not valid UTF-8 was skipped.
    NameNotUtf8 => "name-not-utf8",
    /// A skill's declared requirements (binaries, environment variables, tools,
    /// operating system) are not met here; it needs setup before it can work.
    RequirementUnmet => "requirement-unmet",
    /// A requirement declaration has the wrong shape; it is ignored.
    RequirementsInvalid => "requirements-invalid",
    /// A skill's `agents/openai.yaml` could not be read or has the wrong shape.
    OpenaiYamlInvalid => "openai-yaml-invalid",
    /// A downloaded artifact's SHA-256 digest differs from the one published
    /// (or locked); the skill is refused.
    DigestMismatch => "digest-mismatch",
    /// A well-known skills index could not be read or has the wrong shape.
    IndexInvalid => "index-invalid",
    /// The skills found differ from the lockfile.
    LockDrift => "lock-drift",
    /// A visibility rule names a skill that does not exist.
    TierUnknownSkill => "tier-unknown-skill",
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
///
/// Built with [`Diagnostic::error`] or [`Diagnostic::warning`] and the `in_file`,
/// `at_line`, `at_column` and excerpt builders; the fields are for reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
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
    /// The 1-based column in characters (a tab counts as one), if known.
    pub column: Option<u32>,
    /// The offending source line with a caret under the column, if one was attached
    /// (see [`Diagnostic::with_excerpt_from`]). Not part of the JSON form: JSON
    /// readers have `file`, `line` and `column`.
    #[serde(skip)]
    pub excerpt: Option<Excerpt>,
}

/// One source line quoted under a [`Diagnostic`], ready to print: control and
/// bidirectional-formatting characters are replaced by U+FFFD, a tab by four
/// spaces, and a long line is shortened around the caret with `…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The 1-based line number shown in the gutter.
    pub line: u32,
    /// The line as it is printed (no line break).
    pub text: String,
    /// The 1-based character position in `text` the caret points at, if any.
    pub caret: Option<u32>,
}

/// Longest excerpt text, in source characters, before it is shortened.
const EXCERPT_MAX_CHARS: usize = 120;
/// Source characters kept before the caret when a long line is shortened.
const EXCERPT_BEFORE_CARET: usize = 40;

impl Excerpt {
    /// Quotes line `line` (1-based) of `source`, with a caret at `column` (1-based,
    /// in characters of that line). `None` when `source` has no such line.
    pub fn from_source(source: &str, line: u32, column: Option<u32>) -> Option<Self> {
        let index = usize::try_from(line.checked_sub(1)?).ok()?;
        let raw = source.split('\n').nth(index)?;
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        Some(Self::from_line(line, raw, column))
    }

    /// Quotes `raw` (one line of text without its line break) as line `line`, with
    /// a caret at `column` (1-based, in characters of `raw`; a column past the end
    /// points just after the last character).
    pub fn from_line(line: u32, raw: &str, column: Option<u32>) -> Self {
        let total = raw.chars().count();
        let caret_index = column.map(|c| (c.max(1) as usize - 1).min(total));
        // Shorten long lines to a window around the caret.
        let (start, end) = if total <= EXCERPT_MAX_CHARS {
            (0, total)
        } else {
            let start = caret_index
                .unwrap_or(0)
                .saturating_sub(EXCERPT_BEFORE_CARET)
                .min(total - EXCERPT_MAX_CHARS);
            (start, start + EXCERPT_MAX_CHARS)
        };
        let mut text = String::new();
        let mut width = 0usize;
        if start > 0 {
            text.push('…');
            width += 1;
        }
        let mut caret = None;
        for (i, c) in raw.chars().enumerate().take(end).skip(start) {
            if caret_index == Some(i) {
                caret = Some(width + 1);
            }
            if c == '\t' {
                text.push_str("    ");
                width += 4;
            } else {
                text.push(printable(c));
                width += 1;
            }
        }
        if caret_index.is_some() && caret.is_none() {
            // The column is at (or past) the end of the shown text.
            caret = Some(width + 1);
        }
        if end < total {
            text.push('…');
        }
        Self {
            line,
            text,
            caret: caret.and_then(|c| u32::try_from(c).ok()),
        }
    }
}

/// Replaces characters that must not reach a terminal verbatim.
fn printable(c: char) -> char {
    if crate::display::is_display_unsafe(c) {
        '\u{fffd}'
    } else {
        c
    }
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
            column: None,
            excerpt: None,
        }
    }

    /// Sets the line.
    #[must_use]
    pub fn at_line(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    /// Sets the column (1-based, in characters).
    #[must_use]
    pub fn at_column(mut self, column: u32) -> Self {
        self.column = Some(column);
        self
    }

    /// Sets the excerpt.
    #[must_use]
    pub fn with_excerpt(mut self, excerpt: Excerpt) -> Self {
        self.excerpt = Some(excerpt);
        self
    }

    /// Attaches an excerpt of this diagnostic's line taken from `source` (the whole
    /// file, whose lines the diagnostic's line counts), with a caret at its column.
    /// Leaves the diagnostic unchanged when it has no line or `source` has no such
    /// line.
    #[must_use]
    pub fn with_excerpt_from(mut self, source: &str) -> Self {
        if let Some(line) = self.line
            && let Some(excerpt) = Excerpt::from_source(source, line, self.column)
        {
            self.excerpt = Some(excerpt);
        }
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
    /// `file:line:col: severity[code]: message`, leaving out what is unknown, then
    /// the excerpt (if any) on the following lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(col)) => write!(f, "{file}:{line}:{col}: ")?,
            (Some(file), Some(line), None) => write!(f, "{file}:{line}: ")?,
            (Some(file), None, _) => write!(f, "{file}: ")?,
            (None, Some(line), Some(col)) => write!(f, "line {line}, column {col}: ")?,
            (None, Some(line), None) => write!(f, "line {line}: ")?,
            (None, None, _) => {}
        }
        write!(
            f,
            "{}[{}]: {}",
            self.severity.as_str(),
            self.code,
            self.message
        )?;
        if let Some(excerpt) = &self.excerpt {
            write!(f, "\n{excerpt}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Excerpt {
    /// `   3 | text`, then `     |    ^` when there is a caret; the line-number
    /// gutter is at least four characters wide.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let number = self.line.to_string();
        let width = number.len().max(4);
        if self.text.is_empty() {
            write!(f, "{number:>width$} |")?;
        } else {
            write!(f, "{number:>width$} | {}", self.text)?;
        }
        if let Some(caret) = self.caret {
            let pad = caret.saturating_sub(1) as usize;
            write!(f, "\n{:width$} | {:pad$}^", "", "")?;
        }
        Ok(())
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
        let d = Diagnostic::error(Code::YamlInvalid, "m")
            .at_line(3)
            .at_column(5);
        assert_eq!(d.to_string(), "line 3, column 5: error[yaml-invalid]: m");
    }

    #[test]
    fn display_with_excerpt_and_caret() {
        let source = "---\nname: a\nkey:\tvalue\n---\n";
        let d = Diagnostic::error(Code::YamlInvalid, "tab")
            .in_file("a/SKILL.md")
            .at_line(3)
            .at_column(5)
            .with_excerpt_from(source);
        assert_eq!(
            d.to_string(),
            "a/SKILL.md:3:5: error[yaml-invalid]: tab\n   3 | key:    value\n     |     ^"
        );
        // No such line: no excerpt, one line.
        let d = Diagnostic::error(Code::YamlInvalid, "x")
            .at_line(9)
            .with_excerpt_from(source);
        assert_eq!(d.excerpt, None);
        // A line but no column: the line without a caret.
        let d = Diagnostic::error(Code::YamlInvalid, "x")
            .at_line(2)
            .with_excerpt_from(source);
        assert_eq!(
            d.to_string(),
            "line 2: error[yaml-invalid]: x\n   2 | name: a"
        );
    }

    #[test]
    fn excerpt_is_safe_and_short() {
        let e = Excerpt::from_line(12_345, "a\u{1b}[31mb\u{202e}c", Some(2));
        assert_eq!(e.text, "a\u{fffd}[31mb\u{fffd}c");
        assert_eq!(e.to_string(), "12345 | a\u{fffd}[31mb\u{fffd}c\n      |  ^");
        let long = format!("{}X{}", "a".repeat(500), "b".repeat(500));
        let e = Excerpt::from_line(1, &long, Some(501));
        assert!(
            e.text.chars().count() <= EXCERPT_MAX_CHARS + 2,
            "{}",
            e.text
        );
        let caret = e.caret.expect("caret") as usize;
        assert_eq!(e.text.chars().nth(caret - 1), Some('X'), "{}", e.text);
        assert!(e.text.starts_with('…') && e.text.ends_with('…'));
        // Past the end: just after the last character.
        let e = Excerpt::from_line(1, "ab", Some(10));
        assert_eq!(e.caret, Some(3));
        let e = Excerpt::from_line(1, &long, Some(5_000));
        assert!(
            e.text.ends_with('b') && e.text.starts_with('…'),
            "{}",
            e.text
        );
        assert_eq!(
            e.caret.map(|c| c as usize),
            Some(e.text.chars().count() + 1)
        );
    }
}
