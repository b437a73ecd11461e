//! Differential test: `skills validate --strict --json DIR` against the
//! reference validator `skills-ref==0.1.1` (`python -m skills_ref.cli
//! validate DIR`) on a fixed, generated set of skill folders.
//!
//! Both tools must agree on the verdict (valid/invalid) and on the set of
//! violated rules. Cases under a documented divergence are excluded; see
//! `docs/parity.md`. Environment:
//!
//! - `SKILLS_REF_PYTHON`: the Python that has `skills-ref` installed
//!   (default: `<workspace>/target/skills-ref-venv/bin/python`). Without
//!   it the two tests that need it fail, saying how to install it
//!   (`bash .ci/install-skills-ref`; `bash .ci/test` does it for you);
//! - `PARITY_KEEP`: keep the generated folders and print where they are;
//! - `PARITY_FILTER`: only run cases whose id contains this text;
//! - `PARITY_SHOW_EXCLUDED`: print both verdicts for every excluded case.

mod cases;
mod divergence;
mod rules;

use std::{
    collections::BTreeMap,
    env, fmt, fs,
    num::NonZeroUsize,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::atomic::{AtomicUsize, Ordering},
    thread,
    time::{Duration, Instant},
};

use cases::{Case, Entry};
use divergence::Divergence;
use rules::Verdict;

/// The reference version the contract is written against.
const SKILLS_REF_VERSION: &str = "0.1.1";
/// Longest a single tool run may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// Disagreeing cases printed in full.
const MAX_REPORTED: usize = 20;
/// Escaped file contents are cut after this many characters in reports.
const MAX_SHOWN_CHARS: usize = 1500;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn env_set(name: &str) -> bool {
    env::var_os(name).is_some_and(|value| !value.is_empty())
}

/// The Python with skills-ref installed, if any.
fn locate_python() -> Option<PathBuf> {
    if let Some(python) = env::var_os("SKILLS_REF_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(python));
    }
    let venv = workspace_root().join("target/skills-ref-venv/bin/python");
    venv.exists().then_some(venv)
}

/// The reference Python. Panics, with the command that installs it, when
/// it is missing: a differential test that cannot run its check fails.
fn reference_python() -> PathBuf {
    if let Some(python) = locate_python() {
        assert!(
            python.exists(),
            "SKILLS_REF_PYTHON={} does not exist; run `bash .ci/install-skills-ref` \
             (creates target/skills-ref-venv) or point SKILLS_REF_PYTHON at a Python with \
             skills-ref=={SKILLS_REF_VERSION}",
            python.display()
        );
        return python;
    }
    panic!(
        "the reference validator skills-ref is not installed, so the differential test \
         cannot run. Run `bash .ci/test` (installs it, then runs the whole suite) or \
         `bash .ci/install-skills-ref` once (creates target/skills-ref-venv), or point \
         SKILLS_REF_PYTHON at a Python with skills-ref=={SKILLS_REF_VERSION}"
    );
}

/// Runs a short Python snippet and returns its trimmed stdout.
fn python_eval(python: &Path, code: &str) -> String {
    let output = Command::new(python)
        .args(["-c", code])
        .env("PYTHONIOENCODING", "utf-8")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    assert!(
        output.status.success(),
        "{} -c {code:?} failed: {}",
        python.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn check_reference_version(python: &Path) {
    let version = python_eval(
        python,
        "import importlib.metadata as m; print(m.version('skills-ref'))",
    );
    assert_eq!(
        version,
        SKILLS_REF_VERSION,
        "{} has skills-ref {version}; the parity contract is skills-ref=={SKILLS_REF_VERSION}",
        python.display()
    );
}

/// Exit status and captured output of one tool run.
#[derive(Debug)]
struct RunOutput {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs `command` with stdout/stderr captured into `<out_base>.stdout` and
/// `<out_base>.stderr` (kept for reproduction), killing it after
/// [`RUN_TIMEOUT`].
fn run(mut command: Command, out_base: &Path) -> Result<RunOutput, String> {
    let stdout_path = out_base.with_extension("stdout");
    let stderr_path = out_base.with_extension("stderr");
    let open = |path: &Path| {
        fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
    };
    let mut child = command
        .stdin(Stdio::null())
        .stdout(open(&stdout_path)?)
        .stderr(open(&stderr_path)?)
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > RUN_TIMEOUT => {
                // Best effort: the process may have exited in the meantime.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {RUN_TIMEOUT:?}: {command:?}"));
            }
            Ok(None) => thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("waiting for {command:?}: {e}")),
        }
    };
    let read = |path: &Path| fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()));
    Ok(RunOutput {
        code: status.code(),
        stdout: read(&stdout_path)?,
        stderr: read(&stderr_path)?,
    })
}

