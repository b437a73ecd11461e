//! The HTTP connections, capped, and the requests in flight.
//!
//! A connection is *busy* while a request on it is being answered (its
//! response body, an event stream included, not yet written to the end);
//! otherwise it is idle: between two requests, or still sending the
//! headers of its first one. When the cap is reached, the connection idle
//! the longest is closed to make room, so peers that open connections and
//! never finish a request (slowloris) cannot lock others out; when every
//! connection is busy, the new one is refused with `503`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The connections of one server.
#[derive(Debug)]
pub(crate) struct Connections {
    max: usize,
    table: Mutex<HashMap<u64, Arc<Connection>>>,
    next: AtomicU64,
    epoch: Instant,
}

/// One connection's state.
#[derive(Debug)]
pub(crate) struct Connection {
    busy: AtomicUsize,
    /// Milliseconds since the table's epoch, at the last request's start or
    /// end (or the connection's start).
    last: AtomicU64,
    /// Cancelled to close the connection at once.
    pub(crate) evict: CancellationToken,
}

impl Connections {
    /// At most `max` connections (at least 1).
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            table: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Connection>>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Connections open now.
    pub(crate) fn len(&self) -> usize {
        self.table().len()
    }

    /// Admits a new connection, closing the longest idle one when the table
    /// is full; `None` when every connection is busy.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut table = self.table();
        if table.len() >= self.max {
            if !evict_idlest(&mut table) {
                return None;
            }
            tracing::debug!(
                max = self.max,
                "too many connections: closed the longest idle one"
            );
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            busy: AtomicUsize::new(0),
            last: AtomicU64::new(self.now()),
            evict: CancellationToken::new(),
        });
        table.insert(id, Arc::clone(&connection));
        Some(Slot {
            id,
            connection,
            table: Arc::clone(self),
        })
    }

    /// Closes the connection idle the longest (to free its file descriptor
    /// when the process has run out); `false` when every one is busy.
    pub(crate) fn evict_idlest(&self) -> bool {
        evict_idlest(&mut self.table())
    }
}

fn evict_idlest(table: &mut HashMap<u64, Arc<Connection>>) -> bool {
    let victim = table
        .iter()
        .filter(|(_, c)| c.busy.load(Ordering::Acquire) == 0)
        .min_by_key(|(_, c)| c.last.load(Ordering::Relaxed))
        .map(|(id, _)| *id);
    match victim.and_then(|id| table.remove(&id)) {
        Some(connection) => {
            connection.evict.cancel();
            true
        }
        None => false,
    }
}

/// A connection's place in the table; dropping it frees the place.
#[derive(Debug)]
pub(crate) struct Slot {
    id: u64,
    pub(crate) connection: Arc<Connection>,
    table: Arc<Connections>,
}

impl Slot {
    /// Marks the connection busy until the guard is dropped.
    pub(crate) fn busy(&self) -> Busy {
        self.connection.busy.fetch_add(1, Ordering::AcqRel);
        self.connection
            .last
            .store(self.table.now(), Ordering::Relaxed);
        Busy {
            connection: Arc::clone(&self.connection),
            table: Arc::clone(&self.table),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.table.table().remove(&self.id);
    }
}

/// Keeps a connection busy while alive.
#[derive(Debug)]
pub(crate) struct Busy {
    connection: Arc<Connection>,
    table: Arc<Connections>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.connection
            .last
            .store(self.table.now(), Ordering::Relaxed);
        self.connection.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Requests being answered (event streams aside), for a shutdown that
/// waits for them.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

impl InFlight {
    /// Counts one request until the guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> Request {
        self.count.fetch_add(1, Ordering::AcqRel);
        Request(Arc::clone(self))
    }

    /// Waits until no request is in flight.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.count.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One request in flight.
#[derive(Debug)]
pub(crate) struct Request(Arc<InFlight>);

impl Drop for Request {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_closes_the_longest_idle_connection_and_never_a_busy_one() {
        let table = Arc::new(Connections::new(2));
        let first = table.admit().expect("room");
        let second = table.admit().expect("room");
        let _working = second.busy();
        let third = table.admit().expect("the idle one makes room");
        assert!(first.connection.evict.is_cancelled());
        assert!(!second.connection.evict.is_cancelled());
        assert_eq!(table.len(), 2);
        let _also_working = third.busy();
        assert!(table.admit().is_none(), "every connection is busy");
        drop(_also_working);
        assert!(table.admit().is_some());
        assert!(third.connection.evict.is_cancelled());
    }
}
