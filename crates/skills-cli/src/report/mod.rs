//! `skills report`: what each skill costs in the prompt and whether the catalog
//! fits the budgets of the agents an author targets.
//!
//! The data is gathered once ([`build`]) into a [`Report`], which serializes as
//! the `--json` output and is written as a text table ([`table`]) or one HTML
//! page ([`html`]). Token counts come from a real BPE tokenizer ([`tokens`]).

mod budget;
mod html;
mod table;
mod tokens;

use std::collections::{HashMap, HashSet};
use std::io::{self, IsTerminal as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use skills_core::ValidationOptions;
use skills_core::{
    Budget, Catalog, Code, Diagnostic, REFERENCES_DIR, RenderOptions, ResourcePath, SkillMetadata,
    TokenCounter, docs_in, escape_xml, is_doc,
};
use skills_fs::remote;
use skills_fs::{DiscoveredSkill, Discovery, FsOptions, SkillFs};

use crate::failure::{Failure, json_failure};
use crate::sources::{Sources, standard_root_paths};
use crate::text;

pub(crate) use html::write_html;
pub(crate) use table::{Style, write_text};
pub(crate) use tokens::{Bpe, Tokenizer};

use tokens::LineMemo;

use budget::{Entry, Fate, Outcome, Unit};

/// The arguments of `skills report`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "html")]
    pub(crate) json: bool,
    /// Write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// The BPE that counts tokens.
    #[arg(long, value_enum, default_value_t = Tokenizer::O200k)]
    pub(crate) tokenizer: Tokenizer,
    /// The context window the budgets are computed for: `200k`, `1m`,
    /// or a number of tokens.
    #[arg(long, value_parser = parse_context, value_name = "TOKENS", default_value = "200k")]
    pub(crate) context: usize,
    /// Skill folders or folders of skills.
    pub(crate) paths: Vec<PathBuf>,
}

/// Runs `skills report`.
pub(crate) fn run(
    args: ReportArgs,
    sources: &Sources,
    mut out: impl io::Write,
) -> Result<u8, Failure> {
    let ReportArgs {
        json,
        html,
        tokenizer,
        context,
        paths,
    } = args;
    // The tables load while discovery runs.
    let loader = std::thread::spawn(move || Bpe::load(tokenizer));
    let defaults =
        paths.is_empty() && sources.roots.is_empty() && remote::roots_from_env().is_empty();
    let (mut roots, explicit) = if defaults {
        (default_roots(), Vec::new())
    } else {
        let explicit = sources.resolve(paths)?;
        (explicit.clone(), explicit)
    };
    if sources.standard && !defaults {
        roots.extend(standard_root_paths());
    }
    let validation = ValidationOptions::lenient().with_portability_warnings(true);
    let options = FsOptions::default().with_validation(validation);
    let checked = crate::validate::check(&roots, &explicit, &options);
    let counter = loader
        .join()
        .map_err(|_| Failure::usage("the tokenizer failed to load"))?;
    let report = build(
        &checked.discovery,
        &checked.missing,
        &roots,
        &options,
        &counter,
        context,
    );
    if let Some(file) = html {
        let mut page = Vec::new();
        write_html(&mut page, &report)?;
        std::fs::write(&file, page)
            .map_err(|e| Failure::usage(format!("cannot write `{}`: {e}", file.display())))?;
        eprintln!("wrote {}", text::line(&file.display().to_string()));
    } else if json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(json_failure)?;
        writeln!(out)?;
    } else {
        let style = Style::detect(io::stdout().is_terminal());
        write_text(&mut out, &report, style)?;
    }
    Ok(0)
}

/// Our own catalog rule: 2% of the context window in tokens
/// ([`Budget::percent_of_window`]), each description capped at this many
/// characters (the specification's longest description).
pub(crate) const OUR_PERCENT: usize = 2;
/// Our description cap, in characters.
pub(crate) const OUR_DESCRIPTION_CAP: usize = 1_024;

/// Everything `skills report` says.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// The tokenizer that counted, and what its counts mean.
    pub(crate) tokenizer: TokenizerInfo,
    /// The context window the budgets are computed for, in tokens.
    pub(crate) context_window: usize,
    /// The roots searched, in order.
    pub(crate) roots: Vec<String>,
    pub(crate) totals: Totals,
    /// One row per skill folder found, valid or not, in discovery order.
    pub(crate) skills: Vec<SkillRow>,
    /// One row per agent rule.
    pub(crate) budgets: Vec<BudgetRow>,
    /// Problems not tied to one skill (unreadable roots, paths without skills).
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// The tokenizer used.
#[derive(Debug, Serialize)]
pub(crate) struct TokenizerInfo {
    /// `o200k_base` or `cl100k_base`.
    pub(crate) name: &'static str,
    /// Where the counts come from.
    pub(crate) library: &'static str,
    /// What the counts mean for other models.
    pub(crate) note: &'static str,
}

