//! Terminal tables: plain text, no colours, aligned columns.

use std::fmt::Write as _;

use super::common::{
    CLIP, case_label, confusions, cost, expectation, failing, grader_cost, loaded_counts,
    needs_grader, one_line, pct, pp, query_rate, ratio_cell, run_retries, run_status, sane,
    seconds, skill_of, split_name, total_tokens,
};
use crate::compare::Comparison;
use crate::outputs::OutputReport;
use crate::queries::Split;
use crate::triggers::{SkillRates, TriggerReport};

/// Longest skill or case label in a column, in characters.
const NAME: usize = 40;

/// How a column's cells line up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// A table of text cells, padded to the widest cell of each column.
struct Table {
    head: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(head: &[(&'static str, Align)]) -> Self {
        Self {
            head: head.to_vec(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table, each line starting with `indent`, a rule under the
    /// header, no trailing spaces.
    fn render(&self, indent: &str) -> String {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.head.iter().map(|(h, _)| width(h)).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(widths.len()) {
                widths[i] = widths[i].max(width(cell));
            }
        }
        let line = |cells: &[&str]| {
            let mut out = String::from(indent);
            for (i, ((_, align), w)) in self.head.iter().zip(&widths).enumerate() {
                let cell = cells.get(i).copied().unwrap_or("");
                let pad = w.saturating_sub(width(cell));
                if i > 0 {
                    out.push_str("  ");
                }
                if *align == Align::Right {
                    out.extend(std::iter::repeat_n(' ', pad));
                    out.push_str(cell);
                } else {
                    out.push_str(cell);
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            let end = out.trim_end().len();
            out.truncate(end);
            out.push('\n');
            out
        };
        let head: Vec<&str> = self.head.iter().map(|(h, _)| *h).collect();
        let mut out = line(&head);
        let rules: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
        out.push_str(&line(&rules));
        for row in &self.rows {
            let cells: Vec<&str> = row.iter().map(String::as_str).collect();
            out.push_str(&line(&cells));
        }
        out
    }
}

use Align::{Left, Right};

/// A trigger eval as a terminal table over `split` (all queries when
/// `None`): a header (model, runs per query, threshold, split, queries
/// passed and failed), one row per skill (queries, trigger rate with hits
/// over runs, false-trigger rate, precision, recall, failed queries; `-`
/// where a rate has no runs), the failing queries with what loaded
/// instead and their failed runs, the confusions, and the cost of the
/// whole eval.
pub fn trigger_table(report: &TriggerReport, split: Option<Split>) -> String {
    let report = sane(report);
    let report = report.as_ref();
    let mut out = String::new();
    let (passed, failed) = report.pass_counts(split);
    let _ = writeln!(
        out,
        "Trigger eval: model {}, {} run(s) per query, threshold {}, split {}",
        one_line(&report.model, CLIP),
        report.runs_per_query,
        pct(Some(report.threshold)),
        split_name(split)
    );
    let _ = writeln!(out, "Queries: {passed} passed, {failed} failed\n");

    let rates = report.rates(split);
    if rates.is_empty() {
        out.push_str("No query about a skill.\n");
    } else {
        out.push_str(&rates_table(&rates));
    }

    let failing = failing(report, split);
    if failing.is_empty() {
        out.push_str("\nFailing queries: none\n");
    } else {
        let _ = writeln!(out, "\nFailing queries ({}):", failing.len());
        for q in failing {
            let _ = writeln!(
                out,
                "  - {}, {}, triggered {}: \"{}\"",
                one_line(skill_of(q.skill.as_deref()), NAME),
                expectation(q),
                query_rate(q),
                one_line(&q.query, CLIP)
            );
            let loaded = loaded_counts(q);
            if loaded.is_empty() {
                out.push_str("      loaded: nothing (no run completed)\n");
            } else {
                let list: Vec<String> = loaded
                    .iter()
                    .map(|(skill, n)| format!("{} ×{n}", one_line(skill, NAME)))
                    .collect();
                let _ = writeln!(out, "      loaded: {}", list.join(", "));
            }
            if q.errors > 0 || q.timeouts > 0 {
                let _ = write!(
                    out,
                    "      failed runs: {} error(s), {} timeout(s)",
                    q.errors, q.timeouts
                );
                if let Some(first) = q.error_messages.first().filter(|m| !m.trim().is_empty()) {
                    let _ = write!(out, "; first: {}", one_line(first, CLIP));
                }
                out.push('\n');
            }
        }
    }

    let confusions = confusions(&rates);
    if confusions.is_empty() {
        out.push_str("\nConfusions: none\n");
    } else {
        let _ = writeln!(out, "\nConfusions (expected skill -> loaded instead):");
        let rows: Vec<(String, String)> = confusions
            .iter()
            .map(|(expected, other, _)| (one_line(expected, NAME), one_line(other, NAME)))
            .collect();
        let left = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let right = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
        for ((expected, other), (_, _, runs)) in rows.iter().zip(&confusions) {
            let _ = writeln!(out, "  {expected:<left$} -> {other:<right$} ×{runs}");
        }
    }

    let _ = writeln!(
        out,
        "\nCost of the whole eval: {}",
        cost(&report.usage, Some(report.retries), report.elapsed_ms)
    );
    out
}

fn rates_table(rates: &[SkillRates]) -> String {
    let mut table = Table::new(&[
        ("skill", Left),
        ("queries", Right),
        ("trigger rate", Right),
        ("false-trigger", Right),
        ("precision", Right),
        ("recall", Right),
        ("failed", Right),
    ]);
    for r in rates {
        table.row(vec![
            one_line(&r.skill, NAME),
            r.queries.to_string(),
            ratio_cell(r.should_trigger_hits, r.should_trigger_runs),
            ratio_cell(r.should_not_hits, r.should_not_runs),
            pct(r.precision()),
            pct(r.recall()),
            r.failed_queries.to_string(),
        ]);
    }
    table.render("")
}

/// `before -> after` of one rate.
fn before_after(
    before: Option<&SkillRates>,
    after: Option<&SkillRates>,
    rate: fn(&SkillRates) -> Option<f64>,
) -> String {
    format!(
        "{} -> {}",
        pct(before.and_then(rate)),
        pct(after.and_then(rate))
    )
}

/// A comparison as a terminal table: the models and split, queries passed
/// and failed before and after, per skill the trigger rate, false-trigger
/// rate and precision before -> after with their changes in signed
/// percentage points, then the queries the change fixed and broke.
pub fn comparison_table(comparison: &Comparison) -> String {
    let c = comparison;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Comparison, split {}: baseline model {}, current model {}",
        split_name(c.split),
        one_line(&c.baseline_model, CLIP),
        one_line(&c.current_model, CLIP)
    );
    let _ = write!(
        out,
        "Queries passed: {} -> {}, failed: {} -> {}",
        c.baseline_passes.0, c.current_passes.0, c.baseline_passes.1, c.current_passes.1
    );
    if c.new_queries > 0 || c.dropped_queries > 0 {
        let _ = write!(
            out,
            " ({} new, {} dropped)",
            c.new_queries, c.dropped_queries
        );
    }
    out.push_str("\n\n");

    if c.skills.is_empty() {
        out.push_str("No query about a skill.\n");
    } else {
        let mut table = Table::new(&[
            ("skill", Left),
            ("trigger rate", Right),
            ("change", Right),
            ("false-trigger", Right),
            ("change", Right),
            ("precision", Right),
            ("change", Right),
        ]);
        for s in &c.skills {
            let (b, a) = (s.before.as_ref(), s.after.as_ref());
            table.row(vec![
                one_line(&s.skill, NAME),
                before_after(b, a, SkillRates::trigger_rate),
                pp(s.trigger_rate_change()),
                before_after(b, a, SkillRates::false_trigger_rate),
                pp(s.false_trigger_rate_change()),
                before_after(b, a, SkillRates::precision),
                pp(s.precision_change()),
            ]);
        }
        out.push_str(&table.render(""));
    }

    for (fixed, title) in [(true, "Fixed"), (false, "Broke")] {
        let flipped: Vec<_> = c.flipped.iter().filter(|f| f.now_passes == fixed).collect();
        if flipped.is_empty() {
            let _ = writeln!(out, "\n{title}: none");
            continue;
        }
        let _ = writeln!(out, "\n{title} ({}):", flipped.len());
        for f in flipped {
            let _ = writeln!(
                out,
                "  - {}, {}, {} -> {}: \"{}\"",
                one_line(skill_of(f.skill.as_deref()), NAME),
                if f.should_trigger {
                    "should trigger"
                } else {
                    "should not trigger"
                },
                pct(f.before_rate),
                pct(f.after_rate),
                one_line(&f.query, CLIP)
            );
        }
    }
    for note in &c.notes {
        let _ = writeln!(out, "\nNote: {}", one_line(note, 200));
    }
    out
}

/// An output eval as a terminal table: a header (skill, model, grader or
/// "no grader", runs per case, checks passed, failed and not checked,
/// pass rate), one row per case run (case, run number, outcome, checks
/// passed, failed and not checked, time, tokens, error), the failed checks
/// with their evidence, and a note when statements went unchecked for want
/// of a grader.
pub fn output_table(report: &OutputReport) -> String {
    let mut out = String::new();
    let (passed, failed, unchecked) = report.counts();
    let grader = match &report.grader {
        Some(grader) => format!("grader {}", one_line(grader, CLIP)),
        None => "no grader".to_owned(),
    };
    let _ = writeln!(
        out,
        "Output eval: skill {}, model {}, {grader}, {} run(s) per case",
        one_line(&report.skill_name, NAME),
        one_line(&report.model, CLIP),
        report.runs_per_case
    );
    let _ = writeln!(
        out,
        "Checks: {passed} passed, {failed} failed, {unchecked} not checked; pass rate {}\n",
        pct(report.pass_rate())
    );

    if report.runs.is_empty() {
        out.push_str("No case runs.\n");
    } else {
        let mut table = Table::new(&[
            ("case", Left),
            ("run", Right),
            ("result", Left),
            ("passed", Right),
            ("failed", Right),
            ("not checked", Right),
            ("time", Right),
            ("tokens", Right),
            ("error", Left),
        ]);
        for run in &report.runs {
            table.row(vec![
                one_line(&case_label(run), NAME),
                run.run_number.to_string(),
                run_status(run).to_owned(),
                run.passed().to_string(),
                run.failed().to_string(),
                run.unchecked().to_string(),
                seconds(run.duration_ms),
                total_tokens(&run.usage).to_string(),
                run.error
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), |e| one_line(e, CLIP)),
            ]);
        }
        out.push_str(&table.render(""));
    }

    let failed_checks: Vec<_> = report
        .runs
        .iter()
        .flat_map(|run| {
            run.expectations
                .iter()
                .filter(|e| e.passed == Some(false))
                .map(move |e| (run, e))
        })
        .collect();
    if failed_checks.is_empty() {
        out.push_str("\nFailed checks: none\n");
    } else {
        let _ = writeln!(out, "\nFailed checks ({}):", failed_checks.len());
        for (run, e) in failed_checks {
            let _ = writeln!(
                out,
                "  - case {} run {}: {}\n      evidence: {}",
                one_line(&run.eval_id, NAME),
                run.run_number,
                one_line(&e.text, CLIP),
                one_line(&e.evidence, CLIP)
            );
        }
    }

    let want_grader = needs_grader(report);
    let other: Vec<_> = report
        .runs
        .iter()
        .flat_map(|run| {
            run.expectations
                .iter()
                .filter(|e| e.passed.is_none() && (report.grader.is_some() || e.kind != "llm"))
                .map(move |e| (run, e))
        })
        .collect();
    if !other.is_empty() {
        let _ = writeln!(out, "\nNot checked ({}):", other.len());
        for (run, e) in other {
            let _ = writeln!(
                out,
                "  - case {} run {}: {}\n      why: {}",
                one_line(&run.eval_id, NAME),
                run.run_number,
                one_line(&e.text, CLIP),
                one_line(&e.evidence, CLIP)
            );
        }
    }
    if want_grader > 0 {
        let _ = writeln!(
            out,
            "\nNote: give --grader MODEL to check {want_grader} statement(s)."
        );
    }

    let _ = writeln!(
        out,
        "\nCost of the runs: {}",
        cost(&report.usage, Some(run_retries(report)), report.elapsed_ms)
    );
    if report.grader.is_some() {
        let _ = writeln!(
            out,
            "Cost of the grader: {}",
            grader_cost(&report.grader_usage)
        );
    }
    out
}
