//! `skills eval`: skill evals from the command line, a thin layer over
//! `skills-eval`.
//!
//! - `skills eval triggers` runs a query set against the catalog an agent
//!   would see (the same sources, config, tool surface and requirements
//!   probe as `skills agent`: see `agent::agent_builder`) and prints each
//!   skill's trigger rate, false-trigger rate, precision and recall, the
//!   failed queries and what loaded instead; `--baseline` compares with an
//!   earlier `--json` output.
//! - `skills eval outputs` runs a skill's `evals/evals.json` case by case
//!   with the skill preloaded and a runtime (the sandbox by default), checks
//!   the assertions, writes `benchmark.json`, `grading.json` and
//!   `timing.json`, and prints a summary.
//!
//! Progress goes to standard error, the report to standard output (a table,
//! or JSON with `--json`), an HTML page to `--html FILE`. Exit codes: 0 when
//! everything passed, 1 when something failed, 2 for a usage or input error
//! (a bad flag value, an unreadable or malformed file, a skill the catalog
//! does not have).

use std::io::{self, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use skills_agent::{Model, Profile};
use skills_eval::render;
use skills_eval::{
    Comparison, EvalError, EvalSet, OutputEval, OutputReport, QueryOptions, QuerySet, RunProgress,
    Split, TriggerEval, TriggerReport, compare,
};

use crate::agent::{self, RunMode};
use crate::failure::{Failure, json_failure};
use crate::runtime_flags::RuntimeFlags;
use crate::sources::Sources;
use crate::text;

/// The largest query set, `evals.json` or baseline `skills eval` reads.
pub(crate) const MAX_INPUT_BYTES: u64 = 16 << 20;

/// The folder `skills eval outputs` writes its result files under when
/// `--out` is not given: `eval-results/<skill>`, relative to the working
/// folder.
pub(crate) const DEFAULT_RESULTS_DIR: &str = "eval-results";

/// `skills eval` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum EvalCommand {
    /// Does the model load the right skill for each query?
    ///
    /// Runs every query of a query set against the catalog an agent sees (the same paths, config and tools
    /// as `skills agent`), several times each, and prints per skill the
    /// trigger rate (recall), the false-trigger rate, precision, the failed
    /// queries and what loaded instead.
    ///
    /// The query set is a JSON array of `{"query", "should_trigger",
    /// "skill"?, "split"?}` (or `{"skill", "queries": [...]}`); entries
    /// without a split go to the validation split by a hash of their text
    /// (--holdout). With --json the report is printed as JSON; with
    /// --baseline, as `{"report": ..., "comparison": ...}`.
    ///
    /// Exit code: 0 when every query of the split shown passed; 1 when some
    /// failed; 2 for a usage or input error (a bad flag value, an unreadable
    /// or malformed file, a skill the catalog does not have).
    #[command(after_help = crate::cli::AFTER_HELP)]
    Triggers(TriggersArgs),
    /// Does the model do the job once it has the skill?
    ///
    /// Runs each case of SKILL_DIR/evals/evals.json in a fresh session with the skill
    /// preloaded and a runtime for its scripts, checks the assertions, and
    /// writes benchmark.json and, per run, grading.json, timing.json and
    /// outputs/answer.md under --out (default: eval-results/SKILL in the
    /// working folder).
    ///
    /// Statements (plain-string checks and `llm` checks) are judged by
    /// --grader; without one they are reported as not checked.
    ///
    /// Exit code: 0 when every check made passed and no run failed; 1
    /// otherwise; 2 for a usage or input error.
    Outputs(OutputsArgs),
}

/// Which queries the table, the exit code and the comparison look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SplitArg {
    /// Every query.
    All,
    /// The train split.
    Train,
    /// The validation (held-out) split.
    Validation,
}