/// One skill folder.
#[derive(Debug, Serialize)]
pub(crate) struct SkillRow {
    /// The skill's name, or its folder's name when it did not parse.
    pub(crate) name: String,
    /// The skill folder.
    pub(crate) dir: String,
    /// `ok`, `invalid` (errors: not loaded), `duplicate` (another skill of the
    /// name was found first) or `hidden` (loads only by name:
    /// `disable-model-invocation`).
    pub(crate) status: &'static str,
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    /// Tokens of the skill's catalog entry (absent when not listed).
    pub(crate) catalog_tokens: Option<usize>,
    /// Tokens of the `SKILL.md` body (absent when it did not parse).
    pub(crate) body_tokens: Option<usize>,
    /// Tokens of the skill's documents (`.md`/`.txt` beside `SKILL.md` and
    /// under `references/`).
    pub(crate) docs_tokens: Option<usize>,
    /// How many documents.
    pub(crate) docs: usize,
    /// Every diagnostic and lint warning of the skill.
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// Sums over the skills that load.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Totals {
    /// Skill folders found.
    pub(crate) skills: usize,
    /// Skills that load (valid, first of their name).
    pub(crate) loaded: usize,
    /// Skill folders with errors.
    pub(crate) invalid: usize,
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    /// The whole rendered catalog, its instructions included.
    pub(crate) catalog_tokens: usize,
    /// Every body: what injecting all skills in full costs.
    pub(crate) body_tokens: usize,
    /// Every document.
    pub(crate) docs_tokens: usize,
    /// Bodies and documents.
    pub(crate) full_tokens: usize,
    /// How much smaller the catalog is than every body, in percent.
    pub(crate) saving_vs_bodies_percent: f64,
    /// How much smaller the catalog is than every body and document, in percent.
    pub(crate) saving_vs_full_percent: f64,
}

/// One agent's catalog rule applied to the skills.
#[derive(Debug, Serialize)]
pub(crate) struct BudgetRow {
    /// Who applies the rule.
    pub(crate) agent: &'static str,
    /// The rule in words.
    pub(crate) rule: String,
    /// Where the rule is documented.
    pub(crate) source: &'static str,
    /// What of the rule could not be confirmed from a public source, if anything.
    pub(crate) assumption: Option<&'static str>,
    pub(crate) unit: Unit,
    pub(crate) limit: usize,
    pub(crate) used: usize,
    /// The listing with every description whole.
    pub(crate) wanted: usize,
    pub(crate) whole: usize,
    pub(crate) shortened: usize,
    pub(crate) name_only: usize,
    pub(crate) dropped: usize,
    /// The fate of every listed skill, by name.
    pub(crate) skills: Vec<SkillFate>,
}

/// What a rule did to one skill.
#[derive(Debug, Serialize)]
pub(crate) struct SkillFate {
    pub(crate) name: String,
    pub(crate) fate: Fate,
}

