//! Token counts from a real BPE tokenizer (the `tiktoken` crate, ranks built
//! in, so it works offline), as a [`TokenCounter`] the catalog renderer can
//! use too.

use std::collections::HashMap;
use std::sync::OnceLock;

use clap::ValueEnum;
use skills_core::TokenCounter;
use tiktoken::CoreBpe;

use super::TokenizerInfo;

/// Which BPE counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum Tokenizer {
    /// `o200k_base` (GPT-4o and later OpenAI models).
    #[default]
    O200k,
    /// `cl100k_base` (GPT-4 and GPT-3.5).
    Cl100k,
}

/// What the counts mean for models of other vendors.
const NOTE: &str = "counts are exact for OpenAI models using this encoding; other vendors' tokenizers (Anthropic, Google, …) split text differently, so treat them as estimates there";

/// A loaded BPE: cheap to clone (the tables are loaded once per process).
#[derive(Clone)]
pub(crate) struct Bpe {
    tokenizer: Tokenizer,
    bpe: &'static CoreBpe,
}

/// The tables of each encoding, built on first use.
static O200K: OnceLock<CoreBpe> = OnceLock::new();
static CL100K: OnceLock<CoreBpe> = OnceLock::new();

impl std::fmt::Debug for Bpe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bpe")
            .field("tokenizer", &self.tokenizer)
            .finish_non_exhaustive()
    }
}

impl Bpe {
    /// Loads `tokenizer`'s tables (tens of milliseconds; once per process).
    pub(crate) fn load(tokenizer: Tokenizer) -> Self {
        let bpe = match tokenizer {
            // Only the two encodings named here are linked in (not every
            // table `tiktoken::get_encoding` knows).
            Tokenizer::O200k => O200K.get_or_init(tiktoken::encoding::o200k_base),
            Tokenizer::Cl100k => CL100K.get_or_init(tiktoken::encoding::cl100k_base),
        };
        Self { tokenizer, bpe }
    }

    /// The encoding's name, e.g. `o200k_base`.
    pub(crate) fn name(&self) -> &'static str {
        match self.tokenizer {
            Tokenizer::O200k => "o200k_base",
            Tokenizer::Cl100k => "cl100k_base",
        }
    }

    pub(crate) fn info(&self) -> TokenizerInfo {
        TokenizerInfo {
            name: self.name(),
            library: "tiktoken",
            note: NOTE,
        }
    }
}

/// Lines remembered per thread at most, and the longest line remembered.
const MEMO_LINES: usize = 200_000;
const MEMO_LINE_BYTES: usize = 1_024;

/// Counts of lines already seen (see [`Bpe::count_lines`]).
pub(crate) type LineMemo = HashMap<Box<str>, usize>;

impl Bpe {
    /// The tokens of `text`, counted line by line with the counts of lines
    /// seen before taken from `memo`: the same number as
    /// [`TokenCounter::count`], faster on text that repeats lines (headings,
    /// boilerplate shared by many skills).
    ///
    /// Exact because the text is cut only where the encoding's pre-tokenizer
    /// always starts a new piece (see [`lines`]) and BPE never merges across
    /// pieces.
    pub(crate) fn count_lines(&self, text: &str, memo: &mut LineMemo) -> usize {
        lines(text)
            .map(|line| {
                if line.len() > MEMO_LINE_BYTES {
                    return self.count(line);
                }
                if let Some(n) = memo.get(line) {
                    return *n;
                }
                let n = self.count(line);
                if memo.len() < MEMO_LINES {
                    memo.insert(line.into(), n);
                }
                n
            })
            .sum()
    }
}

