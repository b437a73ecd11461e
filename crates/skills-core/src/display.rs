//! Which characters must not reach a screen or a page as they are, and HTML
//! escaping built on that rule.
//!
//! Names, descriptions, queries and messages come from files and from models.
//! Shown verbatim, a control character can drive a terminal (`ESC [`, OSC 52)
//! and a bidirectional control or a line separator can reorder or split what
//! a reader sees, so a line appears to say something it does not. Every
//! renderer in the workspace (diagnostic excerpts, the CLI's text output, the
//! report and eval pages) asks [`is_display_unsafe`], so they agree on one
//! list; what each does with such a character (escape, replace) is its own.

use std::fmt::Write as _;

/// Whether `c` must not be shown as it is: a C0 or C1 control or DEL, a line
/// or paragraph separator (U+2028, U+2029), or a bidirectional control
/// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
#[must_use]
pub fn is_display_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Escapes `text` for HTML text and attribute values (quoted with `"` or
/// `'`).
///
/// `&`, `<`, `>`, `"` and `'` become character references; newlines and tabs
/// are kept; every other character [`is_display_unsafe`] names is written
/// as the visible text `\u{hhhh}`, so it neither acts nor hides.
#[must_use]
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if is_display_unsafe(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_controls_separators_and_bidi_controls() {
        for c in [
            '\0', '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}', '\u{061c}', '\u{200e}', '\u{200f}',
            '\u{2028}', '\u{2029}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\n',
        ] {
            assert!(is_display_unsafe(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '€', '\u{200b}', '\u{2065}', '\u{206a}', '😀'] {
            assert!(!is_display_unsafe(c), "{c:?}");
        }
    }

    #[test]
    fn escapes_markup_and_shows_hidden_characters() {
        assert_eq!(
            escape_html("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(escape_html("a\n\tb"), "a\n\tb");
        assert_eq!(
            escape_html("x\u{1b}[31m\u{202e}y\u{2028}"),
            "x\\u{001b}[31m\\u{202e}y\\u{2028}"
        );
        assert_eq!(escape_html("plain café"), "plain café");
    }
}
