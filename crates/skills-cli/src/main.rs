//! `skills`: check Agent Skills and see what a model would see.
//!
//! A thin binary over `skills-core` and `skills-fs`: it parses arguments, calls the
//! libraries and prints. It depends on nothing but those two crates, `clap`,
//! `serde_json` and `pollster`, and must not contain skill rules of its own:
//! anything a library user would also want belongs in a library crate.

use std::io::{self, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;
use skills_core::{
    Budget, BudgetLimit, CatalogFormat, Code, Diagnostic, ErrorKind, LayeredProvider, LineRange,
    RenderOptions, ReservedNames, SkillProvider, ValidationOptions,
};
use skills_fs::remote::{self, RemoteOptions};
use skills_fs::{Discovery, FsOptions, FsProvider, SkillFs, StandardRoots, standard_provider};

const AFTER_HELP: &str = "\
Paths: each PATH is a folder of skills (searched recursively), one skill folder,
or an http(s):// or file:// URL of a .zip/.tar/.tar.gz archive or a bare SKILL.md
(downloaded once into the cache: $SKILLS_CACHE_DIR or the platform cache folder).
With no PATH and no --root, the roots in $SKILLS_ROOT are used; without that,
`examples/skills` when it exists here.

Exit codes:
  0  success (validate: every skill is valid)
  1  validate: invalid skills found; show/read: skill or file not found or refused
  2  usage error or I/O error";

/// Check Agent Skills and see what a model would see.
#[derive(Debug, Parser)]
#[command(name = "skills", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// A skills root (repeatable); combined with the PATH arguments.
    #[arg(long = "root", global = true, value_name = "PATH")]
    roots: Vec<PathBuf>,

    /// Also search the standard roots: `.agents/skills` and `.claude/skills` from
    /// here up to the repository root, then `~/.agents/skills`,
    /// `~/.claude/skills` and `$CODEX_HOME/skills`. Given paths take precedence.
    #[arg(long, global = true)]
    standard_roots: bool,

    /// Revalidate cached URL roots with the server (ETag / Last-Modified)
    /// instead of reusing them as they are.
    #[arg(long, global = true)]
    refresh: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate skills and print every problem found.
    #[command(after_help = AFTER_HELP)]
    Validate {
        /// Judge by the specification exactly (the verdicts of `skills-ref validate`).
        #[arg(long)]
        strict: bool,
        /// Print a JSON report instead of text.
        #[arg(long)]
        json: bool,
        /// Refuse names containing WORD (repeatable), e.g. `--reserved claude`.
        #[arg(long = "reserved", value_name = "WORD")]
        reserved: Vec<String>,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// List the skills that load, one per line.
    #[command(after_help = AFTER_HELP)]
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Print the catalog a model sees in its system prompt.
    #[command(after_help = AFTER_HELP)]
    Catalog {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Xml)]
        format: Format,
        /// Size limit: `N` characters or `Nt` (estimated) tokens.
        #[arg(long, value_parser = parse_budget, value_name = "N|Nt")]
        budget: Option<BudgetLimit>,
        /// Longest description shown per skill, in characters.
        #[arg(long, value_name = "N")]
        description_cap: Option<usize>,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Print one skill: its metadata, files and body.
    #[command(after_help = AFTER_HELP)]
    Show {
        /// The skill's name.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
    /// Print one file of a skill (a line range of it with --lines).
    #[command(after_help = AFTER_HELP)]
    Read {
        /// The skill's name.
        name: String,
        /// The file, relative to the skill folder (e.g. `references/guide.md`).
        file: String,
        /// Lines to print: `A:B`, `A:` or `A` (1-based, inclusive).
        #[arg(long, value_parser = parse_lines, value_name = "A:B")]
        lines: Option<LineRange>,
        /// Skill folders or folders of skills.
        paths: Vec<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Xml,
    Markdown,
    Json,
}

fn parse_budget(text: &str) -> Result<BudgetLimit, String> {
    let bad = || {
        format!("invalid budget `{text}`: use N (characters) or Nt (tokens), e.g. 8000 or 2000t")
    };
    match text.strip_suffix('t') {
        Some(n) => n.parse().map(BudgetLimit::Tokens).map_err(|_| bad()),
        None => text.parse().map(BudgetLimit::Chars).map_err(|_| bad()),
    }
}

fn parse_lines(text: &str) -> Result<LineRange, String> {
    LineRange::parse(text).map_err(|e| e.to_string())
}

/// A failure that ends the command with a message and an exit code.
struct Failure {
    code: u8,
    message: String,
    broken_pipe: bool,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
            broken_pipe: false,
        }
    }
}

impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Self {
        Self {
            code: 2,
            message: format!("cannot write output: {err}"),
            broken_pipe: err.kind() == io::ErrorKind::BrokenPipe,
        }
    }
}

impl From<skills_core::Error> for Failure {
    fn from(err: skills_core::Error) -> Self {
        let code = match err.kind() {
            ErrorKind::Io | ErrorKind::InvalidRange | ErrorKind::Other => 2,
            _ => 1,
        };
        Self {
            code,
            message: err.to_string(),
            broken_pipe: false,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(failure) if failure.broken_pipe => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn run(cli: Cli) -> Result<u8, Failure> {
    let Cli {
        roots,
        standard_roots,
        refresh,
        command,
    } = cli;
    let sources = Sources {
        roots,
        standard: standard_roots,
        refresh,
    };
    let mut out = io::stdout().lock();
    match command {
        Command::Validate {
            strict,
            json,
            reserved,
            paths,
        } => {
            let explicit = sources.resolve(paths)?;
            let mut roots = explicit.clone();
            if sources.standard {
                roots.extend(
                    StandardRoots::new()
                        .discover()
                        .roots
                        .into_iter()
                        .map(|r| r.path),
                );
            }
            let validation = if strict {
                ValidationOptions::strict()
            } else {
                ValidationOptions::lenient()
            }
            .with_reserved(ReservedNames::words(reserved));
            let options = FsOptions::default().with_validation(validation);
            let report = validate(&roots, &explicit, &options);
            if json {
                serde_json::to_writer_pretty(&mut out, &report.to_json())
                    .map_err(|e| Failure::usage(format!("cannot write JSON: {e}")))?;
                writeln!(out)?;
            } else {
                report.write_text(&mut out)?;
            }
            Ok(
                if report.discovery.is_valid() && report.missing.is_empty() {
                    0
                } else {
                    1
                },
            )
        }
        Command::List { json, paths } => {
            let provider = sources.provider(paths)?;
            let catalog = block_on(provider.list())?;
            if json {
                serde_json::to_writer_pretty(&mut out, catalog.entries())
                    .map_err(|e| Failure::usage(format!("cannot write JSON: {e}")))?;
                writeln!(out)?;
            } else {
                let width = catalog.names().map(str::len).max().unwrap_or(0);
                for m in catalog.entries() {
                    let desc: Vec<&str> = m.description.split_whitespace().collect();
                    writeln!(out, "{:width$}  {}", m.name.as_str(), desc.join(" "))?;
                }
            }
            warn_skipped(provider.as_ref());
            Ok(0)
        }
        Command::Catalog {
            format,
            budget,
            description_cap,
            paths,
        } => {
            let provider = sources.provider(paths)?;
            let catalog = block_on(provider.list())?;
            let format = match format {
                Format::Xml => CatalogFormat::Xml,
                Format::Markdown => CatalogFormat::Markdown,
                Format::Json => CatalogFormat::Json,
            };
            let budget = Budget {
                limit: budget,
                description_cap,
            };
            let text = catalog.render(
                &RenderOptions::default()
                    .with_format(format)
                    .with_budget(budget),
            );
            out.write_all(text.as_bytes())?;
            warn_skipped(provider.as_ref());
            Ok(0)
        }
        Command::Show { name, json, paths } => {
            let provider = sources.provider(paths)?;
            let skill = block_on(provider.get(&name))?;
            if json {
                serde_json::to_writer_pretty(&mut out, &skill)
                    .map_err(|e| Failure::usage(format!("cannot write JSON: {e}")))?;
                writeln!(out)?;
                return Ok(0);
            }
            let m = &skill.metadata;
            writeln!(out, "name:        {}", m.name)?;
            writeln!(out, "description: {}", m.description)?;
            if let Some(location) = &skill.location {
                writeln!(out, "location:    {location}")?;
            }
            if let Some(license) = &m.license {
                writeln!(out, "license:     {license}")?;
            }
            if !m.declared_tools.is_empty() {
                writeln!(out, "tools:       {}", m.declared_tools.join(", "))?;
            }
            if !skill.resources.is_empty() {
                writeln!(out, "files:")?;
                for e in &skill.resources.entries {
                    let size = e.size.map(|s| format!(" ({s} bytes)")).unwrap_or_default();
                    writeln!(out, "  {}{size}", e.path)?;
                }
                if skill.resources.truncated {
                    writeln!(out, "  … and more than {} more", skill.resources.omitted)?;
                } else if skill.resources.omitted > 0 {
                    writeln!(out, "  … and {} more", skill.resources.omitted)?;
                }
            }
            writeln!(out, "---")?;
            writeln!(out, "{}", skill.body)?;
            Ok(0)
        }
        Command::Read {
            name,
            file,
            lines,
            paths,
        } => {
            let provider = sources.provider(paths)?;
            let content = block_on(provider.read_resource(&name, &file, lines))?;
            out.write_all(content.text.as_bytes())?;
            Ok(0)
        }
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// Where skills come from: `--root` values, PATH arguments, `$SKILLS_ROOT`, the
/// standard roots, or `examples/skills`.
struct Sources {
    roots: Vec<PathBuf>,
    standard: bool,
    /// Revalidate URL roots instead of reusing the cache as it is.
    refresh: bool,
}

impl Sources {
    /// The explicit roots as local folders: `--root` and PATH arguments, else
    /// `$SKILLS_ROOT`, else `examples/skills` (unless standard roots are used).
    /// URLs are downloaded (or taken from the cache).
    fn resolve(&self, paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, Failure> {
        let mut specs: Vec<PathBuf> = self.roots.iter().cloned().chain(paths).collect();
        if specs.is_empty() {
            specs = remote::roots_from_env()
                .into_iter()
                .map(PathBuf::from)
                .collect();
        }
        if specs.is_empty() && !self.standard {
            let default = PathBuf::from("examples/skills");
            if !default.is_dir() {
                return Err(Failure::usage(
                    "no skills path given, $SKILLS_ROOT is empty and there is no `examples/skills` here; pass a PATH, --root or --standard-roots",
                ));
            }
            specs.push(default);
        }
        let mut local = Vec::with_capacity(specs.len());
        for spec in specs {
            // A path that is not UTF-8 cannot be a URL.
            match spec.to_str().filter(|text| remote::is_url(text)) {
                Some(url) => local.push(download(url, self.refresh)?),
                None => local.push(spec),
            }
        }
        check_paths(local)
    }

    /// One provider over the explicit roots and, when asked, the standard roots
    /// (explicit roots take precedence).
    fn provider(&self, paths: Vec<PathBuf>) -> Result<Arc<dyn SkillProvider>, Failure> {
        let roots = self.resolve(paths)?;
        let explicit: Arc<dyn SkillProvider> =
            Arc::new(FsProvider::new(roots.clone(), FsOptions::default()));
        if !self.standard {
            return Ok(explicit);
        }
        let standard: Arc<dyn SkillProvider> = Arc::new(standard_provider(FsOptions::default()));
        if roots.is_empty() {
            return Ok(standard);
        }
        Ok(Arc::new(
            LayeredProvider::new()
                .with_layer("given paths", explicit)
                .with_layer("standard roots", standard),
        ))
    }
}

/// Fetches a URL root into the cache, with a progress line on a terminal.
fn download(url: &str, refresh: bool) -> Result<PathBuf, Failure> {
    let mut options = RemoteOptions::default().with_refresh(refresh);
    let drew = Arc::new(AtomicBool::new(false));
    if io::stderr().is_terminal() {
        let drew = Arc::clone(&drew);
        let label = url.to_owned();
        let progress: remote::ProgressFn = Arc::new(move |done, total| {
            drew.store(true, Ordering::Relaxed);
            let mib = |n: u64| n as f64 / (1024.0 * 1024.0);
            match total {
                Some(total) if total > 0 => eprint!(
                    "\rdownloading {label}: {:.1} / {:.1} MiB ({:>3}%)",
                    mib(done),
                    mib(total),
                    done.saturating_mul(100) / total
                ),
                _ => eprint!("\rdownloading {label}: {:.1} MiB", mib(done)),
            }
        });
        options = options.with_on_progress(progress);
    }
    let result = remote::resolve_root(url, &options);
    if drew.load(Ordering::Relaxed) {
        eprintln!();
    }
    result.map_err(|e| Failure {
        code: 2,
        message: e.to_string(),
        broken_pipe: false,
    })
}

/// Checks local roots exist; a path to a `SKILL.md` means its folder.
fn check_paths(mut all: Vec<PathBuf>) -> Result<Vec<PathBuf>, Failure> {
    for path in &mut all {
        if !path.exists() {
            return Err(Failure::usage(format!(
                "`{}` does not exist",
                path.display()
            )));
        }
        // Like the reference validator, a path to SKILL.md means its folder.
        let is_skill_md = path
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("skill.md"));
        if path.is_file() && !is_skill_md {
            return Err(Failure::usage(format!(
                "`{}` is a file; give a skill folder, a folder of skills or a SKILL.md",
                path.display()
            )));
        }
        if path.is_file() {
            let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
            *path = if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent
            };
        }
    }
    Ok(all)
}

fn warn_skipped(provider: &dyn SkillProvider) {
    let diagnostics = block_on(provider.diagnostics());
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    if errors + warnings > 0 {
        eprintln!(
            "warning: {errors} error(s) and {warnings} warning(s) while loading skills; run `skills validate` for details"
        );
    }
}

/// The result of `skills validate`.
struct ValidateReport {
    discovery: Discovery,
    /// Root-level errors for paths under which no skill was found.
    missing: Vec<Diagnostic>,
}

/// Validates every skill under `roots`; a path in `explicit` (given by the user)
/// under which no skill is found is an error.
fn validate(roots: &[PathBuf], explicit: &[PathBuf], options: &FsOptions) -> ValidateReport {
    let mut discovery = SkillFs::new(options.clone()).discover(roots);
    // The first skill of a name wins; later ones get a `skill-duplicate` warning.
    discovery.index_by_name();
    let mut missing = Vec::new();
    for root in explicit {
        // `check_paths` made sure every root is an existing folder.
        let found = discovery.skills.iter().any(|s| s.dir.starts_with(root));
        if !found {
            missing.push(Diagnostic::error(
                Code::SkillMdMissing,
                format!(
                    "no skill found in `{}`: a skill folder needs a SKILL.md",
                    root.display()
                ),
            ));
        }
    }
    ValidateReport { discovery, missing }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    valid: bool,
    errors: usize,
    warnings: usize,
    diagnostics: Vec<&'a Diagnostic>,
    skills: Vec<JsonSkill<'a>>,
}

#[derive(Serialize)]
struct JsonSkill<'a> {
    dir: String,
    name: Option<&'a str>,
    valid: bool,
    diagnostics: &'a [Diagnostic],
}

impl ValidateReport {
    fn all_diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.missing
            .iter()
            .chain(&self.discovery.diagnostics)
            .chain(self.discovery.skills.iter().flat_map(|s| &s.diagnostics))
    }

    fn counts(&self) -> (usize, usize) {
        let errors = self.all_diagnostics().filter(|d| d.is_error()).count();
        let warnings = self.all_diagnostics().count() - errors;
        (errors, warnings)
    }

    fn to_json(&self) -> JsonReport<'_> {
        let (errors, warnings) = self.counts();
        JsonReport {
            valid: errors == 0,
            errors,
            warnings,
            diagnostics: self
                .missing
                .iter()
                .chain(&self.discovery.diagnostics)
                .collect(),
            skills: self
                .discovery
                .skills
                .iter()
                .map(|s| JsonSkill {
                    dir: s.dir.display().to_string(),
                    name: s.name(),
                    valid: s.is_valid(),
                    diagnostics: &s.diagnostics,
                })
                .collect(),
        }
    }

    fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        for d in self.missing.iter().chain(&self.discovery.diagnostics) {
            writeln!(out, "{d}")?;
        }
        let mut valid = 0;
        for s in &self.discovery.skills {
            let label = s.name().map_or_else(
                || {
                    s.dir
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                },
                str::to_owned,
            );
            if s.is_valid() {
                valid += 1;
                writeln!(out, "ok       {label}  ({})", s.dir.display())?;
            } else {
                writeln!(out, "INVALID  {label}  ({})", s.dir.display())?;
            }
            for d in &s.diagnostics {
                writeln!(out, "    {d}")?;
            }
        }
        let (errors, warnings) = self.counts();
        let total = self.discovery.skills.len();
        writeln!(
            out,
            "{total} skill(s) checked: {valid} valid, {} invalid; {errors} error(s), {warnings} warning(s)",
            total - valid
        )
    }
}
