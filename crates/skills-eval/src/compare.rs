//! What a change did: a trigger report against a baseline report.

use std::collections::HashMap;

use serde::Serialize;

use crate::queries::Split;
use crate::triggers::{QueryResult, SkillRates, TriggerReport};

/// A current report set against a baseline, over one split.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Comparison {
    /// The split compared (`None`: all queries).
    pub split: Option<Split>,
    /// The baseline's model.
    pub baseline_model: String,
    /// The current report's model.
    pub current_model: String,
    /// Queries passed and failed in the baseline.
    pub baseline_passes: (usize, usize),
    /// Queries passed and failed now.
    pub current_passes: (usize, usize),
    /// Per skill in either report, sorted by name.
    pub skills: Vec<SkillDelta>,
    /// Queries in both reports whose pass/fail changed, in the current
    /// report's order.
    pub flipped: Vec<FlippedQuery>,
    /// Queries only the current report has.
    pub new_queries: usize,
    /// Queries only the baseline has.
    pub dropped_queries: usize,
    /// Why the two reports may not be comparable (a different threshold or
    /// number of runs, a query listed twice), for people to read.
    pub notes: Vec<String>,
}

/// One skill's rates before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SkillDelta {
    /// The skill.
    pub skill: String,
    /// Its rates in the baseline (`None`: not there).
    pub before: Option<SkillRates>,
    /// Its rates now (`None`: not there).
    pub after: Option<SkillRates>,
}

impl SkillDelta {
    /// The change of the trigger rate (recall), when both have one.
    pub fn trigger_rate_change(&self) -> Option<f64> {
        change(
            self.before.as_ref(),
            self.after.as_ref(),
            SkillRates::trigger_rate,
        )
    }

    /// The change of the false-trigger rate, when both have one.
    pub fn false_trigger_rate_change(&self) -> Option<f64> {
        change(
            self.before.as_ref(),
            self.after.as_ref(),
            SkillRates::false_trigger_rate,
        )
    }

    /// The change of precision, when both have one.
    pub fn precision_change(&self) -> Option<f64> {
        change(
            self.before.as_ref(),
            self.after.as_ref(),
            SkillRates::precision,
        )
    }
}

fn change(
    before: Option<&SkillRates>,
    after: Option<&SkillRates>,
    rate: fn(&SkillRates) -> Option<f64>,
) -> Option<f64> {
    Some(rate(after?)? - rate(before?)?)
}

/// A query that passes now and failed before, or the other way round.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FlippedQuery {
    /// The query.
    pub query: String,
    /// The skill it is about.
    pub skill: Option<String>,
    /// Whether the skill should load.
    pub should_trigger: bool,
    /// Its trigger rate in the baseline.
    pub before_rate: Option<f64>,
    /// Its trigger rate now.
    pub after_rate: Option<f64>,
    /// `true`: fixed by the change; `false`: broken by it.
    pub now_passes: bool,
}

type Key<'a> = (&'a str, Option<&'a str>, bool);

fn key(q: &QueryResult) -> Key<'_> {
    (q.query.as_str(), q.skill.as_deref(), q.should_trigger)
}

/// Compares `current` with `baseline` over `split` (all queries when
/// `None`). Queries match by text, skill and expectation; the split each
/// report gave a query is its own (the split of a query without an
/// explicit one depends only on its text, so both agree).
pub fn compare(
    baseline: &TriggerReport,
    current: &TriggerReport,
    split: Option<Split>,
) -> Comparison {
    let mut notes = Vec::new();
    if baseline.threshold != current.threshold {
        notes.push(format!(
            "the threshold differs: {} in the baseline, {} now; a query can flip on that alone",
            baseline.threshold, current.threshold
        ));
    }
    if baseline.runs_per_query != current.runs_per_query {
        notes.push(format!(
            "the runs per query differ: {} in the baseline, {} now",
            baseline.runs_per_query, current.runs_per_query
        ));
    }
    let mut before: HashMap<Key<'_>, &QueryResult> = HashMap::new();
    for q in baseline.queries_in(split) {
        if before.insert(key(q), q).is_some() {
            notes.push(format!(
                "the baseline lists a query twice; the last one is compared: {:?}",
                q.query
            ));
        }
    }
    let mut seen = 0;
    let mut flipped = Vec::new();
    let mut new_queries = 0;
    for q in current.queries_in(split) {
        match before.get(&key(q)) {
            Some(old) => {
                seen += 1;
                if old.passed != q.passed {
                    flipped.push(FlippedQuery {
                        query: q.query.clone(),
                        skill: q.skill.clone(),
                        should_trigger: q.should_trigger,
                        before_rate: old.trigger_rate,
                        after_rate: q.trigger_rate,
                        now_passes: q.passed,
                    });
                }
            }
            None => new_queries += 1,
        }
    }
    let mut old_rates: HashMap<String, SkillRates> = baseline
        .rates(split)
        .into_iter()
        .map(|r| (r.skill.clone(), r))
        .collect();
    let mut skills: Vec<SkillDelta> = current
        .rates(split)
        .into_iter()
        .map(|after| SkillDelta {
            skill: after.skill.clone(),
            before: old_rates.remove(&after.skill),
            after: Some(after),
        })
        .collect();
    skills.extend(old_rates.into_values().map(|before| SkillDelta {
        skill: before.skill.clone(),
        before: Some(before),
        after: None,
    }));
    skills.sort_by(|a, b| a.skill.cmp(&b.skill));
    Comparison {
        split,
        baseline_model: baseline.model.clone(),
        current_model: current.model.clone(),
        baseline_passes: baseline.pass_counts(split),
        current_passes: current.pass_counts(split),
        skills,
        flipped,
        new_queries,
        dropped_queries: before.len().saturating_sub(seen),
        notes,
    }
}
