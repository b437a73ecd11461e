//! Doc selection (`skill_select_docs`).

use serde_json::{Value, json};

use crate::library::record;
use crate::message::{DOCS_KEY, Message, TOUCH_KEY, ToolCall};
use crate::render;
use crate::state::DocSelection;
use crate::surface::{SelectDocsArgs, SelectMode};
use crate::tool::ToolError;

use super::load::{docs_to_deliver, merge_selection, selection_names};
use super::{Event, Session};

impl Session {
    pub(super) async fn op_select_docs(
        &mut self,
        call: &ToolCall,
        args: SelectDocsArgs,
    ) -> Result<Message, ToolError> {
        let (_, name) = self.loaded_meta(&args.skill)?;
        record("skill", &name);
        let skill = self.fetch(&name, false).await?;
        let mode = SelectMode::parse(args.mode.as_deref());
        let previous = self.transcript.state().docs(&name).cloned();
        let requested = if args.include_all_docs.unwrap_or(false) {
            DocSelection::All
        } else {
            DocSelection::Some(
                self.library()
                    .check_docs(&skill, args.docs.unwrap_or_default())?,
            )
        };
        let merged = merge_selection(previous.clone(), requested.clone(), mode);
        let new_docs = if mode == SelectMode::Clear {
            Vec::new()
        } else {
            docs_to_deliver(&skill, previous.as_ref(), &requested)
        };
        tracing::Span::current().record("docs", new_docs.len());
        let mut parts = self.library().deliver_docs(&name, &new_docs).await?;
        // The selection as trpc-agent reports it, then the docs this call
        // newly selected (the loaded content follows in the same result).
        let (listed, all) = match &merged {
            DocSelection::All => (Vec::new(), true),
            DocSelection::Some(docs) => (docs.iter().cloned().collect(), false),
        };
        parts.insert(0, render::docs_selected(&name, mode.as_str(), &listed, all));
        let names = selection_names(&merged);
        self.events.push(Event::DocsSelected {
            skill: name.clone(),
            docs: names,
        });
        Ok(Message::tool_result(&call.id, &call.name, parts.join("\n"))
            .with_metadata(DOCS_KEY, json!({"skill": name, "docs": merged.to_value()}))
            .with_metadata(TOUCH_KEY, Value::String(name)))
    }
}
