//! `skills show`: one skill, its metadata, files and body (text or JSON).

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use skills_core::{ResourcePath, Skill, text_content};

use crate::failure::{Failure, json_failure};
use crate::sources::{Sources, block_on};
use crate::text;

/// The arguments of `skills show`.
#[derive(Debug, clap::Args)]
pub(crate) struct ShowArgs {
    /// The skill's name.
    pub(crate) name: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print at most N bytes of the body (cut with a marker).
    #[arg(long, value_name = "N")]
    pub(crate) max_bytes: Option<usize>,
    /// Skill folders or folders of skills.
    pub(crate) paths: Vec<PathBuf>,
}

/// Runs `skills show`.
pub(crate) fn run(args: ShowArgs, sources: &Sources, mut out: impl Write) -> Result<u8, Failure> {
    let provider = sources.provider(args.paths)?;
    let mut skill = Arc::unwrap_or_clone(block_on(provider.get(&args.name))?);
    if let Some(max) = args.max_bytes {
        skill.body = cut_body(&skill.body, max);
    }
    if args.json {
        serde_json::to_writer_pretty(&mut out, &skill).map_err(json_failure)?;
        writeln!(out)?;
        return Ok(0);
    }
    write_show_text(&mut out, &skill)?;
    Ok(0)
}

/// The body cut at `max` bytes with the same marker `read` uses.
fn cut_body(body: &str, max: usize) -> String {
    let Ok(path) = ResourcePath::parse("SKILL.md") else {
        return body.to_owned();
    };
    match text_content(path, body.as_bytes(), None, max) {
        Ok(content) => content.text.trim_end().to_owned(),
        Err(_) => body.to_owned(),
    }
}

/// `skills show` in text form; every field from the skill is escaped.
fn write_show_text(out: &mut impl Write, skill: &Skill) -> io::Result<()> {
    let m = &skill.metadata;
    writeln!(out, "name:        {}", text::line(m.name.as_str()))?;
    writeln!(out, "description: {}", text::line(&m.description))?;
    if let Some(location) = &skill.location {
        writeln!(out, "location:    {}", text::line(location))?;
    }
    if let Some(license) = &m.license {
        writeln!(out, "license:     {}", text::line(license))?;
    }
    if !m.declared_tools.is_empty() {
        writeln!(
            out,
            "tools:       {}",
            text::line(&m.declared_tools.join(", "))
        )?;
    }
    if !skill.resources.is_empty() {
        writeln!(out, "files:")?;
        for e in &skill.resources.entries {
            let size = e.size.map(|s| format!(" ({s} bytes)")).unwrap_or_default();
            writeln!(out, "  {}{size}", text::line(e.path.as_str()))?;
        }
        if let Some(note) = skill.resources.omitted_note() {
            writeln!(out, "  … {note}")?;
        }
    }
    writeln!(out, "---")?;
    writeln!(out, "{}", text::block(&skill.body))
}
