//! What every HTTP adapter shares: the client and its timeouts, one attempt
//! of a call, the retry policy (backoff with jitter, `retry-after`), the
//! mapping of HTTP failures to [`ModelError`]s, and the two drivers that run
//! a [`Protocol`] (whole answer, or server-sent events), both reading within
//! the caps of [`super::limits`].

use std::collections::VecDeque;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use sse_stream::SseByteStream;
use tracing::Instrument;

use super::limits::{self, BodyError, BodyLimit, ERROR_BODY_BYTES};
use super::route::Route;
use skills_agent::{ModelError, ModelErrorKind, ModelEvent, ModelResponse, ModelStream, Retry};

/// Timeouts and retries of an HTTP adapter.
///
/// Retried: HTTP 408, 429 and 5xx (Anthropic's 529 "overloaded" included),
/// connections that fail or drop, timeouts, and error events a stream sends
/// before its first text or tool call. Each wait is the provider's
/// `retry-after-ms` or `retry-after` (seconds or an HTTP date) when it sent
/// one, else `backoff × 2^(retry − 1)` with jitter (a random point in its
/// upper half), capped at `max_wait`. A provider that asks for a longer wait
/// than `max_wait` gets no retry: the error is returned at once.
///
/// Caps on what a server may make the adapter buffer (a server that streams
/// forever, or one endless line): `max_answer_bytes` for one answer on the
/// wire, `max_event_bytes` for one server-sent event (its lines together, so
/// one line too). Past either, the answer ends with
/// [`ModelErrorKind::AnswerTooLarge`] or [`ModelErrorKind::EventTooLarge`]
/// (never retried) and the rest is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Retries after the first attempt (3 by default; 0 turns retries off).
    pub max_retries: u32,
    /// The first backoff (500 ms by default).
    pub backoff: Duration,
    /// The longest single wait before a retry (60 s by default).
    pub max_wait: Duration,
    /// How long opening a connection may take (10 s by default).
    pub connect_timeout: Duration,
    /// How long the provider may stay silent: between the request and the
    /// first byte, and between two reads of the answer (120 s by default).
    pub idle_timeout: Duration,
    /// How long one attempt may take in all, streamed answer included
    /// (10 min by default; `None` for no limit).
    pub timeout: Option<Duration>,
    /// The most bytes one answer may take on the wire: a whole body, or
    /// every byte of a stream (64 MiB by default; a long streamed answer
    /// of 128 000 tokens takes about 30 MiB of events).
    pub max_answer_bytes: usize,
    /// The most bytes one server-sent event may take, its lines together
    /// (16 MiB by default; the largest event a provider sends is the final
    /// `response.completed` of the Responses API, which repeats the whole
    /// answer).
    pub max_event_bytes: usize,
}

/// The default [`HttpOptions::max_answer_bytes`]: 64 MiB.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// The default [`HttpOptions::max_event_bytes`]: 16 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            max_retries: 3,
            backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            timeout: Some(Duration::from_secs(600)),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
        }
    }
}

impl HttpOptions {
    /// Sets the number of retries.
    #[must_use]
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the first backoff.
    #[must_use]
    pub fn backoff(mut self, backoff: Duration) -> Self {
        self.backoff = backoff;
        self
    }