/// `text` cut after each `\n` that is followed by a printable ASCII character
/// other than `/`.
///
/// The `o200k_base` and `cl100k_base` pre-tokenizers (regular expressions
/// without look-behind) never put such a newline and the next character in one
/// piece: letter, number and contraction pieces cannot hold a newline;
/// punctuation pieces end with newlines (and, in o200k, `/`); whitespace pieces
/// hold no printable character. A newline right before the cut ends its run,
/// so `\s*[\r\n]+` takes the run whole on both sides, and the look-ahead of
/// `\s+(?!\S)` never reaches across. So the pieces of the whole text are the
/// pieces of the parts.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut at = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        while at + 1 < bytes.len() {
            let cut =
                bytes[at] == b'\n' && bytes[at + 1].is_ascii_graphic() && bytes[at + 1] != b'/';
            at += 1;
            if cut {
                let line = &text[start..at];
                start = at;
                return Some(line);
            }
        }
        let line = &text[start..];
        start = bytes.len();
        Some(line)
    })
}

impl TokenCounter for Bpe {
    fn count(&self, text: &str) -> usize {
        // Special-token text such as `<|endoftext|>` counts as ordinary text.
        self.bpe.count(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_bpe_tokens() {
        let o200k = Bpe::load(Tokenizer::O200k);
        assert_eq!(o200k.count(""), 0);
        assert_eq!(o200k.count("hello world"), 2);
        let cl100k = Bpe::load(Tokenizer::Cl100k);
        assert_eq!(cl100k.count("hello world"), 2);
        assert_eq!(o200k.name(), "o200k_base");
    }

    /// Counts `tiktoken-rs` 0.12 (`encode_ordinary`), the counter used
    /// before, gives for the same texts: the switch of library changed no
    /// count (docs/benchmarks.md compares both on real skill libraries).
    #[test]
    fn counts_match_the_previous_counter() {
        let cases = [
            ("hello world", 2, 2),
            ("<|endoftext|> is text here", 10, 10),
            (
                "It's 2026: naïve café, 日本語のテキスト, emoji 😀👍🏽 and  \t spaces\n\n\n",
                25,
                31,
            ),
            ("fn main() {\n    println!(\"{}\", 42_000);\n}\n", 13, 13),
            ("   leading\r\n\r\ntrailing   ", 6, 6),
            (
                "URL https://example.com/a/b?c=1&d=2 and path /usr/local/bin/skills",
                23,
                23,
            ),
        ];
        let o200k = Bpe::load(Tokenizer::O200k);
        let cl100k = Bpe::load(Tokenizer::Cl100k);
        for (text, in_o200k, in_cl100k) in cases {
            assert_eq!(o200k.count(text), in_o200k, "o200k {text:?}");
            assert_eq!(cl100k.count(text), in_cl100k, "cl100k {text:?}");
        }
    }

    #[test]
    fn counting_by_lines_is_exact() {
        let texts = [
            "",
            "one line",
            "# Title\n\nSome text.\nMore text here.\n",
            "a.\n/path/to/file\nb\n\n\nc  \n  d\n\te\n",
            "x\n \ny\r\nz\n123\n4567 89\n- item\n* item\n`code`\n```rust\nfn main() {}\n```\n",
            "It's done.\nI'll go\n'quoted'\nÉtat\nüber\n日本語\n😀 ok\n",
            "trailing spaces   \nnext\n   \n\nend",
        ];
        for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k] {
            let bpe = Bpe::load(tokenizer);
            let mut memo = LineMemo::new();
            for text in texts {
                assert_eq!(lines(text).collect::<String>(), text);
                let whole = bpe.count(text);
                assert_eq!(
                    bpe.count_lines(text, &mut memo),
                    whole,
                    "{tokenizer:?} {text:?}"
                );
                // Again, from the memo.
                assert_eq!(
                    bpe.count_lines(text, &mut memo),
                    whole,
                    "{tokenizer:?} {text:?}"
                );
            }
            // The example skills, line for line.
            for entry in std::fs::read_dir(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/skills"
            ))
            .expect("examples")
            {
                let md = entry.expect("entry").path().join("SKILL.md");
                let text = std::fs::read_to_string(&md).expect("SKILL.md");
                assert_eq!(
                    bpe.count_lines(&text, &mut LineMemo::new()),
                    bpe.count(&text),
                    "{}",
                    md.display()
                );
            }
        }
    }
}
