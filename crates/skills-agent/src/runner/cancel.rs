//! A cancellation token that needs no runtime (the crate builds for wasm32).
//!
//! Written by hand because the common one (`tokio_util::sync::CancellationToken`)
//! would bring tokio into a crate that must stay runtime-free; this one is a
//! flag plus the wakers of the futures waiting on it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Stops a run: cancel it from anywhere (another task, a signal handler, a
/// UI button) and the run ends at its next await with
/// [`RunErrorKind::Cancelled`](crate::RunErrorKind::Cancelled). Clones share
/// one flag.
#[derive(Clone, Default)]
pub struct CancelToken(Arc<Inner>);

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every run holding a clone of this token.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut *self.wakers());
        for waker in wakers {
            waker.wake();
        }
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// A future that completes once the token is cancelled.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled { token: self }
    }

    fn wakers(&self) -> std::sync::MutexGuard<'_, Vec<Waker>> {
        // A list of wakers cannot be left inconsistent by a panic.
        self.0.wakers.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The future of [`CancelToken::cancelled`].
#[derive(Debug)]
pub struct Cancelled<'a> {
    token: &'a CancelToken,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        {
            let mut wakers = self.token.wakers();
            if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                wakers.push(cx.waker().clone());
            }
        }
        // Cancelled between the first check and the registration: the
        // waker list was already drained, so answer now.
        if self.token.is_cancelled() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_wakes_a_waiting_future() {
        let token = CancelToken::new();
        let other = token.clone();
        let waiter = std::thread::spawn(move || pollster::block_on(other.cancelled()));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!token.is_cancelled());
        token.cancel();
        waiter.join().expect("the waiter finished");
        assert!(token.is_cancelled());
        pollster::block_on(token.cancelled());
    }
}