impl SplitArg {
    /// The library's split (`None`: all queries).
    fn split(self) -> Option<Split> {
        match self {
            Self::All => None,
            Self::Train => Some(Split::Train),
            Self::Validation => Some(Split::Validation),
        }
    }
}

/// `skills eval triggers` arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct TriggersArgs {
    /// The query set (JSON; at most 16 MiB).
    #[arg(long, value_name = "FILE")]
    pub(crate) queries: PathBuf,
    /// PROVIDER:MODEL, where PROVIDER is `openai`, `openai-responses` or
    /// `anthropic` (the endpoint and key come from the environment, as for
    /// `skills agent`).
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub(crate) model: String,
    /// Runs per query (1 to 100).
    #[arg(long, value_name = "N", default_value_t = skills_eval::DEFAULT_RUNS)]
    pub(crate) runs: u32,
    /// Runs in flight at once (1 to 64).
    #[arg(long, value_name = "N", default_value_t = skills_eval::DEFAULT_CONCURRENCY)]
    pub(crate) concurrency: usize,
    /// The share of runs that must load the skill for a should-trigger
    /// query to pass (and stay below for a should-not-trigger one): above 0,
    /// at most 1.
    #[arg(long, value_name = "X", default_value_t = skills_eval::DEFAULT_THRESHOLD)]
    pub(crate) threshold: f64,
    /// The share of entries without a `split` that go to the validation
    /// split (0 to 1), chosen by a hash of the query text.
    #[arg(long, value_name = "X", default_value_t = 0.4)]
    pub(crate) holdout: f64,
    /// The queries the table and the exit code look at (default: all); also
    /// the split --baseline compares (default: validation).
    #[arg(long, value_enum, value_name = "all|train|validation")]
    pub(crate) split: Option<SplitArg>,
    /// The skill of entries that name none.
    #[arg(long, value_name = "NAME")]
    pub(crate) skill: Option<String>,
    /// The limit on one run's wall time, in seconds; a run past it counts
    /// as timed out.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub(crate) timeout: u64,
    /// Model calls per run before it counts as "loaded none".
    #[arg(long, value_name = "N", default_value_t = skills_eval::DEFAULT_MAX_STEPS)]
    pub(crate) max_steps: usize,
    /// The most tokens per answer (Anthropic: 4096 when not given).
    #[arg(long, value_name = "N")]
    pub(crate) max_tokens: Option<u32>,
    /// Offer the trpc-agent tool names (`skill_load`, …) instead of
    /// `load_skill` and `read_skill_file`.
    #[arg(long)]
    pub(crate) trpc: bool,
    /// Print the report as JSON (with --baseline: `{"report", "comparison"}`).
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write the report as a self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Compare with an earlier `--json` output (either shape), over the
    /// validation split unless --split says otherwise.
    #[arg(long, value_name = "FILE")]
    pub(crate) baseline: Option<PathBuf>,
    /// Skill folders or folders of skills.
    pub(crate) paths: Vec<PathBuf>,
}

/// Where `skills eval outputs` runs the skills' commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputRunMode {
    /// Inside the bubblewrap sandbox (no network, only the workspace
    /// writable).
    Sandbox,
    /// Directly on this machine, in a workspace per case run.
    Local,
    /// In a container per command, on the engine at `DOCKER_HOST`.
    Container,
    /// No runtime: no run tools, and no check may look at the workspace.
    None,
}

impl OutputRunMode {
    /// The runtime mode (`None`: no runtime).
    fn mode(self) -> Option<RunMode> {
        match self {
            Self::Sandbox => Some(RunMode::Sandbox),
            Self::Local => Some(RunMode::Local),
            Self::Container => Some(RunMode::Container),
            Self::None => None,
        }
    }
}

