//! Self-contained HTML pages: inline CSS, no script, no external resource.
//! The look follows the CLI's `skills report` page.

use std::fmt::Write as _;

use super::common::{
    case_label, confusions, cost, expectation, failing, grader_cost, loaded_counts, needs_grader,
    pct, pp, query_rate, ratio_cell, run_retries, run_status, sane, seconds, skill_of,
    total_tokens,
};
use crate::compare::{Comparison, SkillDelta};
use crate::outputs::OutputReport;
use crate::triggers::{SkillRates, TriggerReport};

/// Longest text shown whole in a cell; a longer one shows its start and
/// opens to the rest.
const SHOWN: usize = 300;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:80em}\
table{border-collapse:collapse;margin:1em 0}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right;vertical-align:top}\
th:first-child,td:first-child,th.t,td.t,td.w{text-align:left}td.t{white-space:pre-wrap;overflow-wrap:anywhere;max-width:40em}th[colspan]{text-align:center}\
td.fail,.worse{color:#b00}td.ok,.better{color:#070}.note{color:#555;font-size:.9em}\
.rate{display:inline-block;width:6em;height:.7em;background:#eee;margin-right:.5em;vertical-align:middle}\
.rate>div{height:100%;background:#4a7bd0}tbody.flips th{text-align:left}tbody.flips tr:first-child th{padding-top:1em}";

/// Escapes `text` for HTML text and attribute values: `& < > " '` become
/// entities; newlines and tabs stay (the cells wrap them); other control
/// and bidirectional characters are shown as `\u{…}`.
fn esc(text: &str) -> String {
    skills_core::escape_html(text)
}

/// A long text for a cell: whole when short; else its first [`SHOWN`]
/// characters, with the whole text a click away (`<details>`, no script).
fn long_text(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        None => esc(text),
        Some((cut, _)) => format!(
            "<details><summary>{}…</summary>{}</details>",
            esc(&text[..cut]),
            esc(text)
        ),
    }
}

/// The page's head and the start of its body.
fn open_page(page: &mut String, title: &str) {
    let title = esc(title);
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
    );
}

/// A bar for a share (0 to 1, clamped), and the share as text.
fn bar(share: Option<f64>, text: &str) -> String {
    match share {
        Some(share) if share.is_finite() => format!(
            "<div class=\"rate\"><div style=\"width:{:.1}%\"></div></div>{}",
            share.clamp(0.0, 1.0) * 100.0,
            esc(text)
        ),
        _ => esc(text),
    }
}

/// A trigger eval as one HTML page: a summary (model, runs, threshold,
/// queries passed and failed overall and per split, cost), `table#rates`
/// with one `tr[data-skill]` per skill and an inline bar for its trigger
/// rate, `table#failing` with the failing queries and what loaded,
/// `table#confusions`, and, when `comparison` is given, `table#comparison`
/// with each skill's rates before, after and their change, and the
/// queries the change fixed or broke. All text is escaped.
pub fn trigger_html(report: &TriggerReport, comparison: Option<&Comparison>) -> String {
    let report = sane(report);
    let report = report.as_ref();
    let mut page = String::with_capacity(8 * 1024 + report.queries.len() * 200);
    open_page(&mut page, &format!("Trigger eval: {}", report.model));
    let (passed, failed) = report.pass_counts(None);
    let _ = writeln!(
        page,
        "<p id=\"summary\">Model <b>{}</b>, {} run(s) per query, threshold {}. \
         {} skill(s) in the catalog. Queries: <b>{passed}</b> passed, <b>{failed}</b> failed.</p>",
        esc(&report.model),
        report.runs_per_query,
        pct(Some(report.threshold)),
        report.catalog.len()
    );
    page.push_str(
        "<table id=\"splits\"><tr><th>split</th><th>queries</th><th>passed</th><th>failed</th></tr>\n",
    );
    for split in [
        None,
        Some(crate::queries::Split::Train),
        Some(crate::queries::Split::Validation),
    ] {
        let (p, f) = report.pass_counts(split);
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{p}</td><td>{f}</td></tr>",
            super::common::split_name(split),
            p + f
        );
    }
    page.push_str("</table>\n");
    let _ = writeln!(
        page,
        "<p class=\"note\">Cost: {}.</p>",
        esc(&cost(
            &report.usage,
            Some(report.retries),
            report.elapsed_ms
        ))
    );

    let rates = report.rates(None);
    page.push_str(
        "<h2>Rates per skill</h2>\n<table id=\"rates\"><tr><th>skill</th><th>queries</th>\
         <th>trigger rate</th><th>false-trigger rate</th><th>precision</th><th>recall</th>\
         <th>failed queries</th></tr>\n",
    );
    for r in &rates {
        let name = esc(&r.skill);
        let _ = writeln!(
            page,
            "<tr data-skill=\"{name}\"><td>{name}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
            r.queries,
            bar(
                r.trigger_rate(),
                &ratio_cell(r.should_trigger_hits, r.should_trigger_runs)
            ),
            esc(&ratio_cell(r.should_not_hits, r.should_not_runs)),
            pct(r.precision()),
            pct(r.recall()),
            if r.failed_queries > 0 { "fail" } else { "ok" },
            r.failed_queries
        );
    }
    page.push_str("</table>\n");
    if rates.is_empty() {
        page.push_str("<p class=\"note\">No query about a skill.</p>\n");
    }

    let failing = failing(report, None);
    let _ = writeln!(
        page,
        "<h2>Failing queries ({})</h2>\n<table id=\"failing\"><tr><th>skill</th><th class=\"t\">expected</th>\
         <th class=\"t\">split</th><th>triggered</th><th class=\"t\">loaded</th><th class=\"t\">failed runs</th><th class=\"t\">query</th></tr>",
        failing.len()
    );
    for q in &failing {
        let loaded = loaded_counts(q);
        let loaded = if loaded.is_empty() {
            "nothing".to_owned()
        } else {
            loaded
                .iter()
                .map(|(skill, n)| format!("{} ×{n}", esc(skill)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut runs = String::new();
        if q.errors > 0 || q.timeouts > 0 {
            let _ = write!(runs, "{} error(s), {} timeout(s)", q.errors, q.timeouts);
            if let Some(first) = q.error_messages.first().filter(|m| !m.trim().is_empty()) {
                let _ = write!(runs, ": {}", long_text(first));
            }
        }
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"w\">{}</td><td class=\"w\">{}</td><td>{}</td><td class=\"t\">{loaded}</td><td class=\"t\">{runs}</td><td class=\"t\">{}</td></tr>",
            esc(skill_of(q.skill.as_deref())),
            expectation(q),
            q.split.as_str(),
            esc(&query_rate(q)),
            long_text(&q.query)
        );
    }
    page.push_str("</table>\n");

    let confusions = confusions(&rates);
    page.push_str(
        "<h2>Confusions</h2>\n<p class=\"note\">On a skill's should-trigger queries, what loaded instead.</p>\n\
         <table id=\"confusions\"><tr><th>expected skill</th><th class=\"t\">loaded instead</th><th>runs</th></tr>\n",
    );
    for (expected, other, runs) in &confusions {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"w\">{}</td><td>{runs}</td></tr>",
            esc(expected),
            esc(other)
        );
    }
    page.push_str("</table>\n");

    if let Some(c) = comparison {
        comparison_section(&mut page, c);
    }
    page.push_str("</body></html>\n");
    page
}

/// `before → after` cells and the change of one rate, coloured by whether
/// the change is for the better (`higher_is_better`).
fn delta_cells(
    d: &SkillDelta,
    rate: fn(&SkillRates) -> Option<f64>,
    change: Option<f64>,
    higher_is_better: bool,
) -> String {
    let class = match change {
        Some(c) if c.is_finite() && (c * 1000.0).round() != 0.0 => {
            if (c > 0.0) == higher_is_better {
                " class=\"better\""
            } else {
                " class=\"worse\""
            }
        }
        _ => "",
    };
    format!(
        "<td>{}</td><td>{}</td><td{class}>{}</td>",
        pct(d.before.as_ref().and_then(rate)),
        pct(d.after.as_ref().and_then(rate)),
        pp(change)
    )
}

fn comparison_section(page: &mut String, c: &Comparison) {
    let _ = writeln!(
        page,
        "<h2>Against the baseline</h2>\n<p>Split {}: baseline model <b>{}</b>, current model <b>{}</b>. \
         Queries passed {} → {}, failed {} → {}; {} new, {} dropped.</p>",
        super::common::split_name(c.split),
        esc(&c.baseline_model),
        esc(&c.current_model),
        c.baseline_passes.0,
        c.current_passes.0,
        c.baseline_passes.1,
        c.current_passes.1,
        c.new_queries,
        c.dropped_queries
    );
    page.push_str(
        "<table id=\"comparison\"><thead><tr><th rowspan=\"2\">skill</th>\
         <th colspan=\"3\">trigger rate</th><th colspan=\"3\">false-trigger rate</th>\
         <th colspan=\"3\">precision</th></tr>\n<tr><th>before</th><th>after</th><th>change</th>\
         <th>before</th><th>after</th><th>change</th><th>before</th><th>after</th><th>change</th></tr></thead>\n<tbody>\n",
    );
    for d in &c.skills {
        let _ = writeln!(
            page,
            "<tr class=\"skill\"><td>{}</td>{}{}{}</tr>",
            esc(&d.skill),
            delta_cells(d, SkillRates::trigger_rate, d.trigger_rate_change(), true),
            delta_cells(
                d,
                SkillRates::false_trigger_rate,
                d.false_trigger_rate_change(),
                false
            ),
            delta_cells(d, SkillRates::precision, d.precision_change(), true)
        );
    }
    page.push_str("</tbody>\n");
    let _ = writeln!(
        page,
        "<tbody class=\"flips\"><tr><th colspan=\"10\">Flipped queries ({})</th></tr>\n\
         <tr><th>skill</th><th colspan=\"2\" class=\"t\">now</th><th colspan=\"2\" class=\"t\">expected</th>\
         <th colspan=\"2\">triggered before → after</th><th colspan=\"3\" class=\"t\">query</th></tr>",
        c.flipped.len()
    );
    for f in &c.flipped {
        let (class, word) = if f.now_passes {
            ("fixed", "fixed")
        } else {
            ("broke", "broke")
        };
        let _ = writeln!(
            page,
            "<tr class=\"{class}\"><td>{}</td><td colspan=\"2\" class=\"w {}\">{word}</td><td colspan=\"2\" class=\"w\">{}</td>\
             <td colspan=\"2\">{} → {}</td><td colspan=\"3\" class=\"t\">{}</td></tr>",
            esc(skill_of(f.skill.as_deref())),
            if f.now_passes { "ok" } else { "fail" },
            if f.should_trigger {
                "should trigger"
            } else {
                "should not trigger"
            },
            pct(f.before_rate),
            pct(f.after_rate),
            long_text(&f.query)
        );
    }
    page.push_str("</tbody></table>\n");
}

/// An output eval as one HTML page: a summary (skill, model, grader,
/// runs per case, checks passed, failed and not checked, pass rate,
/// cost), `table#runs` with one `tr[data-eval][data-run]` per case run,
/// and `table#failed-checks` with each failed check and its evidence,
/// and a note when statements went unchecked for want of a grader. All
/// text is escaped.
pub fn output_html(report: &OutputReport) -> String {
    let mut page = String::with_capacity(8 * 1024 + report.runs.len() * 400);
    open_page(&mut page, &format!("Output eval: {}", report.skill_name));
    let (passed, failed, unchecked) = report.counts();
    let grader = match &report.grader {
        Some(grader) => format!("grader <b>{}</b>", esc(grader)),
        None => "no grader".to_owned(),
    };
    let _ = writeln!(
        page,
        "<p id=\"summary\">Skill <b>{}</b>, model <b>{}</b>, {grader}, {} run(s) per case. \
         Checks: <b>{passed}</b> passed, <b>{failed}</b> failed, <b>{unchecked}</b> not checked; \
         pass rate <b>{}</b>.</p>\n<p class=\"note\">Cost of the runs: {}.{}</p>",
        esc(&report.skill_name),
        esc(&report.model),
        report.runs_per_case,
        pct(report.pass_rate()),
        esc(&cost(
            &report.usage,
            Some(run_retries(report)),
            report.elapsed_ms
        )),
        if report.grader.is_some() {
            format!(
                " Cost of the grader: {}.",
                esc(&grader_cost(&report.grader_usage))
            )
        } else {
            String::new()
        }
    );
    let want_grader = needs_grader(report);
    if want_grader > 0 {
        let _ = writeln!(
            page,
            "<p class=\"note\">Give <code>--grader MODEL</code> to check {want_grader} statement(s).</p>"
        );
    }

    page.push_str(
        "<h2>Runs</h2>\n<table id=\"runs\"><tr><th>case</th><th>run</th><th class=\"t\">result</th><th>passed</th>\
         <th>failed</th><th>not checked</th><th>time</th><th>tokens</th><th class=\"t\">error</th></tr>\n",
    );
    for run in &report.runs {
        let status = run_status(run);
        let _ = writeln!(
            page,
            "<tr data-eval=\"{}\" data-run=\"{}\"><td>{}</td><td>{}</td><td class=\"w{}\">{status}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"t\">{}</td></tr>",
            esc(&run.eval_id),
            run.run_number,
            esc(&case_label(run)),
            run.run_number,
            match status {
                "ok" => " ok",
                "unchecked" => "",
                _ => " fail",
            },
            run.passed(),
            run.failed(),
            run.unchecked(),
            seconds(run.duration_ms),
            total_tokens(&run.usage),
            run.error.as_deref().map_or_else(String::new, long_text)
        );
    }
    page.push_str("</table>\n");

    page.push_str(
        "<h2>Failed checks</h2>\n<table id=\"failed-checks\"><tr><th>case</th><th>run</th>\
         <th class=\"t\">check</th><th class=\"t\">evidence</th></tr>\n",
    );
    for run in &report.runs {
        for e in run.expectations.iter().filter(|e| e.passed == Some(false)) {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td></tr>",
                esc(&run.eval_id),
                run.run_number,
                long_text(&e.text),
                long_text(&e.evidence)
            );
        }
    }
    page.push_str("</table>\n</body></html>\n");
    page
}
