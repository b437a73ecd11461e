//! Injection tagging (the transcript half of F-DIS-4).
//!
//! Every message that brings a skill body into the conversation carries a tag in
//! its metadata under [`SKILL_INJECTION_KEY`]. The set of loaded skills is then a
//! pure function of the transcript ([`collect_loaded_skill_names`]), so it survives
//! restarts, replays and session stores that keep only messages.
//!
//! Any message type can take part by implementing [`TaggedMessage`]; [`Message`]
//! is a minimal one for callers (and tests) that have none.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The metadata key under which a [`SkillInjection`] is stored.
pub const SKILL_INJECTION_KEY: &str = "skills.injection";

/// What a tagged message did to the loaded set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectionAction {
    /// The message brought these skills' bodies into the conversation.
    Loaded,
    /// These skills' bodies no longer count as loaded (e.g. a `turn` lifetime
    /// ended or a cap evicted them).
    Released,
}

/// The tag stored under [`SKILL_INJECTION_KEY`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillInjection {
    /// Loaded or released.
    pub action: InjectionAction,
    /// The skills concerned, by name.
    pub skills: Vec<String>,
}

impl SkillInjection {
    /// A "loaded" tag.
    pub fn loaded<I, S>(skills: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            action: InjectionAction::Loaded,
            skills: skills.into_iter().map(Into::into).collect(),
        }
    }

    /// A "released" tag.
    pub fn released<I, S>(skills: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            action: InjectionAction::Released,
            skills: skills.into_iter().map(Into::into).collect(),
        }
    }

    /// The tag as a JSON value, for storing in message metadata.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::json!({
            "action": self.action,
            "skills": self.skills,
        })
    }

    /// Reads a tag back; `None` when the value is not a tag.
    pub fn from_value(value: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(value.clone()).ok()
    }
}

/// A message that may carry metadata (and so an injection tag).
pub trait TaggedMessage {
    /// The metadata value under `key`, if any.
    fn metadata_value(&self, key: &str) -> Option<&serde_json::Value>;

    /// The first injection tag, if this message carries one.
    fn skill_injection(&self) -> Option<SkillInjection> {
        self.skill_injections().into_iter().next()
    }

    /// Every injection tag this message carries, in order.
    ///
    /// The value under [`SKILL_INJECTION_KEY`] is either one tag or an array of
    /// tags (a message that loads one skill and, through a cap, releases another
    /// carries two). Values that are not tags are ignored.
    fn skill_injections(&self) -> Vec<SkillInjection> {
        match self.metadata_value(SKILL_INJECTION_KEY) {
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .filter_map(SkillInjection::from_value)
                .collect(),
            Some(value) => SkillInjection::from_value(value).into_iter().collect(),
            None => Vec::new(),
        }
    }
}

/// Adds `injection` to a metadata map, keeping any tag already there (the
/// value becomes an array when a message carries more than one tag).
pub fn add_injection(
    metadata: &mut BTreeMap<String, serde_json::Value>,
    injection: &SkillInjection,
) {
    let value = injection.to_value();
    match metadata.remove(SKILL_INJECTION_KEY) {
        None => {
            metadata.insert(SKILL_INJECTION_KEY.to_owned(), value);
        }
        Some(serde_json::Value::Array(mut items)) => {
            items.push(value);
            metadata.insert(
                SKILL_INJECTION_KEY.to_owned(),
                serde_json::Value::Array(items),
            );
        }
        Some(existing) => {
            metadata.insert(
                SKILL_INJECTION_KEY.to_owned(),
                serde_json::Value::Array(vec![existing, value]),
            );
        }
    }
}

/// Replays the transcript's tags in order and returns the skills still loaded.
pub fn collect_loaded_skill_names<M: TaggedMessage>(messages: &[M]) -> BTreeSet<String> {
    let mut loaded = BTreeSet::new();
    for injection in messages.iter().flat_map(TaggedMessage::skill_injections) {
        match injection.action {
            InjectionAction::Loaded => loaded.extend(injection.skills),
            InjectionAction::Released => {
                for name in &injection.skills {
                    loaded.remove(name);
                }
            }
        }
    }
    loaded
}

/// Who wrote a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// System instructions.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// A minimal message: role, text and metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
    /// Metadata, sorted by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, serde_json::Value>,
}

impl Message {
    /// A message without metadata.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            metadata: BTreeMap::new(),
        }
    }

    /// Adds an injection tag (after any the message already carries).
    #[must_use]
    pub fn tagged(mut self, injection: &SkillInjection) -> Self {
        add_injection(&mut self.metadata, injection);
        self
    }
}

impl TaggedMessage for Message {
    fn metadata_value(&self, key: &str) -> Option<&serde_json::Value> {
        self.metadata.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_loads_and_releases() {
        let transcript = vec![
            Message::new(Role::User, "hi"),
            Message::new(Role::Tool, "body a").tagged(&SkillInjection::loaded(["a"])),
            Message::new(Role::Tool, "body b c").tagged(&SkillInjection::loaded(["b", "c"])),
            Message::new(Role::System, "expired").tagged(&SkillInjection::released(["b"])),
            Message::new(Role::Tool, "not a tag").tagged(&SkillInjection::loaded(["z"])),
        ];
        let mut transcript = transcript;
        transcript[4]
            .metadata
            .insert(SKILL_INJECTION_KEY.into(), serde_json::json!("garbage"));
        let loaded = collect_loaded_skill_names(&transcript);
        assert_eq!(loaded.into_iter().collect::<Vec<_>>(), vec!["a", "c"]);
    }

    #[test]
    fn one_message_can_load_and_release() {
        let transcript = vec![
            Message::new(Role::Tool, "a").tagged(&SkillInjection::loaded(["a"])),
            Message::new(Role::Tool, "b")
                .tagged(&SkillInjection::loaded(["b"]))
                .tagged(&SkillInjection::released(["a"])),
        ];
        assert_eq!(transcript[1].skill_injections().len(), 2);
        let loaded = collect_loaded_skill_names(&transcript);
        assert_eq!(loaded.into_iter().collect::<Vec<_>>(), vec!["b"]);
    }

    #[test]
    fn tag_round_trips_through_json() {
        let m = Message::new(Role::Tool, "x").tagged(&SkillInjection::loaded(["a"]));
        let text = serde_json::to_string(&m).expect("serialize");
        assert_eq!(
            text,
            r#"{"role":"tool","content":"x","metadata":{"skills.injection":{"action":"loaded","skills":["a"]}}}"#
        );
        let back: Message = serde_json::from_str(&text).expect("parse");
        assert_eq!(back.skill_injection(), Some(SkillInjection::loaded(["a"])));
    }
}
