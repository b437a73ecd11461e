//! Trigger query sets: which queries should load which skill.
//!
//! The shape follows the convention of the agentskills.io authoring guides
//! and skill-creator: a JSON array of `{"query": …, "should_trigger": …}`.
//! Because our catalogs hold many skills, an entry may also name its
//! `skill`; an entry without one takes the set's default skill (the
//! `{"skill": …, "queries": […]}` form, or the caller's), and a
//! should-not-trigger entry without any skill means "no skill should load".

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::error::{EvalError, EvalErrorKind};

/// Most queries one set may hold.
pub const MAX_QUERIES: usize = 100_000;
/// Longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 32 * 1024;

/// Which part of a query set an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// The queries a description is tuned on.
    Train,
    /// The held-out queries that tell whether a change generalises.
    Validation,
}

impl Split {
    /// `train` or `validation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Train => "train",
            Self::Validation => "validation",
        }
    }
}

/// One query of a set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerQuery {
    /// What the user says.
    pub query: String,
    /// The skill the entry is about; `None` only for a query no skill
    /// should answer.
    pub skill: Option<String>,
    /// Whether `skill` should load (for `skill: None`, always `false`).
    pub should_trigger: bool,
    /// Train or validation.
    pub split: Split,
}

/// How [`QuerySet::from_json`] reads a set.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The skill of entries that name none (a skill-creator set for one
    /// skill).
    pub default_skill: Option<String>,
    /// The share of entries without an explicit `split` that go to the
    /// validation split, chosen by a hash of the query text (stable across
    /// runs and machines). Default 0.4.
    pub holdout: f64,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            default_skill: None,
            holdout: 0.4,
        }
    }
}

impl QueryOptions {
    /// Sets the default skill.
    #[must_use]
    pub fn default_skill(mut self, skill: impl Into<String>) -> Self {
        self.default_skill = Some(skill.into());
        self
    }

    /// Sets the validation share (0 to 1).
    #[must_use]
    pub fn holdout(mut self, holdout: f64) -> Self {
        self.holdout = holdout;
        self
    }
}

/// A set of trigger queries, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuerySet {
    queries: Vec<TriggerQuery>,
}

impl QuerySet {
    /// A set of these queries (checked as [`from_json`](Self::from_json)
    /// checks a file's).
    pub fn new(queries: Vec<TriggerQuery>) -> Result<Self, EvalError> {
        let mut set = Self::default();
        for query in queries {
            set.push(query)?;
        }
        Ok(set)
    }

    /// Reads a set from its JSON text: an array of entries, or an object
    /// with `queries` (and an optional `skill` for its entries).
    ///
    /// Every entry has a non-empty `query` and a boolean `should_trigger`;
    /// `skill` and `split` (`train` | `validation`) are optional. Unknown
    /// fields are ignored, as other tools add their own.
    pub fn from_json(text: &str, options: &QueryOptions) -> Result<Self, EvalError> {
        if !(0.0..=1.0).contains(&options.holdout) {
            return Err(EvalError::new(
                EvalErrorKind::Config,
                format!("holdout {} is not between 0 and 1", options.holdout),
            ));
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|err| EvalError::new(EvalErrorKind::Input, format!("not JSON: {err}")))?;
        let (entries, file_skill) = match &value {
            Value::Array(entries) => (entries, None),
            Value::Object(object) => {
                let Some(Value::Array(entries)) = object.get("queries") else {
                    return Err(input(
                        "an object query set needs a `queries` array (or give an array of entries)",
                    ));
                };
                let skill = match object.get("skill").or_else(|| object.get("skill_name")) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(input("`skill` must be a string")),
                };
                (entries, skill)
            }
            _ => {
                return Err(input(
                    "a query set is a JSON array of {query, should_trigger}",
                ));
            }
        };
        if entries.len() > MAX_QUERIES {
            return Err(input(format!(
                "{} queries; a set holds at most {MAX_QUERIES}",
                entries.len()
            )));
        }
        let default_skill = file_skill.or_else(|| options.default_skill.clone());
        let mut set = Self::default();
        for (i, entry) in entries.iter().enumerate() {
            let at = |what: &str| input(format!("entry {}: {what}", i + 1));
            let Value::Object(entry) = entry else {
                return Err(at("not an object"));
            };
            let query = match entry.get("query") {
                Some(Value::String(q)) => q.clone(),
                _ => return Err(at("needs a `query` string")),
            };
            let should_trigger = match entry.get("should_trigger") {
                Some(Value::Bool(b)) => *b,
                _ => return Err(at("needs a boolean `should_trigger`")),
            };
            let skill = match entry.get("skill") {
                None | Some(Value::Null) => default_skill.clone(),
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err(at("`skill` must be a string")),
            };
            let split = match entry.get("split") {
                None | Some(Value::Null) => split_of(&query, options.holdout),
                Some(Value::String(s)) if s == "train" => Split::Train,
                Some(Value::String(s)) if s == "validation" || s == "test" => Split::Validation,
                Some(_) => return Err(at("`split` is `train` or `validation`")),
            };
            set.push(TriggerQuery {
                query,
                skill,
                should_trigger,
                split,
            })
            .map_err(|err| at(err.message()))?;
        }
        Ok(set)
    }

    fn push(&mut self, query: TriggerQuery) -> Result<(), EvalError> {
        if query.query.trim().is_empty() {
            return Err(input("the query is empty"));
        }
        if query.query.len() > MAX_QUERY_BYTES {
            return Err(input(format!(
                "the query has {} bytes; at most {MAX_QUERY_BYTES}",
                query.query.len()
            )));
        }
        if query.skill.is_none() && query.should_trigger {
            return Err(input(
                "`should_trigger: true` needs a `skill` (or a default skill for the set)",
            ));
        }
        if self.queries.len() >= MAX_QUERIES {
            return Err(input(format!("a set holds at most {MAX_QUERIES} queries")));
        }
        self.queries.push(query);
        Ok(())
    }

    /// The queries, in file order.
    pub fn queries(&self) -> &[TriggerQuery] {
        &self.queries
    }

    /// How many queries the set holds.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// The skills the set names, sorted.
    pub fn skills(&self) -> BTreeSet<&str> {
        self.queries
            .iter()
            .filter_map(|q| q.skill.as_deref())
            .collect()
    }

    /// Only the queries of `split`.
    #[must_use]
    pub fn only(&self, split: Split) -> Self {
        Self {
            queries: self
                .queries
                .iter()
                .filter(|q| q.split == split)
                .cloned()
                .collect(),
        }
    }
}

