//! The event stream of a run: the run's future and the queue of events it
//! produced, polled together, so events reach the consumer as they happen
//! and dropping the stream drops the run.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_util::Stream;

use super::{RunError, RunEvent, RunOutcome};

/// A boxed future, `Send` where the crate's futures are (not on wasm32).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
/// A boxed future, `Send` where the crate's futures are (not on wasm32).
#[cfg(target_arch = "wasm32")]
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

type Queue = Arc<Mutex<VecDeque<RunEvent>>>;

fn lock(queue: &Queue) -> std::sync::MutexGuard<'_, VecDeque<RunEvent>> {
    // A queue of events stays consistent even if a holder panicked.
    queue.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where a run sends its events (a sub-agent's emitter wraps them).
#[derive(Clone)]
pub(crate) struct Emitter(Arc<dyn Fn(RunEvent) + Send + Sync>);

impl Emitter {
    pub(crate) fn new(send: impl Fn(RunEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(send))
    }

    /// An emitter into a new queue.
    pub(crate) fn queue() -> (Self, Queue) {
        let queue: Queue = Arc::default();
        let sink = Arc::clone(&queue);
        (Self::new(move |event| lock(&sink).push_back(event)), queue)
    }

    pub(crate) fn send(&self, event: RunEvent) {
        (self.0)(event);
    }
}

/// The events of one run ([`Runner::run`](crate::Runner::run)), ending with
/// [`RunEvent::Finished`] or [`RunEvent::Failed`]. Dropping it stops the run
/// at its next await (a model call in flight is abandoned; nothing half-done
/// is appended to the session, and calls left without a result are closed
/// when the session runs again).
pub struct RunStream<'a> {
    run: Option<BoxFuture<'a, Result<RunOutcome, RunError>>>,
    queue: Queue,
}

impl fmt::Debug for RunStream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunStream")
            .field("running", &self.run.is_some())
            .field("queued", &lock(&self.queue).len())
            .finish()
    }
}

impl<'a> RunStream<'a> {
    pub(crate) fn new(run: BoxFuture<'a, Result<RunOutcome, RunError>>, queue: Queue) -> Self {
        Self {
            run: Some(run),
            queue,
        }
    }
}

impl Stream for RunStream<'_> {
    type Item = RunEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        if let Some(event) = lock(&self.queue).pop_front() {
            return Poll::Ready(Some(event));
        }
        if let Some(run) = self.run.as_mut()
            && let Poll::Ready(result) = run.as_mut().poll(cx)
        {
            self.run = None;
            lock(&self.queue).push_back(match result {
                Ok(outcome) => RunEvent::Finished { outcome },
                Err(error) => RunEvent::Failed { error },
            });
        }
        match lock(&self.queue).pop_front() {
            Some(event) => Poll::Ready(Some(event)),
            None if self.run.is_none() => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}