/// Runs every check of `skills validate` on `roots` (lint included), then
/// counts, renders and applies the budget rules.
pub(crate) fn build(
    discovery: &Discovery,
    missing: &[Diagnostic],
    roots: &[PathBuf],
    options: &FsOptions,
    counter: &Bpe,
    context_window: usize,
) -> Report {
    let fs = SkillFs::new(options.clone());
    let counts = count_all(&discovery.skills, &fs, counter);
    let loaded: Vec<&SkillMetadata> = discovery
        .skills
        .iter()
        .filter(|s| !is_duplicate(s))
        .filter_map(|s| s.document.as_ref().map(|d| &d.metadata))
        .collect();
    let catalog = Catalog::new(loaded.iter().map(|m| (*m).clone()));
    let rendered = catalog.render(&RenderOptions::default());
    let catalog_tokens = counter.count(&rendered);
    let per_entry = entry_tokens(&rendered, counter);

    let mut totals = Totals {
        skills: discovery.skills.len(),
        catalog_tokens,
        ..Totals::default()
    };
    let mut skills = Vec::with_capacity(discovery.skills.len());
    for (s, (body, docs, doc_count)) in discovery.skills.iter().zip(counts) {
        let errors = s.diagnostics.iter().filter(|d| d.is_error()).count();
        let warnings = s.diagnostics.len() - errors;
        totals.errors += errors;
        totals.warnings += warnings;
        let duplicate = is_duplicate(s);
        let meta = s.document.as_ref().map(|d| &d.metadata);
        let status = match meta {
            None => "invalid",
            Some(_) if duplicate => "duplicate",
            Some(m) if m.extensions.disable_model_invocation => "hidden",
            Some(_) => "ok",
        };
        if errors > 0 || meta.is_none() {
            totals.invalid += 1;
        }
        let catalog_tokens = meta
            .filter(|_| !duplicate)
            .and_then(|m| per_entry.get(&escaped(m.name.as_str())).map(|(_, n)| *n));
        if meta.is_some() && !duplicate {
            totals.loaded += 1;
            totals.body_tokens += body.unwrap_or(0);
            totals.docs_tokens += docs.unwrap_or(0);
        }
        let name = match meta {
            Some(m) => m.name.as_str().to_owned(),
            None => s
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        skills.push(SkillRow {
            name,
            dir: s.dir.display().to_string(),
            status,
            errors,
            warnings,
            catalog_tokens,
            body_tokens: body,
            docs_tokens: docs,
            docs: doc_count,
            diagnostics: s.diagnostics.clone(),
        });
    }
    totals.full_tokens = totals.body_tokens + totals.docs_tokens;
    totals.saving_vs_bodies_percent = saving(catalog_tokens, totals.body_tokens);
    totals.saving_vs_full_percent = saving(catalog_tokens, totals.full_tokens);
    let mut diagnostics = missing.to_vec();
    diagnostics.extend(discovery.diagnostics.iter().cloned());
    Report {
        tokenizer: counter.info(),
        context_window,
        roots: roots.iter().map(|r| r.display().to_string()).collect(),
        totals,
        skills,
        budgets: budgets(
            discovery,
            &catalog,
            memo(counter, &rendered, catalog_tokens, per_entry),
            context_window,
        ),
        diagnostics,
    }
}

/// `true` when discovery found another skill of this name first.
fn is_duplicate(skill: &DiscoveredSkill) -> bool {
    skill
        .diagnostics
        .iter()
        .any(|d| d.code == Code::SkillDuplicate)
}

/// `1 - part / whole` in percent, to one decimal; 0 when `whole` is 0.
fn saving(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    let percent = 100.0 * (1.0 - part as f64 / whole as f64);
    (percent * 10.0).round() / 10.0
}

/// `name` as it appears in an XML catalog entry.
fn escaped(name: &str) -> String {
    let mut out = String::new();
    escape_xml(&mut out, name);
    out
}

/// The entry lines of an XML catalog with their tokens (counted on every
/// core), keyed by the escaped name.
fn entry_tokens(rendered: &str, counter: &Bpe) -> HashMap<String, (String, usize)> {
    const START: &str = "<skill name=\"";
    let lines: Vec<(&str, &str)> = rendered
        .split_inclusive('\n')
        .filter_map(|line| {
            let rest = line.strip_prefix(START)?;
            let (name, _) = rest.split_once("\">")?;
            Some((name, line))
        })
        .collect();
    let counts = par_map(&lines, |(_, line)| counter.count(line));
    lines
        .into_iter()
        .zip(counts)
        .map(|((name, line), n)| (name.to_owned(), (line.to_owned(), n)))
        .collect()
}

/// Counts with the BPE, answering texts already counted from memory (the
/// budgeted render counts each entry line again).
#[derive(Debug)]
struct Memo {
    bpe: Bpe,
    known: HashMap<String, usize>,
}

impl TokenCounter for Memo {
    fn count(&self, text: &str) -> usize {
        match self.known.get(text) {
            Some(n) => *n,
            None => self.bpe.count(text),
        }
    }
}

/// `f` over `items` on one thread per core (in order).
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    par_map_with(items, || (), |(), item| f(item))
}

