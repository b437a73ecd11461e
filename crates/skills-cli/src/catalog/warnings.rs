//! What `skills catalog` says on standard error about the catalog it printed:
//! that it is empty, which skills the budget left out, and when even the
//! catalog's frame (guardrail and note) exceeds the budget.
//!
//! The catalog renderer only returns text, so the skills it kept are read back
//! from that text: each kept entry starts with a fixed, format-specific prefix
//! that holds the (validated, escaped) name.

use skills_core::escape_xml;
use skills_core::{BudgetLimit, Catalog, CatalogFormat, estimate_tokens};

use crate::text;

/// The warnings for `text`, rendered from `catalog` in `format` under `limit`.
pub(crate) fn warnings(
    catalog: &Catalog,
    format: CatalogFormat,
    limit: Option<BudgetLimit>,
    rendered: &str,
) -> Vec<String> {
    let visible: Vec<&str> = catalog
        .entries()
        .iter()
        .filter(|m| !m.extensions.disable_model_invocation)
        .map(|m| m.name.as_str())
        .collect();
    if visible.is_empty() {
        let hidden = catalog.len();
        return vec![if hidden == 0 {
            "the catalog is empty: no skill was found".to_owned()
        } else {
            format!(
                "the catalog is empty: all {hidden} skill(s) set `disable-model-invocation` and load only by name"
            )
        }];
    }
    let mut out = Vec::new();
    // Only a size limit leaves skills out; without one the search (one scan of
    // the output per skill) is skipped. With one, the output is small.
    let left_out: Vec<&str> = if limit.is_none() {
        Vec::new()
    } else {
        visible
            .iter()
            .copied()
            .filter(|name| !rendered.contains(&entry_prefix(format, name)))
            .collect()
    };
    if !left_out.is_empty() {
        let names: Vec<String> = left_out
            .iter()
            .map(|n| text::line(n).into_owned())
            .collect();
        out.push(format!(
            "{} of {} skill(s) left out to fit the budget: {}",
            left_out.len(),
            visible.len(),
            names.join(", ")
        ));
    }
    if let Some(limit) = limit {
        let (used, max, unit) = match limit {
            BudgetLimit::Chars(max) => (rendered.chars().count(), max, "characters"),
            BudgetLimit::Tokens(max) => (estimate_tokens(rendered), max, "tokens (estimated)"),
        };
        if used > max {
            out.push(format!(
                "the catalog is {used} {unit}, over the budget of {max}: even its frame (the instructions{}) does not fit; raise --budget",
                if left_out.is_empty() { "" } else { " and the note naming the skills left out" }
            ));
        }
    }
    out
}

/// The text every rendered entry for `name` starts with.
fn entry_prefix(format: CatalogFormat, name: &str) -> String {
    match format {
        CatalogFormat::Json => {
            let quoted = serde_json::to_string(name).unwrap_or_default();
            format!("{{\"name\":{quoted},")
        }
        CatalogFormat::Markdown => format!("- `{name}`: "),
        CatalogFormat::Xml => {
            let mut escaped = String::new();
            escape_xml(&mut escaped, name);
            format!("<skill name=\"{escaped}\">")
        }
    }
}
