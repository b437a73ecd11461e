//! Where skills come from: `--root` values, PATH arguments (folders, a
//! `SKILL.md`, or URLs downloaded into the cache), `$SKILLS_ROOT`, the
//! standard roots, or `examples/skills`; and the warnings about skills
//! that were skipped while loading.

use std::io::{self, IsTerminal as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skills_core::{Code, Diagnostic, LayeredProvider, SkillProvider};
use skills_fs::remote::{self, RemoteOptions};
use skills_fs::{Discovery, FsOptions, FsProvider, StandardRoots, standard_provider};

use crate::failure::Failure;

pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// Where skills come from: `--root` values, PATH arguments, `$SKILLS_ROOT`, the
/// standard roots, or `examples/skills`.
pub(crate) struct Sources {
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) standard: bool,
    /// Revalidate URL roots instead of reusing the cache as it is.
    pub(crate) refresh: bool,
    /// `--config FILE`.
    pub(crate) config: Option<PathBuf>,
    /// `--locked`: the explicit roots must match the lockfile.
    pub(crate) locked: bool,
    /// The lockfile (`--lockfile`, else `skills.lock.json` here).
    pub(crate) lockfile: PathBuf,
    /// The cache folder for URL roots; `None` for the default one.
    pub(crate) cache_dir: Option<PathBuf>,
}

/// One explicit root, resolved to a local folder.
pub(crate) struct Root {
    /// The root as given (a path or a URL).
    pub(crate) spec: String,
    /// The local folder.
    pub(crate) path: PathBuf,
    /// What a URL root downloaded, with digests.
    pub(crate) artifacts: Vec<remote::Artifact>,
    /// `true` when a skill of the root was refused (digest mismatch, bad
    /// entry): printed on standard error while resolving.
    pub(crate) refused: bool,
}

impl Sources {
    /// The config files' settings (tiers, priorities, budget).
    pub(crate) fn settings(&self) -> Result<crate::config::Settings, Failure> {
        crate::config::Settings::load(self.config.as_deref())
    }

