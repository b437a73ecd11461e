//! Integration tests for `skills-core`: catalog and diagnostic snapshots,
//! property tests, hostile input, layered providers and injection tagging.
//!
//! One test binary; the modules live in `tests/it/`. Snapshots are insta
//! binary snapshots in `tests/snapshots/` (`<name>.snap` holds the metadata,
//! `<name>.snap.txt` the exact bytes), compared byte for byte; review a
//! change with `cargo insta review`, or rewrite with
//! `INSTA_UPDATE=always cargo test -p skills-core` and review `git diff`.

mod it {
    mod bad_input;
    mod catalog_snapshots;
    mod diagnostics_snapshots;
    mod docs;
    mod layered;
    mod lint;
    mod marketplace;
    mod props;
    mod provider_conformance;
    mod requirements;
    mod search;
    mod support;
    mod tagging;
    mod yaml_errors;
    mod yaml_limits;
}
