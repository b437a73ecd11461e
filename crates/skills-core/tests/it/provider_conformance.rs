//! The `SkillProvider` conformance suite of `skills-testkit` against
//! [`InCodeProvider`].

use skills_core::InCodeProvider;
use skills_testkit::provider;

#[test]
fn in_code_provider_meets_the_provider_contract() {
    let skills = InCodeProvider::new(provider::in_code_skills()).expect("valid skills");
    pollster::block_on(provider::check_all(&skills));
}
