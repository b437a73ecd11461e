//! `skills read`: one file of a skill, a line range of it, or its raw bytes.

use std::io::{self, IsTerminal as _, Write};
use std::path::PathBuf;

use skills_core::{ErrorKind, LineRange};
use skills_fs::FsOptions;

use crate::failure::Failure;
use crate::sources::{Sources, block_on};
use crate::text;

/// The arguments of `skills read`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReadArgs {
    /// The skill's name.
    pub(crate) name: String,
    /// The file, relative to the skill folder (e.g. `references/guide.md`).
    pub(crate) file: String,
    /// Lines to print: `A:B`, `A:` or `A` (1-based, inclusive).
    #[arg(long, value_parser = parse_lines, value_name = "A:B", conflicts_with = "raw")]
    pub(crate) lines: Option<LineRange>,
    /// Print at most N bytes (cut with a marker); files up to N bytes (at
    /// least 16 MiB) are read. With --raw, larger files are refused.
    #[arg(long, value_name = "N")]
    pub(crate) max_bytes: Option<usize>,
    /// Write the file's bytes unchanged, binary files included.
    #[arg(long)]
    pub(crate) raw: bool,
    /// Skill folders or folders of skills.
    pub(crate) paths: Vec<PathBuf>,
}

/// `--lines`: `A:B`, `A:` or `A`.
fn parse_lines(text: &str) -> Result<LineRange, String> {
    LineRange::parse(text).map_err(|e| e.to_string())
}

/// Runs `skills read`.
pub(crate) fn run(args: ReadArgs, sources: &Sources, out: &mut impl Write) -> Result<u8, Failure> {
    let ReadArgs {
        name,
        file,
        lines,
        max_bytes,
        raw,
        paths,
    } = args;
    if raw {
        // Raw bytes cannot be cut with a marker: over the cap is refused.
        let mut options = FsOptions::default();
        if let Some(max) = max_bytes {
            options = options.with_max_resource_bytes(max as u64);
        }
        let provider = sources.provider_with(paths, options)?;
        let bytes = block_on(provider.read_resource_bytes(&name, &file))?;
        out.write_all(&bytes.bytes)?;
        return Ok(0);
    }
    let provider = sources.provider_with(paths, read_options(max_bytes))?;
    let content = block_on(provider.read_resource(&name, &file, lines)).map_err(|err| {
        let binary = err.kind() == ErrorKind::Binary;
        let mut failure = Failure::from(err);
        if binary {
            failure.message.push_str("; use --raw to write its bytes");
        }
        failure
    })?;
    // Unchanged into a pipe or a file; escaped on a terminal, where a
    // hostile file could set the title or write the clipboard.
    let shown = text::for_terminal(&content.text, io::stdout().is_terminal());
    out.write_all(shown.as_bytes())?;
    Ok(0)
}

/// `FsOptions` for `read`: `--max-bytes N` caps the text returned at `N` bytes
/// and lets files of up to `N` bytes (never less than the default 16 MiB) be
/// read at all.
fn read_options(max_bytes: Option<usize>) -> FsOptions {
    let options = FsOptions::default();
    match max_bytes {
        None => options,
        Some(max) => {
            let limit = options.max_resource_bytes.max(max as u64);
            options
                .with_max_read_bytes(max)
                .with_max_resource_bytes(limit)
        }
    }
}