    /// Sets the longest single wait.
    #[must_use]
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait;
        self
    }

    /// Sets the connect timeout.
    #[must_use]
    pub fn connect_timeout(mut self, connect_timeout: Duration) -> Self {
        self.connect_timeout = connect_timeout;
        self
    }

    /// Sets the idle timeout.
    #[must_use]
    pub fn idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// Sets the overall timeout of one attempt.
    #[must_use]
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the cap on one answer's bytes (at least 1).
    #[must_use]
    pub fn max_answer_bytes(mut self, max: usize) -> Self {
        self.max_answer_bytes = max.max(1);
        self
    }

    /// Sets the cap on one server-sent event's bytes (at least 1).
    #[must_use]
    pub fn max_event_bytes(mut self, max: usize) -> Self {
        self.max_event_bytes = max.max(1);
        self
    }

    /// A fresh count of one answer against the caps.
    fn body_limit(&self) -> BodyLimit {
        BodyLimit::new(self.max_answer_bytes, self.max_event_bytes)
    }

    /// The wait before retry number `retry` (1 for the first), without a
    /// `retry-after`: exponential backoff with jitter in its upper half,
    /// capped at `max_wait`.
    fn backoff_for(&self, retry: u32) -> Duration {
        let factor = 1u32 << retry.saturating_sub(1).min(20);
        let full = self.backoff.saturating_mul(factor).min(self.max_wait);
        let half = full / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let jitter = if nanos == 0 { 0 } else { random() % nanos };
        half + Duration::from_nanos(jitter)
    }
}

/// A random number (the hasher keys of a fresh [`RandomState`] are random),
/// enough for jitter without a dependency.
fn random() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos().into())
            .unwrap_or_default(),
    );
    hasher.finish()
}

/// How a provider's answers are read: one JSON body, or server-sent events.
pub(crate) trait Protocol {
    /// Decodes the events of one streamed answer.
    type Decoder: StreamDecoder;

    /// Parses a whole (non-streamed) answer.
    fn parse(body: &[u8]) -> Result<ModelResponse, ModelError>;
}

/// The state of one streamed answer: it turns server-sent events into
/// [`ModelEvent`]s and ends with exactly one [`ModelEvent::Completed`].
pub(crate) trait StreamDecoder: Default + Send {
    /// Handles one event (`event` is the SSE `event:` field, `data` its
    /// data), pushing what it completes to `out`.
    fn event(
        &mut self,
        event: Option<&str>,
        data: &str,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError>;

    /// The stream ended: push [`ModelEvent::Completed`] if the answer is
    /// whole, or fail.
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ModelError>;

    /// Whether [`ModelEvent::Completed`] was pushed.
    fn done(&self) -> bool;
}

/// Where and how an adapter sends its requests.
pub(crate) struct Endpoint {
    /// `provider:model`, for logs and [`skills_agent::Model::name`].
    pub(crate) name: String,
    /// The URL requests are posted to, and what it was made from.
    pub(crate) route: Route,
    /// Headers sent with every request (authentication, versions), as
    /// `(name, value)` pairs; checked when a call is made.
    pub(crate) headers: Vec<(&'static str, String)>,
    /// Timeouts and retries.
    pub(crate) options: HttpOptions,
    client: Mutex<Option<reqwest::Client>>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values hold the API key: only their names are shown.
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| *name).collect();
        f.debug_struct("Endpoint")
            .field("name", &self.name)
            .field("url", &self.route.shown())
            .field("headers", &headers)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint posting to `route`.
    pub(crate) fn new(name: String, route: Route, headers: Vec<(&'static str, String)>) -> Self {
        Self {
            name,
            route,
            headers,
            options: HttpOptions::default(),
            client: Mutex::new(None),
        }
    }

    /// Replaces the options (the client is rebuilt on the next call).
    pub(crate) fn set_options(&mut self, options: HttpOptions) {
        self.options = options;
        *self.client.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The URL requests are posted to.
    pub(crate) fn url(&self) -> &str {
        &self.route.url
    }

    fn client(&self) -> Result<reqwest::Client, ModelError> {
        let mut slot = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let mut builder = reqwest::Client::builder()
            .connect_timeout(self.options.connect_timeout)
            .read_timeout(self.options.idle_timeout)
            .user_agent(concat!("skills-agent/", env!("CARGO_PKG_VERSION")));
        if let Some(timeout) = self.options.timeout {
            builder = builder.timeout(timeout);
        }
        let client = builder.build().map_err(|e| {
            ModelError::new(
                ModelErrorKind::Config,
                format!("cannot build the HTTP client: {e}"),
            )
        })?;
        *slot = Some(client.clone());
        Ok(client)
    }

    fn headers(&self, streaming: bool) -> Result<HeaderMap, ModelError> {
        let mut map = HeaderMap::new();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        map.insert(
            ACCEPT,
            HeaderValue::from_static(if streaming {
                "text/event-stream"
            } else {
                "application/json"
            }),
        );
        for (name, value) in &self.headers {
            let header = HeaderName::from_static(name);
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                ModelError::new(
                    ModelErrorKind::Config,
                    format!("the value of header `{name}` is not a valid header value"),
                )
            })?;
            value.set_sensitive(true);
            map.insert(header, value);
        }
        Ok(map)
    }

