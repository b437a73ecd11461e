//! Divergences from skills-ref, each recognised by a predicate on the bytes
//! of the file skills-ref reads. Documented in `docs/parity.md`; keep the two
//! in sync.

use std::fmt;

use super::cases::Case;

/// Why a case is not compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Divergence {
    /// skills-ref splits the file on the first `---` substrings
    /// (`content.split("---", 2)`); we require fence lines that are exactly
    /// `---` (the closing one may carry trailing spaces and tabs).
    DashSplit,
    /// skills-ref keeps a leading UTF-8 BOM and then reports that the file
    /// does not start with frontmatter; we skip the BOM.
    Bom,
    /// strictyaml's scanner rejects a tab used as inline whitespace after
    /// content (trailing, before a comment, inside a plain scalar) or on a
    /// whitespace-only line (including the rest of the opening fence line),
    /// which YAML 1.2 allows.
    InlineTab,
    /// strictyaml applies the YAML 1.1 merge key `<<`; in YAML 1.2 it is an
    /// ordinary key.
    MergeKey,
    /// strictyaml accepts U+FEFF inside a plain scalar, which YAML 1.2 only
    /// allows inside quoted scalars.
    BomInPlainScalar,
    /// strictyaml rejects a stream that starts with a document end marker
    /// `...`; YAML 1.2 reads the content after it as the (only) document.
    LeadingDocumentEnd,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::DashSplit => "(1) `---` substring split instead of fence lines",
            Self::Bom => "(2) UTF-8 BOM before the opening fence",
            Self::InlineTab => "(3) tab as whitespace outside indentation and scalars",
            Self::MergeKey => "(4) YAML 1.1 merge key `<<`",
            Self::BomInPlainScalar => "(5) U+FEFF outside quoted scalars",
            Self::LeadingDocumentEnd => "(6) frontmatter starting with `...`",
        })
    }
}

const BOM: &[u8] = b"\xef\xbb\xbf";

/// The divergence a case falls under, if any.
pub(crate) fn classify(case: &Case) -> Option<Divergence> {
    case.primary_file().and_then(classify_bytes)
}

/// The divergence a `SKILL.md` with these bytes falls under, if any.
pub(crate) fn classify_bytes(bytes: &[u8]) -> Option<Divergence> {
    // Not UTF-8: both sides reject the file before looking at fences.
    let text = std::str::from_utf8(bytes).ok()?;
    if let Some(rest) = bytes.strip_prefix(BOM) {
        // With the BOM skipped we would read frontmatter that skills-ref
        // never sees; without an opening fence both sides agree anyway.
        return rest.starts_with(b"---").then_some(Divergence::Bom);
    }
    // skills-ref reads with universal newlines: CRLF and lone CR become LF.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let frontmatter = match split_frontmatter(&text) {
        Split::NotApplicable => return None,
        Split::Diverges => return Some(Divergence::DashSplit),
        Split::Frontmatter(frontmatter) => frontmatter,
    };
    let lines = || plain_lines(frontmatter);
    if lines().any(|segments| segments.iter().any(|s| has_inline_tab(s))) {
        Some(Divergence::InlineTab)
    } else if lines().any(|segments| is_merge_key(segments.first().copied().unwrap_or_default())) {
        Some(Divergence::MergeKey)
    } else if lines().any(|segments| segments.iter().any(|s| s.contains('\u{feff}'))) {
        Some(Divergence::BomInPlainScalar)
    } else if starts_with_document_end(frontmatter) {
        Some(Divergence::LeadingDocumentEnd)
    } else {
        None
    }
}

/// Fence reading, ours against skills-ref's.
enum Split<'a> {
    /// No opening `---` (both report missing frontmatter), or unclosed
    /// for both.
    NotApplicable,
    /// The two split the file in different places.
    Diverges,
    /// Both read this frontmatter text (from the end of the opening `---`
    /// to the start of the closing fence line).
    Frontmatter(&'a str),
}

/// Compares our fence lines with skills-ref's `content.split("---", 2)`.
fn split_frontmatter(text: &str) -> Split<'_> {
    if !text.starts_with("---") {
        return Split::NotApplicable;
    }
    let (opening, mut rest) = text.split_once('\n').unwrap_or((text, ""));
    if opening.trim_end_matches([' ', '\t']) != "---" {
        return Split::Diverges;
    }
    // Byte offset of our closing fence line, if the frontmatter is closed.
    let mut offset = opening.len() + 1;
    let mut closing = None;
    while !rest.is_empty() {
        let (line, tail) = rest.split_once('\n').unwrap_or((rest, ""));
        if line.trim_end_matches([' ', '\t']) == "---" {
            closing = Some(offset);
            break;
        }
        offset += line.len() + 1;
        rest = tail;
    }
    // Where skills-ref's frontmatter ends: the next `---` after the first.
    let reference_end = text[3..].find("---").map(|i| i + 3);
    match closing {
        // skills-ref's frontmatter starts right after the opening `---`, so
        // it includes the opening line's trailing whitespace.
        Some(at) if reference_end == Some(at) => Split::Frontmatter(&text[3..at]),
        None if reference_end.is_none() => Split::NotApplicable,
        _ => Split::Diverges,
    }
}

/// For each frontmatter line outside block scalars: the parts of the line
/// that are outside quotes and comments (a heuristic good enough for the
/// generated cases: text before the first quote, and from the last quote on).
fn plain_lines(frontmatter: &str) -> impl Iterator<Item = Vec<&str>> {
    let mut block_parent: Option<usize> = None;
    frontmatter.lines().filter_map(move |line| {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(parent) = block_parent {
            if line.trim().is_empty() || indent > parent {
                return None;
            }
            block_parent = None;
        }
        let code = line.split(" #").next().unwrap_or_default();
        if starts_block_scalar(code) {
            block_parent = Some(indent);
        }
        Some(match (code.find(['"', '\'']), code.rfind(['"', '\''])) {
            (Some(first), Some(last)) => vec![&code[..first], &code[last..]],
            _ => vec![code],
        })
    })
}

