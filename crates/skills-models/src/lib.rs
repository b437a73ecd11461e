//! `skills-models`: the HTTP model adapters for `skills-agent` (F-AGT-4):
//! OpenAI Chat Completions and Responses (feature `openai`) and Anthropic
//! Messages (feature `anthropic`), both on by default; and the [`wire`]
//! encoders they send, which are pure and build for `wasm32-unknown-unknown`
//! with the default features off (an edge worker posts them with its own
//! `fetch`).
//!
//! Each adapter implements [`skills_agent::Model`]: it posts exactly the
//! bytes a [`wire`] encoder wrote for the request (never a re-serialization,
//! so the engine's byte-stable prefix reaches the provider's cache intact),
//! reads the answer whole or as server-sent events, and turns it into a
//! [`skills_agent::ModelResponse`] or [`skills_agent::ModelEvent`]s: text
//! deltas, tool calls assembled from their deltas, usage with cached tokens,
//! the stop reason. Failures become [`skills_agent::ModelError`]s with the
//! provider's status and message; 429s, 5xx and dropped connections are
//! retried as [`HttpOptions`] says.
//!
//! ```no_run
//! use skills_agent::Model;
//! use skills_models::OpenAiChat;
//!
//! // OPENAI_API_KEY (and OPENAI_BASE_URL for another endpoint).
//! let model = OpenAiChat::from_env("gpt-4.1-mini")?;
//! assert_eq!(model.name(), "gpt-4.1-mini");
//! # Ok::<(), skills_agent::ModelError>(())
//! ```
//!
//! Boundaries: this crate does the network I/O (reqwest with rustls, on
//! tokio) so that `skills-agent`, the engine, does none. It depends on
//! `skills-agent` for the [`skills_agent::Model`] trait and the request
//! types, never the reverse, and never on `skills-fs`, `skills-exec` or a
//! session store. See `docs/models.md`.

pub mod wire;

#[cfg(feature = "http")]
mod limits;
#[cfg(feature = "http")]
mod route;
#[cfg(feature = "http")]
mod transport;

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(feature = "openai")]
mod openai_chat;
#[cfg(feature = "openai")]
mod openai_responses;

/// The adapters' parsers without HTTP, for the fuzz targets and tests; not
/// part of the supported API.
#[cfg(feature = "http")]
#[doc(hidden)]
pub mod fuzzing;

#[cfg(feature = "anthropic")]
pub use anthropic::{ANTHROPIC_VERSION, Anthropic};
#[cfg(feature = "openai")]
pub use openai_chat::OpenAiChat;
#[cfg(feature = "openai")]
pub use openai_responses::OpenAiResponses;
#[cfg(feature = "http")]
pub use transport::{DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_EVENT_BYTES, HttpOptions};

#[cfg(feature = "http")]
mod common;
#[cfg(feature = "http")]
use common::{PartialCall, from_env, invalid, json};

#[cfg(all(doctest, feature = "openai", feature = "anthropic"))]
#[doc = include_str!("../../../docs/models.md")]
struct ModelsGuide;