    /// One attempt: posts `body` and returns the response if its status is
    /// a success.
    async fn attempt(
        &self,
        client: &reqwest::Client,
        body: &Bytes,
        streaming: bool,
    ) -> Result<reqwest::Response, Failure> {
        let headers = self.headers(streaming).map_err(Failure::fatal)?;
        let started = Instant::now();
        let sent = client
            .post(&self.route.url)
            .headers(headers)
            .body(body.clone())
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                // Not `error` itself: its message shows the URL's user info.
                tracing::debug!(error = %causes(&error), elapsed_ms = elapsed_ms(started), "model call failed");
                let mut failure = Failure::transport(&error, &self.route.shown());
                if error.is_connect() {
                    failure.error = ModelError::new(
                        failure.error.kind(),
                        self.route.connect_message(&causes(&error)),
                    );
                }
                return Err(failure);
            }
        };
        let status = response.status().as_u16();
        tracing::debug!(
            status,
            bytes = body.len(),
            elapsed_ms = elapsed_ms(started),
            "model call answered"
        );
        if response.status().is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers(), SystemTime::now());
        // The message is in the start of the body: the rest is not read.
        let text = read_capped(response, ERROR_BODY_BYTES, true, &self.route.shown())
            .await
            .unwrap_or_default();
        let mut failure = Failure::status(status, &text, retry_after);
        if status == 404 || status == 405 {
            failure.error = ModelError::new(
                failure.error.kind(),
                self.route.not_found_message(failure.error.message()),
            )
            .with_status(status);
        }
        Err(failure)
    }

    /// Decides whether `failure` is retried after `retries` retries: the
    /// wait, or `None` to give up.
    fn wait_for(&self, failure: &Failure, retries: u32) -> Option<Duration> {
        if !failure.retry || retries >= self.options.max_retries {
            return None;
        }
        match failure.retry_after {
            Some(wait) if wait > self.options.max_wait => None,
            Some(wait) => Some(wait),
            None => Some(self.options.backoff_for(retries + 1)),
        }
    }

    fn span(&self, streaming: bool) -> tracing::Span {
        tracing::info_span!(
            "model_call",
            model = %self.name,
            streaming,
            attempt = tracing::field::Empty,
        )
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A failed attempt: the error to report, whether to retry, and the wait
/// the provider asked for.
#[derive(Debug)]
struct Failure {
    error: ModelError,
    retry: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn fatal(error: ModelError) -> Self {
        Self {
            error,
            retry: false,
            retry_after: None,
        }
    }

    fn retryable(error: ModelError) -> Self {
        Self {
            error,
            retry: true,
            retry_after: None,
        }
    }

    fn transport(error: &reqwest::Error, url: &str) -> Self {
        Self::retryable(transport_error(error, url))
    }

    fn status(status: u16, body: &[u8], retry_after: Option<Duration>) -> Self {
        let kind = status_kind(status);
        Self {
            error: ModelError::new(kind, provider_message(status, body)).with_status(status),
            retry: status == 408 || status == 429 || status >= 500,
            retry_after,
        }
    }

    /// Whether an error the decoder raised may be retried (when nothing was
    /// yielded yet): the provider's overload and rate limits, and drops.
    fn decoded(error: ModelError) -> Self {
        let retry = matches!(
            error.kind(),
            ModelErrorKind::Server
                | ModelErrorKind::RateLimited
                | ModelErrorKind::Connection
                | ModelErrorKind::Timeout
        );
        Self {
            error,
            retry,
            retry_after: None,
        }
    }

    fn reason(&self) -> String {
        match self.error.status() {
            Some(status) => format!("HTTP {status}: {}", self.error.message()),
            None => self.error.message().to_owned(),
        }
    }
}

/// A failure of the connection or of reading the body, with the URL `url`
/// as [`Route::shown`] gives it (reqwest's own message would show user
/// info and query).
fn transport_error(error: &reqwest::Error, url: &str) -> ModelError {
    let what = if error.is_timeout() {
        "the request timed out"
    } else if error.is_body() || error.is_decode() {
        "reading the answer failed"
    } else {
        "the request failed"
    };
    let mut message = format!("{what} (POST {url})");
    let causes = causes(error);
    if !causes.is_empty() {
        message.push_str(": ");
        message.push_str(&causes);
    }
    let kind = if error.is_timeout() {
        ModelErrorKind::Timeout
    } else {
        ModelErrorKind::Connection
    };
    ModelError::new(kind, message)
}

/// The chain of `error`'s sources, joined with `: ` (without `error`'s own
/// message, which repeats the URL).
fn causes(error: &reqwest::Error) -> String {
    let mut out = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        out.push(cause.to_string());
        source = cause.source();
    }
    out.join(": ")
}

