//! Stopping `skills agent` on SIGTERM and SIGINT without losing the work in
//! flight.
//!
//! The first SIGTERM or SIGINT (Ctrl-C) asks the run to stop at its next step
//! boundary: the model request in flight finishes (its answer is shown and
//! stored, and the tool calls it asked for run), then the next model request
//! is never sent: the run is cancelled there and the command exits 0. A
//! stored session holds the whole step, so a later run continues it.
//!
//! The boundary is enforced by the model itself ([`GracefulStop::wrap`]): a
//! request that starts after the signal cancels the run instead of going out.
//! Watching the run's events would not do: they reach the printing loop a
//! little after the runner emits them, so a "request sent" seen after the
//! signal may already be on the wire, and a finished answer may already be
//! followed by the next request.
//!
//! The wait is bounded: when no boundary comes within [`GRACE`] (a model that
//! stalls, a slow command), the run is cancelled where it is, with a message,
//! and the command exits 1 like any interrupted run. A second signal exits at
//! once with 130 (128 + SIGINT, what a shell reports for Ctrl-C).
//!
//! Tokio's signal streams replace the default action of both signals for the
//! rest of the process, so they are installed only for the agent loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use skills_agent::{
    CacheStrategy, CancelToken, Model, ModelError, ModelRequest, ModelResponse, ModelStream,
    RunError, RunErrorKind,
};

/// How long the first signal waits for the run to reach a step boundary.
///
/// Under the 10 s that `docker stop` (and many supervisors) give a process
/// before they kill it.
pub(crate) const GRACE: Duration = Duration::from_secs(8);

/// Exit code after a second signal: 128 + SIGINT.
pub(crate) const EXIT_NOW: i32 = 130;

/// A run that stops gracefully on SIGTERM or SIGINT.
///
/// Give the runner the model [`GracefulStop::wrap`] returns; when the run
/// fails, [`GracefulStop::stopped`] says whether that failure was the stop
/// this asked for.
#[derive(Debug)]
pub(crate) struct GracefulStop {
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    cancel: CancelToken,
    /// A signal arrived: no new model request starts.
    requested: AtomicBool,
    /// The grace ran out and the run was cancelled mid-step.
    forced: AtomicBool,
}

impl GracefulStop {
    /// Starts listening for the signals; cancels `cancel` when it is time.
    /// Must be called inside a tokio runtime with the signal driver on.
    pub(crate) fn install(cancel: CancelToken) -> Self {
        let state = Arc::new(State {
            cancel,
            requested: AtomicBool::new(false),
            forced: AtomicBool::new(false),
        });
        let watcher = Arc::clone(&state);
        tokio::spawn(async move { watch(watcher).await });
        Self { state }
    }

    /// `model`, refusing to start a request once a signal came: it cancels
    /// the run instead, so the run ends as cancelled before the request.
    pub(crate) fn wrap(&self, model: Arc<dyn Model>) -> Arc<dyn Model> {
        Arc::new(StopAtBoundary {
            inner: model,
            state: Arc::clone(&self.state),
        })
    }

    /// Whether `error` ends a run this stopped at a step boundary (exit 0);
    /// `false` for every other failure, a stop forced by the grace included.
    pub(crate) fn stopped(&self, error: &RunError) -> bool {
        error.kind() == RunErrorKind::Cancelled
            && self.state.requested.load(Ordering::SeqCst)
            && !self.state.forced.load(Ordering::SeqCst)
    }
}

/// The model [`GracefulStop::wrap`] returns. Every method of [`Model`] is
/// forwarded to `inner`.
#[derive(Debug)]
struct StopAtBoundary {
    inner: Arc<dyn Model>,
    state: Arc<State>,
}

impl StopAtBoundary {
    /// Returns at once unless a signal came; then cancels the run and never
    /// returns (the runner's cancellation ends the call).
    async fn boundary(&self) {
        if self.state.requested.load(Ordering::SeqCst) {
            self.state.cancel.cancel();
            std::future::pending::<()>().await;
        }
    }
}

#[async_trait]
impl Model for StopAtBoundary {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn cache_strategy(&self) -> CacheStrategy {
        self.inner.cache_strategy()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.boundary().await;
        self.inner.complete(request).await
    }

    async fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> Result<ModelStream<'a>, ModelError> {
        self.boundary().await;
        self.inner.stream(request).await
    }
}

/// Waits for the first signal, then for the boundary, the grace or a second
/// signal.
async fn watch(state: Arc<State>) {
    let mut signals = match Signals::new() {
        Ok(signals) => signals,
        Err(err) => {
            tracing::warn!(error = %err, "cannot listen for SIGTERM/SIGINT");
            return;
        }
    };
    let first = signals.next().await;
    state.requested.store(true, Ordering::SeqCst);
    eprintln!(
        "[signal] {first}: stopping before the next model request (waiting at most {} s); \
         press Ctrl-C again to stop now",
        GRACE.as_secs()
    );
    let grace = std::pin::pin!(tokio::time::sleep(GRACE));
    let again = std::pin::pin!(signals.next());
    match futures_util::future::select(grace, again).await {
        futures_util::future::Either::Left(((), again)) => {
            if !state.cancel.is_cancelled() {
                state.forced.store(true, Ordering::SeqCst);
                eprintln!(
                    "[signal] the run did not reach a step boundary within {} s: cancelling it",
                    GRACE.as_secs()
                );
                state.cancel.cancel();
            }
            let second = again.await;
            exit_now(second);
        }
        futures_util::future::Either::Right((second, _)) => exit_now(second),
    }
}

fn exit_now(signal: &str) {
    eprintln!("[signal] {signal} again: exiting now");
    std::process::exit(EXIT_NOW);
}

/// SIGTERM and SIGINT as one stream of names.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Self> {
        Ok(Self {})
    }

    /// The next signal's name.
    #[cfg(unix)]
    async fn next(&mut self) -> &'static str {
        let term = std::pin::pin!(self.term.recv());
        let int = std::pin::pin!(self.int.recv());
        match futures_util::future::select(term, int).await {
            futures_util::future::Either::Left(_) => "SIGTERM",
            futures_util::future::Either::Right(_) => "SIGINT",
        }
    }

    /// The next Ctrl-C (the only signal there is off Unix).
    #[cfg(not(unix))]
    async fn next(&mut self) -> &'static str {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        "Ctrl-C"
    }
}