/// `skills eval outputs` arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct OutputsArgs {
    /// PROVIDER:MODEL of the model under test (as for `skills agent`).
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub(crate) model: String,
    /// Runs per case (1 to 100).
    #[arg(long, value_name = "N", default_value_t = skills_eval::DEFAULT_OUTPUT_RUNS)]
    pub(crate) runs: u32,
    /// Case runs in flight at once (1 to 64).
    #[arg(long, value_name = "N", default_value_t = skills_eval::DEFAULT_OUTPUT_CONCURRENCY)]
    pub(crate) concurrency: usize,
    /// Write the result files under DIR (default: eval-results/SKILL in
    /// the working folder).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// PROVIDER:MODEL of the model that judges the statement checks;
    /// without one they are reported as not checked.
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub(crate) grader: Option<String>,
    /// Where the skill's commands run: `sandbox` (bubblewrap; the default),
    /// `local`, `container`, or `none` (no run tools; workspace checks are
    /// refused).
    #[arg(
        long,
        value_enum,
        value_name = "sandbox|local|container|none",
        default_value = "sandbox"
    )]
    pub(crate) run: OutputRunMode,
    /// The runtime's artifacts, host inputs and container image.
    #[command(flatten)]
    pub(crate) runtime: RuntimeFlags,
    /// The limit on one case run's model work, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub(crate) timeout: u64,
    /// Model calls per case run.
    #[arg(long, value_name = "N", default_value_t = skills_eval::DEFAULT_OUTPUT_MAX_STEPS)]
    pub(crate) max_steps: usize,
    /// The most tokens per answer (Anthropic: 4096 when not given).
    #[arg(long, value_name = "N")]
    pub(crate) max_tokens: Option<u32>,
    /// Offer the trpc-agent tool names instead of the default ones.
    #[arg(long)]
    pub(crate) trpc: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write the report as a self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// The skill's folder; its cases are in `evals/evals.json`.
    #[arg(value_name = "SKILL_DIR")]
    pub(crate) skill_dir: PathBuf,
}

/// Runs `skills eval`; returns the exit code.
pub(crate) fn run<W: Write>(
    command: EvalCommand,
    sources: &Sources,
    out: &mut W,
) -> Result<u8, Failure> {
    match command {
        EvalCommand::Triggers(args) => triggers(args, sources, out),
        EvalCommand::Outputs(args) => outputs(args, sources, out),
    }
}

/// The JSON of `skills eval triggers --json --baseline`.
#[derive(Serialize)]
struct WithBaseline<'a> {
    report: &'a TriggerReport,
    comparison: &'a Comparison,
}

fn triggers<W: Write>(args: TriggersArgs, sources: &Sources, out: &mut W) -> Result<u8, Failure> {
    // Everything that can be refused is refused before a model is called.
    let timeout = seconds("--timeout", args.timeout)?;
    check_page(args.html.as_deref())?;
    let mut options = QueryOptions::default().holdout(args.holdout);
    if let Some(skill) = &args.skill {
        options = options.default_skill(skill.clone());
    }
    let set = QuerySet::from_json(&read_capped(&args.queries, "--queries")?, &options)
        .map_err(|err| input_failure("--queries", &args.queries, &err))?;
    let baseline = match &args.baseline {
        Some(path) => Some(read_baseline(path)?),
        None => None,
    };
    let model = agent::model(&args.model, args.max_tokens)?;
    let settings = sources.settings()?;
    let provider = sources.provider(args.paths.clone())?;
    let agent = agent::agent_builder(provider, &settings, args.trpc)
        .build()
        .map_err(|err| Failure::usage(err.to_string()))?;
    let eval = TriggerEval::new(agent, model)
        .runs(args.runs)
        .concurrency(args.concurrency)
        .threshold(args.threshold)
        .timeout(timeout)
        .max_steps(args.max_steps);
    let report = block_on(async {
        let mut progress = Progress::new(io::stderr().is_terminal());
        let report = eval
            .run_with_progress(&set, |run| progress.trigger_run(&run))
            .await;
        progress.finish();
        report
    })?
    .map_err(|err| eval_failure(&err))?;

    let shown = args.split.and_then(SplitArg::split);
    let compared = args.split.map_or(Some(Split::Validation), SplitArg::split);
    let comparison = baseline
        .as_ref()
        .map(|baseline| compare(baseline, &report, compared));
    if let Some(path) = &args.html {
        write_page(path, &render::trigger_html(&report, comparison.as_ref()))?;
    }
    if args.json {
        match &comparison {
            Some(comparison) => serde_json::to_writer_pretty(
                &mut *out,
                &WithBaseline {
                    report: &report,
                    comparison,
                },
            ),
            None => serde_json::to_writer_pretty(&mut *out, &report),
        }
        .map_err(json_failure)?;
        writeln!(out)?;
    } else {
        write!(
            out,
            "{}",
            text::block(&render::trigger_table(&report, shown))
        )?;
        if let Some(comparison) = &comparison {
            writeln!(out)?;
            write!(
                out,
                "{}",
                text::block(&render::comparison_table(comparison))
            )?;
        }
    }
    let (_, failed) = report.pass_counts(shown);
    Ok(u8::from(failed > 0))
}

