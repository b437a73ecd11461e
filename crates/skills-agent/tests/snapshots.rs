//! Snapshot tests of everything the model sees from `skills-agent`: every
//! skill tool's result text in every preset, the tool specs of every preset,
//! and whole requests (and their wire bodies) after each step of a short
//! conversation.
//!
//! One test binary; the modules live in `tests/snap/`. Snapshots are insta
//! binary snapshots in `tests/snapshots/` (`<name>.snap` holds the metadata,
//! `<name>.snap.txt` the exact text), compared byte for byte, trailing
//! newlines included (review a change with `cargo insta review`, or rewrite
//! with `INSTA_UPDATE=always cargo test -p skills-agent --test snapshots` and
//! review `git diff`: the texts are the model's view).

mod snap;