/// skills-ref's verdict on `skill_dir`.
fn reference_verdict(python: &Path, skill_dir: &Path, case_root: &Path) -> Result<Verdict, String> {
    let mut command = Command::new(python);
    command
        .args(["-m", "skills_ref.cli", "validate"])
        .arg(skill_dir)
        .current_dir(case_root)
        .env("PYTHONIOENCODING", "utf-8")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let output = run(command, &case_root.join("reference"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.code {
        Some(0) => Ok(Verdict {
            valid: true,
            rules: rules::Rules::new(),
        }),
        Some(1) => Ok(Verdict {
            valid: false,
            rules: rules::reference_rules(&stderr),
        }),
        code => Err(format!("skills-ref exited with {code:?}: {stderr}")),
    }
}

/// Our CLI's verdict on `skill_dir`, checking the exit code against the JSON.
fn our_verdict(skill_dir: &Path, case_root: &Path) -> Result<Verdict, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skills"));
    command
        .args(["validate", "--strict", "--json"])
        .arg(skill_dir)
        .current_dir(case_root);
    let output = run(command, &case_root.join("ours"))?;
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|e| {
        format!(
            "stdout is not JSON ({e}); exit {:?}; stdout {:?}; stderr {:?}",
            output.code,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    let verdict =
        rules::our_verdict(&json).map_err(|e| format!("JSON breaks the contract: {e}"))?;
    let consistent = match output.code {
        Some(0) => verdict.valid,
        Some(1 | 2) => !verdict.valid,
        _ => false,
    };
    if consistent {
        Ok(verdict)
    } else {
        Err(format!(
            "exit {:?} contradicts \"valid\": {} ({})",
            output.code,
            verdict.valid,
            verdict.render()
        ))
    }
}

/// A written case, ready to run.
#[derive(Debug)]
struct Planned<'a> {
    case: &'a Case,
    case_root: PathBuf,
    skill_dir: PathBuf,
    divergence: Option<Divergence>,
}

/// Both sides' result for one case.
#[derive(Debug)]
struct Comparison {
    reference: Result<Verdict, String>,
    ours: Result<Verdict, String>,
}

impl Comparison {
    fn agrees(&self) -> bool {
        matches!((&self.reference, &self.ours), (Ok(r), Ok(o)) if r == o)
    }
}

fn render(result: &Result<Verdict, String>) -> String {
    match result {
        Ok(verdict) => verdict.render(),
        Err(error) => format!("ERROR: {error}"),
    }
}

/// Escaped rendering of file bytes, cut to [`MAX_SHOWN_CHARS`].
struct Escaped<'a>(&'a [u8]);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let escaped = match std::str::from_utf8(self.0) {
            Ok(text) => format!("\"{}\"", text.escape_debug()),
            Err(_) => format!("b\"{}\"", self.0.escape_ascii()),
        };
        if escaped.chars().count() <= MAX_SHOWN_CHARS {
            f.write_str(&escaped)
        } else {
            let head: String = escaped.chars().take(MAX_SHOWN_CHARS).collect();
            write!(f, "{head}… (cut; {} bytes in all)", self.0.len())
        }
    }
}

