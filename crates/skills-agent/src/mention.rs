//! `$name` mentions in user messages (F-DIS-14).
//!
//! A mention is `$` followed by a skill-name-shaped word (lowercase letters,
//! digits and single hyphens), at the start of the text or after a character
//! that is not part of a word. `$$name`, `a$name` and `$Name` are not
//! mentions; trailing punctuation ends the word (`$pdf-tools,` names
//! `pdf-tools`). Hand-written: a regex crate would add a dependency for one
//! small scanner.

/// Most mentions honoured in one message.
pub const MAX_MENTIONS: usize = 8;

/// The distinct names mentioned in `text`, in order of first mention, at most
/// [`MAX_MENTIONS`].
pub(crate) fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut previous: Option<char> = None;
    for (i, c) in text.char_indices() {
        let boundary = previous.is_none_or(|p| !(p.is_alphanumeric() || p == '$' || p == '_'));
        previous = Some(c);
        if c != '$' || !boundary {
            continue;
        }
        let rest = &text[i + 1..];
        let word: String = rest
            .chars()
            .take_while(|c| c.is_lowercase() || c.is_numeric() || *c == '-')
            .collect();
        let word = word.trim_end_matches('-');
        let next = rest[word.len()..].chars().next();
        let ends_cleanly = next.is_none_or(|n| !(n.is_alphanumeric() || n == '_'));
        if word.is_empty() || word.contains("--") || !ends_cleanly || word.chars().count() > 64 {
            continue;
        }
        if !out.iter().any(|w| w == word) {
            out.push(word.to_owned());
            if out.len() == MAX_MENTIONS {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_mentions() {
        assert_eq!(
            mentions("use $pdf-tools, then $csv"),
            vec!["pdf-tools", "csv"]
        );
        assert_eq!(mentions("$a $a $b"), vec!["a", "b"]);
        assert_eq!(mentions("($commit-message)"), vec!["commit-message"]);
        assert_eq!(mentions("end-$x-"), vec!["x"]);
    }

    #[test]
    fn ignores_non_mentions() {
        assert_eq!(mentions("costs $5"), vec!["5"]);
        assert!(mentions("a$b $$x $Name $a_b $ $-").is_empty());
        assert!(mentions("$a--b").is_empty());
    }

    #[test]
    fn caps_the_count() {
        let text = (0..50).map(|i| format!("$s{i} ")).collect::<String>();
        assert_eq!(mentions(&text).len(), MAX_MENTIONS);
    }
}
