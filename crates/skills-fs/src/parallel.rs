//! Order-preserving parallel map over a slice, for the CPU- and syscall-bound
//! loops of discovery and lint (thousands of small files): contiguous chunks on
//! scoped threads, one per available core. Written by hand because it is forty
//! lines over `std::thread::scope`; a work-stealing pool (rayon) would add a
//! global thread pool to every embedder for two loops.

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
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_THREADS)
        .min(items.len() / PARALLEL_MIN_ITEMS);
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
}