/// Prints one disagreeing case in full, with commands to reproduce it.
fn report(python: &Path, case: &Case, skill_dir: &Path, comparison: &Comparison) {
    eprintln!("--- case {}", case.id);
    eprintln!("    dir:        {:?}", skill_dir);
    for (name, entry) in &case.entries {
        match entry {
            Entry::File(bytes) => {
                eprintln!("    {name} ({} bytes): {}", bytes.len(), Escaped(bytes))
            }
            Entry::Dir => eprintln!("    {name}: <directory>"),
        }
    }
    if case.entries.is_empty() {
        eprintln!("    <no files>");
    }
    eprintln!("    skills-ref: {}", render(&comparison.reference));
    eprintln!("    ours:       {}", render(&comparison.ours));
    eprintln!(
        "    reproduce:  {} -m skills_ref.cli validate {:?}",
        python.display(),
        skill_dir
    );
    eprintln!(
        "                {} validate --strict --json {:?}",
        env!("CARGO_BIN_EXE_skills"),
        skill_dir
    );
}

/// Runs `work` over `0..count` on a few threads; results in index order.
fn parallel_map<T: Send>(count: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = thread::available_parallelism()
        .map_or(2, NonZeroUsize::get)
        .saturating_mul(2)
        .clamp(2, 16)
        .min(count.max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, T)> = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= count {
                            break done;
                        }
                        done.push((index, work(index)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("parity worker thread panicked"))
            .collect()
    });
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

#[test]
fn validate_agrees_with_skills_ref() {
    let python = reference_python();
    check_reference_version(&python);

    let all = cases::generate();
    let filter = env::var("PARITY_FILTER").unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix("skills-parity-")
        .tempdir()
        .expect("create a temporary directory for the cases");
    let keep = env_set("PARITY_KEEP");
    let show_excluded = env_set("PARITY_SHOW_EXCLUDED");
    tmp.disable_cleanup(keep);

    // Excluded cases are run too, to report how many of them actually differ.
    let planned: Vec<Planned<'_>> = all
        .iter()
        .filter(|case| case.id.contains(&filter))
        .map(|case| {
            let (case_root, skill_dir) = case
                .write(tmp.path())
                .unwrap_or_else(|e| panic!("writing case {}: {e}", case.id));
            Planned {
                case,
                case_root,
                skill_dir,
                divergence: divergence::classify(case),
            }
        })
        .collect();
    let results = parallel_map(planned.len(), |i| {
        let Planned {
            case_root,
            skill_dir,
            ..
        } = &planned[i];
        Comparison {
            reference: reference_verdict(&python, skill_dir, case_root),
            ours: our_verdict(skill_dir, case_root),
        }
    });

    // Per divergence: (excluded, of which the tools disagree).
    let mut excluded: BTreeMap<Divergence, (usize, usize)> = BTreeMap::new();
    let mut compared = 0;
    let mut disagreeing: Vec<usize> = Vec::new();
    let mut coverage: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (plan, result)) in planned.iter().zip(&results).enumerate() {
        if let Some(divergence) = plan.divergence {
            let entry = excluded.entry(divergence).or_default();
            entry.0 += 1;
            entry.1 += usize::from(!result.agrees());
            if show_excluded {
                eprintln!(
                    "excluded {} [{divergence}]\n    skills-ref: {}\n    ours:       {}",
                    plan.case.id,
                    render(&result.reference),
                    render(&result.ours)
                );
            }
            continue;
        }
        compared += 1;
        if !result.agrees() {
            disagreeing.push(i);
        }
        if let Ok(verdict) = &result.reference {
            if verdict.valid {
                *coverage.entry("(valid)").or_default() += 1;
            }
            for rule in &verdict.rules {
                *coverage.entry(rule.as_str()).or_default() += 1;
            }
        }
    }

    for &i in disagreeing.iter().take(MAX_REPORTED) {
        report(&python, planned[i].case, &planned[i].skill_dir, &results[i]);
    }
    if disagreeing.len() > MAX_REPORTED {
        let rest: Vec<&str> = disagreeing[MAX_REPORTED..]
            .iter()
            .map(|&i| planned[i].case.id.as_str())
            .collect();
        eprintln!("--- {} more disagreeing: {}", rest.len(), rest.join(" "));
    }

    let total_excluded: usize = excluded.values().map(|(count, _)| count).sum();
    eprintln!("\nparity with skills-ref {SKILLS_REF_VERSION}:");
    eprintln!("  generated: {}", all.len());
    if !filter.is_empty() {
        let skipped = all.len() - planned.len();
        eprintln!("  skipped by PARITY_FILTER={filter:?}: {skipped}");
    }
    eprintln!("  excluded:  {total_excluded}  (set PARITY_SHOW_EXCLUDED=1 to list them)");
    for (divergence, (count, differing)) in &excluded {
        eprintln!("    {count:4}  {divergence}  ({differing} of them differ)");
    }
    eprintln!("  compared:  {compared}");
    eprintln!("  agreeing:  {}", compared - disagreeing.len());
    let coverage: Vec<String> = coverage
        .iter()
        .map(|(rule, n)| format!("{rule}={n}"))
        .collect();
    eprintln!(
        "  skills-ref verdicts among compared cases: {}",
        coverage.join(" ")
    );
    if keep {
        eprintln!("  cases kept in {}", tmp.path().display());
    } else {
        eprintln!("  (set PARITY_KEEP=1 to keep the generated cases)");
    }

    assert!(
        disagreeing.is_empty(),
        "{} of {compared} compared cases disagree with skills-ref {SKILLS_REF_VERSION} \
         (details above)",
        disagreeing.len(),
    );
}

