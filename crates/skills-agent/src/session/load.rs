//! The load operation (`load_skill`, `skill_load`, Eino's `skill`), with the
//! doc delivery it shares with doc selection.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use skills_core::{Skill, SkillInjection};

use crate::config::Materialization;
use crate::library::record;
use crate::message::{DOCS_KEY, Message, TOUCH_KEY, ToolCall};
use crate::render;
use crate::state::DocSelection;
use crate::surface::SelectMode;
use crate::tool::ToolError;

use super::{Event, Session};

impl Session {
    pub(super) async fn op_load(
        &mut self,
        call: &ToolCall,
        name: &str,
        docs: Option<Vec<String>>,
        all_docs: bool,
    ) -> Result<Message, ToolError> {
        let wants_docs = all_docs || docs.as_ref().is_some_and(|d| !d.is_empty());
        if self.is_loaded(name) && !wants_docs {
            self.meta(name, false)?;
            // Asking for a loaded skill again is a use: it moves up in the
            // most-recently-used order the cap follows.
            return Ok(Message::tool_result(
                &call.id,
                &call.name,
                render::already_active(name, self.legacy()),
            )
            .with_metadata(TOUCH_KEY, Value::String(name.to_owned())));
        }
        let skill = self.fetch(name, !self.is_loaded(name)).await?;
        let name = skill.name().to_owned();
        record("skill", &name);
        let mut parts = Vec::new();
        let mut message_meta: Option<Value> = None;
        let already = self.is_loaded(&name);
        let body = self.library().loaded_body(&skill);
        if already {
            parts.push(render::already_active(&name, self.legacy()));
        } else {
            match self.agent.config().materialization {
                Materialization::ToolResult => parts.push(body.clone()),
                Materialization::SystemMessage => parts.push(render::legacy_stub(&name)),
            }
        }
        if wants_docs {
            let selection = if all_docs {
                DocSelection::All
            } else {
                DocSelection::Some(
                    self.library()
                        .check_docs(&skill, docs.unwrap_or_default())?,
                )
            };
            let previous = self.transcript.state().docs(&name).cloned();
            let new_docs = docs_to_deliver(&skill, previous.as_ref(), &selection);
            tracing::Span::current().record("docs", new_docs.len());
            parts.extend(self.library().deliver_docs(&name, &new_docs).await?);
            let merged = merge_selection(previous, selection, SelectMode::Add);
            if already {
                parts.push(format!(
                    "Docs selected for the skill \"{name}\": {}.",
                    selection_names(&merged).join(", ")
                ));
            }
            message_meta = Some(json!({"skill": name, "docs": merged.to_value()}));
            self.events.push(Event::DocsSelected {
                skill: name.clone(),
                docs: selection_names(&merged),
            });
        }
        if !already {
            // Say which pool tools this load exposes (F-DIS-11).
            let exposed = self.exposed_pool();
            let pool = self.pool_names();
            let mut new_tools: Vec<&str> = skill
                .metadata
                .declared_tools
                .iter()
                .map(String::as_str)
                .filter(|t| pool.contains(t) && !exposed.contains(*t))
                .collect();
            new_tools.dedup();
            if !new_tools.is_empty() {
                parts.push(format!(
                    "Tools this skill uses are available from your next step: {}.",
                    new_tools.join(", ")
                ));
            }
        }
        let mut message = Message::tool_result(&call.id, &call.name, parts.join("\n"));
        if let Some(value) = message_meta {
            message = message.with_metadata(DOCS_KEY, value);
        }
        if !already {
            message.tag(&SkillInjection::loaded([name.clone()]));
            self.enforce_cap(&mut message, &name);
            self.disclosure.bodies.insert(name.clone(), body);
            self.events.push(Event::SkillLoaded {
                skill: name,
                by_mention: false,
            });
        } else {
            message = message.with_metadata(TOUCH_KEY, Value::String(name));
        }
        Ok(message)
    }
}

/// The docs a call delivers, in path order: every doc it names (the model
/// asks because it does not see it; after a compaction or out of the history
/// window it may have been selected before), or for "all docs" the ones not
/// selected before.
pub(super) fn docs_to_deliver(
    skill: &Skill,
    previous: Option<&DocSelection>,
    requested: &DocSelection,
) -> Vec<String> {
    match requested {
        DocSelection::All => skills_core::list_docs(skill)
            .into_iter()
            .map(|d| d.as_str().to_owned())
            .filter(|d| !previous.is_some_and(|p| p.contains(d)))
            .collect(),
        DocSelection::Some(docs) => docs.iter().cloned().collect(),
    }
}

pub(super) fn merge_selection(
    previous: Option<DocSelection>,
    requested: DocSelection,
    mode: SelectMode,
) -> DocSelection {
    match (mode, previous, requested) {
        (SelectMode::Clear, _, _) => DocSelection::Some(BTreeSet::new()),
        (SelectMode::Replace, _, requested) => requested,
        (SelectMode::Add, _, DocSelection::All) | (SelectMode::Add, Some(DocSelection::All), _) => {
            DocSelection::All
        }
        (SelectMode::Add, Some(DocSelection::Some(mut old)), DocSelection::Some(new)) => {
            old.extend(new);
            DocSelection::Some(old)
        }
        (SelectMode::Add, None, requested) => requested,
    }
}

pub(super) fn selection_names(selection: &DocSelection) -> Vec<String> {
    match selection {
        DocSelection::All => vec!["*".to_owned()],
        DocSelection::Some(docs) => docs.iter().cloned().collect(),
    }
}
