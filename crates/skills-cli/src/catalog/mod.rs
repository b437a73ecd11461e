//! `skills catalog`: the catalog a model sees in its system prompt, in the
//! format and budget asked, with warnings about what the budget dropped
//! (`warnings`).

use std::io::{self, IsTerminal as _, Write};
use std::path::PathBuf;

mod warnings;

use clap::ValueEnum;
use skills_core::{Budget, BudgetLimit, CatalogFormat, RenderOptions};

use crate::failure::Failure;
use crate::sources::{Sources, block_on, warn_skipped};
use crate::text;

/// The arguments of `skills catalog`.
#[derive(Debug, clap::Args)]
pub(crate) struct CatalogArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Xml)]
    pub(crate) format: Format,
    /// Size limit: `N` characters or `Nt` (estimated) tokens.
    #[arg(long, value_parser = parse_budget, value_name = "N|Nt")]
    pub(crate) budget: Option<BudgetLimit>,
    /// Longest description shown per skill, in characters.
    #[arg(long, value_name = "N")]
    pub(crate) description_cap: Option<usize>,
    /// Skill folders or folders of skills.
    pub(crate) paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Xml,
    Markdown,
    Json,
}

/// `--budget`: `N` characters or `Nt` tokens.
pub(crate) fn parse_budget(text: &str) -> Result<BudgetLimit, String> {
    let bad = || {
        format!("invalid budget `{text}`: use N (characters) or Nt (tokens), e.g. 8000 or 2000t")
    };
    match text.strip_suffix('t') {
        Some(n) => n.parse().map(BudgetLimit::Tokens).map_err(|_| bad()),
        None => text.parse().map(BudgetLimit::Chars).map_err(|_| bad()),
    }
}

/// The catalog `--format json` prints when no skill is listed: still a JSON
/// document, of the same shape as a non-empty one.
const EMPTY_JSON_CATALOG: &str = "{\"skills\":[]}\n";

/// Runs `skills catalog`.
pub(crate) fn run(
    args: CatalogArgs,
    sources: &Sources,
    out: &mut impl Write,
) -> Result<u8, Failure> {
    let settings = sources.settings()?;
    let provider = sources.provider(args.paths)?;
    let catalog = block_on(provider.list())?;
    let format = match args.format {
        Format::Xml => CatalogFormat::Xml,
        Format::Markdown => CatalogFormat::Markdown,
        Format::Json => CatalogFormat::Json,
    };
    // Flags beat the config file.
    let limit = args.budget.or(settings.budget);
    let budget = Budget::new(limit, args.description_cap.or(settings.description_cap));
    // Skills this machine cannot run stay out, with a warning each.
    let mut policy = settings.policy.clone();
    let unmet = crate::requirements::check(&mut policy, catalog.entries());
    let report = catalog.render_report(
        &RenderOptions::default()
            .with_format(format)
            .with_budget(budget)
            .with_visibility(policy.clone()),
    );
    let mut rendered = report.text.clone();
    if rendered.is_empty() && format == CatalogFormat::Json {
        // JSON output is always a JSON document.
        rendered = EMPTY_JSON_CATALOG.to_owned();
    }
    // The catalog is exactly what a model sees, but never drives a
    // terminal (the renderer drops control characters already).
    let shown = text::for_terminal(&rendered, io::stdout().is_terminal());
    out.write_all(shown.as_bytes())?;
    for diagnostic in &unmet {
        eprintln!("{}", text::line(&diagnostic.to_string()));
    }
    for warning in settings
        .warnings(&catalog)
        .into_iter()
        .chain(warnings::warnings(&catalog, &policy, limit, &report))
    {
        eprintln!("warning: {}", text::line(&warning));
    }
    warn_skipped(provider.as_ref());
    Ok(0)
}
