//! `skills list`: the skills that load, one per line (or JSON).

use std::io::Write;
use std::path::PathBuf;

use crate::failure::{Failure, json_failure};
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
    if args.json {
        serde_json::to_writer_pretty(&mut out, catalog.entries()).map_err(json_failure)?;
        writeln!(out)?;
    } else {
        let width = catalog.names().map(str::len).max().unwrap_or(0);
        for m in catalog.entries() {
            let desc: Vec<&str> = m.description.split_whitespace().collect();
            writeln!(
                out,
                "{:width$}  {}",
                text::line(m.name.as_str()),
                text::line(&desc.join(" "))
            )?;
        }
    }
    warn_skipped(provider.as_ref());
    Ok(0)
}
