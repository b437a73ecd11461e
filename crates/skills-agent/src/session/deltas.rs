//! Catalog deltas (F-DIS-3): what changed in the skill set since the catalog
//! was pinned, announced by an appended notice, never by rewriting the prompt.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use skills_core::{Error, SkillInjection};
use tracing::Instrument as _;
use tracing::field::Empty;

use crate::config::CatalogMode;
use crate::library::announced;
use crate::message::{CATALOG_DELTA_KEY, Message};
use crate::render;

use super::{CatalogDelta, Event, ReleaseReason, Session};

impl Session {
    /// Lists the provider again; when the skill set changed, appends one
    /// message announcing only the changes (F-DIS-3). The pinned catalog and
    /// the system prompt never change. In on-demand mode nothing is announced
    /// (the catalog is not in the prompt); search sees the new set.
    ///
    /// # Errors
    /// Whatever the provider's `list` returns.
    pub async fn refresh_catalog(&mut self) -> Result<Option<CatalogDelta>, Error> {
        let span = tracing::debug_span!(
            "skills.refresh_catalog",
            agent = %self.agent.name(),
            skills = Empty,
            changed = Empty,
        );
        let result = self.refresh_catalog_inner().instrument(span.clone()).await;
        if let Ok(delta) = &result {
            span.record("skills", self.disclosure.current.len());
            span.record("changed", delta.is_some());
        }
        result
    }

    pub(super) async fn refresh_catalog_inner(&mut self) -> Result<Option<CatalogDelta>, Error> {
        let listed_at = self.agent.search_cache().mark();
        let latest = self.agent.provider().list().await?;
        self.disclosure.listed_at = listed_at;
        // New or changed skills get their requirements checked too.
        let policy = self.agent.session_policy(&latest, &self.disclosure.policy);
        self.disclosure.policy = std::sync::Arc::new(policy);
        let now: BTreeMap<String, String> = announced(&latest, &self.disclosure.policy);
        self.disclosure.current = latest;
        let mut delta = CatalogDelta::default();
        for (name, description) in &now {
            match self.disclosure.announced.get(name) {
                None => delta.added.push((name.clone(), description.clone())),
                Some(old) if old != description => {
                    delta.changed.push((name.clone(), description.clone()));
                }
                Some(_) => {}
            }
        }
        delta.removed = self
            .disclosure
            .announced
            .keys()
            .filter(|name| !now.contains_key(*name))
            .cloned()
            .collect();
        if delta.is_empty() {
            return Ok(None);
        }
        if matches!(self.agent.config().catalog, CatalogMode::InPrompt(_)) {
            let mut message = delta_message(&delta);
            // A removed skill stops counting as loaded: compaction will not
            // re-attach it and a later load reports it unknown.
            let gone: Vec<String> = delta
                .removed
                .iter()
                .filter(|name| self.is_loaded(name))
                .cloned()
                .collect();
            if !gone.is_empty() {
                message.tag(&SkillInjection::released(gone.clone()));
                for skill in gone {
                    self.disclosure.bodies.remove(&skill);
                    self.events.push(Event::SkillReleased {
                        skill,
                        reason: ReleaseReason::Removed,
                    });
                }
            }
            apply_delta_metadata(&mut self.disclosure.announced, &message);
            self.disclosure.skills_on = true;
            self.push(message);
        } else {
            self.disclosure.announced = now;
        }
        self.events.push(Event::CatalogChanged(delta.clone()));
        Ok(Some(delta))
    }

    /// A notice of everything announced since the catalog was pinned (the
    /// difference between the pinned catalog and what the model was told), or
    /// `None` when nothing changed or the catalog is not in the prompt.
    pub(super) fn delta_since_pinned(&self) -> Option<Message> {
        if !matches!(self.agent.config().catalog, CatalogMode::InPrompt(_)) {
            return None;
        }
        let pinned_map = announced(&self.disclosure.pinned, &self.disclosure.pinned_policy);
        let pinned: BTreeMap<&str, &str> = pinned_map
            .iter()
            .map(|(name, description)| (name.as_str(), description.as_str()))
            .collect();
        let mut delta = CatalogDelta::default();
        for (name, description) in &self.disclosure.announced {
            match pinned.get(name.as_str()) {
                None => delta.added.push((name.clone(), description.clone())),
                Some(old) if old != description => {
                    delta.changed.push((name.clone(), description.clone()));
                }
                Some(_) => {}
            }
        }
        delta.removed = pinned
            .keys()
            .filter(|name| !self.disclosure.announced.contains_key(**name))
            .map(|name| (*name).to_owned())
            .collect();
        (!delta.is_empty()).then(|| delta_message(&delta))
    }
}

pub(super) fn apply_delta_metadata(announced: &mut BTreeMap<String, String>, message: &Message) {
    let Some(Value::Object(map)) = message.metadata.get(CATALOG_DELTA_KEY) else {
        return;
    };
    for key in ["added", "changed"] {
        for pair in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            if let (Some(name), Some(description)) = (
                pair.get(0).and_then(Value::as_str),
                pair.get(1).and_then(Value::as_str),
            ) {
                announced.insert(name.to_owned(), description.to_owned());
            }
        }
    }
    for name in map
        .get("removed")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        announced.remove(name);
    }
}

/// The harness notice announcing `delta` (F-DIS-3), with the metadata that
/// lets a replay know what the model has been told.
pub(super) fn delta_message(delta: &CatalogDelta) -> Message {
    let text = render::catalog_delta(&delta.added, &delta.changed, &delta.removed);
    let metadata = json!({
        "added": delta.added.iter().map(|(n, d)| json!([n, d])).collect::<Vec<_>>(),
        "changed": delta.changed.iter().map(|(n, d)| json!([n, d])).collect::<Vec<_>>(),
        "removed": delta.removed,
    });
    Message::system(text).with_metadata(CATALOG_DELTA_KEY, metadata)
}
