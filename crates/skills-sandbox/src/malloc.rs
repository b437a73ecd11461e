//! Settings of the C allocator (glibc's malloc) for long-running servers
//! such as `skills mcp`.
//!
//! They live here because this is the one crate of the workspace allowed
//! `unsafe` code (the calls themselves are in `sys`). On other C libraries
//! (musl, macOS, Windows) every function does nothing and returns `false`.

/// `true` where these settings take effect: Linux with glibc.
pub const SUPPORTED: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// Limits glibc's allocator to `arenas` arenas (`mallopt(M_ARENA_MAX)`);
/// `true` when the limit was set.
///
/// By default glibc gives a thread that finds the arenas in use a new one,
/// up to 8 per core, and an arena keeps the memory freed into it for later
/// allocations: a server whose requests run on a few threads at once ends
/// up with that much memory held in each of their arenas.
///
/// Call it before the process starts a thread: glibc fixes its limit the
/// first time it needs one (once 8 arenas exist), and threads then reuse
/// the arenas that already exist, whatever the limit.
pub fn limit_arenas(arenas: usize) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        match i32::try_from(arenas) {
            Ok(arenas) if arenas > 0 => crate::sys::malloc_arena_max(arenas),
            _ => false,
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = arenas;
        false
    }
}

/// Returns the free pages of every arena of glibc's allocator to the
/// kernel (`malloc_trim(0)`); `true` when some memory was released.
///
/// It walks every arena under its lock: for a moment of quiet (after
/// start-up), not for every request.
pub fn trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        crate::sys::malloc_trim()
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_arenas_takes_a_positive_count_where_supported() {
        assert!(!limit_arenas(0));
        assert!(!limit_arenas(usize::MAX));
        // A limit above the default (8 per core) changes nothing for the
        // other tests of this process.
        assert_eq!(limit_arenas(1024), SUPPORTED);
    }

    #[test]
    fn trim_gives_back_memory_freed_below_a_live_block() {
        // Blocks under the mmap threshold come from an arena; the block
        // allocated after them keeps the arena from shrinking by itself
        // when they are freed, so only a trim returns their pages.
        let blocks: Vec<Vec<u8>> = (0..256).map(|i| vec![i as u8; 16 * 1024]).collect();
        let pin = std::hint::black_box(Box::new([1u8; 64]));
        drop(blocks);
        assert_eq!(trim(), SUPPORTED);
        assert_eq!(pin.len(), 64);
    }
}
