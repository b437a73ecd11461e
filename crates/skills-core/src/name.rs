//! Skill names: the validated [`SkillName`] newtype and the naming rules.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use unicode_normalization::UnicodeNormalization;

use crate::diagnostic::Code;
use crate::error::{Error, ErrorKind};

/// The longest name the specification allows, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// A skill name that follows the character rules of the specification.
///
/// A `SkillName` is NFKC-normalized, non-empty, lowercase, made only of letters,
/// digits and hyphens, with no leading, trailing or doubled hyphen. Parsing is the
/// only way to build one. Length is *not* part of the type: the 64-character limit
/// is a validation rule (an error in strict mode, a warning in lenient mode).
///
/// Because names never contain `_`, they can never collide with tool names such as
/// `load_skill`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SkillName(String);

impl SkillName {
    /// Parses and normalizes a name (surrounding whitespace is trimmed, then NFKC).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidSkill`] naming every rule the name breaks.
    pub fn parse(raw: &str) -> Result<Self, Error> {
        let name = normalize_name(raw);
        let problems = check_chars(&name);
        if problems.is_empty() {
            Ok(SkillName(name))
        } else {
            let text: Vec<String> = problems.into_iter().map(|(_, m)| m).collect();
            Err(Error::new(ErrorKind::InvalidSkill, text.join("; ")))
        }
    }

    /// [`SkillName::parse`], taking a name that is normally normalized and
    /// valid already, which is then kept without a copy.
    pub(crate) fn parse_owned(name: String) -> Result<Self, Error> {
        if chars_ok(&name) && is_normalized_name(&name) {
            Ok(SkillName(name))
        } else {
            Self::parse(&name)
        }
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Consumes the name, returning the inner string.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SkillName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SkillName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// Deserializes through [`SkillName::parse`]: a name that breaks the rules is
/// an error, never a `SkillName`.
impl<'de> Deserialize<'de> for SkillName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        SkillName::parse(&raw).map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for SkillName {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SkillName::parse(s)
    }
}

/// Trims and NFKC-normalizes a raw name, as the specification compares names.
pub fn normalize_name(raw: &str) -> String {
    let trimmed = raw.trim();
    if trimmed.is_ascii() {
        trimmed.to_owned()
    } else {
        trimmed.nfkc().collect()
    }
}

/// `normalize_name(raw) == raw`, without a copy for ASCII text.
pub(crate) fn is_normalized_name(raw: &str) -> bool {
    if raw.is_ascii() {
        raw.trim() == raw
    } else {
        normalize_name(raw) == raw
    }
}

/// NFKC-normalizes without trimming (directory names are compared this way);
/// ASCII text is its own normal form and is not copied.
pub(crate) fn normalize_name_keep_space(raw: &str) -> std::borrow::Cow<'_, str> {
    if raw.is_ascii() {
        std::borrow::Cow::Borrowed(raw)
    } else {
        std::borrow::Cow::Owned(raw.nfkc().collect())
    }
}

/// The character rules (everything but length and the directory match), on an
/// already normalized name. Returns every broken rule with a message.
pub(crate) fn check_chars(name: &str) -> Vec<(Code, String)> {
    broken_char_rules(name)
        .map(|code| {
            let message = match code {
                Code::NameEmpty => "the name must be a non-empty string".to_owned(),
                Code::NameNotLowercase => format!("the name `{name}` must be lowercase"),
                Code::NameHyphenEdge => {
                    format!("the name `{name}` must not start or end with a hyphen")
                }
                Code::NameConsecutiveHyphens => {
                    format!("the name `{name}` must not contain consecutive hyphens")
                }
                _ => format!("the name `{name}` may only contain letters, digits and hyphens"),
            };
            (code, message)
        })
        .collect()
}

/// The codes of the rules of [`check_chars`] that `name` breaks, in the same
/// order, without building messages: `NameEmpty` alone for an empty name,
/// else any of `NameNotLowercase`, `NameHyphenEdge`,
/// `NameConsecutiveHyphens` and `NameInvalidChars`.
pub(crate) fn broken_char_rules(name: &str) -> impl Iterator<Item = Code> {
    let rules = if name.is_empty() {
        [Some(Code::NameEmpty), None, None, None]
    } else {
        [
            (!is_lowercase(name)).then_some(Code::NameNotLowercase),
            (name.starts_with('-') || name.ends_with('-')).then_some(Code::NameHyphenEdge),
            name.contains("--").then_some(Code::NameConsecutiveHyphens),
            (!name.chars().all(|c| c == '-' || is_letter_or_number(c)))
                .then_some(Code::NameInvalidChars),
        ]
    };
    rules.into_iter().flatten()
}

/// Whether `name` breaks none of the rules of [`check_chars`]: the same
/// answer as `check_chars(name).is_empty()`, without building messages (for
/// callers that only ask whether a name is usable).
pub(crate) fn chars_ok(name: &str) -> bool {
    if name.is_ascii() {
        // One pass over the bytes, and a look at pairs for `--` (a
        // substring search costs more to set up than a short name takes).
        let bytes = name.as_bytes();
        return bytes.first().is_some_and(|&b| b != b'-')
            && bytes.last().is_some_and(|&b| b != b'-')
            && bytes
                .iter()
                .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !bytes.windows(2).any(|pair| pair == b"--");
    }
    !name.is_empty()
        && is_lowercase(name)
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name.chars().all(|c| c == '-' || is_letter_or_number(c))
}

