//! The report as one self-contained HTML page: inline CSS and SVG, no script,
//! no external asset. The chart has one `<rect class="bar" data-skill="…">`
//! per skill folder (its full cost: body and documents), with the catalog
//! entry's cost drawn over it.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::Report;
use super::budget::Unit;

/// Escapes `text` for HTML text and attribute values.
fn esc(text: &str) -> String {
    skills_core::escape_html(text)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:70em}\
table{border-collapse:collapse;margin:1em 0}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}\
th:first-child,td:first-child{text-align:left}td.invalid{color:#b00}td.ok{color:#070}\
.bar{fill:#4a7bd0}.catalog{fill:#f0a030}svg text{font-size:12px;fill:#222}.note{color:#555;font-size:.9em}";

/// Writes `report` as an HTML page.
pub(crate) fn write_html(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let mut page = String::with_capacity(16 * 1024 + report.skills.len() * 400);
    let t = &report.totals;
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>skills report</title><style>{STYLE}</style></head><body>\n<h1>skills report</h1>\n<p>{} skill folder(s); {} load. Tokens: <b>{}</b> ({}). <span class=\"note\">{}</span></p>\n",
        t.skills,
        t.loaded,
        esc(report.tokenizer.name),
        esc(report.tokenizer.library),
        esc(report.tokenizer.note)
    );
    let _ = writeln!(
        page,
        "<table id=\"totals\"><tr><th>injection</th><th>tokens</th><th>catalog saves</th></tr>\
<tr><td>catalog only</td><td>{}</td><td></td></tr>\
<tr><td>full: bodies</td><td>{}</td><td>{:.1}%</td></tr>\
<tr><td>full: bodies and docs</td><td>{}</td><td>{:.1}%</td></tr></table>",
        t.catalog_tokens,
        t.body_tokens,
        t.saving_vs_bodies_percent,
        t.full_tokens,
        t.saving_vs_full_percent
    );
    page.push_str("<h2>Skills</h2>\n<table id=\"skills\"><tr><th>skill</th><th>status</th><th>catalog</th><th>body</th><th>docs</th><th>errors</th><th>warnings</th></tr>\n");
    let cell = |n: Option<usize>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
    for s in &report.skills {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.name),
            s.status,
            s.status,
            cell(s.catalog_tokens),
            cell(s.body_tokens),
            cell(s.docs_tokens),
            s.errors,
            s.warnings
        );
    }
    page.push_str("</table>\n");
    write_chart(&mut page, report);
    let _ = write!(
        page,
        "<h2>Catalog budgets for a {}-token context window</h2>\n<table id=\"budgets\"><tr><th>agent</th><th>budget</th><th>used</th><th>wanted</th><th>whole</th><th>shortened</th><th>name only</th><th>dropped</th></tr>\n",
        report.context_window
    );
    for b in &report.budgets {
        let unit = match b.unit {
            Unit::Chars => "chars",
            Unit::Tokens => "tokens",
        };
        let _ = writeln!(
            page,
            "<tr><td>{}{}</td><td>{} {unit}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(b.agent),
            if b.assumption.is_some() { " *" } else { "" },
            b.limit,
            b.used,
            b.wanted,
            b.whole,
            b.shortened,
            b.name_only,
            b.dropped
        );
    }
    page.push_str("</table>\n<ul class=\"note\">\n");
    for b in &report.budgets {
        let _ = write!(
            page,
            "<li>{}: {} (<a href=\"{}\">source</a>)",
            esc(b.agent),
            esc(&b.rule),
            esc(b.source)
        );
        if let Some(why) = b.assumption {
            let _ = write!(page, ". * Assumption: {}", esc(why));
        }
        page.push_str("</li>\n");
    }
    page.push_str("</ul>\n</body></html>\n");
    out.write_all(page.as_bytes())
}

/// The bar chart: one row per skill folder, bars scaled to the largest cost.
fn write_chart(page: &mut String, report: &Report) {
    const ROW: usize = 20;
    const LABEL: usize = 220;
    const BARS: usize = 480;
    let cost = |s: &super::SkillRow| s.body_tokens.unwrap_or(0) + s.docs_tokens.unwrap_or(0);
    let max = report.skills.iter().map(cost).max().unwrap_or(0).max(1);
    let height = ROW * report.skills.len() + 30;
    let width = LABEL + BARS + 80;
    let _ = write!(
        page,
        "<h2>Cost per skill</h2>\n<p class=\"note\">Tokens when loaded in full (body and documents, blue) and in the catalog (orange).</p>\n<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"tokens per skill\">\n"
    );
    for (i, s) in report.skills.iter().enumerate() {
        let y = i * ROW + 4;
        let full = cost(s);
        let w = full * BARS / max;
        let c = s.catalog_tokens.unwrap_or(0) * BARS / max;
        let name = esc(&s.name);
        let _ = writeln!(
            page,
            "<text x=\"0\" y=\"{}\">{name}</text><rect class=\"bar\" data-skill=\"{name}\" x=\"{LABEL}\" y=\"{y}\" width=\"{w}\" height=\"{}\"><title>{name}: {full} tokens</title></rect><rect class=\"catalog\" x=\"{LABEL}\" y=\"{y}\" width=\"{c}\" height=\"{}\"/><text x=\"{}\" y=\"{}\">{full}</text>",
            y + 13,
            ROW - 6,
            ROW - 6,
            LABEL + w + 6,
            y + 13
        );
    }
    page.push_str("</svg>\n");
}
