//! Tool selection (`skill_select_tools`, F-DIS-11).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::library::record;
use crate::message::{Message, TOOLS_KEY, TOUCH_KEY, ToolCall};
use crate::render;
use crate::surface::{SelectMode, SelectToolsArgs};
use crate::tool::{ToolError, ToolErrorKind, clip};

use super::{Event, Session};

impl Session {
    pub(super) fn op_select_tools(
        &mut self,
        call: &ToolCall,
        args: SelectToolsArgs,
    ) -> Result<Message, ToolError> {
        let (meta, name) = self.loaded_meta(&args.skill)?;
        record("skill", &name);
        let pool = self.pool_names();
        let mode = SelectMode::parse(args.mode.as_deref());
        let all = args.include_all_tools.unwrap_or(false);
        let mut requested: BTreeSet<String> = args.tools.unwrap_or_default().into_iter().collect();
        if let Some(unknown) = requested.iter().find(|t| !pool.contains(t.as_str())) {
            let list: Vec<&str> = pool.iter().copied().collect();
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "there is no selectable tool `{}`. Selectable tools: {}.",
                    clip(unknown),
                    if list.is_empty() {
                        "none".to_owned()
                    } else {
                        list.join(", ")
                    }
                ),
            ));
        }
        // The tools the skill declares that this agent has: what a load
        // selects, and what `include_all_tools` selects.
        let declared: BTreeSet<String> = meta
            .declared_tools
            .iter()
            .filter(|t| pool.contains(t.as_str()))
            .cloned()
            .collect();
        if all {
            requested.extend(declared.iter().cloned());
        }
        let current: BTreeSet<String> = match self.transcript.state().selected_tools(&name) {
            Some(selected) => selected.clone(),
            None => declared,
        };
        let next: BTreeSet<String> = match mode {
            SelectMode::Add => current.union(&requested).cloned().collect(),
            SelectMode::Replace => requested,
            SelectMode::Clear => BTreeSet::new(),
        };
        let list: Vec<String> = next.iter().cloned().collect();
        self.events.push(Event::ToolsSelected {
            skill: name.clone(),
            tools: list.clone(),
        });
        Ok(Message::tool_result(
            &call.id,
            &call.name,
            render::tools_selected(
                &name,
                mode.as_str(),
                &list,
                all && mode != SelectMode::Clear,
            ),
        )
        .with_metadata(TOOLS_KEY, json!({"skill": name, "tools": list}))
        .with_metadata(TOUCH_KEY, Value::String(name)))
    }
}
