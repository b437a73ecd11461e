//! Models and skills the tests share.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use skills_agent::{Agent, Model, ModelError, ModelRequest, ModelResponse, Role, ToolCall, Usage};
use skills_core::{InCodeProvider, define_skill};

/// Three skills with clear descriptions.
pub(crate) fn provider() -> Arc<InCodeProvider> {
    let skills = [
        (
            "pdf",
            "Reads, merges and fills PDF files. Use when the user mentions a PDF.",
        ),
        (
            "csv",
            "Profiles and plots CSV files. Use when the user shares a CSV.",
        ),
        (
            "weather",
            "Writes weather reports. Use for weather questions.",
        ),
    ]
    .into_iter()
    .map(|(name, description)| {
        define_skill(name, description)
            .body(format!("# {name}\nDo the {name} job."))
            .build()
            .unwrap()
    });
    Arc::new(InCodeProvider::new(skills).unwrap())
}

/// An agent over [`provider`].
pub(crate) fn agent() -> Agent {
    Agent::builder("eval", provider()).build().unwrap()
}

/// A model that answers from the last user message: `load:NAME` in it
/// loads NAME, `stall` never answers, `fail` fails as a rate limit the
/// adapter gave up on; anything else is answered in text. Safe to call
/// concurrently, unlike a script.
#[derive(Debug, Default)]
pub(crate) struct Routed {
    pub calls: AtomicUsize,
}

impl Routed {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
}

fn last_user(request: &ModelRequest) -> &str {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map_or("", |m| m.content.as_str())
}

#[async_trait]
impl Model for Routed {
    fn name(&self) -> &str {
        "routed"
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let text = last_user(request);
        let usage = Usage::new(100, 5, 80, 0);
        if text.contains("stall") {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        if text.contains("fail") {
            return Err(ModelError::new(
                skills_agent::ModelErrorKind::RateLimited,
                "HTTP 429: slow down (after 3 retries)",
            ));
        }
        if let Some(rest) = text.split("load:").nth(1) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            return Ok(ModelResponse::tool_calls(
                "",
                vec![ToolCall::new(
                    format!("c{n}"),
                    "load_skill",
                    json!({ "name": name }),
                )],
            )
            .with_usage(usage));
        }
        Ok(ModelResponse::text("Here is my answer.").with_usage(usage))
    }
}
