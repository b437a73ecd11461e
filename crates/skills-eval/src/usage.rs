//! Token totals over many model calls.

use serde::{Deserialize, Serialize};
use skills_agent::Usage;

/// Tokens summed over model calls, and how many calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UsageTotals {
    /// Model calls that reported usage.
    pub requests: u64,
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_creation_tokens: u64,
}

impl UsageTotals {
    /// Adds one call's usage.
    pub fn add(&mut self, usage: &Usage) {
        self.requests += 1;
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cache_read_tokens += usage.cache_read_tokens;
        self.cache_creation_tokens += usage.cache_creation_tokens;
    }

    /// Adds other totals.
    pub fn add_totals(&mut self, other: &UsageTotals) {
        self.requests += other.requests;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
    }

    /// All tokens: prompt and generated.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// The share of prompt tokens read from the cache (0 without prompt
    /// tokens).
    pub fn cache_share(&self) -> f64 {
        if self.input_tokens == 0 {
            0.0
        } else {
            self.cache_read_tokens as f64 / self.input_tokens as f64
        }
    }
}
