//! Order-preserving parallel maps for the CPU- and syscall-bound loops of
//! discovery and lint (thousands of small files), on scoped threads, one per
//! available core: [`map`] over a slice (contiguous chunks), and
//! [`map_streamed`] over items a producer hands over while it is still
//! finding them (discovery's walk: the skills found so far are read and
//! parsed while the walk lists the next folders). Written by hand because
//! each is a few dozen lines over `std::thread::scope` and a channel; a
//! work-stealing pool (rayon) would add a global thread pool to every
//! embedder for two loops.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, TryLockError, mpsc};

/// Fewer items than this run on the calling thread.
pub(crate) const PARALLEL_MIN_ITEMS: usize = 64;
/// At most this many threads.
pub(crate) const MAX_THREADS: usize = 8;

/// `items.iter().map(f).collect()`, on up to one scoped thread per available
/// core (at most [`MAX_THREADS`]) when there are many items. The result is in
/// the order of `items`. The calling thread's `tracing` span is entered on
/// every thread, so events keep their context. A panic in `f` is re-raised on
/// the calling thread.
pub(crate) fn map<T, R, F>(items: &[T], f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let threads = threads().min(items.len() / PARALLEL_MIN_ITEMS);
    map_on(items, threads, f)
}

/// [`map`] on exactly `threads` threads (fewer when there are fewer items),
/// for work that waits on the network rather than the CPU.
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) fn map_on<T, R, F>(items: &[T], threads: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let parent = tracing::Span::current();
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let parent = parent.clone();
                scope.spawn(move || {
                    let _entered = parent.enter();
                    part.iter().map(f).collect::<Vec<R>>()
                })
            })
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for handle in handles {
            match handle.join() {
                Ok(part) => out.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

/// Items a worker takes from the queue at a time in [`map_streamed`].
const STREAM_BATCH: usize = 16;
/// Items waiting in [`map_streamed`]'s queue past which the producer maps
/// batches itself.
const HELP_ABOVE: usize = 4 * STREAM_BATCH;

/// The threads [`map`] and [`map_streamed`] use for a large input: one per
/// available core, at most [`MAX_THREADS`].
fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_THREADS)
}

/// Where a [`map_streamed`] producer hands over its items, in order.
pub(crate) struct Feed<'a, T> {
    send: &'a mut dyn FnMut(Vec<T>),
}

impl<T> Feed<'_, T> {
    /// Hands over `items`, after every item handed over before.
    pub(crate) fn send(&mut self, items: Vec<T>) {
        if !items.is_empty() {
            (self.send)(items);
        }
    }
}

/// The results of [`map_streamed`], in the order their items were handed
/// over: kept in the parts the workers made, so that thousands of results
/// are not moved into one more vector before the caller takes them.
pub(crate) struct Mapped<R> {
    parts: Vec<Vec<R>>,
    len: usize,
}

impl<R> Mapped<R> {
    /// How many results there are.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl<R> IntoIterator for Mapped<R> {
    type Item = R;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<R>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.parts.into_iter().flatten()
    }
}

