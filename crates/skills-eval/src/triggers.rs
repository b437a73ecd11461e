//! Trigger evals: does the model load the right skill for a query?
//!
//! Each query runs `runs` times, each time in a fresh session of the
//! caller's [`Agent`] (the same catalog, tools and policy an app would give
//! the model) against the caller's [`Model`]. A run records the first skill
//! the model loaded with a tool call (a `$name` mention is the user's
//! choice, not the model's, and does not count) and stops there: what
//! happens after the load is the output evals' question, and stopping saves
//! the tokens. A run that answers without loading, or reaches the step
//! limit, loaded none.
//!
//! The runner keeps counts per query, never transcripts: memory stays flat
//! however many runs a set needs.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use skills_agent::{
    Agent, Dispatch, Model, ModelError, ModelErrorKind, ModelEvent, ModelRequest, ModelResponse,
};

use crate::error::{EvalError, EvalErrorKind};
use crate::queries::{QuerySet, Split, TriggerQuery};
use crate::usage::UsageTotals;

/// Default runs per query.
pub const DEFAULT_RUNS: u32 = 3;
/// Default runs in flight at once.
pub const DEFAULT_CONCURRENCY: usize = 4;
/// Default share of runs that must trigger for a should-trigger query to
/// pass (and stay below for a should-not-trigger one).
pub const DEFAULT_THRESHOLD: f64 = 0.5;
/// Default limit on one run's wall time.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Default model calls per run before it counts as "loaded none".
pub const DEFAULT_MAX_STEPS: usize = 4;
/// Most runs per query.
pub const MAX_RUNS: u32 = 100;
/// Most runs in flight.
pub const MAX_CONCURRENCY: usize = 64;
/// Error messages kept per query (the rest are counted only).
pub const MAX_ERRORS_KEPT: usize = 3;

/// Runs a [`QuerySet`] against an agent and a model.
#[derive(Clone)]
pub struct TriggerEval {
    agent: Agent,
    model: Arc<dyn Model>,
    runs: u32,
    concurrency: usize,
    threshold: f64,
    timeout: Duration,
    max_steps: usize,
}

impl std::fmt::Debug for TriggerEval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriggerEval")
            .field("agent", &self.agent.name())
            .field("model", &self.model.name())
            .field("runs", &self.runs)
            .field("concurrency", &self.concurrency)
            .field("threshold", &self.threshold)
            .field("timeout", &self.timeout)
            .field("max_steps", &self.max_steps)
            .finish()
    }
}

/// What one finished run reports to a progress callback.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunProgress<'a> {
    /// Runs finished so far, this one included.
    pub done: usize,
    /// Runs in all.
    pub total: usize,
    /// The query.
    pub query: &'a TriggerQuery,
    /// The skill the model loaded first, if any.
    pub loaded: Option<&'a str>,
    /// Why the run failed, if it did.
    pub error: Option<&'a str>,
}

