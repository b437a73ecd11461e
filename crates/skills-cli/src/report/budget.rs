//! The catalog budget rules of coding agents, applied to a set of skills: which
//! skills fit whole, which get their description shortened (or reduced to the
//! bare name), which are dropped.
//!
//! Each rule is a model of what the agent does, written from its public source
//! (see `docs/report.md` for the citations). Where a detail could not be
//! confirmed, the report says so (`BudgetRow::assumption`) and marks the
//! row as partly an assumption.

use serde::Serialize;

/// One skill as the budget rules see it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The skill's name.
    pub(crate) name: String,
    /// Its description on one line (whitespace collapsed).
    pub(crate) description: String,
    /// The `SKILL.md` path an agent would list (Codex shows one per skill).
    pub(crate) path: String,
}

/// What a rule did to one skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Fate {
    /// Listed with its whole description.
    Whole,
    /// Listed with a shorter description.
    Shortened,
    /// Listed by name only (its description removed).
    NameOnly,
    /// Not listed at all.
    Dropped,
}

/// The unit a budget is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit {
    /// Unicode scalar values.
    Chars,
    /// Tokens (each rule says how they are counted).
    Tokens,
}

/// The outcome of one rule for a context window.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Outcome {
    /// Budget limit, in `unit`.
    pub(crate) limit: usize,
    /// What the listing costs after the rule was applied, in `unit`.
    pub(crate) used: usize,
    /// What the listing would cost with every description whole, in `unit`.
    pub(crate) wanted: usize,
    pub(crate) unit: Unit,
    /// One fate per entry, in the order given.
    pub(crate) fates: Vec<Fate>,
}

impl Outcome {
    /// How many entries had `fate`.
    pub(crate) fn count(&self, fate: Fate) -> usize {
        self.fates.iter().filter(|f| **f == fate).count()
    }
}

/// The Claude Code rule: a listing budget of 1% of the context window,
/// measured in characters at 4 characters per token (8 000 characters when the
/// window is unknown), each description capped at 1 536 characters; on
/// overflow, descriptions are removed (the name stays) until the listing fits.
pub(crate) const CLAUDE_CODE_PERCENT: usize = 1;
/// Claude Code's per-entry description cap, in characters.
pub(crate) const CLAUDE_CODE_DESCRIPTION_CAP: usize = 1_536;
/// Characters per token Claude Code's budget is assumed to convert at.
pub(crate) const CHARS_PER_TOKEN: usize = 4;

/// Applies the Claude Code rule (see [`CLAUDE_CODE_PERCENT`]).
///
/// Entries are `- name: description` lines. Which descriptions go first is
/// ranked by use in Claude Code (least used first); a report cannot know that,
/// so it removes them from the end of the name-sorted list.
pub(crate) fn claude_code(entries: &[Entry], window_tokens: usize) -> Outcome {
    let limit = window_tokens
        .saturating_mul(CHARS_PER_TOKEN)
        .saturating_mul(CLAUDE_CODE_PERCENT)
        / 100;
    let chars = |s: &str| s.chars().count();
    let full_line = |e: &Entry, description: &str| chars(&e.name) + chars(description) + 5;
    let name_line = |e: &Entry| chars(&e.name) + 3;
    let capped: Vec<String> = entries
        .iter()
        .map(|e| cap_chars(&e.description, CLAUDE_CODE_DESCRIPTION_CAP))
        .collect();
    let wanted: usize = entries.iter().map(|e| full_line(e, &e.description)).sum();
    let mut fates: Vec<Fate> = entries
        .iter()
        .map(|e| {
            if chars(&e.description) > CLAUDE_CODE_DESCRIPTION_CAP {
                Fate::Shortened
            } else {
                Fate::Whole
            }
        })
        .collect();
    let mut costs: Vec<usize> = entries
        .iter()
        .zip(&capped)
        .map(|(e, d)| full_line(e, d))
        .collect();
    let mut used: usize = costs.iter().sum();
    for i in (0..entries.len()).rev() {
        if used <= limit {
            break;
        }
        let bare = name_line(&entries[i]);
        used = used - costs[i] + bare;
        costs[i] = bare;
        fates[i] = Fate::NameOnly;
    }
    for i in (0..entries.len()).rev() {
        if used <= limit {
            break;
        }
        used -= costs[i];
        costs[i] = 0;
        fates[i] = Fate::Dropped;
    }
    Outcome {
        limit,
        used,
        wanted,
        unit: Unit::Chars,
        fates,
    }
}