/// `f` over `items` on one thread per core (in order), each thread with its
/// own state from `init`.
fn par_map_with<T: Sync, R: Send, S>(
    items: &[T],
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if threads < 2 || items.len() < 32 {
        let mut state = init();
        return items.iter().map(|item| f(&mut state, item)).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let (f, init) = (&f, &init);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut state = init();
                    part.iter()
                        .map(|item| f(&mut state, item))
                        .collect::<Vec<R>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Body tokens, document tokens and document count of every skill, on one
/// thread per core, with a progress line on a terminal when it takes a while.
fn count_all(
    skills: &[DiscoveredSkill],
    fs: &SkillFs,
    counter: &Bpe,
) -> Vec<(Option<usize>, Option<usize>, usize)> {
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    let progress = io::stderr().is_terminal();
    let drew = std::sync::atomic::AtomicBool::new(false);
    let count_one = |memo: &mut LineMemo, s: &DiscoveredSkill| {
        let out = count_skill(s, fs, counter, memo);
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if progress && n.is_multiple_of(64) && started.elapsed() > Duration::from_millis(300) {
            drew.store(true, Ordering::Relaxed);
            eprint!("\rcounting tokens: {n}/{} skills", skills.len());
        }
        out
    };
    let out = par_map_with(skills, LineMemo::new, count_one);
    if drew.load(Ordering::Relaxed) {
        eprintln!("\rcounting tokens: {} skills, done", skills.len());
    }
    out
}

fn count_skill(
    skill: &DiscoveredSkill,
    fs: &SkillFs,
    counter: &Bpe,
    memo: &mut LineMemo,
) -> (Option<usize>, Option<usize>, usize) {
    let Some(document) = &skill.document else {
        return (None, None, 0);
    };
    let body = counter.count_lines(&document.body, memo);
    if !may_have_docs(&skill.dir) {
        return (Some(body), Some(0), 0);
    }
    let docs = docs_in(&fs.list_resources(&skill.dir));
    let mut tokens = 0;
    for doc in &docs {
        // Read beneath the skill folder like any resource (a symlink leading
        // out is refused), up to the resource size cap.
        if let Ok(read) = fs.read_resource_bytes(&skill.dir, doc.as_str()) {
            tokens += counter.count_lines(&String::from_utf8_lossy(&read.bytes), memo);
        }
    }
    (Some(body), Some(tokens), docs.len())
}

/// A [`Memo`] that knows the unbudgeted catalog and its entry lines.
fn memo(
    counter: &Bpe,
    rendered: &str,
    tokens: usize,
    per_entry: HashMap<String, (String, usize)>,
) -> Memo {
    let mut known: HashMap<String, usize> = per_entry.into_values().collect();
    known.insert(rendered.to_owned(), tokens);
    Memo {
        bpe: counter.clone(),
        known,
    }
}

/// `false` when the skill folder holds no `references/` and no document beside
/// `SKILL.md`: one listing of the folder instead of the full resource walk.
/// When in doubt (the folder cannot be listed), `true`.
fn may_have_docs(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return true;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return false;
        };
        name == REFERENCES_DIR || ResourcePath::parse(name).is_ok_and(|p| is_doc(&p))
    })
}

/// The budget rows: Claude Code, Codex and ours.
fn budgets(
    discovery: &Discovery,
    catalog: &Catalog,
    counter: Memo,
    window: usize,
) -> Vec<BudgetRow> {
    let visible: Vec<&SkillMetadata> = catalog
        .entries()
        .iter()
        .filter(|m| !m.extensions.disable_model_invocation)
        .collect();
    let folder = |name: &str| {
        discovery
            .skills
            .iter()
            .find(|s| s.name() == Some(name) && !is_duplicate(s))
            .and_then(|s| s.dir.file_name())
            .map_or_else(|| name.to_owned(), |n| n.to_string_lossy().into_owned())
    };
    let entries: Vec<Entry> = visible
        .iter()
        .map(|m| Entry {
            name: m.name.as_str().to_owned(),
            description: m
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            path: format!("r0/{}/SKILL.md", folder(m.name.as_str())),
        })
        .collect();
    // Claude Code caps the description and `when_to_use` together.
    let with_when: Vec<Entry> = entries
        .iter()
        .zip(&visible)
        .map(|(e, m)| {
            let mut e = e.clone();
            if let Some(when) = &m.extensions.when_to_use {
                let when = when.split_whitespace().collect::<Vec<_>>().join(" ");
                if !when.is_empty() {
                    e.description = format!("{} {when}", e.description);
                }
            }
            e
        })
        .collect();
    let row = |agent, rule: String, source, assumption, outcome: Outcome| BudgetRow {
        agent,
        rule,
        source,
        assumption,
        unit: outcome.unit,
        limit: outcome.limit,
        used: outcome.used,
        wanted: outcome.wanted,
        whole: outcome.count(Fate::Whole),
        shortened: outcome.count(Fate::Shortened),
        name_only: outcome.count(Fate::NameOnly),
        dropped: outcome.count(Fate::Dropped),
        skills: entries
            .iter()
            .zip(&outcome.fates)
            .map(|(e, f)| SkillFate {
                name: e.name.clone(),
                fate: *f,
            })
            .collect(),
    };
    vec![
        row(
            "Claude Code",
            format!(
                "{}% of the context window in characters (4 per token), description and `when_to_use` capped at {} characters; over budget, descriptions are removed (names stay)",
                budget::CLAUDE_CODE_PERCENT,
                budget::CLAUDE_CODE_DESCRIPTION_CAP
            ),
            "https://code.claude.com/docs/en/skills",
            Some(
                "the 4 characters per token and the order descriptions are removed in (Claude Code ranks by use; the report removes from the end of the list) are not documented",
            ),
            budget::claude_code(&with_when, window),
        ),
        row(
            "Codex",
            format!(
                "{}% of the context window in tokens (4 bytes each) over `- name: description (file: path)` lines; over budget, descriptions are shortened evenly, then removed, then skills dropped",
                budget::CODEX_PERCENT
            ),
            "https://github.com/openai/codex/blob/main/codex-rs/core-skills/src/render.rs",
            Some(
                "skill paths are shown as `r0/<folder>/SKILL.md`; Codex lists absolute or aliased paths, whose length changes the cost",
            ),
            budget::codex(&entries, window),
        ),
        row(
            "skills (ours)",
            format!(
                "{OUR_PERCENT}% of the context window in tokens (this report's tokenizer), descriptions capped at {OUR_DESCRIPTION_CAP} characters; over budget, skills are left out and named in a note"
            ),
            "https://github.com/skills-rs/skills/blob/main/docs/catalog.md",
            None,
            ours(catalog, &entries, counter, window),
        ),
    ]
}