impl TriggerEval {
    /// An eval of `agent`'s catalog with `model`, with the defaults
    /// ([`DEFAULT_RUNS`], [`DEFAULT_CONCURRENCY`], [`DEFAULT_THRESHOLD`],
    /// [`DEFAULT_TIMEOUT`], [`DEFAULT_MAX_STEPS`]).
    pub fn new(agent: Agent, model: Arc<dyn Model>) -> Self {
        Self {
            agent,
            model,
            runs: DEFAULT_RUNS,
            concurrency: DEFAULT_CONCURRENCY,
            threshold: DEFAULT_THRESHOLD,
            timeout: DEFAULT_TIMEOUT,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    /// Runs per query (1 to [`MAX_RUNS`]).
    #[must_use]
    pub fn runs(mut self, runs: u32) -> Self {
        self.runs = runs;
        self
    }

    /// Runs in flight at once (1 to [`MAX_CONCURRENCY`]).
    #[must_use]
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// The pass threshold (0 to 1).
    #[must_use]
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// The limit on one run's wall time; a run past it counts as timed out.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Model calls per run before it counts as "loaded none".
    #[must_use]
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps;
        self
    }

    fn check(&self, set: &QuerySet) -> Result<(), EvalError> {
        check_run_settings(self.runs, self.concurrency, self.max_steps)?;
        if !(0.0..=1.0).contains(&self.threshold) || self.threshold == 0.0 {
            return Err(config(format!(
                "threshold is {}; use a share above 0 and at most 1",
                self.threshold
            )));
        }
        if set.is_empty() {
            return Err(EvalError::new(
                EvalErrorKind::Input,
                "the query set is empty",
            ));
        }
        Ok(())
    }

    /// Runs every query of `set` [`runs`](Self::runs) times.
    ///
    /// Fails before any model call when a setting is out of range or the
    /// set names a skill the model cannot see in the catalog; a run that
    /// fails (the model's error after the adapter's retries, a timeout) is
    /// counted in the report, not returned.
    pub async fn run(&self, set: &QuerySet) -> Result<TriggerReport, EvalError> {
        self.run_with_progress(set, |_| {}).await
    }

    /// [`run`](Self::run), calling `progress` after each run.
    pub async fn run_with_progress(
        &self,
        set: &QuerySet,
        mut progress: impl FnMut(RunProgress<'_>),
    ) -> Result<TriggerReport, EvalError> {
        self.check(set)?;
        let (catalog, hidden) = self.catalog().await?;
        let unknown: Vec<&str> = set
            .skills()
            .into_iter()
            .filter(|skill| !catalog.iter().any(|c| c == skill))
            .collect();
        if !unknown.is_empty() {
            let (kept_away, missing): (Vec<&str>, Vec<&str>) = unknown
                .iter()
                .partition(|skill| hidden.iter().any(|h| h == *skill));
            let mut why = Vec::new();
            if !missing.is_empty() {
                why.push(format!("no skill is named {}", missing.join(", ")));
            }
            if !kept_away.is_empty() {
                why.push(format!(
                    "{} the model is not told about (tier `off` or `manual`, or it needs setup)",
                    kept_away.join(", ")
                ));
            }
            return Err(EvalError::new(
                EvalErrorKind::UnknownSkill,
                format!(
                    "the query set names skills the model cannot load: {}; the catalog lists {}",
                    why.join("; "),
                    list_or_none(&catalog)
                ),
            ));
        }
        let started = Instant::now();
        let mut tallies: Vec<Tally> = vec![Tally::default(); set.len()];
        let total = set.len() * self.runs as usize;
        let jobs = set
            .queries()
            .iter()
            .enumerate()
            .flat_map(|(i, q)| (0..self.runs).map(move |_| (i, q)));
        let mut finished = futures_util::stream::iter(jobs)
            .map(|(i, q)| async move { (i, self.one_run(&q.query).await) })
            .buffer_unordered(self.concurrency);
        let mut done = 0;
        while let Some((i, record)) = finished.next().await {
            done += 1;
            progress(RunProgress {
                done,
                total,
                query: &set.queries()[i],
                loaded: record.loaded.as_deref(),
                error: record.error.as_deref(),
            });
            tallies[i].add(record);
        }
        drop(finished);
        let mut usage = UsageTotals::default();
        let mut retries = 0;
        let queries = set
            .queries()
            .iter()
            .zip(tallies)
            .map(|(query, tally)| {
                usage.add_totals(&tally.usage);
                retries += tally.retries;
                tally.into_result(query, self.threshold)
            })
            .collect();
        Ok(TriggerReport {
            model: self.model.name().to_owned(),
            runs_per_query: self.runs,
            threshold: self.threshold,
            catalog,
            queries,
            usage,
            retries,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// The names the model is told about in the catalog of a fresh session,
    /// and the names the provider has but the policy keeps from it.
    async fn catalog(&self) -> Result<(Vec<String>, Vec<String>), EvalError> {
        let session = self.agent.start_session().await.map_err(|err| {
            EvalError::new(
                EvalErrorKind::Provider,
                format!("cannot start a session: {err}"),
            )
        })?;
        let listed: Vec<String> = session.listed_skills().map(str::to_owned).collect();
        let hidden = session
            .pinned_catalog()
            .names()
            .filter(|name| !listed.iter().any(|l| l == name))
            .map(str::to_owned)
            .collect();
        Ok((listed, hidden))
    }

    async fn one_run(&self, query: &str) -> RunRecord {
        let mut record = RunRecord::default();
        let outcome = tokio::time::timeout(self.timeout, self.drive(query, &mut record)).await;
        if outcome.is_err() {
            record.timed_out = true;
            record.error = Some(format!(
                "timed out after {:.1} s",
                self.timeout.as_secs_f64()
            ));
        }
        record
    }

    /// One run, driven step by step (not by the `Runner`, which would
    /// send the next request before its caller could stop it): the model's
    /// tool calls are handled by the session exactly as in a run, and the
    /// run ends at the first skill the model loads.
    async fn drive(&self, query: &str, record: &mut RunRecord) {
        let mut session = match self.agent.start_session().await {
            Ok(session) => session,
            Err(err) => {
                record.error = Some(format!("cannot start a session: {err}"));
                return;
            }
        };
        if let Err(err) = session.push_user(query).await {
            record.error = Some(format!("cannot add the query: {err}"));
            return;
        }
        let load_tool = self.agent.surface().load_tool().to_owned();
        for _ in 0..self.max_steps {
            let request = session.build_request_for(self.model.as_ref());
            let response = match ask(self.model.as_ref(), &request, &mut record.retries).await {
                Ok(response) => response,
                Err(err) => {
                    record.error = Some(format!("the model `{}` failed: {err}", self.model.name()));
                    return;
                }
            };
            record.usage.add(&response.usage);
            let calls = response.message.tool_calls.clone();
            session.push_assistant(response.message);
            if calls.is_empty() {
                return;
            }
            for call in &calls {
                if let Some(fork) = session.fork_request(call) {
                    // A `context: fork` skill runs in a sub-agent; the model
                    // chose it all the same, and that is the answer.
                    record.loaded = Some(fork.skill);
                    return;
                }
                let before = session.loaded();
                match session.handle_tool_call(call).await {
                    Dispatch::External => session.push_tool_result(
                        call.id.clone(),
                        call.name.clone(),
                        format!("`{}` is not available here", call.name),
                        true,
                    ),
                    Dispatch::Handled(result) if call.name == load_tool && !result.is_error => {
                        let after = session.loaded();
                        // A new load, or the model's load of a skill that was
                        // already active (a `$mention` in the query, a
                        // preloaded skill): the model chose it either way.
                        let skill = after.difference(&before).next().cloned().or_else(|| {
                            named_skill(&call.arguments).filter(|name| after.contains(name))
                        });
                        if let Some(skill) = skill {
                            record.loaded = Some(skill);
                            // The question is answered: stop, and save the tokens.
                            return;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The skill a load call names: `name` (default and Eino surfaces) or
/// `skill` (trpc).
fn named_skill(arguments: &serde_json::Value) -> Option<String> {
    ["name", "skill"]
        .iter()
        .find_map(|key| arguments.get(*key)?.as_str())
        .map(str::to_owned)
}

/// One model call, streamed as the agent loop streams it (the same wire
/// requests an agent sends), counting the adapter's retries.
async fn ask(
    model: &dyn Model,
    request: &ModelRequest,
    retries: &mut u64,
) -> Result<ModelResponse, ModelError> {
    let mut seen = 0u64;
    let mut stream = match model.stream(request).await {
        Ok(stream) => stream,
        Err(err) => {
            *retries += u64::from(err.retries());
            return Err(err);
        }
    };
    while let Some(event) = stream.next().await {
        match event {
            Ok(ModelEvent::Retry(_)) => seen += 1,
            Ok(ModelEvent::Completed(response)) => {
                *retries += seen.max(response.retries.len() as u64);
                return Ok(response);
            }
            Ok(_) => {}
            Err(err) => {
                *retries += seen.max(u64::from(err.retries()));
                return Err(err);
            }
        }
    }
    *retries += seen;
    Err(ModelError::new(
        ModelErrorKind::InvalidResponse,
        "the answer ended without completing",
    ))
}

/// One run's result.
#[derive(Debug, Default)]
struct RunRecord {
    loaded: Option<String>,
    usage: UsageTotals,
    retries: u64,
    error: Option<String>,
    timed_out: bool,
}

/// A query's counts while its runs finish.
#[derive(Debug, Clone, Default)]
struct Tally {
    loaded: BTreeMap<String, u32>,
    none: u32,
    errors: u32,
    timeouts: u32,
    error_messages: Vec<String>,
    usage: UsageTotals,
    retries: u64,
}

impl Tally {
    fn add(&mut self, record: RunRecord) {
        self.usage.add_totals(&record.usage);
        self.retries += record.retries;
        if let Some(error) = record.error {
            if record.timed_out {
                self.timeouts += 1;
            } else {
                self.errors += 1;
            }
            if self.error_messages.len() < MAX_ERRORS_KEPT {
                self.error_messages.push(error);
            }
            return;
        }
        match record.loaded {
            Some(skill) => *self.loaded.entry(skill).or_default() += 1,
            None => self.none += 1,
        }
    }

    fn into_result(self, query: &TriggerQuery, threshold: f64) -> QueryResult {
        let completed = self.none + self.loaded.values().sum::<u32>();
        let triggered = match &query.skill {
            Some(skill) => self.loaded.get(skill).copied().unwrap_or(0),
            // A query no skill should answer "triggers" when any loads.
            None => completed - self.none,
        };
        let trigger_rate = (completed > 0).then(|| f64::from(triggered) / f64::from(completed));
        let passed = trigger_rate.is_some_and(|rate| {
            if query.should_trigger {
                rate >= threshold
            } else {
                rate < threshold
            }
        });
        QueryResult {
            query: query.query.clone(),
            skill: query.skill.clone(),
            should_trigger: query.should_trigger,
            split: query.split,
            runs: completed + self.errors + self.timeouts,
            triggered,
            loaded: self.loaded,
            none: self.none,
            errors: self.errors,
            timeouts: self.timeouts,
            error_messages: self.error_messages,
            trigger_rate,
            passed,
        }
    }
}

/// How one query went over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QueryResult {
    /// The query.
    pub query: String,
    /// The skill it is about (`None`: no skill should load).
    pub skill: Option<String>,
    /// Whether `skill` should load.
    pub should_trigger: bool,
    /// Train or validation.
    pub split: Split,
    /// Runs made.
    pub runs: u32,
    /// Runs that loaded `skill` first (for `skill: None`, runs that loaded
    /// any skill).
    pub triggered: u32,
    /// Per skill, the runs that loaded it first.
    pub loaded: BTreeMap<String, u32>,
    /// Runs that loaded no skill.
    pub none: u32,
    /// Runs that failed (the model's error after the adapter's retries).
    pub errors: u32,
    /// Runs stopped by the timeout.
    pub timeouts: u32,
    /// The first few failure messages.
    pub error_messages: Vec<String>,
    /// `triggered` over the runs that completed; `None` when none did.
    pub trigger_rate: Option<f64>,
    /// Whether the rate is on the right side of the threshold (a query
    /// whose runs all failed does not pass).
    pub passed: bool,
}

impl QueryResult {
    /// Runs that completed (loaded a skill or answered without one).
    pub fn completed(&self) -> u32 {
        self.runs
            .saturating_sub(self.errors)
            .saturating_sub(self.timeouts)
    }

    /// The skills loaded instead of the expected one, with their runs
    /// (`(none)` for runs that loaded nothing), for a should-trigger query.
    pub fn confusions(&self) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        if !self.should_trigger {
            return out;
        }
        for (skill, runs) in &self.loaded {
            if Some(skill) != self.skill.as_ref() {
                out.insert(skill.clone(), *runs);
            }
        }
        if self.none > 0 {
            out.insert(NONE.to_owned(), self.none);
        }
        out
    }
}

/// How [`QueryResult::confusions`] and [`SkillRates::confusions`] name
/// runs that loaded no skill.
pub const NONE: &str = "(none)";

/// The whole result of a trigger eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TriggerReport {
    /// The model's name.
    pub model: String,
    /// Runs per query.
    pub runs_per_query: u32,
    /// The pass threshold.
    pub threshold: f64,
    /// The skills the model saw in the catalog, sorted.
    pub catalog: Vec<String>,
    /// Per query, in the set's order.
    pub queries: Vec<QueryResult>,
    /// Tokens of every run.
    pub usage: UsageTotals,
    /// Retries the model adapters made.
    pub retries: u64,
    /// Wall time of the whole eval, in milliseconds.
    pub elapsed_ms: u64,
}

impl TriggerReport {
    /// The queries of `split` (all when `None`).
    pub fn queries_in(&self, split: Option<Split>) -> impl Iterator<Item = &QueryResult> {
        self.queries
            .iter()
            .filter(move |q| split.is_none_or(|s| q.split == s))
    }

    /// Per skill the set names, sorted by name: rates over the queries of
    /// `split` (all when `None`).
    pub fn rates(&self, split: Option<Split>) -> Vec<SkillRates> {
        let mut by_skill: BTreeMap<&str, SkillRates> = BTreeMap::new();
        for q in self.queries_in(split) {
            if let Some(skill) = q.skill.as_deref() {
                let rates = by_skill
                    .entry(skill)
                    .or_insert_with(|| SkillRates::empty(skill));
                if q.should_trigger {
                    rates.should_trigger_runs =
                        rates.should_trigger_runs.saturating_add(q.completed());
                    rates.should_trigger_hits =
                        rates.should_trigger_hits.saturating_add(q.triggered);
                    for (other, runs) in q.confusions() {
                        let n = rates.confusions.entry(other).or_default();
                        *n = n.saturating_add(runs);
                    }
                } else {
                    rates.should_not_runs = rates.should_not_runs.saturating_add(q.completed());
                    rates.should_not_hits = rates.should_not_hits.saturating_add(q.triggered);
                }
                rates.queries += 1;
                if !q.passed {
                    rates.failed_queries += 1;
                }
            }
        }
        // Precision: of the runs (any query) that loaded the skill, the share
        // where it was the expected one.
        for q in self.queries_in(split) {
            for (skill, runs) in &q.loaded {
                if let Some(rates) = by_skill.get_mut(skill.as_str()) {
                    rates.loads = rates.loads.saturating_add(*runs);
                    if q.should_trigger && q.skill.as_deref() == Some(skill) {
                        rates.correct_loads = rates.correct_loads.saturating_add(*runs);
                    }
                }
            }
        }
        by_skill.into_values().collect()
    }

    /// Queries that passed and failed, over `split` (all when `None`).
    pub fn pass_counts(&self, split: Option<Split>) -> (usize, usize) {
        self.queries_in(split).fold((0, 0), |(pass, fail), q| {
            if q.passed {
                (pass + 1, fail)
            } else {
                (pass, fail + 1)
            }
        })
    }

    /// Reads a report written with `serde_json` (a `--json` output), for a
    /// baseline.
    pub fn from_json(text: &str) -> Result<Self, EvalError> {
        serde_json::from_str(text).map_err(|err| {
            EvalError::new(
                EvalErrorKind::Input,
                format!("not a trigger eval report: {err}"),
            )
        })
    }
}

/// One skill's rates over a set of queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillRates {
    /// The skill.
    pub skill: String,
    /// Queries about it.
    pub queries: u32,
    /// Those that failed.
    pub failed_queries: u32,
    /// Completed runs of its should-trigger queries.
    pub should_trigger_runs: u32,
    /// Of those, the runs that loaded it.
    pub should_trigger_hits: u32,
    /// Completed runs of its should-not-trigger queries.
    pub should_not_runs: u32,
    /// Of those, the runs that loaded it anyway.
    pub should_not_hits: u32,
    /// Runs of any query that loaded it first.
    pub loads: u32,
    /// Of those, the runs of its own should-trigger queries.
    pub correct_loads: u32,
    /// On its should-trigger queries, what loaded instead, with runs.
    pub confusions: BTreeMap<String, u32>,
}

impl SkillRates {
    fn empty(skill: &str) -> Self {
        Self {
            skill: skill.to_owned(),
            queries: 0,
            failed_queries: 0,
            should_trigger_runs: 0,
            should_trigger_hits: 0,
            should_not_runs: 0,
            should_not_hits: 0,
            loads: 0,
            correct_loads: 0,
            confusions: BTreeMap::new(),
        }
    }

    /// The share of should-trigger runs that loaded it: its recall.
    pub fn trigger_rate(&self) -> Option<f64> {
        ratio(self.should_trigger_hits, self.should_trigger_runs)
    }

    /// The share of should-not-trigger runs that loaded it anyway.
    pub fn false_trigger_rate(&self) -> Option<f64> {
        ratio(self.should_not_hits, self.should_not_runs)
    }

    /// Recall: the same as [`trigger_rate`](Self::trigger_rate).
    pub fn recall(&self) -> Option<f64> {
        self.trigger_rate()
    }

    /// Precision: of the runs that loaded it, the share where it was
    /// expected.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.correct_loads, self.loads)
    }
}

fn ratio(part: u32, whole: u32) -> Option<f64> {
    (whole > 0).then(|| f64::from(part) / f64::from(whole))
}

fn config(message: impl Into<String>) -> EvalError {
    EvalError::new(EvalErrorKind::Config, message)
}

/// The settings both evals share, checked before any model call: runs and
/// concurrency within their caps, and at least one model call per run.
pub(crate) fn check_run_settings(
    runs: u32,
    concurrency: usize,
    max_steps: usize,
) -> Result<(), EvalError> {
    if !(1..=MAX_RUNS).contains(&runs) {
        return Err(config(format!("runs is {runs}; use 1 to {MAX_RUNS}")));
    }
    if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
        return Err(config(format!(
            "concurrency is {concurrency}; use 1 to {MAX_CONCURRENCY}"
        )));
    }
    if max_steps == 0 {
        return Err(config(
            "max_steps is 0; a run needs at least one model call",
        ));
    }
    Ok(())
}

pub(crate) fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "no skills".to_owned()
    } else {
        names.join(", ")
    }
}