/// `name.to_lowercase() == name`, without a copy for ASCII names.
fn is_lowercase(name: &str) -> bool {
    if name.is_ascii() {
        !name.bytes().any(|b| b.is_ascii_uppercase())
    } else {
        name.to_lowercase() == name
    }
}

/// A letter or number by Unicode general category (`L*` or `N*`).
///
/// This is what the specification's reference validator accepts (Python's
/// `str.isalnum`). Rust's `char::is_alphanumeric` is wider: it also accepts
/// combining marks with the `Alphabetic` property (the vowel sign in `कि`), which
/// the reference rejects.
pub fn is_letter_or_number(c: char) -> bool {
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    // The ASCII letters and digits are the only ASCII characters in `L*`
    // and `N*`: answer them without the table lookup.
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    matches!(
        c.general_category_group(),
        GeneralCategoryGroup::Letter | GeneralCategoryGroup::Number
    )
}

/// Which names a platform refuses (F-FMT-7). Empty by default.
///
/// A name is reserved when it contains any of the listed words as a substring
/// (case-insensitive), e.g. `ReservedNames::words(["anthropic", "claude"])`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReservedNames {
    words: Vec<String>,
}

impl ReservedNames {
    /// No reserved names.
    pub fn none() -> Self {
        Self::default()
    }

    /// Names containing any of these words are reserved.
    pub fn words<I, S>(words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut words: Vec<String> = words
            .into_iter()
            .map(|w| w.into().to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        words.sort();
        words.dedup();
        Self { words }
    }

    /// The reserved word `name` contains, if any.
    pub fn matched(&self, name: &str) -> Option<&str> {
        if self.words.is_empty() {
            return None;
        }
        let lower = name.to_lowercase();
        self.words
            .iter()
            .find(|w| lower.contains(w.as_str()))
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The one-pass ASCII answer agrees with the rules' own, on names
        /// near the boundaries (hyphens, capitals, other ASCII) and on any
        /// text.
        #[test]
        fn chars_ok_agrees_with_check_chars_on_any_text(
            name in "[a-z0-9A-Z_. -]{0,12}|\\PC{0,6}"
        ) {
            proptest::prop_assert_eq!(chars_ok(&name), check_chars(&name).is_empty());
        }
    }

    #[test]
    fn chars_ok_agrees_with_check_chars() {
        for name in [
            "",
            "pdf",
            "a-b-c",
            "café",
            "Café",
            "日本語",
            "x1",
            "-a",
            "a-",
            "a--b",
            "A",
            "Academic Paper Mapper",
            "a_b",
            "a b",
            "ǅ",
            "कि",
            "x²",
            "Ⅻ",
            "a.b",
            "ÀB",
            "ß",
        ] {
            assert_eq!(chars_ok(name), check_chars(name).is_empty(), "{name:?}");
        }
        for c in (0u8..128).map(char::from) {
            use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
            let by_table = matches!(
                c.general_category_group(),
                GeneralCategoryGroup::Letter | GeneralCategoryGroup::Number
            );
            assert_eq!(is_letter_or_number(c), by_table, "{c:?}");
        }
    }

    #[test]
    fn parses_valid_names() {
        for ok in ["pdf", "a-b-c", "café", "日本語", "x1", "  spaced  "] {
            assert!(SkillName::parse(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            SkillName::parse(" ab ").map(SkillName::into_string).ok(),
            Some("ab".into())
        );
        // NFKC folds the ligature into plain letters.
        assert_eq!(
            SkillName::parse("ﬁle").map(SkillName::into_string).ok(),
            Some("file".into())
        );
    }

    #[test]
    fn rejects_bad_names_with_every_reason() {
        let codes = |n: &str| -> Vec<Code> {
            check_chars(&normalize_name(n))
                .into_iter()
                .map(|p| p.0)
                .collect()
        };
        assert_eq!(codes(""), vec![Code::NameEmpty]);
        assert_eq!(codes("   "), vec![Code::NameEmpty]);
        assert_eq!(
            codes("Bad--"),
            vec![
                Code::NameNotLowercase,
                Code::NameHyphenEdge,
                Code::NameConsecutiveHyphens
            ]
        );
        assert_eq!(codes("a_b"), vec![Code::NameInvalidChars]);
        assert_eq!(codes("a.b c"), vec![Code::NameInvalidChars]);
        // Combining marks are not letters.
        assert_eq!(codes("\u{915}\u{93f}"), vec![Code::NameInvalidChars]);
        assert!(codes("\u{915}").is_empty());
        assert!(
            codes("\u{bf0}").is_empty(),
            "a Tamil number (No) is a number"
        );
        assert!(SkillName::parse("load_skill").is_err());
    }

    #[test]
    fn reserved_words_match_substrings() {
        let r = ReservedNames::words(["Claude", "anthropic"]);
        assert_eq!(r.matched("my-claude-helper"), Some("claude"));
        assert_eq!(r.matched("pdf"), None);
        assert_eq!(ReservedNames::none().matched("claude"), None);
    }
}