#[test]
fn generated_cases_are_fixed_and_well_formed() {
    let first = cases::generate();
    assert_eq!(first, cases::generate(), "generation must be deterministic");
    assert!(
        (400..=800).contains(&first.len()),
        "{} cases generated; keep the set between 400 and 800",
        first.len()
    );
    let mut ids: Vec<&str> = first.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), first.len(), "case ids must be unique");
    for case in &first {
        assert!(
            case.id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-'),
            "{}",
            case.id
        );
        assert!(
            !case.dir_name.is_empty() && !case.dir_name.contains('/') && case.dir_name.len() <= 255,
            "{}: {:?}",
            case.id,
            case.dir_name
        );
    }
    let excluded = first
        .iter()
        .filter(|c| divergence::classify(c).is_some())
        .count();
    assert!(
        excluded * 10 < first.len(),
        "{excluded} of {} cases excluded; the divergences should stay narrow",
        first.len()
    );
}

/// Positions in `source` where a message is built from a string literal.
fn message_sites(source: &str) -> usize {
    [
        "errors.append(",
        "raise ParseError(",
        "raise ValidationError(",
        "return [",
    ]
    .iter()
    .map(|call| {
        source
            .match_indices(call)
            .filter(|(at, _)| {
                let after = source[at + call.len()..].trim_start();
                after.starts_with('"') || after.starts_with("f\"")
            })
            .count()
    })
    .sum()
}

#[test]
fn message_templates_match_installed_skills_ref() {
    let python = reference_python();
    check_reference_version(&python);
    let package = PathBuf::from(python_eval(
        &python,
        "import os, skills_ref; print(os.path.dirname(skills_ref.__file__))",
    ));
    for file in ["validator.py", "parser.py"] {
        let path = package.join(file);
        let source =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let templates: Vec<&[&str]> = rules::TEMPLATES
            .iter()
            .filter(|(f, _, _)| *f == file)
            .map(|(_, pieces, _)| *pieces)
            .collect();
        for pieces in &templates {
            for piece in *pieces {
                assert!(
                    source.contains(&format!("\"{piece}\"")),
                    "{file} has no literal \"{piece}\""
                );
            }
        }
        assert_eq!(
            message_sites(&source),
            templates.len(),
            "{file}: number of message templates changed; update rules::TEMPLATES"
        );
    }
}
