//! Load state (F-DIS-10): which skills are loaded, which docs and tools are
//! selected for them, in most-recently-used order.
//!
//! The state is a pure replay of the transcript's metadata: injection tags
//! (loaded / released), doc and tool selections, and "touch" marks. So it can
//! always be rebuilt from the transcript alone ([`LoadState::from_transcript`]),
//! and its loaded set always equals
//! [`skills_core::collect_loaded_skill_names`] over the same transcript.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use skills_core::{InjectionAction, TaggedMessage};

use crate::message::{COMPACTION_KEY, DOCS_KEY, Message, TOOLS_KEY, TOUCH_KEY};

/// Which docs of a skill are selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocSelection {
    /// Every doc the skill has.
    All,
    /// These docs (paths relative to the skill folder), sorted.
    Some(BTreeSet<String>),
}

impl DocSelection {
    /// The selection as stored in metadata: `"*"` or an array of paths.
    pub fn to_value(&self) -> Value {
        match self {
            Self::All => Value::String("*".to_owned()),
            Self::Some(docs) => Value::Array(docs.iter().cloned().map(Value::String).collect()),
        }
    }

    /// Reads a stored selection back.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) if s == "*" => Some(Self::All),
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<BTreeSet<_>>>()
                .map(Self::Some),
            _ => None,
        }
    }

    /// Whether `doc` is selected.
    pub fn contains(&self, doc: &str) -> bool {
        match self {
            Self::All => true,
            Self::Some(docs) => docs.contains(doc),
        }
    }
}

/// One agent's load state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadState {
    /// Loaded skills, least recently used first, with the transcript index of
    /// the message that loaded them.
    order: Vec<(String, usize)>,
    docs: BTreeMap<String, DocSelection>,
    tools: BTreeMap<String, BTreeSet<String>>,
}

impl LoadState {
    /// Replays a whole transcript.
    pub fn from_transcript(messages: &[Message]) -> Self {
        let mut state = Self::default();
        for (index, message) in messages.iter().enumerate() {
            state.apply(index, message);
        }
        state
    }

    /// Applies one message (at transcript position `index`).
    pub fn apply(&mut self, index: usize, message: &Message) {
        if message.has_metadata(COMPACTION_KEY) {
            // The docs delivered so far are behind the summary now: nothing
            // counts as selected any more.
            self.docs.clear();
        }
        for injection in message.skill_injections() {
            for name in injection.skills {
                match injection.action {
                    InjectionAction::Loaded => {
                        self.order.retain(|(n, _)| *n != name);
                        self.order.push((name, index));
                    }
                    InjectionAction::Released => {
                        self.order.retain(|(n, _)| *n != name);
                        self.docs.remove(&name);
                        self.tools.remove(&name);
                    }
                }
            }
        }
        if let Some(Value::Object(map)) = message.metadata.get(DOCS_KEY)
            && let (Some(skill), Some(selection)) = (
                map.get("skill").and_then(Value::as_str),
                map.get("docs").and_then(DocSelection::from_value),
            )
        {
            match &selection {
                DocSelection::Some(docs) if docs.is_empty() => {
                    self.docs.remove(skill);
                }
                _ => {
                    self.docs.insert(skill.to_owned(), selection);
                }
            }
        }
        if let Some(Value::Object(map)) = message.metadata.get(TOOLS_KEY)
            && let (Some(skill), Some(Value::Array(tools))) =
                (map.get("skill").and_then(Value::as_str), map.get("tools"))
        {
            let tools: BTreeSet<String> = tools
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            self.tools.insert(skill.to_owned(), tools);
        }
        if let Some(Value::String(skill)) = message.metadata.get(TOUCH_KEY)
            && let Some(pos) = self.order.iter().position(|(n, _)| n == skill)
        {
            let entry = self.order.remove(pos);
            self.order.push(entry);
        }
    }

    /// The loaded skills, sorted by name.
    pub fn loaded(&self) -> BTreeSet<String> {
        self.order.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The loaded skills, least recently used first.
    pub fn in_use_order(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.order.iter().map(|(n, _)| n.as_str())
    }

    /// How many skills are loaded.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether nothing is loaded.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether `skill` is loaded.
    pub fn is_loaded(&self, skill: &str) -> bool {
        self.order.iter().any(|(n, _)| n == skill)
    }

    /// The transcript index of the message that last loaded `skill`.
    pub fn loaded_at(&self, skill: &str) -> Option<usize> {
        self.order
            .iter()
            .find(|(n, _)| n == skill)
            .map(|(_, index)| *index)
    }

    /// The docs selected for `skill`.
    pub fn docs(&self, skill: &str) -> Option<&DocSelection> {
        self.docs.get(skill)
    }

    /// The tools explicitly selected for `skill` (`None`: its declared tools).
    pub fn selected_tools(&self, skill: &str) -> Option<&BTreeSet<String>> {
        self.tools.get(skill)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skills_core::SkillInjection;

    #[test]
    fn replay_follows_tags_and_selections() {
        let transcript = vec![
            Message::tool_result("1", "load_skill", "a").tagged(&SkillInjection::loaded(["a"])),
            Message::tool_result("2", "load_skill", "b").tagged(&SkillInjection::loaded(["b"])),
            Message::tool_result("3", "x", "docs").with_metadata(
                DOCS_KEY,
                serde_json::json!({"skill": "a", "docs": ["references/x.md"]}),
            ),
            Message::tool_result("4", "read_skill_file", "..")
                .with_metadata(TOUCH_KEY, Value::String("a".into())),
            Message::user("next").tagged(&SkillInjection::released(["b"])),
        ];
        let state = LoadState::from_transcript(&transcript);
        assert_eq!(state.in_use_order().collect::<Vec<_>>(), vec!["a"]);
        assert!(
            state
                .docs("a")
                .is_some_and(|d| d.contains("references/x.md"))
        );
        assert_eq!(
            state.loaded(),
            skills_core::collect_loaded_skill_names(&transcript)
        );
        assert_eq!(state.loaded_at("a"), Some(0));
    }

    #[test]
    fn doc_selection_round_trips() {
        for sel in [
            DocSelection::All,
            DocSelection::Some(["a.md".to_owned()].into_iter().collect()),
        ] {
            assert_eq!(DocSelection::from_value(&sel.to_value()), Some(sel));
        }
        assert_eq!(DocSelection::from_value(&Value::Bool(true)), None);
    }
}
