//! `skills list`: the skills that load, one per line (or JSON), each marked
//! with what it lacks on this machine when its requirements are unmet
//! (`needs setup: bin jq; env GITHUB_TOKEN`), with a `requirement-unmet`
//! warning on standard error per such skill.

use std::io::Write;
use std::path::PathBuf;

use skills_core::{VisibilityPolicy, describe_missing};

use crate::failure::{Failure, json_failure};
use crate::requirements;
use crate::sources::{Sources, block_on, warn_skipped};
use crate::text;

/// The arguments of `skills list`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Skill folders or folders of skills.
    pub(crate) paths: Vec<PathBuf>,
}

/// Runs `skills list`.
pub(crate) fn run(args: ListArgs, sources: &Sources, mut out: impl Write) -> Result<u8, Failure> {
    let provider = sources.provider(args.paths)?;
    let catalog = block_on(provider.list())?;
    let mut policy = VisibilityPolicy::new();
    let unmet = requirements::check(&mut policy, catalog.entries());
    if args.json {
        // Each skill's metadata, plus `needs_setup` (what is missing) for
        // those that need setup.
        let entries = catalog
            .entries()
            .iter()
            .map(|m| {
                let mut entry = serde_json::to_value(m).map_err(json_failure)?;
                if let (Some(missing), Some(object)) =
                    (policy.missing(m.name.as_str()), entry.as_object_mut())
                {
                    let missing = serde_json::to_value(missing).map_err(json_failure)?;
                    object.insert("needs_setup".to_owned(), missing);
                }
                Ok(entry)
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        serde_json::to_writer_pretty(&mut out, &entries).map_err(json_failure)?;
        writeln!(out)?;
    } else {
        let width = catalog.names().map(str::len).max().unwrap_or(0);
        for m in catalog.entries() {
            let desc: Vec<&str> = m.description.split_whitespace().collect();
            let setup = policy
                .missing(m.name.as_str())
                .map(|missing| format!("[needs setup: {}] ", describe_missing(missing)))
                .unwrap_or_default();
            writeln!(
                out,
                "{:width$}  {}{}",
                text::line(m.name.as_str()),
                text::line(&setup),
                text::line(&desc.join(" "))
            )?;
        }
    }
    for diagnostic in &unmet {
        eprintln!("{}", text::line(&diagnostic.to_string()));
    }
    warn_skipped(provider.as_ref());
    Ok(0)
}