fn outputs<W: Write>(args: OutputsArgs, sources: &Sources, out: &mut W) -> Result<u8, Failure> {
    let mode = args.run.mode();
    args.runtime.require_run(mode.is_some())?;
    args.runtime.require_container(mode)?;
    let timeout = seconds("--timeout", args.timeout)?;
    check_page(args.html.as_deref())?;
    if !args.skill_dir.is_dir() {
        return Err(Failure::usage(format!(
            "`{}` is not a skill folder",
            args.skill_dir.display()
        )));
    }
    let file = args.skill_dir.join("evals").join("evals.json");
    let set = EvalSet::from_json(&read_capped(&file, "evals")?)
        .map_err(|err| input_failure("evals", &file, &err))?;
    // The results folder is checked before the eval is paid for.
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new(DEFAULT_RESULTS_DIR).join(&set.skill_name));
    check_results_dir(&dir)?;
    let model = agent::model(&args.model, args.max_tokens)?;
    let grader = match &args.grader {
        Some(spec) => Some(agent::model(spec, args.max_tokens)?),
        None => None,
    };
    let settings = sources.settings()?;
    let provider = sources.provider(vec![args.skill_dir.clone()])?;
    let root = skills_exec::private_root("skills-eval");
    let outcome = block_on(run_outputs(
        &args,
        (provider, settings),
        (model, grader),
        &set,
        (mode, &root, timeout),
    ))?;
    // The runner removed each run's workspace; the root goes with them.
    let _ = std::fs::remove_dir(&root);
    let report = outcome?;

    // Blocking file writes, after the async runtime is gone.
    let written = skills_eval::write_results(&report, &dir)
        .map_err(|err| Failure::usage(format!("cannot write the results: {err}")))?;
    eprintln!(
        "[eval] wrote {} files under {}",
        written.len(),
        text::line(&dir.display().to_string())
    );
    if let Some(path) = &args.html {
        write_page(path, &render::output_html(&report))?;
    }
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report).map_err(json_failure)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", text::block(&render::output_table(&report)))?;
    }
    Ok(u8::from(!report.runs.iter().all(skills_eval::CaseRun::ok)))
}

