//! `skills validate`: check skills and print every problem found, as text
//! or JSON; also the check `skills report` starts from.

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;
use skills_core::{Code, Diagnostic, Mode, ReservedNames, ValidationOptions, is_portable};
use skills_fs::{Discovery, FsOptions, SkillFs};

use crate::failure::{Failure, json_failure};
use crate::sources::{Sources, relabel_remote, standard_root_paths};
use crate::text;

/// The arguments of `skills validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// Judge by the specification exactly (the verdicts of `skills-ref validate`).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Print a JSON report instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Refuse names containing WORD (repeatable), e.g. `--reserved claude`.
    #[arg(long = "reserved", value_name = "WORD")]
    pub(crate) reserved: Vec<String>,
    /// Skill folders or folders of skills.
    pub(crate) paths: Vec<PathBuf>,
}

/// Runs `skills validate`: 0 when every skill is valid, else 1.
pub(crate) fn run(
    args: ValidateArgs,
    sources: &Sources,
    mut out: impl Write,
) -> Result<u8, Failure> {
    let ValidateArgs {
        strict,
        json,
        reserved,
        paths,
    } = args;
    let explicit = sources.resolve(paths)?;
    let mut roots = explicit.clone();
    if sources.standard {
        roots.extend(standard_root_paths());
    }
    let validation = if strict {
        ValidationOptions::strict()
    } else {
        ValidationOptions::lenient()
    }
    .with_reserved(ReservedNames::words(reserved))
    .with_portability_warnings(true);
    let options = FsOptions::default().with_validation(validation);
    let report = check(&roots, &explicit, &options);
    if json {
        serde_json::to_writer_pretty(&mut out, &report.to_json()).map_err(json_failure)?;
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

/// The result of `skills validate`.
pub(crate) struct ValidateReport {
    pub(crate) discovery: Discovery,
    /// Root-level errors for paths under which no skill was found.
    pub(crate) missing: Vec<Diagnostic>,
    /// Whether strict mode ran.
    strict: bool,
}

/// Validates every skill under `roots`; a path in `explicit` (given by the user)
/// under which no skill is found is an error.
pub(crate) fn check(
    roots: &[PathBuf],
    explicit: &[PathBuf],
    options: &FsOptions,
) -> ValidateReport {
    let mut discovery = SkillFs::new(options.clone()).discover(roots);
    // The first skill of a name wins; later ones get a `skill-duplicate` warning.
    discovery.index_by_name();
    // Lint warnings (never errors) for every skill that parsed.
    skills_fs::lint_discovery(&mut discovery);
    // Last, so lint's diagnostics name URL roots too, not their cache paths.
    relabel_remote(&mut discovery);
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
    ValidateReport {
        discovery,
        missing,
        strict: options.validation.mode == Mode::Strict,
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    valid: bool,
    /// `"strict"` or `"lenient"`.
    mode: &'static str,
    errors: usize,
    warnings: usize,
    /// Skills checked, valid, and portable (valid with no portability warning).
    counts: JsonCounts,
    diagnostics: Vec<&'a Diagnostic>,
    skills: Vec<JsonSkill<'a>>,
}

#[derive(Serialize)]
struct JsonCounts {
    skills: usize,
    valid: usize,
    portable: usize,
}

#[derive(Serialize)]
struct JsonSkill<'a> {
    dir: String,
    name: Option<&'a str>,
    valid: bool,
    portable: bool,
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

    fn mode(&self) -> &'static str {
        if self.strict { "strict" } else { "lenient" }
    }

    /// Skills checked, valid, portable.
    fn skill_counts(&self) -> JsonCounts {
        let skills = &self.discovery.skills;
        JsonCounts {
            skills: skills.len(),
            valid: skills.iter().filter(|s| s.is_valid()).count(),
            portable: skills
                .iter()
                .filter(|s| is_portable(&s.diagnostics))
                .count(),
        }
    }

    fn to_json(&self) -> JsonReport<'_> {
        let (errors, warnings) = self.counts();
        JsonReport {
            valid: errors == 0,
            mode: self.mode(),
            errors,
            warnings,
            counts: self.skill_counts(),
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
                    portable: is_portable(&s.diagnostics),
                    diagnostics: &s.diagnostics,
                })
                .collect(),
        }
    }

    fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        for d in self.missing.iter().chain(&self.discovery.diagnostics) {
            write_diagnostic(out, "", d)?;
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
            let label = text::line(&label);
            let dir = s.dir.display().to_string();
            let dir = text::line(&dir);
            if s.is_valid() {
                valid += 1;
                writeln!(out, "ok       {label}  ({dir})")?;
            } else {
                writeln!(out, "INVALID  {label}  ({dir})")?;
            }
            for d in &s.diagnostics {
                write_diagnostic(out, "    ", d)?;
            }
        }
        let (errors, warnings) = self.counts();
        let total = self.discovery.skills.len();
        writeln!(
            out,
            "{total} skill(s) checked: {valid} valid, {} invalid; {errors} error(s), {warnings} warning(s)",
            total - valid
        )?;
        writeln!(out, "{}", self.mode_line())
    }

    /// Which mode ran and how many skills are portable, e.g. `lenient mode: 5
    /// skills, 5 valid, 4 portable (1 uses fields or names other clients reject;
    /// --strict checks the specification)`.
    fn mode_line(&self) -> String {
        let c = self.skill_counts();
        let noun = if c.skills == 1 { "skill" } else { "skills" };
        if self.strict {
            return format!(
                "strict mode: {} {noun}, {} valid by the specification (the verdicts of skills-ref)",
                c.skills, c.valid
            );
        }
        let unportable = c.valid.saturating_sub(c.portable);
        let why = match unportable {
            0 => String::new(),
            1 => "1 uses fields or names other clients reject; ".to_owned(),
            n => format!("{n} use fields or names other clients reject; "),
        };
        format!(
            "lenient mode: {} {noun}, {} valid, {} portable ({why}--strict checks the specification)",
            c.skills, c.valid, c.portable
        )
    }
}

/// Writes one diagnostic as text: its `file:line:col: severity[code]: message`
/// line with control characters escaped (a file name may hold a newline), then
/// its source excerpt, if any, line by line; every line starts with `indent`.
pub(crate) fn write_diagnostic(
    out: &mut impl Write,
    indent: &str,
    d: &Diagnostic,
) -> io::Result<()> {
    let mut header = d.clone();
    let excerpt = header.excerpt.take();
    writeln!(out, "{indent}{}", text::line(&header.to_string()))?;
    if let Some(excerpt) = excerpt {
        for line in excerpt.to_string().lines() {
            writeln!(out, "{indent}{}", text::line(line))?;
        }
    }
    Ok(())
}