    /// The explicit root specs: `--root` and PATH arguments, else
    /// `$SKILLS_ROOT`, else `examples/skills` (unless standard roots are used).
    pub(crate) fn specs(&self, paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, Failure> {
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
        Ok(specs)
    }

    /// The explicit roots as local folders (see [`Sources::specs`]). URLs are
    /// downloaded (or taken from the cache). With `--locked`, they must match
    /// the lockfile.
    pub(crate) fn resolve(&self, paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, Failure> {
        let roots = self.resolve_roots(self.specs(paths)?)?;
        if self.locked {
            crate::lock::enforce(&self.lockfile, &roots)?;
        }
        Ok(roots.into_iter().map(|r| r.path).collect())
    }

    /// Resolves each spec, keeping what a lockfile needs.
    pub(crate) fn resolve_roots(&self, specs: Vec<PathBuf>) -> Result<Vec<Root>, Failure> {
        let mut out = Vec::with_capacity(specs.len());
        for spec in specs {
            // A path that is not UTF-8 cannot be a URL; `ftp://…` is a URL the
            // library refuses by name.
            match spec
                .to_str()
                .filter(|text| remote::is_url(text) || remote::url_scheme(text).is_some())
            {
                Some(url) => out.push(download(url, self.refresh, self.cache_dir.as_deref())?),
                None => {
                    let path = check_paths(vec![spec.clone()])?.remove(0);
                    out.push(Root {
                        spec: spec.display().to_string(),
                        path,
                        artifacts: Vec::new(),
                        refused: false,
                    });
                }
            }
        }
        Ok(out)
    }

    /// One provider over the explicit roots and, when asked, the standard roots
    /// (explicit roots take precedence).
    pub(crate) fn provider(&self, paths: Vec<PathBuf>) -> Result<Arc<dyn SkillProvider>, Failure> {
        self.provider_with(paths, FsOptions::default())
    }

    /// [`Sources::provider`] with `options`.
    pub(crate) fn provider_with(
        &self,
        paths: Vec<PathBuf>,
        options: FsOptions,
    ) -> Result<Arc<dyn SkillProvider>, Failure> {
        let roots = self.resolve(paths)?;
        tracing::debug!(roots = ?roots, standard = self.standard, "skill roots");
        let explicit: Option<Arc<dyn SkillProvider>> = (!roots.is_empty() || !self.standard)
            .then(|| Arc::new(FsProvider::new(roots, options.clone())) as _);
        let standard: Option<Arc<dyn SkillProvider>> = self
            .standard
            .then(|| Arc::new(standard_provider(options.clone())) as _);
        Ok(match (explicit, standard) {
            (Some(explicit), Some(standard)) => Arc::new(
                LayeredProvider::new()
                    .with_layer("given paths", explicit)
                    .with_layer("standard roots", standard),
            ),
            (Some(only), None) | (None, Some(only)) => only,
            // Not reached (no standard roots means explicit roots), but an empty
            // provider is the honest answer if it were.
            (None, None) => Arc::new(FsProvider::new(Vec::<PathBuf>::new(), options)),
        })
    }
}

/// The folders of the standard roots that exist here.
pub(crate) fn standard_root_paths() -> impl Iterator<Item = PathBuf> {
    StandardRoots::new()
        .discover()
        .roots
        .into_iter()
        .map(|r| r.path)
}

/// Fetches a URL root into the cache (`cache_dir`, else the default one), with
/// a progress line on a terminal; prints the skills a well-known index refused.
fn download(url: &str, refresh: bool, cache_dir: Option<&Path>) -> Result<Root, Failure> {
    let mut options = RemoteOptions::default().with_refresh(refresh);
    if let Some(dir) = cache_dir {
        options = options.with_cache_dir(dir);
    }
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
    let result = remote::resolve_root_detailed(url, &options);
    if drew.load(Ordering::Relaxed) {
        eprintln!();
    }
    let resolved = result.map_err(|e| Failure {
        code: 2,
        message: e.to_string(),
        broken_pipe: false,
    })?;
    if let remote::Source::Stale(copy) = &resolved.source {
        eprintln!(
            "warning: cannot refresh: {}; using the cached copy from {}",
            copy.error,
            copy.fetched_utc()
        );
    }
    for d in &resolved.diagnostics {
        eprintln!("{}", crate::text::line(&d.to_string()));
    }
    Ok(Root {
        spec: url.to_owned(),
        path: resolved.path,
        refused: resolved.diagnostics.iter().any(Diagnostic::is_error),
        artifacts: resolved.artifacts,
    })
}

/// Shows files inside cached URL roots as `url!/path/in/archive` instead of
/// their cache path.
pub(crate) fn relabel_remote(discovery: &mut Discovery) {
    let options = RemoteOptions::default();
    let diagnostics = discovery
        .diagnostics
        .iter_mut()
        .chain(discovery.skills.iter_mut().flat_map(|s| &mut s.diagnostics));
    for d in diagnostics {
        if let Some(file) = &d.file
            && let Some(shown) = remote::remote_location(Path::new(file), &options)
        {
            d.file = Some(shown);
        }
    }
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

/// Prints on stderr one line per reason skills were skipped ("91 skills skipped:
/// empty description; run `skills validate`") and one line for the warnings.
pub(crate) fn warn_skipped(provider: &dyn SkillProvider) {
    let diagnostics = block_on(provider.diagnostics());
    for line in skipped_summary(&diagnostics) {
        eprintln!("warning: {line}");
    }
}

/// The stderr summary of loading diagnostics: a skipped skill is counted once,
/// under its first error.
fn skipped_summary(diagnostics: &[Diagnostic]) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut first_error: BTreeMap<&str, Code> = BTreeMap::new();
    let mut unlocated: Vec<Code> = Vec::new();
    let mut warned: BTreeSet<&str> = BTreeSet::new();
    let mut warnings = 0usize;
    for d in diagnostics {
        match (d.is_error(), d.file.as_deref()) {
            (true, Some(file)) => {
                first_error.entry(file).or_insert(d.code);
            }
            (true, None) => unlocated.push(d.code),
            (false, file) => {
                warnings += 1;
                if let Some(file) = file {
                    warned.insert(file);
                }
            }
        }
    }
    let mut by_reason: BTreeMap<&'static str, usize> = BTreeMap::new();
    for code in first_error.values().chain(&unlocated) {
        *by_reason.entry(skip_reason(*code)).or_default() += 1;
    }
    let mut lines: Vec<String> = by_reason
        .into_iter()
        .map(|(reason, n)| {
            let noun = if n == 1 { "skill" } else { "skills" };
            format!("{n} {noun} skipped: {reason}; run `skills validate`")
        })
        .collect();
    if warnings > 0 {
        let files = warned.len();
        lines.push(format!(
            "{warnings} warning(s) in {files} file(s) while loading skills; run `skills validate` for details"
        ));
    }
    lines
}

/// Why a skill with this error is skipped, in words.
fn skip_reason(code: Code) -> &'static str {
    match code {
        Code::DescriptionEmpty => "empty description",
        Code::DescriptionMissing => "no description",
        Code::NameMissing | Code::NameEmpty => "no name",
        Code::NameNotLowercase
        | Code::NameHyphenEdge
        | Code::NameConsecutiveHyphens
        | Code::NameInvalidChars => "invalid name",
        Code::NameReserved => "reserved name",
        Code::FrontmatterMissing | Code::FrontmatterUnclosed | Code::FrontmatterNotMapping => {
            "no frontmatter"
        }
        Code::YamlInvalid
        | Code::YamlTooDeep
        | Code::YamlAliasBudget
        | Code::FrontmatterTooLarge => "unreadable YAML frontmatter",
        Code::NotUtf8 => "not UTF-8",
        Code::SkillMdMissing | Code::SkillMdNotFile | Code::SkillMdTooLarge => "no usable SKILL.md",
        Code::IoError => "could not be read",
        Code::PathOutsideSkill => "SKILL.md leads outside the skill",
        other => other.as_str(),
    }
}
