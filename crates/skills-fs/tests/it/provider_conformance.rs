//! The `SkillProvider` conformance suite of `skills-testkit` against
//! [`FsProvider`] over the suite's skills on disk.

use skills_fs::{FsOptions, FsProvider};
use skills_testkit::provider;

use super::support::block_on;

#[test]
fn fs_provider_meets_the_provider_contract() {
    let dir = provider::library().write_temp().expect("write the skills");
    let skills = FsProvider::new([dir.path()], FsOptions::default());
    block_on(provider::check_all(&skills));
}
