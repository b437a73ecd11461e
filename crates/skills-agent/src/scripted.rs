//! [`ScriptedModel`]: a [`Model`] that answers from a script, for tests,
//! demos and offline runs of the loop. Only with the `testing` feature: it is
//! test support, not part of the production API.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::model::{Model, ModelError, ModelErrorKind, ModelResponse};
use crate::request::{CacheStrategy, ModelRequest};

/// One step of a [`ScriptedModel`]'s script.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ScriptStep {
    /// Answer with this response.
    Respond(Box<ModelResponse>),
    /// Fail with this error.
    Fail(ModelError),
}

/// A model that answers from a script, one step per call, and records every
/// request it was sent: for tests, demos and offline runs of the loop.
///
/// When the script runs out, a call fails with [`ModelErrorKind::Script`].
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    cache: CacheStrategy,
    script: Mutex<VecDeque<ScriptStep>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl ScriptedModel {
    /// A model named `scripted` that gives these responses in order.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Self::with_steps(
            responses
                .into_iter()
                .map(|r| ScriptStep::Respond(Box::new(r))),
        )
    }

    /// A model with a script that may include failures.
    pub fn with_steps(steps: impl IntoIterator<Item = ScriptStep>) -> Self {
        Self {
            name: "scripted".to_owned(),
            cache: CacheStrategy::AutomaticPrefix,
            script: Mutex::new(steps.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Renames the model (events and logs show the name).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Answers [`Model::cache_strategy`] with `strategy` (default
    /// [`CacheStrategy::AutomaticPrefix`]), to stand in for a provider that
    /// caches at explicit markers.
    #[must_use]
    pub fn with_cache_strategy(mut self, strategy: CacheStrategy) -> Self {
        self.cache = strategy;
        self
    }

    /// Appends a step to the script.
    pub fn push(&self, step: ScriptStep) {
        lock(&self.script).push_back(step);
    }

    /// Every request sent so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }

    /// Steps left in the script.
    pub fn remaining(&self) -> usize {
        lock(&self.script).len()
    }
}

/// Locks a mutex, recovering from poisoning: the guarded data (a queue, a
/// log) stays consistent even if a holder panicked.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl Model for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn cache_strategy(&self) -> CacheStrategy {
        self.cache
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        lock(&self.requests).push(request.clone());
        match lock(&self.script).pop_front() {
            Some(ScriptStep::Respond(response)) => Ok(*response),
            Some(ScriptStep::Fail(error)) => Err(error),
            None => Err(ModelError::new(
                ModelErrorKind::Script,
                format!(
                    "the script of model `{}` has no step left for request {}",
                    self.name,
                    lock(&self.requests).len()
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::StreamExt;
    use serde_json::json;

    use super::*;
    use crate::message::{Message, ToolCall};
    use crate::model::{ModelEvent, Retry, StopReason};

    fn request() -> ModelRequest {
        ModelRequest {
            system: Vec::new(),
            tools: Vec::new(),
            messages: vec![Message::user("hi")],
            cache_breakpoints: Vec::new(),
        }
    }

    #[test]
    fn scripted_model_answers_in_order_records_requests_and_runs_out() {
        let model = ScriptedModel::with_steps([
            ScriptStep::Respond(Box::new(ModelResponse::tool_calls(
                "",
                vec![ToolCall::new("c1", "load_skill", json!({"name": "x"}))],
            ))),
            ScriptStep::Fail(ModelError::new(ModelErrorKind::Server, "boom").with_status(500)),
        ]);
        pollster::block_on(async {
            let first = model.complete(&request()).await.expect("first");
            assert_eq!(first.stop, StopReason::ToolUse);
            let err = model.complete(&request()).await.expect_err("second");
            assert_eq!(err.to_string(), "server (HTTP 500): boom");
            let err = model.complete(&request()).await.expect_err("third");
            assert_eq!(err.kind(), ModelErrorKind::Script);
            assert!(err.message().contains("request 3"), "{err}");
        });
        assert_eq!(model.requests().len(), 3);
        assert_eq!(model.remaining(), 0);
    }

    #[test]
    fn default_stream_yields_text_calls_then_completion() {
        let response =
            ModelResponse::tool_calls("let me look", vec![ToolCall::new("c1", "read", json!({}))])
                .with_retries(vec![Retry::new(1, Duration::from_millis(20), "HTTP 429")]);
        let model = ScriptedModel::new([response.clone()]);
        let events: Vec<ModelEvent> = pollster::block_on(async {
            let request = request();
            let stream = model.stream(&request).await.expect("stream");
            stream.map(|e| e.expect("event")).collect().await
        });
        assert_eq!(
            events,
            vec![
                ModelEvent::Retry(Retry::new(1, Duration::from_millis(20), "HTTP 429")),
                ModelEvent::TextDelta("let me look".into()),
                ModelEvent::ToolCall(ToolCall::new("c1", "read", json!({}))),
                ModelEvent::Completed(response),
            ]
        );
    }
}
