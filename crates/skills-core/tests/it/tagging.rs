//! Injection tagging: the loaded set is a pure function of the transcript.

use std::collections::BTreeSet;

use proptest::prelude::*;
use skills_core::{
    Message, Role, SKILL_INJECTION_KEY, SkillInjection, TaggedMessage, collect_loaded_skill_names,
};

fn loaded(messages: &[Message]) -> Vec<String> {
    collect_loaded_skill_names(messages).into_iter().collect()
}

#[test]
fn loads_and_releases_replay_in_order() {
    let transcript = vec![
        Message::new(Role::System, "You are helpful."),
        Message::new(Role::User, "Make a PDF and a chart."),
        Message::new(Role::Tool, "pdf body").tagged(&SkillInjection::loaded(["pdf"])),
        Message::new(Role::Tool, "chart + csv").tagged(&SkillInjection::loaded(["chart", "csv"])),
        Message::new(Role::Assistant, "Done with the chart."),
        Message::new(Role::System, "turn ended").tagged(&SkillInjection::released(["chart"])),
        // Releasing something never loaded is a no-op.
        Message::new(Role::System, "evict").tagged(&SkillInjection::released(["never"])),
        // Loading twice is idempotent.
        Message::new(Role::Tool, "pdf again").tagged(&SkillInjection::loaded(["pdf", "pdf"])),
        Message::new(Role::Tool, "empty").tagged(&SkillInjection::loaded(Vec::<String>::new())),
    ];
    assert_eq!(loaded(&transcript), vec!["csv", "pdf"]);
    assert_eq!(loaded(&transcript[..4]), vec!["chart", "csv", "pdf"]);
    assert!(loaded(&transcript[..2]).is_empty());
    assert!(loaded(&[]).is_empty());

    // Release then reload.
    let mut more = transcript.clone();
    more.push(Message::new(Role::System, "all").tagged(&SkillInjection::released(["csv", "pdf"])));
    assert!(loaded(&more).is_empty());
    more.push(Message::new(Role::Tool, "chart").tagged(&SkillInjection::loaded(["chart"])));
    assert_eq!(loaded(&more), vec!["chart"]);
}

#[test]
fn malformed_tags_are_ignored() {
    let mut garbage = Message::new(Role::Tool, "x");
    for value in [
        serde_json::json!("loaded"),
        serde_json::json!({"action": "loaded"}),
        serde_json::json!({"action": "unloaded", "skills": ["a"]}),
        serde_json::json!({"action": "loaded", "skills": "a"}),
        serde_json::json!(null),
    ] {
        garbage
            .metadata
            .insert(SKILL_INJECTION_KEY.to_owned(), value.clone());
        assert_eq!(garbage.skill_injection(), None, "{value}");
        assert!(loaded(&[garbage.clone()]).is_empty(), "{value}");
    }
    // The tag must be under the exact key.
    let mut elsewhere = Message::new(Role::Tool, "x");
    elsewhere.metadata.insert(
        "skills.injection.v2".to_owned(),
        SkillInjection::loaded(["a"]).to_value(),
    );
    assert!(loaded(&[elsewhere]).is_empty());
}

#[test]
fn transcripts_survive_a_json_round_trip() {
    let transcript = vec![
        Message::new(Role::Tool, "a").tagged(&SkillInjection::loaded(["a", "b"])),
        Message::new(Role::System, "b").tagged(&SkillInjection::released(["a"])),
    ];
    let text = serde_json::to_string(&transcript).expect("serialize");
    let back: Vec<Message> = serde_json::from_str(&text).expect("parse");
    assert_eq!(back, transcript);
    assert_eq!(loaded(&back), vec!["b"]);
}

#[derive(Debug, Clone)]
enum Op {
    Load(Vec<String>),
    Release(Vec<String>),
    Untagged,
    Garbage,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let names = proptest::collection::vec("[a-f]", 0..4);
    prop_oneof![
        4 => names.clone().prop_map(Op::Load),
        3 => names.prop_map(Op::Release),
        1 => Just(Op::Untagged),
        1 => Just(Op::Garbage),
    ]
}

proptest! {
    /// The replay agrees with a `BTreeSet` model after every prefix of a random
    /// sequence of loads and releases.
    #[test]
    fn replay_matches_a_set_model(ops in proptest::collection::vec(op_strategy(), 0..60)) {
        let mut model = BTreeSet::new();
        let mut transcript = Vec::new();
        for op in ops {
            let message = match &op {
                Op::Load(names) => {
                    model.extend(names.iter().cloned());
                    Message::new(Role::Tool, "body").tagged(&SkillInjection::loaded(names.clone()))
                }
                Op::Release(names) => {
                    for n in names {
                        model.remove(n);
                    }
                    Message::new(Role::System, "release")
                        .tagged(&SkillInjection::released(names.clone()))
                }
                Op::Untagged => Message::new(Role::User, "hello"),
                Op::Garbage => {
                    let mut m = Message::new(Role::Tool, "garbage");
                    m.metadata.insert(
                        SKILL_INJECTION_KEY.to_owned(),
                        serde_json::json!({"action": "loaded", "skills": [1, 2]}),
                    );
                    m
                }
            };
            transcript.push(message);
            prop_assert_eq!(&collect_loaded_skill_names(&transcript), &model, "{:?}", op);
        }
    }
}