/// Whether a line ends with a block scalar header (`|`, `>-`, `|2+`, ...).
fn starts_block_scalar(code: &str) -> bool {
    let header = code.trim_end_matches([' ', '\t']);
    let indicators = header.trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit());
    (indicators.ends_with(": |")
        || indicators.ends_with(": >")
        || indicators.ends_with("- |")
        || indicators.ends_with("- >"))
        && header.len() - indicators.len() <= 2
}

/// A tab after content (not indentation, not right after `key:`), or on a
/// line of only whitespace.
fn has_inline_tab(segment: &str) -> bool {
    if segment.trim_matches([' ', '\t']).is_empty() {
        return segment.contains('\t');
    }
    segment.match_indices('\t').any(|(at, _)| {
        let before = segment[..at].trim_end_matches([' ', '\t']);
        before.chars().next_back().is_some_and(|c| c != ':')
    })
}

/// Whether the first line with content is a document end marker.
fn starts_with_document_end(frontmatter: &str) -> bool {
    frontmatter
        .lines()
        .map(|line| line.trim_end_matches([' ', '\t']))
        .find(|line| !line.trim_start().is_empty() && !line.trim_start().starts_with('#'))
        .is_some_and(|line| line == "..." || line.starts_with("... #"))
}

/// Whether a line's key is the merge key `<<`.
fn is_merge_key(segment: &str) -> bool {
    segment
        .trim_start_matches([' ', '-'])
        .strip_prefix("<<")
        .is_some_and(|rest| rest.trim_start().starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::{Divergence, classify_bytes};

    fn classify(text: &str) -> Option<Divergence> {
        classify_bytes(text.as_bytes())
    }

    #[test]
    fn fences_that_both_sides_read_alike_are_compared() {
        for text in [
            "---\nname: a\n---\nbody\n",
            "---\r\nname: a\r\n---\r\nbody --- with dashes\r\n",
            "---\rname: a\r---\r",
            "---\nname: a\n---  \t\nbody\n",
            "---\nname: a\n---",
            "---\n---\n",
            "---",
            "---\nname: a\n",
            "no frontmatter --- at all\n",
            "\u{feff}no frontmatter\n",
            "",
        ] {
            assert_eq!(classify(text), None, "{text:?}");
        }
        assert_eq!(classify_bytes(b"---\nname: \xff\n---\n"), None);
    }

    #[test]
    fn dash_substrings_are_excluded() {
        for text in [
            "----\nname: a\n---\n",
            "---name: a\n---\n",
            "---\nname: a---b\n---\n",
            "---\nname: a\n----\n",
            "---\nname: a\n  ---\n",
            "---\nname: a\n--- x\n",
            "---\nname: a\nbody\nmore --- text\n",
        ] {
            assert_eq!(classify(text), Some(Divergence::DashSplit), "{text:?}");
        }
    }

    #[test]
    fn bom_before_fence_is_excluded() {
        assert_eq!(
            classify("\u{feff}---\nname: a\n---\n"),
            Some(Divergence::Bom)
        );
    }

    #[test]
    fn inline_tabs_are_excluded_but_not_other_tabs() {
        for text in [
            "---\nname: a\t\n---\n",
            "---\nname: a \t\n---\n",
            "---\nname: a\tb\n---\n",
            "---\nname: \"a\"\t\n---\n",
            "---\nname: a\t# c\n---\n",
            "---\nm:\n  - a\t\n---\n",
            "---\t\nname: a\n---\n",
            "---\nname: a\n \t\nd: b\n---\n",
        ] {
            assert_eq!(classify(text), Some(Divergence::InlineTab), "{text:?}");
        }
        for text in [
            "---\nname:\ta\n---\n",
            "---\n\tname: a\n---\n",
            "---\nname: \"a\tb\"\n---\n",
            "---\nd: |\n  a\tb\t\nname: a\n---\n",
            "---\nd: >-\n  a\tb\n---\n",
            "---\nname: a # c\td\n---\n",
            "---\nname: a\n---\t\nbody\t\n",
            "--- \nname: a\n---\n",
            "---\nd: |\n  a\n  \t\n  b\n---\n",
        ] {
            assert_eq!(classify(text), None, "{text:?}");
        }
    }

    #[test]
    fn merge_keys_are_excluded() {
        assert_eq!(classify("---\n<<: x\n---\n"), Some(Divergence::MergeKey));
        assert_eq!(
            classify("---\nm:\n  << : x\n---\n"),
            Some(Divergence::MergeKey)
        );
        assert_eq!(classify("---\nname: \"<<: x\"\n---\n"), None);
    }

    #[test]
    fn leading_document_end_is_excluded() {
        for text in [
            "---\n...\nname: a\n---\n",
            "---\n# c\n\n... \nname: a\n---\n",
        ] {
            assert_eq!(
                classify(text),
                Some(Divergence::LeadingDocumentEnd),
                "{text:?}"
            );
        }
        assert_eq!(classify("---\nname: a\n...\n---\n"), None);
        assert_eq!(classify("---\nname: ...\n---\n"), None);
    }

    #[test]
    fn bom_in_plain_scalars_is_excluded() {
        assert_eq!(
            classify("---\nname: a\u{feff}b\n---\n"),
            Some(Divergence::BomInPlainScalar)
        );
        assert_eq!(classify("---\nname: \"a\u{feff}b\"\n---\n"), None);
        assert_eq!(classify("---\nname: a\n---\n\u{feff}\n"), None);
    }
}
