//! Helpers both renderers share: cleaning text, formatting rates, and
//! making a report safe to do arithmetic on.

use std::borrow::Cow;

use crate::outputs::{CaseRun, OutputReport};
use crate::queries::Split;
use crate::triggers::{NONE, QueryResult, SkillRates, TriggerReport};
use crate::usage::UsageTotals;

/// Longest query or message shown in a table row, in characters.
pub(super) const CLIP: usize = 80;

/// `text` on one line of at most `max` characters: runs of whitespace
/// (newlines and tabs included) become one space, other control and
/// bidirectional characters become U+FFFD, and a longer text is cut on a
/// character boundary with `…` as its last character.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let mut clean = String::with_capacity(text.len().min(max * 4 + 4));
    let mut chars = 0;
    let mut space = false;
    for c in text.trim().chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !clean.is_empty() {
            clean.push(' ');
            chars += 1;
        }
        space = false;
        clean.push(if skills_core::is_display_unsafe(c) {
            '\u{fffd}'
        } else {
            c
        });
        chars += 1;
        if chars > max {
            break;
        }
    }
    if chars > max {
        let keep = max.saturating_sub(1);
        let cut = clean
            .char_indices()
            .nth(keep)
            .map_or(clean.len(), |(i, _)| i);
        clean.truncate(cut);
        clean.push('…');
    }
    clean
}

/// A share as a percent with one decimal (`66.7%`), `-` for none (or a
/// value that is not a number, or far outside any share: a damaged report).
pub(super) fn pct(share: Option<f64>) -> String {
    match share {
        Some(share) if share.is_finite() && share.abs() <= 1000.0 => {
            format!("{:.1}%", share * 100.0)
        }
        _ => "-".to_owned(),
    }
}

/// `hits` of `runs` as `66.7% (2/3)`, `-` without runs.
pub(super) fn ratio_cell(hits: u32, runs: u32) -> String {
    if runs == 0 {
        "-".to_owned()
    } else {
        format!(
            "{} ({hits}/{runs})",
            pct(Some(f64::from(hits) / f64::from(runs)))
        )
    }
}

/// A change of a share in signed percentage points (`+12.5 pp`,
/// `-3.0 pp`, `0.0 pp`), `-` for none.
pub(super) fn pp(change: Option<f64>) -> String {
    match change {
        Some(change) if change.is_finite() => {
            let tenths = (change * 1000.0).round();
            if tenths == 0.0 {
                "0.0 pp".to_owned()
            } else {
                format!("{:+.1} pp", tenths / 10.0)
            }
        }
        _ => "-".to_owned(),
    }
}

/// Milliseconds as seconds with one decimal (`12.3 s`).
pub(super) fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// `all`, `train` or `validation`.
pub(super) fn split_name(split: Option<Split>) -> &'static str {
    split.map_or("all", Split::as_str)
}

/// Prompt and generated tokens, without overflow.
pub(super) fn total_tokens(usage: &UsageTotals) -> u64 {
    usage.input_tokens.saturating_add(usage.output_tokens)
}

/// The cost line's figures: requests, input and output tokens, the cache
/// share, retries and wall time.
pub(super) fn cost(usage: &UsageTotals, retries: Option<u64>, elapsed_ms: u64) -> String {
    let mut line = format!(
        "{} request(s), {} input token(s) ({} from cache), {} output token(s)",
        usage.requests,
        usage.input_tokens,
        pct(Some(usage.cache_share())),
        usage.output_tokens
    );
    if let Some(retries) = retries {
        line.push_str(&format!(", {retries} retr{}", plural_y(retries)));
    }
    line.push_str(&format!(", {} elapsed", seconds(elapsed_ms)));
    line
}

/// The grader's calls: requests and tokens.
pub(super) fn grader_cost(usage: &UsageTotals) -> String {
    format!(
        "{} request(s), {} input token(s), {} output token(s)",
        usage.requests, usage.input_tokens, usage.output_tokens
    )
}

fn plural_y(n: u64) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

/// `should trigger` or `should not trigger`.
pub(super) fn expectation(q: &QueryResult) -> &'static str {
    if q.should_trigger {
        "should trigger"
    } else {
        "should not trigger"
    }
}

/// The query's skill, or `(no skill)`.
pub(super) fn skill_of(skill: Option<&str>) -> &str {
    skill.unwrap_or("(no skill)")
}