/// Reads `response`'s body, at most `max` bytes: a `content-length` over it
/// fails at once, and so does a body that grows past it (`lenient` keeps the
/// first `max` bytes instead, for error bodies).
async fn read_capped(
    mut response: reqwest::Response,
    max: usize,
    lenient: bool,
    url: &str,
) -> Result<Vec<u8>, Failure> {
    let declared = response
        .content_length()
        .and_then(|n| usize::try_from(n).ok());
    if !lenient && declared.is_some_and(|n| n > max) {
        return Err(Failure::fatal(limits::answer_too_large(max)));
    }
    let mut body = Vec::with_capacity(declared.unwrap_or(0).min(max).min(1024 * 1024));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Failure::transport(&e, url))?
    {
        let room = max - body.len();
        if chunk.len() > room {
            if lenient {
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            return Err(Failure::fatal(limits::answer_too_large(max)));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The error kind of an HTTP status that is not a success.
pub(crate) fn status_kind(status: u16) -> ModelErrorKind {
    match status {
        401 | 403 => ModelErrorKind::Auth,
        408 => ModelErrorKind::Timeout,
        429 => ModelErrorKind::RateLimited,
        400..=499 => ModelErrorKind::Request,
        500..=599 => ModelErrorKind::Server,
        _ => ModelErrorKind::InvalidResponse,
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorField,
}

/// OpenAI and Anthropic send an object; some compatible servers (Ollama)
/// send `{"error": "message"}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorField {
    Detail(ErrorDetail),
    Text(String),
}

/// The `error` object both OpenAI and Anthropic send.
#[derive(Deserialize)]
pub(crate) struct ErrorDetail {
    #[serde(default)]
    pub(crate) message: Option<String>,
    #[serde(default, rename = "type")]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) code: Option<serde_json::Value>,
}

impl ErrorDetail {
    /// `type: message` (or what there is of it; never empty).
    pub(crate) fn describe(&self) -> String {
        let message = self
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .unwrap_or("the provider sent an error without a message");
        let label = [
            self.kind.as_deref(),
            self.code.as_ref().and_then(|c| c.as_str()),
        ]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|label| !label.is_empty());
        match label {
            Some(label) => format!("{label}: {message}"),
            None => message.to_owned(),
        }
    }
}

/// The provider's own message from an error body (`{"error": {"type",
/// "message"}}`), else the start of the body, else the status.
pub(crate) fn provider_message(status: u16, body: &[u8]) -> String {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody {
            error: ErrorField::Detail(detail),
        }) => return detail.describe(),
        Ok(ErrorBody {
            error: ErrorField::Text(text),
        }) if !text.trim().is_empty() => return text.trim().to_owned(),
        _ => {}
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return format!("HTTP {status} with an empty body");
    }
    let mut cut: String = text.chars().take(500).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// The wait a provider asked for: `retry-after-ms` (milliseconds), else
/// `retry-after` (seconds, or an HTTP date relative to `now`).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(1e9)));
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(1e9)));
    }
    let at = http_date(value)?;
    Some(at.duration_since(now).unwrap_or_default())
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form
/// `retry-after` dates take.
pub(crate) fn http_date(value: &str) -> Option<SystemTime> {
    let mut parts = value.split_ascii_whitespace();
    let _weekday = parts.next()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if parts.next()? != "GMT"
        || parts.next().is_some()
        || clock.next().is_some()
        || !(1..=31).contains(&day)
        || !(1970..=9999).contains(&year)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe - 719_468).ok()?;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second;
    UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