/// Our renderer under `Budget::percent_of_window(window, 2)` with the
/// description cap; what it kept is read back from the rendered text.
fn ours(catalog: &Catalog, entries: &[Entry], counter: Memo, window: usize) -> Outcome {
    let budget =
        Budget::percent_of_window(window, OUR_PERCENT).with_description_cap(OUR_DESCRIPTION_CAP);
    let counter = Arc::new(counter);
    let options = RenderOptions::default()
        .with_budget(budget)
        .with_token_counter(counter.clone());
    let rendered = catalog.render(&options);
    let kept: HashSet<&str> = rendered
        .lines()
        .filter_map(|line| line.strip_prefix("<skill name=\"")?.split_once("\">"))
        .map(|(name, _)| name)
        .collect();
    let full = catalog.render(&RenderOptions::default());
    let fates = entries
        .iter()
        .map(|e| {
            if !kept.contains(escaped(&e.name).as_str()) {
                Fate::Dropped
            } else if e.description.chars().count() > OUR_DESCRIPTION_CAP {
                Fate::Shortened
            } else {
                Fate::Whole
            }
        })
        .collect();
    Outcome {
        limit: window.saturating_mul(OUR_PERCENT) / 100,
        used: counter.count(&rendered),
        wanted: counter.count(&full),
        unit: Unit::Tokens,
        fates,
    }
}

/// Parses a context window size: `200k`, `1m`, `128000` (k = 1 000,
/// m = 1 000 000).
pub(crate) fn parse_context(text: &str) -> Result<usize, String> {
    let bad = || {
        format!("invalid context window `{text}`: use a number of tokens, e.g. 200k, 1m or 128000")
    };
    let lower = text.trim().to_ascii_lowercase();
    let (digits, scale) = match lower.as_bytes().last() {
        Some(b'k') => (&lower[..lower.len() - 1], 1_000),
        Some(b'm') => (&lower[..lower.len() - 1], 1_000_000),
        _ => (&lower[..], 1),
    };
    let n: usize = digits.replace('_', "").parse().map_err(|_| bad())?;
    let n = n.checked_mul(scale).ok_or_else(bad)?;
    if n == 0 {
        return Err(bad());
    }
    Ok(n)
}

/// The roots `skills report` searches with no argument: the standard roots that
/// exist, then `examples/skills` when it is here.
pub(crate) fn default_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = skills_fs::StandardRoots::new()
        .discover()
        .roots
        .into_iter()
        .map(|r| r.path)
        .collect();
    let examples = Path::new("examples/skills");
    if examples.is_dir() {
        roots.push(examples.to_path_buf());
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_sizes_parse() {
        assert_eq!(parse_context("200k"), Ok(200_000));
        assert_eq!(parse_context("1m"), Ok(1_000_000));
        assert_eq!(parse_context("1M"), Ok(1_000_000));
        assert_eq!(parse_context("128000"), Ok(128_000));
        assert!(parse_context("0").is_err());
        assert!(parse_context("k").is_err());
        assert!(parse_context("2g").is_err());
        assert!(parse_context("99999999999999999999m").is_err());
    }

    #[test]
    fn saving_is_rounded_to_one_decimal() {
        assert_eq!(saving(1, 3), 66.7);
        assert_eq!(saving(5, 0), 0.0);
        assert_eq!(saving(0, 10), 100.0);
    }
}
