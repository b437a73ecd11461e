//! The Streamable HTTP sessions, capped: the SDK's in-memory session
//! manager, with a count limit and eviction of the least recently used idle
//! session.
//!
//! Why eviction rather than refusal: a refused `initialize` leaves a new
//! client with nothing to do until some session expires (minutes), while an
//! evicted client gets `404` on its next request, which the MCP
//! specification tells it to answer with a new `initialize`. A session is
//! *busy* while one of its requests is being answered or it holds an open
//! event stream (`GET`); busy sessions are never evicted, and when every
//! session is busy a new one is refused (`503`).

use std::cell::Cell;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// How long an eviction waits for the evicted session to close.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

tokio::task_local! {
    /// Set by [`BoundedSessions::create_session`] when it refused a session,
    /// for the request handler that called it (same task) to answer `503`.
    pub(crate) static REFUSED: Cell<bool>;
}

/// The SDK's session manager with a cap.
#[derive(Debug)]
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    table: Mutex<HashMap<SessionId, Arc<Activity>>>,
    /// One creation at a time, so the count and the eviction agree.
    creating: tokio::sync::Mutex<()>,
    epoch: Instant,
}

/// What eviction needs to know of a session.
#[derive(Debug)]
struct Activity {
    /// Requests being answered and streams open.
    busy: AtomicUsize,
    /// Milliseconds since the manager's epoch, at the last request's start
    /// or end.
    last: AtomicU64,
}

impl BoundedSessions {
    /// At most `max` sessions (at least 1); a session with nothing to do
    /// for `idle` ends by itself.
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Self {
            inner,
            max: max.max(1),
            table: Mutex::new(HashMap::new()),
            creating: tokio::sync::Mutex::new(()),
            epoch: Instant::now(),
        }
    }

    /// Sessions open now.
    pub(crate) fn len(&self) -> usize {
        self.table().len()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Arc<Activity>>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Marks `id` busy until the guard is dropped.
    fn enter(&self, id: &SessionId) -> Busy {
        let activity = self.table().get(id).cloned();
        if let Some(activity) = &activity {
            activity.busy.fetch_add(1, Ordering::AcqRel);
            activity.last.store(self.now(), Ordering::Relaxed);
        }
        Busy {
            activity,
            epoch: self.epoch,
        }
    }

    /// The least recently used session that is not busy.
    fn idlest(&self) -> Option<SessionId> {
        self.table()
            .iter()
            .filter(|(_, a)| a.busy.load(Ordering::Acquire) == 0)
            .min_by_key(|(_, a)| a.last.load(Ordering::Relaxed))
            .map(|(id, _)| id.clone())
    }
}

/// Marks a session busy while alive.
#[derive(Debug)]
struct Busy {
    activity: Option<Arc<Activity>>,
    epoch: Instant,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(activity) = &self.activity {
            let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
            activity.last.store(now, Ordering::Relaxed);
            activity.busy.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// A stream of a session's answers that keeps the session busy.
pub(crate) struct BusyStream<S> {
    inner: S,
    _busy: Busy,
}

impl<S: Stream + Unpin> Stream for BusyStream<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        Pin::new(&mut self.get_mut().inner).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

/// Why a session operation failed.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// Every session is busy.
    Full(usize),
    /// The SDK's session manager failed.
    Local(LocalSessionManagerError),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Full(max) => write!(
                f,
                "too many MCP sessions: all {max} are busy; retry later, or close idle sessions \
                 with DELETE"
            ),
            Self::Local(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(err: LocalSessionManagerError) -> Self {
        Self::Local(err)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _one_at_a_time = self.creating.lock().await;
        if self.len() >= self.max {
            let Some(victim) = self.idlest() else {
                tracing::warn!(
                    max = self.max,
                    "refusing a new MCP session: every session is busy"
                );
                let _ = REFUSED.try_with(|refused| refused.set(true));
                return Err(SessionsError::Full(self.max));
            };
            tracing::info!(session = %victim, max = self.max, "too many MCP sessions: closing the least recently used idle one");
            self.table().remove(&victim);
            // The session is idle, so its worker answers at once; a worker
            // that does not is left to its idle timeout.
            match tokio::time::timeout(CLOSE_WAIT, self.inner.close_session(&victim)).await {
                Ok(Ok(())) => {}
                Ok(Err(err)) => {
                    tracing::debug!(session = %victim, error = %err, "closing an evicted session failed")
                }
                Err(_) => {
                    tracing::debug!(session = %victim, "an evicted session did not close in time")
                }
            }
        }
        let (id, transport) = self.inner.create_session().await?;
        let activity = Activity {
            busy: AtomicUsize::new(0),
            last: AtomicU64::new(self.now()),
        };
        self.table().insert(id.clone(), Arc::new(activity));
        tracing::debug!(session = %id, open = self.len(), "MCP session created");
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _busy = self.enter(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.table().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.enter(id);
        let inner = self.inner.create_stream(id, message).await?;
        Ok(BusyStream { inner, _busy: busy })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let _busy = self.enter(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.enter(id);
        let inner = self.inner.create_standalone_stream(id).await?;
        Ok(BusyStream { inner, _busy: busy })
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.enter(id);
        let inner = self.inner.resume(id, last_event_id).await?;
        Ok(BusyStream { inner, _busy: busy })
    }
}
