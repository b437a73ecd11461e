//! Token counts from a real BPE tokenizer (`tiktoken-rs`, ranks built in, so it
//! works offline), as a [`TokenCounter`] the catalog renderer can use too.

use clap::ValueEnum;
use skills_core::TokenCounter;
use tiktoken_rs::CoreBPE;

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
    bpe: &'static CoreBPE,
}

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
            Tokenizer::O200k => tiktoken_rs::o200k_base_singleton(),
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton(),
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
            library: "tiktoken-rs",
            note: NOTE,
        }
    }
}

impl TokenCounter for Bpe {
    fn count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
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
}