/// A query's own rate with its counts (`33.3% (1/3)`), `-` when no run
/// completed.
pub(super) fn query_rate(q: &QueryResult) -> String {
    match pct(q.trigger_rate) {
        dash if dash == "-" => dash,
        rate => format!("{rate} ({}/{})", q.triggered, q.completed()),
    }
}

/// What a query's runs loaded, most runs first (ties by name), runs that
/// loaded nothing as `(none)`.
pub(super) fn loaded_counts(q: &QueryResult) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = q
        .loaded
        .iter()
        .filter(|(_, runs)| **runs > 0)
        .map(|(skill, runs)| (skill.clone(), *runs))
        .collect();
    if q.none > 0 {
        out.push((NONE.to_owned(), q.none));
    }
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// The rows of the confusions: expected skill, what loaded instead, runs;
/// by expected skill, then most runs first, then name.
pub(super) fn confusions(rates: &[SkillRates]) -> Vec<(String, String, u32)> {
    let mut out = Vec::new();
    for rate in rates {
        let mut row: Vec<(&String, &u32)> =
            rate.confusions.iter().filter(|(_, n)| **n > 0).collect();
        row.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        out.extend(
            row.into_iter()
                .map(|(other, n)| (rate.skill.clone(), other.clone(), *n)),
        );
    }
    out
}

/// The failed queries of `split`, in the report's order.
pub(super) fn failing(report: &TriggerReport, split: Option<Split>) -> Vec<&QueryResult> {
    report.queries_in(split).filter(|q| !q.passed).collect()
}

/// `report`, or a copy whose counts cannot overflow or underflow the
/// report's own arithmetic ([`TriggerReport::rates`] sums counts over
/// queries and subtracts failed runs from runs). A report the runner wrote
/// is returned as is; only a hand-made or damaged one is copied.
pub(super) fn sane(report: &TriggerReport) -> Cow<'_, TriggerReport> {
    let queries = u32::try_from(report.queries.len()).unwrap_or(u32::MAX);
    // Sums over every query of counts at most `cap` fit in a u32.
    let cap = u32::MAX / queries.max(1).saturating_add(1);
    let fine = |q: &QueryResult| {
        q.runs <= cap
            && q.triggered <= cap
            && q.none <= cap
            && q.errors <= q.runs
            && q.timeouts <= q.runs - q.errors
            && q.loaded.values().all(|n| *n <= cap)
    };
    if report.queries.iter().all(fine) {
        return Cow::Borrowed(report);
    }
    let mut copy = report.clone();
    for q in &mut copy.queries {
        q.runs = q.runs.min(cap);
        q.triggered = q.triggered.min(cap);
        q.none = q.none.min(cap);
        q.errors = q.errors.min(q.runs);
        q.timeouts = q.timeouts.min(q.runs - q.errors);
        for n in q.loaded.values_mut() {
            *n = (*n).min(cap);
        }
    }
    Cow::Owned(copy)
}

/// A case run's label: its id, and its name in parentheses.
pub(super) fn case_label(run: &CaseRun) -> String {
    match &run.eval_name {
        Some(name) if !name.trim().is_empty() && name != &run.eval_id => {
            format!("{} ({})", run.eval_id, name)
        }
        _ => run.eval_id.clone(),
    }
}

/// A case run's outcome in one word.
pub(super) fn run_status(run: &CaseRun) -> &'static str {
    if run.timed_out {
        "timeout"
    } else if run.error.is_some() {
        "error"
    } else if run.failed() > 0 {
        "failed"
    } else if run.passed() == 0 && run.unchecked() > 0 {
        "unchecked"
    } else {
        "ok"
    }
}

/// The statements left unchecked for want of a grader (zero when the
/// report has one).
pub(super) fn needs_grader(report: &OutputReport) -> usize {
    if report.grader.is_some() {
        return 0;
    }
    report
        .runs
        .iter()
        .flat_map(|run| &run.expectations)
        .filter(|e| e.passed.is_none() && e.kind == "llm")
        .count()
}

/// Retries of every case run, summed without overflow.
pub(super) fn run_retries(report: &OutputReport) -> u64 {
    report
        .runs
        .iter()
        .fold(0u64, |sum, run| sum.saturating_add(run.retries))
}
