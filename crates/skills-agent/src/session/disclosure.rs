//! What the model has been told about the skill set: the catalog pinned when
//! the session started and rendered once into the stable system block, the
//! latest catalog, the changes announced since (deltas), and the loaded
//! bodies kept for the legacy block, the fallback and compaction.

use std::collections::BTreeMap;
use std::sync::Arc;

use skills_core::{Catalog, Tier, VisibilityPolicy};

use super::deltas::apply_delta_metadata;
use super::join_nonempty;
use crate::config::{Agent, CatalogMode, PromptContext};
use crate::library::announced;
use crate::message::{CATALOG_DELTA_KEY, Message};
use crate::render;
use crate::surface::Surface;

/// The disclosure state of one session.
#[derive(Debug)]
pub(super) struct Disclosure {
    /// The catalog the prompt was rendered from.
    pub(super) pinned: Catalog,
    /// The latest catalog (pinned, then refreshed).
    pub(super) current: Catalog,
    /// What the model has been told: pinned plus announced deltas.
    pub(super) announced: BTreeMap<String, String>,
    /// Block 0 of the system region, rendered once.
    pub(super) stable_system: String,
    /// Loaded text per skill (the wrapped body), for the legacy block, the
    /// fallback and compaction.
    pub(super) bodies: BTreeMap<String, String>,
    /// Whether the skill tools are offered (sticky: once on, never off, so
    /// the tool list does not move).
    pub(super) skills_on: bool,
    /// The search cache's mark taken just before the session last listed the
    /// provider: a search needs a library check newer than it.
    pub(super) listed_at: u64,
    /// The agent's visibility policy with this session's requirement checks
    /// (re-checked when the catalog is refreshed).
    pub(super) policy: Arc<VisibilityPolicy>,
    /// The policy the pinned catalog was rendered with, frozen: what the
    /// model was told at the start is judged with it.
    pub(super) pinned_policy: Arc<VisibilityPolicy>,
    /// Whether declared loads are off (a forked sub-agent's session).
    pub(super) preloads_off: bool,
    /// The skills of the app's declared loads while they are written: the
    /// loads take them from here (already checked), once each.
    pub(super) prefetched: BTreeMap<String, Arc<skills_core::Skill>>,
}

impl Disclosure {
    /// The disclosure state of a session of `agent` that pinned `pinned`,
    /// with the deltas `messages` announced; and the rendered catalog (for
    /// an Eino tool that carries it in its description).
    pub(super) fn new(
        agent: &Agent,
        pinned: Catalog,
        messages: &[Message],
        listed_at: u64,
    ) -> (Self, String) {
        let config = agent.config();
        // A policy in the catalog's render options counts when the builder
        // was given none.
        let base = match &config.catalog {
            CatalogMode::InPrompt(options) if config.visibility.is_default() => {
                Arc::clone(&options.visibility)
            }
            _ => Arc::clone(&config.visibility),
        };
        let policy = Arc::new(agent.session_policy(&pinned, &base));
        let catalog_text = match &config.catalog {
            CatalogMode::InPrompt(options) => {
                let mut options = options.clone();
                options.load_tool = config.surface.load_tool().to_owned();
                options.visibility = policy.clone();
                pinned.render(&options)
            }
            CatalogMode::OnDemand => String::new(),
        };
        let catalog_in_tool =
            matches!(&config.surface, Surface::Eino(o) if o.catalog_in_description);
        let prompt_catalog = if catalog_in_tool {
            ""
        } else {
            catalog_text.as_str()
        };
        let stable_system = match &config.prompt_hook {
            Some(hook) => hook(&PromptContext {
                instructions: &config.instructions,
                catalog: prompt_catalog,
                load_tool: config.surface.load_tool(),
            }),
            None => {
                let skills_part = match config.catalog {
                    CatalogMode::OnDemand => render::on_demand_guidance(config.surface.load_tool()),
                    CatalogMode::InPrompt(_) => prompt_catalog.to_owned(),
                };
                join_nonempty(&config.instructions, &skills_part)
            }
        };
        let mut announced: BTreeMap<String, String> = announced(&pinned, &policy);
        for message in messages {
            apply_delta_metadata(&mut announced, message);
        }
        // Skill tools are offered when the model can see a skill or the user
        // can invoke one, from the start (no move later), or from the first
        // announced skill on.
        let skills_on = matches!(config.catalog, CatalogMode::OnDemand)
            || pinned.entries().iter().any(|m| match policy.tier(m) {
                Tier::Off => false,
                Tier::Manual => m.extensions.user_invocable != Some(false),
                _ => true,
            })
            || messages.iter().any(|m| m.has_metadata(CATALOG_DELTA_KEY));
        let disclosure = Self {
            current: pinned.clone(),
            pinned,
            announced,
            stable_system,
            bodies: BTreeMap::new(),
            skills_on,
            listed_at,
            pinned_policy: Arc::clone(&policy),
            policy,
            preloads_off: false,
            prefetched: BTreeMap::new(),
        };
        (disclosure, catalog_text)
    }
}
