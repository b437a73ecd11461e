//! Escaping for text output: names, paths and messages that come from the file
//! system or from a file must not forge lines or drive the terminal.
//!
//! A folder named `a\nok       evil` would otherwise print a fake `ok` line in
//! `skills validate`, and an `ESC [` sequence in a description could rewrite the
//! screen; an `ESC ]` (OSC) sequence could set the terminal's title or, with
//! OSC 52, write the user's clipboard. JSON output needs none of this
//! (`serde_json` escapes every control character); text output goes through
//! [`line()`] (one-line fields: names, paths, messages) or [`block()`]
//! (multi-line text such as a skill's body).
//!
//! Contents that are data, not messages (a file `read` prints, the catalog,
//! the output of a command `run` ran), are written unchanged into a pipe or a
//! file, where they are exactly what a program asked for, and through
//! [`terminal_safe()`] when they go to a terminal ([`for_terminal`]).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Escapes every control character of `text`, so it prints as one line.
///
/// `\n`, `\r` and `\t` become those two-character escapes, other C0/C1 controls
/// and DEL become `\xHH`, and characters that reorder or break lines without
/// being controls (U+2028, U+2029, bidirectional overrides and isolates, U+200E,
/// U+200F) become `\u{HHHH}`. Everything else, backslashes included, is kept.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// Like [`line()`], but keeps `\n` and `\t`: for multi-line text (a skill's body)
/// that must still not carry terminal escape sequences or carriage returns.
pub(crate) fn block(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// `text` as a terminal may show it: like [`block()`] (newlines and tabs
/// kept, every other control character escaped, so no `ESC`, CSI, OSC, BEL or
/// backspace reaches the terminal), and a carriage return that ends a line
/// (`\r\n`) is kept too; a lone `\r`, which would let text overwrite the
/// line before it, is escaped.
pub(crate) fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return block(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut lines = text.split("\r\n").peekable();
    while let Some(part) = lines.next() {
        out.push_str(&block(part));
        if lines.peek().is_some() {
            out.push_str("\r\n");
        }
    }
    Cow::Owned(out)
}

/// `text` unchanged when `terminal` is false, else [`terminal_safe()`].
pub(crate) fn for_terminal(text: &str, terminal: bool) -> Cow<'_, str> {
    if terminal {
        terminal_safe(text)
    } else {
        Cow::Borrowed(text)
    }
}

fn needs_escape(c: char, keep_newlines: bool) -> bool {
    if keep_newlines && (c == '\n' || c == '\t') {
        return false;
    }
    skills_core::is_display_unsafe(c)
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, keep_newlines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c, keep_newlines) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(line("csv-insights (a/b c)"), Cow::Borrowed(_)));
        assert!(matches!(block("# Body\n\n\tcode\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_are_escaped() {
        assert_eq!(line("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(line("x\u{1b}[31my"), "x\\x1b[31my");
        assert_eq!(line("\u{7f}\u{85}"), "\\x7f\\x85");
        assert_eq!(line("a\u{202e}b\u{2028}"), "a\\u{202e}b\\u{2028}");
        assert_eq!(line("back\\slash é"), "back\\slash é");
    }

    #[test]
    fn terminal_safe_defuses_escape_sequences() {
        assert_eq!(
            terminal_safe("\u{1b}]0;pwned\u{7}\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2Jok\n\tend"),
            "\\x1b]0;pwned\\x07\\x1b]52;c;ZXZpbA==\\x07\\x1b[2Jok\n\tend"
        );
        assert_eq!(terminal_safe("\u{9b}31m"), "\\x9b31m");
        assert!(matches!(terminal_safe("plain\ntext"), Cow::Borrowed(_)));
    }

    #[test]
    fn block_keeps_newlines_and_tabs_only() {
        assert_eq!(block("a\n\tb\r\n\u{1b}c"), "a\n\tb\\r\n\\x1bc");
    }

    #[test]
    fn terminal_safe_escapes_every_sequence_a_terminal_acts_on() {
        // OSC 52 (clipboard) and OSC 0 (title), with BEL and ST endings.
        assert_eq!(
            terminal_safe("\u{1b}]52;c;cGF5bG9hZA==\u{7}x\u{1b}]0;t\u{1b}\\"),
            "\\x1b]52;c;cGF5bG9hZA==\\x07x\\x1b]0;t\\x1b\\"
        );
        // CSI in its 7-bit and 8-bit forms, 8-bit OSC, backspace.
        assert_eq!(
            terminal_safe("\u{1b}[2J\u{9b}31m\u{9d}0;t\u{8}"),
            "\\x1b[2J\\x9b31m\\x9d0;t\\x08"
        );
        assert_eq!(terminal_safe("a\u{202e}b"), "a\\u{202e}b");
    }

    #[test]
    fn terminal_safe_keeps_line_ends_but_not_a_lone_carriage_return() {
        assert_eq!(terminal_safe("a\r\nb\n\tc\r\n"), "a\r\nb\n\tc\r\n");
        assert_eq!(terminal_safe("ok\rFAKE\r\n"), "ok\\rFAKE\r\n");
        assert!(matches!(terminal_safe("plain\ntext"), Cow::Borrowed(_)));
    }

    #[test]
    fn for_terminal_is_raw_elsewhere() {
        assert_eq!(for_terminal("\u{1b}[31m", false), "\u{1b}[31m");
        assert_eq!(for_terminal("\u{1b}[31m", true), "\\x1b[31m");
    }
}
