//! The model request (F-AGT-1) and cache breakpoints (F-AGT-2).
//!
//! A [`ModelRequest`] is provider-neutral data: at most two system blocks
//! (the stable one first), tools sorted by name, the transcript view, and the
//! cache breakpoints a [`CacheStrategy`] placed. The wire encoders
//! of `skills-models` turn it into a provider's JSON.

use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::tool::ToolSpec;

/// One block of the system region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemBlock {
    /// The text.
    pub text: String,
    /// Whether the block is byte-stable for the whole session (instructions
    /// and the pinned catalog). The dynamic block (legacy injected bodies, the
    /// loaded-skill fallback) is not.
    pub stable: bool,
}

/// Where a cache breakpoint sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "at", rename_all = "snake_case")]
pub enum CacheBreakpoint {
    /// After the last tool definition.
    Tools,
    /// After the system block with this index.
    System {
        /// Index into [`ModelRequest::system`].
        block: usize,
    },
    /// After the message with this index.
    Message {
        /// Index into [`ModelRequest::messages`].
        index: usize,
    },
}

/// The most breakpoints Anthropic accepts on one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// How cache breakpoints are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CacheStrategy {
    /// Anthropic-style explicit breakpoints, at most four: after the tools,
    /// after the stable system block, on the latest message and on the last
    /// message of the previous request.
    Anthropic,
    /// OpenAI-style automatic prefix caching: the provider caches the longest
    /// matching prefix itself, so no breakpoint is placed.
    #[default]
    AutomaticPrefix,
}

/// A provider-neutral model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system region: at most two blocks, the stable one first.
    pub system: Vec<SystemBlock>,
    /// Tools, sorted by name.
    pub tools: Vec<ToolSpec>,
    /// The conversation as the model should see it.
    pub messages: Vec<Message>,
    /// Cache breakpoints, in request order (tools, system, messages).
    pub cache_breakpoints: Vec<CacheBreakpoint>,
}

impl ModelRequest {
    /// The system region joined into one string (for providers that take a
    /// single system prompt).
    pub fn system_text(&self) -> String {
        let mut out = String::new();
        for (i, block) in self.system.iter().enumerate() {
            if i > 0 {
                out.push_str("\n\n");
            }
            out.push_str(&block.text);
        }
        out
    }

    /// Looks a tool up by name.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools
            .binary_search_by(|tool| tool.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.tools.get(i))
    }

    /// Places breakpoints by `strategy`. `previous_last` is the index of the
    /// last message the previous request of this session carried, if it is
    /// still in view.
    pub fn place_breakpoints(&mut self, strategy: CacheStrategy, previous_last: Option<usize>) {
        self.cache_breakpoints.clear();
        match strategy {
            CacheStrategy::AutomaticPrefix => {}
            CacheStrategy::Anthropic => {
                if !self.tools.is_empty() {
                    self.cache_breakpoints.push(CacheBreakpoint::Tools);
                }
                if let Some(block) = self.system.iter().rposition(|b| b.stable) {
                    self.cache_breakpoints
                        .push(CacheBreakpoint::System { block });
                }
                let latest = self.messages.len().checked_sub(1);
                if let Some(previous) = previous_last
                    && Some(previous) != latest
                    && previous < self.messages.len()
                {
                    self.cache_breakpoints
                        .push(CacheBreakpoint::Message { index: previous });
                }
                if let Some(index) = latest {
                    self.cache_breakpoints
                        .push(CacheBreakpoint::Message { index });
                }
                self.cache_breakpoints.truncate(MAX_BREAKPOINTS);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(messages: usize) -> ModelRequest {
        ModelRequest {
            system: vec![SystemBlock {
                text: "s".into(),
                stable: true,
            }],
            tools: vec![ToolSpec::new("a", "d", serde_json::json!({}))],
            messages: (0..messages)
                .map(|i| Message::user(i.to_string()))
                .collect(),
            cache_breakpoints: Vec::new(),
        }
    }

    #[test]
    fn anthropic_places_at_most_four() {
        let mut r = request(5);
        r.place_breakpoints(CacheStrategy::Anthropic, Some(2));
        assert_eq!(
            r.cache_breakpoints,
            vec![
                CacheBreakpoint::Tools,
                CacheBreakpoint::System { block: 0 },
                CacheBreakpoint::Message { index: 2 },
                CacheBreakpoint::Message { index: 4 },
            ]
        );
        r.place_breakpoints(CacheStrategy::AutomaticPrefix, Some(2));
        assert!(r.cache_breakpoints.is_empty());
    }

    #[test]
    fn anthropic_skips_empty_parts() {
        let mut r = request(0);
        r.tools.clear();
        r.place_breakpoints(CacheStrategy::Anthropic, Some(7));
        assert_eq!(
            r.cache_breakpoints,
            vec![CacheBreakpoint::System { block: 0 }]
        );
    }
}