/// Sends `body` and parses the whole answer, retrying as the options say.
pub(crate) async fn complete<P: Protocol>(
    endpoint: &Endpoint,
    body: String,
) -> Result<ModelResponse, ModelError> {
    let span = endpoint.span(false);
    async {
        let client = endpoint.client()?;
        let body = Bytes::from(body);
        let mut retries: Vec<Retry> = Vec::new();
        loop {
            let attempt = u32::try_from(retries.len()).unwrap_or(u32::MAX);
            tracing::Span::current().record("attempt", attempt + 1);
            let result = async {
                let response = endpoint.attempt(&client, &body, false).await?;
                let started = Instant::now();
                let bytes = read_capped(
                    response,
                    endpoint.options.max_answer_bytes,
                    false,
                    &endpoint.route.shown(),
                )
                .await?;
                tracing::debug!(
                    bytes = bytes.len(),
                    elapsed_ms = elapsed_ms(started),
                    "model answer read"
                );
                P::parse(&bytes).map_err(Failure::fatal)
            }
            .await;
            match result {
                Ok(response) => return Ok(response.with_retries(retries)),
                Err(failure) => match endpoint.wait_for(&failure, attempt) {
                    Some(wait) => {
                        let retry = Retry::new(attempt + 1, wait, failure.reason());
                        tracing::info!(attempt = attempt + 1, wait_ms = elapsed(wait), reason = %retry.reason, "retrying model call");
                        retries.push(retry);
                        tokio::time::sleep(wait).await;
                    }
                    None => return Err(failure.error.with_retries(attempt)),
                },
            }
        }
    }
    .instrument(span)
    .await
}

fn elapsed(wait: Duration) -> u64 {
    u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)
}

/// Sends `body` and streams the answer, retrying as the options say while
/// nothing was yielded from the attempt.
pub(crate) fn stream<'a, P: Protocol + 'a>(
    endpoint: &'a Endpoint,
    body: String,
) -> ModelStream<'a> {
    let run = StreamRun::<P> {
        endpoint,
        span: endpoint.span(true),
        client: None,
        body: Bytes::from(body),
        events: None,
        decoder: P::Decoder::default(),
        yielded: false,
        retries: Vec::new(),
        queue: VecDeque::new(),
        finished: false,
    };
    Box::pin(futures_util::stream::unfold(run, |mut run| async move {
        let span = run.span.clone();
        let item = run.next().instrument(span).await?;
        Some((item, run))
    }))
}

type EventStream = std::pin::Pin<
    Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send + 'static>,
>;

struct StreamRun<'a, P: Protocol> {
    endpoint: &'a Endpoint,
    span: tracing::Span,
    client: Option<reqwest::Client>,
    body: Bytes,
    events: Option<EventStream>,
    decoder: P::Decoder,
    /// Whether this attempt yielded text or a tool call (then it is not
    /// retried).
    yielded: bool,
    retries: Vec<Retry>,
    queue: VecDeque<Result<ModelEvent, ModelError>>,
    finished: bool,
}

