//! The load operation (`load_skill`, `skill_load`, Eino's `skill`), with the
//! doc delivery it shares with doc selection.

use super::*;

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
        let read_tool = self.agent.surface().read_tool();
        let mut parts = Vec::new();
        let mut message_meta: Option<Value> = None;
        let already = self.is_loaded(&name);
        let body = render::loaded_body(&skill, read_tool);
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
                DocSelection::Some(self.check_docs(&skill, docs.unwrap_or_default())?)
            };
            let previous = self.state.docs(&name).cloned();
            let new_docs = docs_to_deliver(&skill, previous.as_ref(), &selection);
            tracing::Span::current().record("docs", new_docs.len());
            parts.extend(self.deliver_docs(&name, &new_docs).await?);
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
            self.loaded_text.insert(name.clone(), body);
            self.events.push(Event::SkillLoaded {
                skill: name,
                by_mention: false,
            });
        } else {
            message = message.with_metadata(TOUCH_KEY, Value::String(name));
        }
        Ok(message)
    }

    pub(super) fn check_docs(
        &self,
        skill: &Skill,
        docs: Vec<String>,
    ) -> Result<BTreeSet<String>, ToolError> {
        if docs.len() > MAX_DOCS_PER_CALL {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "at most {MAX_DOCS_PER_CALL} docs per call ({} given)",
                    docs.len()
                ),
            ));
        }
        let mut out = BTreeSet::new();
        for doc in docs {
            let path = skills_core::find_doc(skill, &doc).map_err(|err| {
                let available = err.available().join(", ");
                ToolError::new(
                    ToolErrorKind::UnknownDoc,
                    format!(
                        "the skill `{}` has no doc `{}`. Available docs: {}.",
                        skill.name(),
                        clip(&doc),
                        if available.is_empty() {
                            "none"
                        } else {
                            &available
                        }
                    ),
                )
            })?;
            out.insert(path.as_str().to_owned());
        }
        Ok(out)
    }

    /// The texts of `docs` for a tool result, within a per-call count and
    /// size budget; docs past it are named (selected, not shown) so the model
    /// can ask for them by name.
    pub(super) async fn deliver_docs(
        &self,
        skill: &str,
        docs: &[String],
    ) -> Result<Vec<String>, ToolError> {
        let mut parts = Vec::new();
        let mut bytes = 0usize;
        let mut held_back = Vec::new();
        for doc in docs {
            if parts.len() >= MAX_DOCS_PER_CALL || bytes >= MAX_DOC_BYTES_PER_CALL {
                held_back.push(doc.as_str());
                continue;
            }
            let text = self.read_doc(skill, doc).await?;
            bytes += text.len();
            parts.push(text);
        }
        if !parts.is_empty() {
            parts.push(render::UNTRUSTED_DOCS.to_owned());
        }
        if !held_back.is_empty() {
            parts.push(format!(
                "Selected but not shown, to keep this result small: {}. Name the ones you need \
                 in another call to read them.",
                held_back.join(", ")
            ));
        }
        Ok(parts)
    }

    pub(super) async fn read_doc(&self, skill: &str, doc: &str) -> Result<String, ToolError> {
        let content = self
            .agent
            .provider()
            .read_resource(skill, doc, None)
            .await
            .map_err(|err| resource_error(&err, skill, doc))?;
        Ok(render::skill_doc(skill, &content))
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