/// The async part of `skills eval outputs`: the runtime, the agent, the
/// eval. The runtime's root is the caller's to remove.
async fn run_outputs(
    args: &OutputsArgs,
    (provider, settings): (Arc<dyn skills_core::SkillProvider>, crate::config::Settings),
    (model, grader): (Arc<dyn Model>, Option<Arc<dyn Model>>),
    set: &EvalSet,
    (mode, root, timeout): (Option<RunMode>, &Path, Duration),
) -> Result<OutputReport, Failure> {
    let mut builder =
        agent::agent_builder(provider, &settings, args.trpc).preload([set.skill_name.clone()]);
    if let Some(mode) = mode {
        let runtime = mode.runtime(root, &args.runtime).await?;
        builder = builder.profile(Profile::Full).runtime(runtime);
    }
    let agent = builder
        .build()
        .map_err(|err| Failure::usage(err.to_string()))?;
    let mut eval = OutputEval::new(agent, model)
        .runs(args.runs)
        .concurrency(args.concurrency)
        .timeout(timeout)
        .max_steps(args.max_steps);
    if let Some(grader) = grader {
        eval = eval.grader(grader);
    }
    eval.run_with_progress(set, |run| {
        let mut line = format!(
            "[eval] case {} run {}: {} passed, {} failed, {} not checked ({:.1} s)",
            run.eval_id,
            run.run_number,
            run.passed(),
            run.failed(),
            run.unchecked(),
            run.duration_ms as f64 / 1000.0
        );
        if let Some(error) = &run.error {
            line.push_str(&format!("; {error}"));
        }
        eprintln!("{}", text::line(&line));
    })
    .await
    .map_err(|err| eval_failure(&err))
}

/// Runs `future` on a two-worker tokio runtime (the runners need its
/// timers), as `skills agent` does.
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, Failure> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| Failure::usage(format!("cannot start the async runtime: {err}")))?;
    Ok(runtime.block_on(future))
}

/// Progress of a trigger eval on standard error: on a terminal one line
/// redrawn after every run; otherwise a counter line about every tenth of
/// the runs (and after the last), so a long eval logs a dozen lines.
struct Progress {
    terminal: bool,
    failed: usize,
    drew: bool,
}

impl Progress {
    fn new(terminal: bool) -> Self {
        Self {
            terminal,
            failed: 0,
            drew: false,
        }
    }

    fn trigger_run(&mut self, run: &RunProgress<'_>) {
        if run.error.is_some() {
            self.failed += 1;
        }
        let failed = match self.failed {
            0 => String::new(),
            n => format!(", {n} failed"),
        };
        if self.terminal {
            eprint!("\r[eval] {}/{} runs{failed}", run.done, run.total);
            self.drew = true;
        } else {
            let step = run.total.div_ceil(10).max(1);
            if run.done.is_multiple_of(step) || run.done == run.total {
                eprintln!("[eval] {}/{} runs{failed}", run.done, run.total);
            }
        }
    }

    /// Ends the redrawn line.
    fn finish(&mut self) {
        if self.drew {
            eprintln!();
            self.drew = false;
        }
    }
}

/// `SECS` as a duration; 0 is refused.
fn seconds(flag: &str, secs: u64) -> Result<Duration, Failure> {
    if secs == 0 {
        return Err(Failure::usage(format!("{flag} must be at least 1 second")));
    }
    Ok(Duration::from_secs(secs))
}

/// Reads the text file at `path` (at most [`MAX_INPUT_BYTES`], 16 MiB);
/// `what` names it in errors.
fn read_capped(path: &Path, what: &str) -> Result<String, Failure> {
    crate::input::read_text(path, MAX_INPUT_BYTES, what)
}

/// Reads a `--baseline`: a trigger report, or the `{"report", "comparison"}`
/// object `--json --baseline` prints.
fn read_baseline(path: &Path) -> Result<TriggerReport, Failure> {
    let text = read_capped(path, "--baseline")?;
    let bad = |why: String| {
        Failure::usage(format!(
            "--baseline {}: {why}",
            text::line(&path.display().to_string())
        ))
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|err| bad(format!("not JSON: {err}")))?;
    let report = match value.get("report") {
        Some(report) if value.get("queries").is_none() => report.clone(),
        _ => value,
    };
    serde_json::from_value(report)
        .map_err(|err| bad(format!("not a `skills eval triggers --json` output: {err}")))
}

