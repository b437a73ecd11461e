//! `skills-testkit`: the test-support crate of the workspace. Development
//! only (never published, never a normal dependency of a library).
//!
//! * [`fixture`]: skill folders on disk ([`fixture::SkillDir`],
//!   [`fixture::Library`]), the one writer the test crates share instead of
//!   each carrying a copy.
//! * `store` (feature `store`): the `SessionStore` conformance suite any
//!   store implementor can run, and the `session_store_suite!` macro.
//! * `provider` (feature `provider`): the `SkillProvider` conformance suite
//!   any provider can run, over two skills it writes or defines itself.
//! * `runtime` (feature `runtime`): the `WorkspaceRuntime` conformance
//!   suite any runtime can run, over a skill it writes itself.
//! * [`library`], [`marketplace`], [`Lcg`], [`words`]: deterministic data.
//!   Benchmarks and differential tests generate skills from a seed so that
//!   runs are comparable and failures reproduce.
//!
//! Without features it depends on `tempfile` only (not even `skills-core`),
//! so any crate of the workspace can use it without a dependency cycle.

pub mod fixture;
pub mod library;
#[cfg(feature = "provider")]
pub mod provider;
#[cfg(feature = "runtime")]
pub mod runtime;
#[cfg(feature = "store")]
pub mod store;

/// A seeded 64-bit linear congruential generator (Knuth's MMIX constants).
///
/// Not for anything but test data: it is fast, tiny and reproducible across
/// platforms, which is all the data generators need.
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next value (the high 31 bits of the new state).
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// A value in `0..n`; `0` when `n` is `0`.
    pub fn below(&mut self, n: usize) -> usize {
        let Ok(n64) = u64::try_from(n) else {
            return 0;
        };
        if n64 == 0 {
            return 0;
        }
        // The remainder is below `n`, which is a `usize`.
        usize::try_from(self.next_u64() % n64).unwrap_or(0)
    }
}

/// Words drawn from `vocabulary`, joined by spaces, until the text is at least
/// `len` bytes long (empty for an empty vocabulary).
pub fn words(rng: &mut Lcg, vocabulary: &[&str], len: usize) -> String {
    let mut out = String::with_capacity(len + 16);
    if vocabulary.is_empty() {
        return out;
    }
    while out.len() < len {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(vocabulary[rng.below(vocabulary.len())]);
    }
    out
}

pub mod marketplace;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_reproducible() {
        let mut a = Lcg::new(42);
        let mut b = Lcg::new(42);
        let xs: Vec<usize> = (0..16).map(|_| a.below(1000)).collect();
        let ys: Vec<usize> = (0..16).map(|_| b.below(1000)).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|x| *x < 1000));
        assert_ne!(xs, vec![xs[0]; 16], "not constant");
        assert_eq!(Lcg::new(1).below(0), 0);
    }

    #[test]
    fn words_reach_the_length() {
        let mut rng = Lcg::new(7);
        let text = words(&mut rng, &["alpha", "beta"], 40);
        assert!(text.len() >= 40 && text.len() < 40 + 6, "{text}");
        assert!(text.split(' ').all(|w| w == "alpha" || w == "beta"));
        assert!(words(&mut rng, &[], 10).is_empty());
    }
}
