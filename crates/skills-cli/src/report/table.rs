//! The report as text: a table per skill, the totals, a budget table per
//! agent, then the diagnostics. Every name and path is escaped
//! ([`crate::text::line`]); colours only when asked (a terminal without
//! `NO_COLOR`).

use std::io::{self, Write};

use super::Report;
use super::budget::{Fate, Unit};
use crate::text::line;

/// ANSI colours, or nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    on: bool,
}

impl Style {
    /// Colours on standard output when it is a terminal and `NO_COLOR` is
    /// unset or empty.
    pub(crate) fn detect(is_terminal: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            on: is_terminal && !no_color,
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }
}

/// Writes `report` as text.
pub(crate) fn write_text(out: &mut impl Write, report: &Report, style: Style) -> io::Result<()> {
    let t = &report.totals;
    let roots: Vec<String> = report.roots.iter().map(|r| line(r).into_owned()).collect();
    writeln!(
        out,
        "{}",
        style.paint(
            "1",
            &format!(
                "skills report: {} skill folder(s) in {}",
                t.skills,
                if roots.is_empty() {
                    "no root".to_owned()
                } else {
                    roots.join(", ")
                }
            )
        )
    )?;
    writeln!(
        out,
        "tokens: {} ({}); {}",
        report.tokenizer.name, report.tokenizer.library, report.tokenizer.note
    )?;
    writeln!(out)?;
    write_skills(out, report, style)?;
    writeln!(out)?;
    let pct = |p: f64| format!("{p:.1}%");
    writeln!(
        out,
        "catalog only:              {:>9} tokens (every listed skill, with the instructions)",
        t.catalog_tokens
    )?;
    writeln!(
        out,
        "full injection, bodies:    {:>9} tokens; the catalog saves {}",
        t.body_tokens,
        pct(t.saving_vs_bodies_percent)
    )?;
    writeln!(
        out,
        "full injection, with docs: {:>9} tokens; the catalog saves {}",
        t.full_tokens,
        pct(t.saving_vs_full_percent)
    )?;
    writeln!(out)?;
    write_budgets(out, report, style)?;
    write_diagnostics(out, report, style)
}

fn cell(n: Option<usize>) -> String {
    n.map_or_else(|| "-".to_owned(), |n| n.to_string())
}

fn write_skills(out: &mut impl Write, report: &Report, style: Style) -> io::Result<()> {
    let names: Vec<String> = report
        .skills
        .iter()
        .map(|s| line(&s.name).into_owned())
        .collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .chain([5])
        .max()
        .unwrap_or(5);
    let header = format!(
        "{:width$}  {:9}  {:>7}  {:>7}  {:>7}  {:>5}  {:>6}  {:>8}",
        "SKILL", "STATUS", "CATALOG", "BODY", "DOCS", "#DOCS", "ERRORS", "WARNINGS"
    );
    writeln!(out, "{}", style.paint("1", header.trim_end()))?;
    for (s, name) in report.skills.iter().zip(&names) {
        let status = format!("{:9}", s.status);
        let status = match s.status {
            "ok" => style.paint("32", &status),
            "invalid" => style.paint("31", &status),
            _ => style.paint("33", &status),
        };
        writeln!(
            out,
            "{name:width$}  {status}  {:>7}  {:>7}  {:>7}  {:>5}  {:>6}  {:>8}",
            cell(s.catalog_tokens),
            cell(s.body_tokens),
            cell(s.docs_tokens),
            s.docs,
            s.errors,
            s.warnings
        )?;
    }
    let t = &report.totals;
    let total = format!(
        "{:width$}  {:9}  {:>7}  {:>7}  {:>7}  {:>5}  {:>6}  {:>8}",
        "TOTAL",
        format!("{} ok", t.loaded),
        t.catalog_tokens,
        t.body_tokens,
        t.docs_tokens,
        report.skills.iter().map(|s| s.docs).sum::<usize>(),
        t.errors,
        t.warnings
    );
    writeln!(out, "{}", style.paint("1", &total))
}

