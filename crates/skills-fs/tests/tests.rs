//! Integration tests for `skills-fs`: hostile and broken input on a real file
//! system (traversal, symlinks, binary and oversized files, broken `SKILL.md`
//! files, odd roots), the resource listing and the [`FsProvider`] contract.
//!
//! One test binary; the modules live in `tests/it/` (URL and archive roots,
//! `it::remote`, only with the `remote` feature). The `tracing` span test,
//! `tests/spans.rs`, is a binary of its own: it installs the process-wide
//! default subscriber. Every bad-input test also
//! checks that a valid sibling skill in the same root still loads (see
//! [`it::support::Root`]).
//!
//! [`FsProvider`]: skills_fs::FsProvider

mod it {
    pub(crate) mod support;

    mod async_runtime;
    mod discovery;
    mod discovery_rules;
    mod docs;
    mod lint;
    mod listing;
    mod nested;
    mod openai_yaml;
    mod paths;
    mod probe;
    mod provider;
    mod provider_conformance;
    mod races;
    mod reads;
    #[cfg(feature = "remote")]
    mod remote;
    mod single_file;
    mod skill_md;
    pub(crate) mod staleness;
    mod standard_roots;
}