/// A malformed input file: exit 2, naming the file.
fn input_failure(what: &str, path: &Path, err: &EvalError) -> Failure {
    Failure::usage(format!(
        "{what} {}: {}",
        text::line(&path.display().to_string()),
        err.message()
    ))
}

/// An eval that could not run (a setting out of range, an unknown skill,
/// the provider failing): exit 2. A run that failed is a result, not this.
fn eval_failure(err: &EvalError) -> Failure {
    Failure::usage(format!("{} ({})", err.message(), err.kind().as_str()))
}

/// Refuses an `--html FILE` whose folder does not exist, before the eval
/// spends anything.
fn check_page(path: Option<&Path>) -> Result<(), Failure> {
    let Some(path) = path else {
        return Ok(());
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if folder.is_dir() {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "--html {}: the folder {} does not exist",
            text::line(&path.display().to_string()),
            text::line(&folder.display().to_string())
        )))
    }
}

/// Makes sure `--out` is a folder the results can be written to (creating
/// it), before any model call.
fn check_results_dir(dir: &Path) -> Result<(), Failure> {
    let bad = |why: String| {
        Failure::usage(format!(
            "--out {}: {why}",
            text::line(&dir.display().to_string())
        ))
    };
    std::fs::create_dir_all(dir).map_err(|err| bad(err.to_string()))?;
    let probe = dir.join(".skills-eval-write-check");
    std::fs::write(&probe, b"").map_err(|err| bad(format!("cannot write there: {err}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes an `--html` page.
fn write_page(path: &Path, page: &str) -> Result<(), Failure> {
    std::fs::write(path, page).map_err(|err| {
        Failure::usage(format!(
            "--html {}: {err}",
            text::line(&path.display().to_string())
        ))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn report_json() -> serde_json::Value {
        serde_json::json!({
            "model": "openai:m",
            "runs_per_query": 1,
            "threshold": 0.5,
            "catalog": ["a"],
            "queries": [{
                "query": "q", "skill": "a", "should_trigger": true, "split": "validation",
                "runs": 1, "triggered": 1, "loaded": {"a": 1}, "none": 0, "errors": 0,
                "timeouts": 0, "error_messages": [], "trigger_rate": 1.0, "passed": true
            }],
            "usage": {"requests": 1, "input_tokens": 10, "output_tokens": 1,
                      "cache_read_tokens": 0, "cache_creation_tokens": 0},
            "retries": 0,
            "elapsed_ms": 5
        })
    }

    #[test]
    fn a_baseline_is_a_report_or_a_report_with_its_comparison() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.json");
        std::fs::write(&plain, report_json().to_string()).unwrap();
        let nested = dir.path().join("nested.json");
        std::fs::write(
            &nested,
            serde_json::json!({"report": report_json(), "comparison": {}}).to_string(),
        )
        .unwrap();
        let a = read_baseline(&plain).ok().unwrap();
        let b = read_baseline(&nested).ok().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.queries.len(), 1);

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, r#"{"report": {"model": 1}}"#).unwrap();
        let err = read_baseline(&bad).err().unwrap();
        assert_eq!(err.code, 2);
        assert!(err.message.contains("--baseline"), "{}", err.message);
    }

    #[test]
    fn splits_and_flag_checks() {
        assert_eq!(SplitArg::All.split(), None);
        assert_eq!(SplitArg::Train.split(), Some(Split::Train));
        assert_eq!(SplitArg::Validation.split(), Some(Split::Validation));
        assert!(seconds("--timeout", 0).is_err());
        assert_eq!(seconds("--timeout", 3).ok(), Some(Duration::from_secs(3)));
        assert!(check_page(None).is_ok());
        assert!(check_page(Some(Path::new("page.html"))).is_ok());
        assert!(check_page(Some(Path::new("/no/such/folder/page.html"))).is_err());
        assert_eq!(OutputRunMode::None.mode(), None);
        assert_eq!(OutputRunMode::Sandbox.mode(), Some(RunMode::Sandbox));
    }
}