fn write_budgets(out: &mut impl Write, report: &Report, style: Style) -> io::Result<()> {
    writeln!(
        out,
        "{}",
        style.paint(
            "1",
            &format!(
                "catalog budgets for a {}-token context window:",
                report.context_window
            )
        )
    )?;
    let width = report
        .budgets
        .iter()
        .map(|b| b.agent.chars().count() + usize::from(b.assumption.is_some()))
        .max()
        .unwrap_or(5)
        .max(5);
    let header = format!(
        "{:width$}  {:>16}  {:>9}  {:>9}  {:>5}  {:>9}  {:>9}  {:>7}",
        "AGENT", "BUDGET", "USED", "WANTED", "WHOLE", "SHORTENED", "NAME-ONLY", "DROPPED"
    );
    writeln!(out, "{}", style.paint("1", &header))?;
    for b in &report.budgets {
        let unit = match b.unit {
            Unit::Chars => "chars",
            Unit::Tokens => "tokens",
        };
        let agent = format!(
            "{}{}",
            b.agent,
            if b.assumption.is_some() { "*" } else { "" }
        );
        writeln!(
            out,
            "{agent:width$}  {:>16}  {:>9}  {:>9}  {:>5}  {:>9}  {:>9}  {:>7}",
            format!("{} {unit}", b.limit),
            b.used,
            b.wanted,
            b.whole,
            b.shortened,
            b.name_only,
            b.dropped
        )?;
    }
    for b in &report.budgets {
        for (fate, label) in [
            (Fate::Shortened, "shortened"),
            (Fate::NameOnly, "name only"),
            (Fate::Dropped, "dropped"),
        ] {
            let names: Vec<String> = b
                .skills
                .iter()
                .filter(|s| s.fate == fate)
                .map(|s| line(&s.name).into_owned())
                .collect();
            if !names.is_empty() {
                writeln!(out, "  {} {label}: {}", b.agent, shorten_list(&names))?;
            }
        }
    }
    for b in &report.budgets {
        writeln!(out, "  {}: {} ({})", b.agent, b.rule, b.source)?;
    }
    for b in report.budgets.iter().filter(|b| b.assumption.is_some()) {
        if let Some(why) = b.assumption {
            writeln!(out, "  * {} is partly an assumption: {why}", b.agent)?;
        }
    }
    Ok(())
}

/// At most 10 names, then how many more.
fn shorten_list(names: &[String]) -> String {
    const SHOWN: usize = 10;
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    format!(
        "{}, and {} more",
        names[..SHOWN].join(", "),
        names.len() - SHOWN
    )
}

fn write_diagnostics(out: &mut impl Write, report: &Report, style: Style) -> io::Result<()> {
    let any =
        !report.diagnostics.is_empty() || report.skills.iter().any(|s| !s.diagnostics.is_empty());
    if !any {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "{}", style.paint("1", "diagnostics:"))?;
    for d in &report.diagnostics {
        crate::validate::write_diagnostic(out, "", d)?;
    }
    for s in report.skills.iter().filter(|s| !s.diagnostics.is_empty()) {
        writeln!(out, "{}  ({})", line(&s.name), line(&s.dir))?;
        for d in &s.diagnostics {
            crate::validate::write_diagnostic(out, "    ", d)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_only_when_on() {
        assert_eq!(Style { on: false }.paint("31", "x"), "x");
        assert_eq!(Style { on: true }.paint("31", "x"), "\u{1b}[31mx\u{1b}[0m");
        // Not a terminal: never colours, whatever NO_COLOR says.
        assert!(!Style::detect(false).on);
    }

    #[test]
    fn long_name_lists_are_shortened() {
        let names: Vec<String> = (0..12).map(|i| format!("s{i}")).collect();
        assert_eq!(
            shorten_list(&names),
            "s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, and 2 more"
        );
        assert_eq!(shorten_list(&names[..2]), "s0, s1");
    }
}