/// The split of a query without an explicit one: the first 8 bytes of the
/// SHA-256 of its text, as a share of `u64::MAX`, against `holdout`.
pub fn split_of(query: &str, holdout: f64) -> Split {
    let digest = Sha256::digest(query.as_bytes());
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    let share = u64::from_be_bytes(head) as f64 / u64::MAX as f64;
    if share < holdout {
        Split::Validation
    } else {
        Split::Train
    }
}

fn input(message: impl Into<String>) -> EvalError {
    EvalError::new(EvalErrorKind::Input, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes_and_fills_defaults() {
        let set = QuerySet::from_json(
            r#"[{"query":"fill this PDF form","should_trigger":true,"skill":"pdf"},
                {"query":"what is 2+2","should_trigger":false,"split":"train"}]"#,
            &QueryOptions::default(),
        )
        .unwrap_or_default();
        assert_eq!(set.len(), 2);
        assert_eq!(set.queries()[0].skill.as_deref(), Some("pdf"));
        assert_eq!(set.queries()[1].skill, None);
        assert_eq!(set.queries()[1].split, Split::Train);

        let set = QuerySet::from_json(
            r#"{"skill":"pdf","queries":[{"query":"merge two PDFs","should_trigger":true,"extra":1}]}"#,
            &QueryOptions::default(),
        )
        .unwrap_or_default();
        assert_eq!(set.queries()[0].skill.as_deref(), Some("pdf"));
    }

    #[test]
    fn refuses_what_it_cannot_read_and_says_where() {
        let bad = [
            ("{}", "queries"),
            ("[1]", "entry 1: not an object"),
            (
                r#"[{"query":"","should_trigger":true,"skill":"a"}]"#,
                "empty",
            ),
            (r#"[{"query":"x"}]"#, "should_trigger"),
            (
                r#"[{"query":"x","should_trigger":true}]"#,
                "needs a `skill`",
            ),
            (
                r#"[{"query":"x","should_trigger":false,"split":"dev"}]"#,
                "split",
            ),
            ("not json", "not JSON"),
        ];
        for (text, says) in bad {
            let err = QuerySet::from_json(text, &QueryOptions::default())
                .err()
                .map(|e| (e.kind(), e.to_string()));
            let Some((kind, message)) = err else {
                panic!("{text} was accepted");
            };
            assert_eq!(kind, EvalErrorKind::Input, "{text}");
            assert!(message.contains(says), "{text}: {message}");
        }
        let err = QuerySet::from_json("[]", &QueryOptions::default().holdout(1.5));
        assert_eq!(err.err().map(|e| e.kind()), Some(EvalErrorKind::Config));
    }

    #[test]
    fn the_split_is_stable_and_near_the_holdout() {
        let validation = (0..1000)
            .filter(|i| split_of(&format!("query number {i}"), 0.4) == Split::Validation)
            .count();
        assert!((340..=460).contains(&validation), "{validation}");
        assert_eq!(split_of("same text", 0.4), split_of("same text", 0.4));
        assert_eq!(split_of("anything", 0.0), Split::Train);
        assert_eq!(split_of("anything", 1.0), Split::Validation);
    }
}