/// Runs `produce`, which hands items to its [`Feed`] as it finds them, and
/// maps every item with `f` meanwhile: once [`PARALLEL_MIN_ITEMS`] items have
/// come, worker threads (one fewer than [`map`] would use: the producer keeps
/// its own) take them in batches of [`STREAM_BATCH`]; while more than
/// [`HELP_ABOVE`] items wait, the producer maps batches itself as it hands
/// items over (so the items waiting stay few); when `produce` returns, the
/// calling thread joins the workers. Returns what `produce` returned,
/// and the result of every item, in the order the items were handed over:
/// the same as mapping them one by one afterwards. `f` takes each item by
/// value, so what it does not keep is freed on the thread that mapped it.
/// Fewer items, or one core, are mapped after `produce` returns, on the
/// calling thread. A panic in `f` is re-raised on the calling thread.
pub(crate) fn map_streamed<T, R, O, P, F>(produce: P, f: F) -> (O, Mapped<R>)
where
    T: Send,
    R: Send,
    P: FnOnce(&mut Feed<'_, T>) -> O,
    F: Fn(T) -> R + Sync,
{
    map_streamed_on(threads().saturating_sub(1), produce, f)
}

/// [`map_streamed`] with `workers` worker threads besides the producer's.
fn map_streamed_on<T, R, O, P, F>(workers: usize, produce: P, f: F) -> (O, Mapped<R>)
where
    T: Send,
    R: Send,
    P: FnOnce(&mut Feed<'_, T>) -> O,
    F: Fn(T) -> R + Sync,
{
    let (tx, rx) = mpsc::channel::<(usize, Vec<T>)>();
    let queue = Queue {
        rx: Mutex::new(rx),
        waiting: AtomicUsize::new(0),
    };
    let parent = tracing::Span::current();
    let (f, queue, parent) = (&f, &queue, &parent);
    std::thread::scope(|scope| {
        // Owned here, so that a panic in `produce` or in `f` on this thread
        // drops it while unwinding: the workers then see the queue close
        // and end, and the scope can join them and re-raise the panic.
        let tx = tx;
        let mut held: Vec<T> = Vec::new();
        let mut next = 0;
        let mut handles = Vec::new();
        // Batches the producer mapped itself.
        let mut own: Vec<(usize, Vec<R>)> = Vec::new();
        let mut dispatch = |items: Vec<T>, handles: &mut Vec<_>| {
            held.extend(items);
            if handles.is_empty() && (workers == 0 || held.len() < PARALLEL_MIN_ITEMS) {
                return;
            }
            if handles.is_empty() {
                for _ in 0..workers {
                    handles.push(scope.spawn(move || {
                        let _entered = parent.enter();
                        drain(queue, f)
                    }));
                }
            }
            let mut items = std::mem::take(&mut held).into_iter().peekable();
            while items.peek().is_some() {
                let batch: Vec<T> = items.by_ref().take(STREAM_BATCH).collect();
                let start = next;
                next += batch.len();
                queue.waiting.fetch_add(batch.len(), Ordering::AcqRel);
                // The receiver lives until the scope ends; a send cannot fail.
                let _ = tx.send((start, batch));
            }
            // A producer far ahead of the workers maps batches itself: the
            // items do not pile up (with what they hold open), and both
            // threads stay busy.
            while queue.waiting.load(Ordering::Acquire) > HELP_ABOVE {
                let Some((start, batch)) = queue.try_take() else {
                    break;
                };
                own.push((start, batch.into_iter().map(f).collect()));
            }
        };
        let out = {
            let mut send = |items: Vec<T>| dispatch(items, &mut handles);
            let mut feed = Feed { send: &mut send };
            produce(&mut feed)
        };
        drop(tx);
        if handles.is_empty() {
            let done: Vec<R> = std::mem::take(&mut held).into_iter().map(f).collect();
            let len = done.len();
            return (
                out,
                Mapped {
                    parts: vec![done],
                    len,
                },
            );
        }
        let mut parts = drain(queue, f);
        parts.append(&mut own);
        for handle in handles {
            match handle.join() {
                Ok(part) => parts.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts.sort_unstable_by_key(|(start, _)| *start);
        let len = parts.iter().map(|(_, part)| part.len()).sum();
        let parts = parts.into_iter().map(|(_, part)| part).collect();
        (out, Mapped { parts, len })
    })
}

/// The batches of a [`map_streamed`] waiting for a thread, each with its
/// start index.
struct Queue<T> {
    rx: Mutex<mpsc::Receiver<(usize, Vec<T>)>>,
    /// Items sent and not taken yet.
    waiting: AtomicUsize,
}

impl<T> Queue<T> {
    /// The next batch, waiting for one; `None` once the queue is closed and
    /// empty.
    fn take(&self) -> Option<(usize, Vec<T>)> {
        // A worker that panicked while holding the lock is re-raised at the
        // join; the queue itself is still sound.
        let next = self
            .rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        self.taken(next.ok())
    }

    /// The next batch if one is there and no worker is waiting for one.
    fn try_take(&self) -> Option<(usize, Vec<T>)> {
        let rx = match self.rx.try_lock() {
            Ok(rx) => rx,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        let next = rx.try_recv();
        drop(rx);
        self.taken(next.ok())
    }

    fn taken(&self, batch: Option<(usize, Vec<T>)>) -> Option<(usize, Vec<T>)> {
        if let Some((_, items)) = &batch {
            self.waiting.fetch_sub(items.len(), Ordering::AcqRel);
        }
        batch
    }
}

/// A [`map_streamed`] worker: maps batches from `queue` until it is closed
/// and empty; each batch comes back with its start index.
fn drain<T, R, F>(queue: &Queue<T>, f: &F) -> Vec<(usize, Vec<R>)>
where
    F: Fn(T) -> R,
{
    let mut done = Vec::new();
    while let Some((start, batch)) = queue.take() {
        done.push((start, batch.into_iter().map(f).collect()));
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_of_small_and_large_inputs() {
        for len in [
            0,
            1,
            PARALLEL_MIN_ITEMS - 1,
            PARALLEL_MIN_ITEMS * 3 + 7,
            10_000,
        ] {
            let items: Vec<usize> = (0..len).collect();
            let doubled = map(&items, |i| i * 2);
            assert_eq!(
                doubled,
                items.iter().map(|i| i * 2).collect::<Vec<_>>(),
                "{len}"
            );
        }
    }

    #[test]
    fn streamed_keeps_the_order_whatever_the_batches() {
        let cases = [
            (0, 1),
            (5, 2),
            (PARALLEL_MIN_ITEMS - 1, 7),
            (1_000, 1),
            (10_000, 33),
        ];
        for ((len, batch), workers) in cases.into_iter().flat_map(|c| [(c, 0), (c, 1), (c, 3)]) {
            let items: Vec<usize> = (0..len).collect();
            let (sent, done) = map_streamed_on(
                workers,
                |feed| {
                    for part in items.chunks(batch) {
                        feed.send(part.to_vec());
                    }
                    feed.send(Vec::new());
                    len
                },
                |i| (i, i * 2),
            );
            assert_eq!(sent, len);
            assert_eq!(done.len(), len);
            let done: Vec<(usize, usize)> = done.into_iter().collect();
            let expected: Vec<(usize, usize)> = items.iter().map(|&i| (i, i * 2)).collect();
            assert_eq!(
                done, expected,
                "{len} in batches of {batch}, {workers} workers"
            );
        }
    }

    #[test]
    fn streamed_maps_while_the_producer_is_still_producing() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Counted on the worker only: the producer maps batches itself too.
        let producer = std::thread::current().id();
        let mapped = AtomicUsize::new(0);
        let (seen, done) = map_streamed_on(
            1,
            |feed| {
                feed.send((0..PARALLEL_MIN_ITEMS * 2).collect());
                // Wait (bounded) until a worker mapped something.
                for _ in 0..2_000 {
                    if mapped.load(Ordering::SeqCst) > 0 {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                mapped.load(Ordering::SeqCst)
            },
            |i| {
                if std::thread::current().id() != producer {
                    mapped.fetch_add(1, Ordering::SeqCst);
                }
                i
            },
        );
        assert!(seen > 0, "no item was mapped before the producer returned");
        assert_eq!(done.len(), PARALLEL_MIN_ITEMS * 2);
    }

    /// A producer far ahead of a slow worker maps batches itself, in order
    /// with the worker's.
    #[test]
    fn streamed_producer_maps_when_far_ahead() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let producer = std::thread::current().id();
        let by_producer = AtomicUsize::new(0);
        let len = 2_000;
        let (_, done) = map_streamed_on(
            1,
            |feed| {
                for start in (0..len).step_by(STREAM_BATCH) {
                    feed.send((start..start + STREAM_BATCH).collect());
                }
            },
            |i: usize| {
                if std::thread::current().id() == producer {
                    by_producer.fetch_add(1, Ordering::SeqCst);
                } else {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                i
            },
        );
        let done: Vec<usize> = done.into_iter().collect();
        assert_eq!(done, (0..len).collect::<Vec<_>>());
        assert!(
            by_producer.load(Ordering::SeqCst) > 0,
            "the producer mapped nothing while the worker lagged"
        );
    }

    /// A panic in `f` on the producer, while it maps batches itself, is
    /// re-raised too (the workers waiting for more batches end).
    #[test]
    fn streamed_re_raises_a_panic_on_the_producer() {
        let (done, result) = mpsc::channel();
        std::thread::spawn(move || {
            let result = std::panic::catch_unwind(|| {
                let producer = std::thread::current().id();
                map_streamed_on(
                    1,
                    |feed| {
                        for start in (0..2_000).step_by(STREAM_BATCH) {
                            feed.send((start..start + STREAM_BATCH).collect::<Vec<usize>>());
                        }
                    },
                    |i| {
                        let here = std::thread::current().id();
                        assert!(here != producer, "item {i} on the producer");
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    },
                )
            });
            let _ = done.send(result.is_err());
        });
        let panicked = result
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("map_streamed hung after a panic on the producer");
        assert!(panicked);
    }

    #[test]
    fn streamed_re_raises_a_panic() {
        let result = std::panic::catch_unwind(|| {
            map_streamed_on(
                2,
                |feed| feed.send((0..PARALLEL_MIN_ITEMS * 4).collect::<Vec<usize>>()),
                |i| assert!(i != 100, "item 100"),
            )
        });
        assert!(result.is_err());
    }
}
