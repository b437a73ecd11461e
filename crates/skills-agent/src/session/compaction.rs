//! Compaction (F-DIS-13): a summary starts the request view and loaded bodies
//! are re-attached within the agent's budget.

use std::sync::Arc;

use serde_json::Value;
use skills_core::{SkillInjection, TokenCounter};
use tracing::field::Empty;

use crate::config::Materialization;
use crate::message::{COMPACTION_KEY, Message};
use crate::render;

use super::{CompactionReport, Event, ReleaseReason, Session};

impl Session {
    /// Compacts the history: appends a summary that starts the request view,
    /// re-announces the catalog changes announced so far (they are out of
    /// view now), then re-attaches the loaded bodies newest first within the agent's
    /// budget (F-DIS-13). Bodies over the per-skill budget are shortened and
    /// released (a new load returns them whole); bodies over the total are
    /// dropped and released. Nothing before the summary is deleted.
    pub fn compact(&mut self, summary: impl Into<String>) -> CompactionReport {
        let span = tracing::debug_span!(
            "skills.compact",
            agent = %self.agent.name(),
            reattached = Empty,
            truncated = Empty,
            dropped = Empty,
            tokens = Empty,
        );
        let _entered = span.enter();
        let report = self.compact_inner(summary.into());
        span.record("reattached", report.reattached.len());
        span.record("truncated", report.truncated.len());
        span.record("dropped", report.dropped.len());
        span.record("tokens", report.tokens);
        report
    }

    pub(super) fn compact_inner(&mut self, summary: String) -> CompactionReport {
        let config = self.agent.config();
        let budget = config.reattach;
        let counter = Arc::clone(&config.token_counter);
        let count = |text: &str| counter.count(text);
        let mut report = CompactionReport::default();
        let mut bodies = Vec::new();
        // In the legacy mode the bodies are in the system block already.
        let newest_first: Vec<String> = match config.materialization {
            Materialization::ToolResult => self
                .loaded_order()
                .into_iter()
                .rev()
                .map(str::to_owned)
                .collect(),
            Materialization::SystemMessage => Vec::new(),
        };
        for name in newest_first {
            let Some(text) = self.disclosure.bodies.get(&name) else {
                report.dropped.push(name);
                continue;
            };
            let remaining = budget.total_tokens.saturating_sub(report.tokens);
            let tokens = count(text);
            if tokens <= budget.per_skill_tokens && tokens <= remaining {
                report.tokens += tokens;
                bodies.push(text.clone());
                report.reattached.push(name);
                continue;
            }
            let allowance = budget.per_skill_tokens.min(remaining);
            let marker = "\n[shortened: load the skill again for the full text]";
            let cut = prefix_within(text, allowance.saturating_sub(count(marker)), &*counter);
            if cut.is_empty() {
                report.dropped.push(name);
            } else {
                let short = format!("{cut}{marker}");
                report.tokens += count(&short);
                bodies.push(short);
                report.truncated.push(name);
            }
        }
        // Doc selections end with the compaction (their text is behind the
        // summary); say so for the skills that had some.
        let docs_cleared: Vec<String> = self
            .loaded_order()
            .into_iter()
            .filter(|name| self.transcript.state().docs(name).is_some())
            .map(str::to_owned)
            .collect();
        let summary_message = Message::system(render::compaction_summary(&summary))
            .with_metadata(COMPACTION_KEY, Value::Bool(true));
        self.push(summary_message);
        // The deltas announced so far are now out of view, while the prompt
        // still shows the pinned catalog: announce the whole difference again.
        if let Some(notice) = self.delta_since_pinned() {
            self.push(notice);
        }
        let released: Vec<String> = report
            .truncated
            .iter()
            .chain(&report.dropped)
            .cloned()
            .collect();
        if !bodies.is_empty() || !released.is_empty() || !docs_cleared.is_empty() {
            let mut message = Message::user(render::reattached(
                &bodies,
                &report.truncated,
                &report.dropped,
                &docs_cleared,
            ));
            if !report.reattached.is_empty() {
                // Oldest first, so the replayed most-recently-used order (which
                // the loaded-skill cap follows) stays as it was.
                message.tag(&SkillInjection::loaded(
                    report.reattached.iter().rev().cloned(),
                ));
            }
            if !released.is_empty() {
                message.tag(&SkillInjection::released(released.clone()));
            }
            self.push(message);
        }
        for skill in released {
            self.disclosure.bodies.remove(&skill);
            self.events.push(Event::SkillReleased {
                skill,
                reason: ReleaseReason::Compaction,
            });
        }
        self.events.push(Event::Compacted(report.clone()));
        report
    }
}

/// The longest prefix of `text`, cut at a line end when possible, that
/// `count` says fits in `tokens`.
pub(super) fn prefix_within<'t>(
    text: &'t str,
    tokens: usize,
    counter: &dyn TokenCounter,
) -> &'t str {
    let count = |text: &str| counter.count(text);
    if count(text) <= tokens {
        return text;
    }
    let (mut lo, mut hi) = (0usize, text.len());
    while lo < hi {
        let mut mid = lo + (hi - lo).div_ceil(2);
        while !text.is_char_boundary(mid) {
            mid -= 1;
        }
        if mid <= lo {
            break;
        }
        if count(&text[..mid]) <= tokens {
            lo = mid;
        } else {
            hi = mid - 1;
            while !text.is_char_boundary(hi) {
                hi -= 1;
            }
        }
    }
    let cut = &text[..lo];
    match cut.rfind('\n') {
        Some(nl) if nl > 0 => &cut[..nl],
        _ => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_within_cuts_at_line_end() {
        let text = "line one\nline two\nline three";
        assert_eq!(prefix_within(text, 100, &skills_core::EstimateTokens), text);
        assert_eq!(
            prefix_within(text, 4, &skills_core::EstimateTokens),
            "line one"
        );
        assert_eq!(prefix_within(text, 0, &skills_core::EstimateTokens), "");
    }
}