/// The Codex rule: 2% of the context window in tokens, a token being 4 bytes
/// (rounded up), over `- name: description (file: path)` lines. When the whole
/// lines do not fit, every skill keeps its name and path and the room left is
/// shared out one description character at a time, round robin; when even the
/// bare lines do not fit, all descriptions go and skills are dropped from the
/// end until the rest fit.
pub(crate) const CODEX_PERCENT: usize = 2;

/// Applies the Codex rule (see [`CODEX_PERCENT`]).
pub(crate) fn codex(entries: &[Entry], window_tokens: usize) -> Outcome {
    let limit = (window_tokens.saturating_mul(CODEX_PERCENT) / 100).max(1);
    let tokens = |bytes: usize| bytes.div_ceil(4);
    // `- {name}: (file: {path})` plus the newline.
    let bare_bytes = |e: &Entry| e.name.len() + e.path.len() + 13;
    let full_cost = |e: &Entry| {
        if e.description.is_empty() {
            tokens(bare_bytes(e))
        } else {
            tokens(bare_bytes(e) + e.description.len() + 1)
        }
    };
    let wanted: usize = entries.iter().map(full_cost).sum();
    if wanted <= limit {
        return Outcome {
            limit,
            used: wanted,
            wanted,
            unit: Unit::Tokens,
            fates: vec![Fate::Whole; entries.len()],
        };
    }
    let minimum: usize = entries.iter().map(|e| tokens(bare_bytes(e))).sum();
    if minimum <= limit {
        // Codex counts the bare line (with its newline), then each
        // description prefix plus one separator byte, against it.
        let mut remaining = limit - minimum;
        let chars: Vec<Vec<usize>> = entries
            .iter()
            .map(|e| e.description.chars().map(char::len_utf8).collect())
            .collect();
        let base: Vec<usize> = entries.iter().map(bare_bytes).collect();
        let mut taken = vec![0usize; entries.len()];
        let mut prefix_bytes = vec![0usize; entries.len()];
        let mut extra = vec![0usize; entries.len()];
        loop {
            let mut changed = false;
            for i in 0..entries.len() {
                let Some(&next) = chars[i].get(taken[i]) else {
                    continue;
                };
                let bytes = prefix_bytes[i] + next;
                let cost = tokens(base[i] + bytes + 1) - tokens(base[i]);
                let delta = cost.saturating_sub(extra[i]);
                if delta <= remaining {
                    remaining -= delta;
                    taken[i] += 1;
                    prefix_bytes[i] = bytes;
                    extra[i] = cost;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let fates = entries
            .iter()
            .zip(&taken)
            .map(|(e, &n)| {
                let all = e.description.chars().count();
                if n == all {
                    Fate::Whole
                } else if n == 0 {
                    Fate::NameOnly
                } else {
                    Fate::Shortened
                }
            })
            .collect();
        return Outcome {
            limit,
            used: limit - remaining,
            wanted,
            unit: Unit::Tokens,
            fates,
        };
    }
    let mut used = 0usize;
    let mut fates = Vec::with_capacity(entries.len());
    for e in entries {
        let cost = tokens(bare_bytes(e));
        if used + cost <= limit {
            used += cost;
            fates.push(if e.description.is_empty() {
                Fate::Whole
            } else {
                Fate::NameOnly
            });
        } else {
            fates.push(Fate::Dropped);
        }
    }
    Outcome {
        limit,
        used,
        wanted,
        unit: Unit::Tokens,
        fates,
    }
}

/// `text` cut to at most `cap` characters.
fn cap_chars(text: &str, cap: usize) -> String {
    text.chars().take(cap).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, description_len: usize) -> Entry {
        Entry {
            name: name.to_owned(),
            description: "d".repeat(description_len),
            path: format!("r0/{name}/SKILL.md"),
        }
    }

    #[test]
    fn claude_code_fits_whole_within_one_percent_of_the_window() {
        // 200k tokens → 1% = 2 000 tokens = 8 000 characters.
        let entries: Vec<Entry> = (0..10).map(|i| entry(&format!("s{i}"), 100)).collect();
        let out = claude_code(&entries, 200_000);
        assert_eq!(out.limit, 8_000);
        // 10 × (2 + 100 + 5).
        assert_eq!(out.wanted, 1_070);
        assert_eq!(out.used, 1_070);
        assert_eq!(out.count(Fate::Whole), 10);
    }

    #[test]
    fn claude_code_caps_descriptions_at_1536_characters() {
        let out = claude_code(&[entry("long", 2_000), entry("short", 10)], 1_000_000);
        assert_eq!(out.fates, [Fate::Shortened, Fate::Whole]);
        assert_eq!(out.used, 4 + 1_536 + 5 + 5 + 10 + 5);
    }

    #[test]
    fn claude_code_removes_descriptions_from_the_end_then_drops() {
        // 10k tokens → 400 characters; 5 × 107 = 535 does not fit.
        let entries: Vec<Entry> = (0..5).map(|i| entry(&format!("s{i}"), 100)).collect();
        let out = claude_code(&entries, 10_000);
        assert_eq!(out.limit, 400);
        // Two descriptions go: 3 × 107 + 2 × 5 = 331.
        assert_eq!(
            out.fates,
            [
                Fate::Whole,
                Fate::Whole,
                Fate::Whole,
                Fate::NameOnly,
                Fate::NameOnly
            ]
        );
        assert_eq!(out.used, 331);
        // 1k tokens → 40 characters: 5 bare names (5 each) fit, 8 would not.
        let tiny: Vec<Entry> = (0..10).map(|i| entry(&format!("s{i}"), 100)).collect();
        let out = claude_code(&tiny, 1_000);
        assert_eq!(out.limit, 40);
        assert_eq!(out.count(Fate::NameOnly), 8);
        assert_eq!(out.count(Fate::Dropped), 2);
        assert_eq!(out.used, 40);
    }

    #[test]
    fn codex_keeps_whole_lines_under_two_percent() {
        // A line: "- a: " + 99 d + " (file: r0/a/SKILL.md)\n" = 5 + 99 + 22 + 1.
        let out = codex(&[entry("a", 99)], 200_000);
        assert_eq!(out.limit, 4_000);
        assert_eq!(out.wanted, 127usize.div_ceil(4));
        assert_eq!(out.fates, [Fate::Whole]);
    }

    #[test]
    fn codex_shares_description_room_round_robin() {
        // Bare line of `a`: 1 + 13 + 13 = 27 bytes = 7 tokens; two of them = 14.
        let entries = [entry("a", 400), entry("b", 8)];
        // 1 100 tokens × 2% = 22 tokens: 8 tokens of room for descriptions.
        let out = codex(&entries, 1_100);
        assert_eq!(out.limit, 22);
        assert_eq!(out.fates, [Fate::Shortened, Fate::Whole]);
        assert!(out.used <= out.limit);
    }

    #[test]
    fn codex_drops_from_the_end_when_bare_lines_overflow() {
        let entries: Vec<Entry> = (0..4).map(|i| entry(&format!("s{i}"), 50)).collect();
        // Bare line: 2 + 14 + 13 = 29 bytes = 8 tokens; limit 1 000 × 2% = 20.
        let out = codex(&entries, 1_000);
        assert_eq!(out.limit, 20);
        assert_eq!(
            out.fates,
            [Fate::NameOnly, Fate::NameOnly, Fate::Dropped, Fate::Dropped]
        );
        assert_eq!(out.used, 16);
    }
}
