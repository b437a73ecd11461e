//! What `skills catalog` says on standard error about the catalog it printed:
//! that it is empty, which skills the budget listed by name only or left out,
//! and when even the catalog's frame (guardrail and note) or its pinned skills
//! exceed the budget. It reads what the renderer reports
//! ([`RenderReport`]), never the rendered text.

use skills_core::{BudgetLimit, Catalog, RenderReport, Tier, VisibilityPolicy, estimate_tokens};

use crate::text;

/// The warnings for `report`, rendered from `catalog` with `policy` under
/// `limit`.
pub(crate) fn warnings(
    catalog: &Catalog,
    policy: &VisibilityPolicy,
    limit: Option<BudgetLimit>,
    report: &RenderReport,
) -> Vec<String> {
    let visible = catalog
        .entries()
        .iter()
        .filter(|m| policy.is_listed(m))
        .count();
    if visible == 0 {
        let all = catalog.len();
        if all == 0 {
            return vec!["the catalog is empty: no skill was found".to_owned()];
        }
        let manual = catalog
            .entries()
            .iter()
            .filter(|m| policy.tier(m) == Tier::Manual)
            .count();
        return vec![format!(
            "the catalog is empty: none of the {all} skill(s) is listed ({manual} manual: \
             `disable-model-invocation`, `allow_implicit_invocation: false` or the config's \
             tier; they load only by name)"
        )];
    }
    let mut out = Vec::new();
    let names = |list: &[String]| {
        list.iter()
            .map(|n| text::line(n).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !report.shortened.is_empty() {
        out.push(format!(
            "{} of {visible} skill(s) listed by name only to fit the budget: {}",
            report.shortened.len(),
            names(&report.shortened)
        ));
    }
    if !report.omitted.is_empty() {
        out.push(format!(
            "{} of {visible} skill(s) left out to fit the budget: {}",
            report.omitted.len(),
            names(&report.omitted)
        ));
    }
    if let Some(limit) = limit {
        let (used, max, unit) = match limit {
            BudgetLimit::Chars(max) => (report.text.chars().count(), max, "characters"),
            BudgetLimit::Tokens(max) => (estimate_tokens(&report.text), max, "tokens (estimated)"),
        };
        if used > max {
            let pinned = catalog
                .entries()
                .iter()
                .any(|m| policy.is_listed(m) && policy.tier(m).is_pinned());
            out.push(format!(
                "the catalog is {used} {unit}, over the budget of {max}: even its frame (the \
                 instructions{}{}) does not fit; raise --budget",
                if report.omitted.is_empty() {
                    ""
                } else {
                    " and the note naming the skills left out"
                },
                if pinned {
                    " and the pinned skills, which are never shortened"
                } else {
                    ""
                }
            ));
        }
    }
    out
}
