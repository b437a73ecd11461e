//! The result files of an output eval, in the shapes of the skill-creator
//! convention: `benchmark.json` at the top,
//! `eval-<id>/with_skill/run-<n>/grading.json` and `timing.json` per run,
//! and the run's final answer in `outputs/answer.md` beside them.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::{EvalError, EvalErrorKind};
use crate::evalset::file_safe;
use crate::outputs::{CaseRun, OutputReport};

/// The configuration name the files use (the convention compares
/// `with_skill` with `without_skill`; these runs have the skill).
pub const CONFIGURATION: &str = "with_skill";

/// Writes `report`'s files under `dir` (created if missing) and returns
/// their paths, `benchmark.json` first. Blocking: call it off the async
/// workers. Case ids become folder names with anything but ASCII letters,
/// digits, `-` and `_` replaced by `_`.
pub fn write_results(report: &OutputReport, dir: &Path) -> Result<Vec<PathBuf>, EvalError> {
    let io = |path: &Path, err: std::io::Error| {
        EvalError::new(EvalErrorKind::Io, format!("{}: {err}", path.display()))
    };
    fs::create_dir_all(dir).map_err(|err| io(dir, err))?;
    let mut written = Vec::new();
    let benchmark = dir.join("benchmark.json");
    write_json(&benchmark, &benchmark_json(report)).map_err(|err| io(&benchmark, err))?;
    written.push(benchmark);
    for run in &report.runs {
        let folder = dir
            .join(format!("eval-{}", file_safe(&run.eval_id)))
            .join(CONFIGURATION)
            .join(format!("run-{}", run.run_number));
        let outputs = folder.join("outputs");
        fs::create_dir_all(&outputs).map_err(|err| io(&outputs, err))?;
        let grading = folder.join("grading.json");
        write_json(&grading, &grading_json(run)).map_err(|err| io(&grading, err))?;
        let timing = folder.join("timing.json");
        write_json(&timing, &timing_json(run)).map_err(|err| io(&timing, err))?;
        let answer = outputs.join("answer.md");
        fs::write(&answer, &run.answer).map_err(|err| io(&answer, err))?;
        written.extend([grading, timing, answer]);
    }
    Ok(written)
}

fn write_json(path: &Path, value: &Value) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    fs::write(path, text)
}

fn expectations(run: &CaseRun) -> Value {
    run.expectations
        .iter()
        .map(|e| {
            json!({
                "text": e.text,
                "type": e.kind,
                "passed": e.passed,
                "evidence": e.evidence,
            })
        })
        .collect()
}

/// `grading.json` of one run.
pub fn grading_json(run: &CaseRun) -> Value {
    let total_tool_calls: u32 = run.tool_calls.values().sum();
    json!({
        "expectations": expectations(run),
        "summary": {
            "passed": run.passed(),
            "failed": run.failed(),
            "not_checked": run.unchecked(),
            "total": run.expectations.len(),
            "pass_rate": run.pass_rate(),
        },
        "execution_metrics": {
            "tool_calls": run.tool_calls,
            "total_tool_calls": total_tool_calls,
            "total_steps": run.steps,
            "errors_encountered": run.tool_errors + u32::from(run.error.is_some()),
            "output_chars": run.answer.chars().count(),
        },
        "timing": {
            "executor_duration_seconds": seconds(run.duration_ms),
            "grader_duration_seconds": seconds(run.grader_duration_ms),
            "total_duration_seconds": seconds(run.duration_ms + run.grader_duration_ms),
        },
        "error": run.error,
    })
}

/// `timing.json` of one run.
pub fn timing_json(run: &CaseRun) -> Value {
    json!({
        "total_tokens": run.usage.total_tokens(),
        "duration_ms": run.duration_ms,
        "total_duration_seconds": seconds(run.duration_ms + run.grader_duration_ms),
        "executor_duration_seconds": seconds(run.duration_ms),
        "grader_duration_seconds": seconds(run.grader_duration_ms),
    })
}

/// `benchmark.json` of the whole eval.
pub fn benchmark_json(report: &OutputReport) -> Value {
    let mut evals_run: Vec<&str> = Vec::new();
    for run in &report.runs {
        if !evals_run.contains(&run.eval_id.as_str()) {
            evals_run.push(&run.eval_id);
        }
    }
    let runs: Vec<Value> = report
        .runs
        .iter()
        .map(|run| {
            json!({
                "eval_id": id_value(&run.eval_id),
                "eval_name": run.eval_name.clone().unwrap_or_else(|| format!("eval {}", run.eval_id)),
                "configuration": CONFIGURATION,
                "run_number": run.run_number,
                "result": {
                    "pass_rate": run.pass_rate(),
                    "passed": run.passed(),
                    "failed": run.failed(),
                    "total": run.expectations.len(),
                    "time_seconds": seconds(run.duration_ms),
                    "tokens": run.usage.total_tokens(),
                    "tool_calls": run.tool_calls.values().sum::<u32>(),
                    "errors": run.tool_errors + u32::from(run.error.is_some()),
                },
                "expectations": expectations(run),
                "notes": run.error.iter().collect::<Vec<_>>(),
            })
        })
        .collect();
    let stat = |values: Vec<f64>| -> Value {
        if values.is_empty() {
            return Value::Null;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        json!({"mean": round(mean), "stddev": round(var.sqrt()), "min": round(min), "max": round(max)})
    };
    let pass_rates = report.runs.iter().filter_map(CaseRun::pass_rate).collect();
    let times = report.runs.iter().map(|r| seconds(r.duration_ms)).collect();
    let tokens = report
        .runs
        .iter()
        .map(|r| r.usage.total_tokens() as f64)
        .collect();
    let (passed, failed, unchecked) = report.counts();
    let mut notes = Vec::new();
    if unchecked > 0 {
        notes.push(format!(
            "{unchecked} statement check(s) were not checked: give a grader model to check them"
        ));
    }
    let failed_runs = report.runs.iter().filter(|r| r.error.is_some()).count();
    if failed_runs > 0 {
        notes.push(format!(
            "{failed_runs} run(s) failed before the model finished"
        ));
    }
    json!({
        "metadata": {
            "skill_name": report.skill_name,
            "executor_model": report.model,
            "grader_model": report.grader,
            "evals_run": evals_run.iter().map(|id| id_value(id)).collect::<Vec<_>>(),
            "runs_per_configuration": report.runs_per_case,
            "checks": {"passed": passed, "failed": failed, "not_checked": unchecked},
        },
        "runs": runs,
        "run_summary": {
            CONFIGURATION: {
                "pass_rate": stat(pass_rates),
                "time_seconds": stat(times),
                "tokens": stat(tokens),
            }
        },
        "notes": notes,
    })
}

/// A numeric id stays a number in the files, as the convention has it.
fn id_value(id: &str) -> Value {
    id.parse::<u64>()
        .map_or_else(|_| Value::from(id), Value::from)
}

fn seconds(ms: u64) -> f64 {
    round(ms as f64 / 1000.0)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
