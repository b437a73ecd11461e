//! What the skills found need from this machine (F-REQ), judged with
//! [`SystemProbe`]: the skills that need setup, recorded in a
//! [`VisibilityPolicy`] (so the catalog leaves them out), and one
//! `requirement-unmet` warning per such skill naming what is missing.
//!
//! Nothing here decides visibility: `skills list` shows every skill with what
//! it lacks, `skills catalog` renders with the policy this fills.

use skills_core::{Code, Diagnostic, Probe, SkillMetadata, VisibilityPolicy, describe_missing};
use skills_fs::SystemProbe;

/// Checks `skills` on this machine ([`SystemProbe::shared`]), records in
/// `policy` those that need setup, and returns a `requirement-unmet` warning
/// for each.
pub(crate) fn check<'a>(
    policy: &mut VisibilityPolicy,
    skills: impl IntoIterator<Item = &'a SkillMetadata>,
) -> Vec<Diagnostic> {
    check_with(policy, skills, SystemProbe::shared())
}

/// [`check`] with another probe.
pub(crate) fn check_with<'a>(
    policy: &mut VisibilityPolicy,
    skills: impl IntoIterator<Item = &'a SkillMetadata>,
    probe: &dyn Probe,
) -> Vec<Diagnostic> {
    let skills: Vec<&SkillMetadata> = skills.into_iter().collect();
    policy.check_requirements(skills.iter().copied(), probe);
    skills
        .iter()
        .filter_map(|skill| {
            let missing = policy.missing(skill.name.as_str())?;
            Some(Diagnostic::warning(
                Code::RequirementUnmet,
                format!(
                    "`{}` needs setup: {}; it is left out of the model's catalog",
                    skill.name,
                    describe_missing(missing)
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use skills_core::SkillName;

    use super::*;

    struct Bare;

    impl Probe for Bare {
        fn has_bin(&self, _: &str) -> bool {
            false
        }
        fn has_env(&self, name: &str) -> bool {
            name == "HOME"
        }
        fn os(&self) -> &str {
            "linux"
        }
    }

    #[test]
    fn one_warning_per_skill_that_needs_setup() {
        let name = |n: &str| SkillName::parse(n).unwrap_or_else(|e| panic!("{e}"));
        let mut needy = SkillMetadata::new(name("needy"), "Needs things.");
        needy.extensions.requires.bins = vec!["jq".into()];
        needy.extensions.requires.env = vec!["HOME".into(), "TOKEN".into()];
        let mut fine = SkillMetadata::new(name("fine"), "Needs HOME.");
        fine.extensions.requires.env = vec!["HOME".into()];
        let mut policy = VisibilityPolicy::new();
        let diags = check_with(&mut policy, [&needy, &fine], &Bare);
        let lines: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "warning[requirement-unmet]: `needy` needs setup: bin jq; env TOKEN; it is left out of the model's catalog"
            ]
        );
        assert!(!policy.is_listed(&needy));
        assert!(policy.is_listed(&fine));
    }
}