impl<P: Protocol> StreamRun<'_, P> {
    async fn next(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            if self.finished {
                return None;
            }
            if let Err(failure) = self.step().await {
                self.fail(failure).await;
            }
        }
    }

    /// Connects, or reads the next server-sent event.
    async fn step(&mut self) -> Result<(), Failure> {
        let Some(events) = self.events.as_mut() else {
            let client = match &self.client {
                Some(client) => client.clone(),
                None => {
                    let client = self.endpoint.client().map_err(Failure::fatal)?;
                    self.client = Some(client.clone());
                    client
                }
            };
            let attempt = u32::try_from(self.retries.len()).unwrap_or(u32::MAX) + 1;
            tracing::Span::current().record("attempt", attempt);
            let response = self.endpoint.attempt(&client, &self.body, true).await?;
            let body = limits::bounded(response.bytes_stream(), self.endpoint.options.body_limit());
            self.events = Some(Box::pin(SseByteStream::new(body)));
            self.decoder = P::Decoder::default();
            self.yielded = false;
            return Ok(());
        };
        let mut out = Vec::new();
        match events.next().await {
            Some(Ok(sse)) => {
                if let Some(data) = sse.data.as_deref() {
                    self.decoder
                        .event(sse.event.as_deref(), data, &mut out)
                        .map_err(Failure::decoded)?;
                }
            }
            Some(Err(error)) => {
                let url = self.endpoint.route.shown();
                return Err(Failure::decoded(sse_error(&error, &url)));
            }
            None => self.decoder.end(&mut out).map_err(Failure::decoded)?,
        }
        for event in out {
            match event {
                ModelEvent::Completed(response) => {
                    self.queue.push_back(Ok(ModelEvent::Completed(
                        response.with_retries(self.retries.clone()),
                    )));
                    self.finished = true;
                    self.events = None;
                }
                other => {
                    self.yielded = true;
                    self.queue.push_back(Ok(other));
                }
            }
        }
        Ok(())
    }

    /// Retries (yielding [`ModelEvent::Retry`]) or ends with the error.
    async fn fail(&mut self, failure: Failure) {
        self.events = None;
        let attempt = u32::try_from(self.retries.len()).unwrap_or(u32::MAX);
        let wait = if self.yielded {
            None
        } else {
            self.endpoint.wait_for(&failure, attempt)
        };
        match wait {
            Some(wait) => {
                let retry = Retry::new(attempt + 1, wait, failure.reason());
                tracing::info!(attempt = attempt + 1, wait_ms = elapsed(wait), reason = %retry.reason, "retrying model call");
                self.retries.push(retry.clone());
                self.queue.push_back(Ok(ModelEvent::Retry(retry)));
                tokio::time::sleep(wait).await;
            }
            None => {
                let status = failure.error.status();
                let mut error = failure.error.with_retries(attempt);
                if self.yielded {
                    error = ModelError::new(
                        error.kind(),
                        format!("{} (the answer was cut off mid-stream)", error.message()),
                    )
                    .with_retries(attempt);
                    if let Some(status) = status {
                        error = error.with_status(status);
                    }
                }
                self.queue.push_back(Err(error));
                self.finished = true;
            }
        }
    }
}

/// The error a server-sent event stream failed with.
pub(crate) fn sse_error(error: &sse_stream::Error, url: &str) -> ModelError {
    match error {
        sse_stream::Error::Body(source) => match source.downcast_ref::<BodyError>() {
            Some(BodyError::Limit(error)) => error.clone(),
            Some(BodyError::Http(error)) => {
                let inner = transport_error(error, url);
                ModelError::new(
                    inner.kind(),
                    format!("the connection dropped mid-stream: {}", inner.message()),
                )
            }
            None => ModelError::new(
                ModelErrorKind::Connection,
                format!("the connection dropped mid-stream: {source}"),
            ),
        },
        other => ModelError::new(
            ModelErrorKind::InvalidResponse,
            format!("malformed server-sent events: {other}"),
        ),
    }
}

/// Runs `P`'s stream decoder over `chunks` of raw SSE bytes without HTTP,
/// and returns what it yielded (for fuzzing and tests).
pub(crate) fn decode_chunks<P: Protocol>(
    chunks: Vec<Vec<u8>>,
) -> Vec<Result<ModelEvent, ModelError>> {
    let mut limit = HttpOptions::default().body_limit();
    let input = futures_util::stream::iter(chunks.into_iter().map(move |c| {
        limit
            .check(&c)
            .map(|()| Bytes::from(c))
            .map_err(BodyError::Limit)
    }));
    let mut events = SseByteStream::new(input);
    let mut decoder = P::Decoder::default();
    let mut results = Vec::new();
    futures_util::FutureExt::now_or_never(async {
        loop {
            let mut out = Vec::new();
            let step = match events.next().await {
                Some(Ok(sse)) => match sse.data.as_deref() {
                    Some(data) => decoder.event(sse.event.as_deref(), data, &mut out),
                    None => Ok(()),
                },
                Some(Err(error)) => Err(sse_error(&error, "")),
                None => decoder.end(&mut out),
            };
            let done = decoder.done();
            results.extend(out.into_iter().map(Ok));
            if let Err(error) = step {
                results.push(Err(error));
                return;
            }
            if done {
                return;
            }
        }
    });
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_parse() {
        let at = http_date("Sun, 06 Nov 1994 08:49:37 GMT").expect("date");
        assert_eq!(
            at.duration_since(UNIX_EPOCH)
                .expect("after epoch")
                .as_secs(),
            784_111_777
        );
        let leap = http_date("Thu, 29 Feb 2024 00:00:00 GMT").expect("date");
        assert_eq!(
            leap.duration_since(UNIX_EPOCH).expect("after").as_secs(),
            1_709_164_800
        );
        for bad in [
            "",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
        ] {
            assert_eq!(http_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn retry_after_prefers_milliseconds_then_seconds_then_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770);
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers, now), None);
        headers.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(7)));
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(150)));
        headers.insert("retry-after-ms", HeaderValue::from_static("-1"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(2)));
        headers.insert("retry-after", HeaderValue::from_static("soon"));
        headers.remove("retry-after-ms");
        assert_eq!(retry_after(&headers, now), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_caps() {
        let options = HttpOptions::default()
            .backoff(Duration::from_millis(100))
            .max_wait(Duration::from_millis(500));
        for _ in 0..50 {
            let first = options.backoff_for(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = options.backoff_for(3);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let capped = options.backoff_for(30);
            assert!(capped >= Duration::from_millis(250) && capped <= Duration::from_millis(500));
        }
    }

    #[test]
    fn provider_messages_come_from_the_error_body() {
        assert_eq!(
            provider_message(
                401,
                br#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            ),
            "authentication_error: invalid x-api-key"
        );
        assert_eq!(
            provider_message(
                429,
                br#"{"error":{"message":"Rate limit reached","type":"","code":"rate_limit_exceeded"}}"#
            ),
            "rate_limit_exceeded: Rate limit reached"
        );
        assert_eq!(provider_message(502, b"  "), "HTTP 502 with an empty body");
        assert_eq!(
            provider_message(404, br#"{"error":"model \"qwen9\" not found"}"#),
            r#"model "qwen9" not found"#
        );
        assert_eq!(
            provider_message(500, br#"{"error":{"type":"","message":""}}"#),
            "the provider sent an error without a message"
        );
        assert_eq!(
            provider_message(502, b"<html>bad gateway"),
            "<html>bad gateway"
        );
        assert_eq!(status_kind(529), ModelErrorKind::Server);
        assert_eq!(status_kind(403), ModelErrorKind::Auth);
        assert_eq!(status_kind(404), ModelErrorKind::Request);
    }
}
