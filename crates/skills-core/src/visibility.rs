//! What the model sees of each skill, decided by the user or the app without
//! touching the skill: visibility [`Tier`]s, per-skill priorities, and the
//! skills whose requirements this machine does not meet.
//!
//! A [`VisibilityPolicy`] is plain data: the catalog renderer and the agent
//! read it, hosts fill it from code, a config file, or a probe of the machine
//! (see [`VisibilityPolicy::check_requirements`]). It is meant to be built once
//! and frozen for a session, so the rendered catalog stays byte-stable.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::requirements::{Missing, Probe};
use crate::{SkillMetadata, SkillName};

/// How visible one skill is to the model, from hidden to loaded up front.
///
/// Ordered from least to most visible, so `tier >= Tier::NameOnly` means
/// "listed in the catalog".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Tier {
    /// Not listed and not loadable, not even by an explicit mention.
    Off,
    /// Not listed; loadable by an explicit `$name` mention or by the app, not
    /// by the model on its own (like `disable-model-invocation: true`).
    Manual,
    /// Listed by name only, without its description.
    NameOnly,
    /// Listed with its description (the default).
    Listed,
    /// Listed with its description, never shortened or dropped by the budget.
    Pinned,
    /// Pinned, and loaded before the first model call.
    Preloaded,
}

impl Tier {
    /// Every tier, least visible first.
    pub const ALL: [Tier; 6] = [
        Tier::Off,
        Tier::Manual,
        Tier::NameOnly,
        Tier::Listed,
        Tier::Pinned,
        Tier::Preloaded,
    ];

    /// The config-file spelling, e.g. `name-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Off => "off",
            Tier::Manual => "manual",
            Tier::NameOnly => "name-only",
            Tier::Listed => "listed",
            Tier::Pinned => "pinned",
            Tier::Preloaded => "preloaded",
        }
    }

    /// Whether the skill appears in the model's catalog.
    pub fn is_listed(self) -> bool {
        self >= Tier::NameOnly
    }

    /// Whether the budget may shorten or drop the skill's entry.
    pub fn is_pinned(self) -> bool {
        self >= Tier::Pinned
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tier spelling that is not one of [`Tier::ALL`] nor a known alias.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTier(pub String);

impl fmt::Display for UnknownTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown tier `{}`; expected one of off, manual, name-only, listed, pinned, preloaded",
            self.0
        )
    }
}

impl std::error::Error for UnknownTier {}

impl FromStr for Tier {
    type Err = UnknownTier;

    /// Reads a tier, case-insensitively, with the other hosts' spellings as
    /// aliases: `disabled` (off), `user-invocable-only` and `manual-only`
    /// (manual), `names-only` (name-only), `on`, `auto` and `default` (listed),
    /// `required` (preloaded). `_` and `-` are interchangeable.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_ascii_lowercase().replace('_', "-");
        Ok(match key.as_str() {
            "off" | "disabled" | "disable" => Tier::Off,
            "manual" | "manual-only" | "user-invocable-only" | "explicit" => Tier::Manual,
            "name-only" | "names-only" => Tier::NameOnly,
            "listed" | "on" | "auto" | "default" => Tier::Listed,
            "pinned" => Tier::Pinned,
            "preloaded" | "required" => Tier::Preloaded,
            _ => return Err(UnknownTier(s.to_owned())),
        })
    }
}

/// What the user or the app decided about one skill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct SkillRule {
    /// The tier; `None` keeps what the skill itself says.
    pub tier: Option<Tier>,
    /// Higher keeps its description longer when the budget overflows; 0 by default.
    pub priority: i32,
}

/// The per-skill visibility decisions of one host (F-DIS-TIERS).
///
/// A skill's effective [`Tier`] is, first that applies: the rule set here;
/// [`Tier::Manual`] when the skill says `disable-model-invocation: true` or its
/// `agents/openai.yaml` says `allow_implicit_invocation: false`; else the
/// policy's default ([`Tier::Listed`] unless changed). Skills whose
/// requirements are unmet ([`VisibilityPolicy::needs_setup`]) stay out of the
/// model's catalog whatever their tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct VisibilityPolicy {
    /// The tier of skills without a rule that say nothing themselves.
    pub default_tier: Tier,
    /// Rules by skill name.
    pub skills: BTreeMap<String, SkillRule>,
    /// Skills this machine cannot run, with what is missing.
    #[serde(skip)]
    pub needs_setup: BTreeMap<String, Vec<Missing>>,
}

impl Default for VisibilityPolicy {
    fn default() -> Self {
        Self {
            default_tier: Tier::Listed,
            skills: BTreeMap::new(),
            needs_setup: BTreeMap::new(),
        }
    }
}

impl VisibilityPolicy {
    /// A policy with no rules: every skill as it says itself.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the tier of one skill.
    #[must_use]
    pub fn with_tier(mut self, skill: impl Into<String>, tier: Tier) -> Self {
        self.set_tier(skill, tier);
        self
    }

    /// Sets the priority of one skill.
    #[must_use]
    pub fn with_priority(mut self, skill: impl Into<String>, priority: i32) -> Self {
        self.set_priority(skill, priority);
        self
    }

    /// Sets the tier of one skill, in place.
    pub fn set_tier(&mut self, skill: impl Into<String>, tier: Tier) {
        self.skills.entry(skill.into()).or_default().tier = Some(tier);
    }

    /// Sets the priority of one skill, in place.
    pub fn set_priority(&mut self, skill: impl Into<String>, priority: i32) {
        self.skills.entry(skill.into()).or_default().priority = priority;
    }

    /// Whether the policy changes nothing (no rules, default tier, nothing
    /// needing setup).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The effective tier of a skill (see the type's docs).
    pub fn tier(&self, skill: &SkillMetadata) -> Tier {
        if let Some(tier) = self
            .skills
            .get(skill.name.as_str())
            .and_then(|rule| rule.tier)
        {
            return tier;
        }
        self.own_tier(skill)
    }

    /// The tier of a skill without a rule: what it says itself, else the
    /// default.
    pub(crate) fn own_tier(&self, skill: &SkillMetadata) -> Tier {
        let ext = &skill.extensions;
        if ext.disable_model_invocation || ext.allow_implicit_invocation == Some(false) {
            Tier::Manual
        } else {
            self.default_tier
        }
    }

    /// The priority of a skill (0 unless set).
    pub fn priority(&self, skill: &str) -> i32 {
        self.skills.get(skill).map_or(0, |rule| rule.priority)
    }

    /// What a skill lacks on this machine, if it lacks anything.
    pub fn missing(&self, skill: &str) -> Option<&[Missing]> {
        self.needs_setup.get(skill).map(Vec::as_slice)
    }

    /// Whether the model's catalog lists the skill: a listed tier and nothing
    /// missing.
    pub fn is_listed(&self, skill: &SkillMetadata) -> bool {
        self.tier(skill).is_listed() && !self.needs_setup.contains_key(skill.name.as_str())
    }

    /// Checks the declared requirements of `skills` with `probe` and records
    /// the unmet ones (replacing earlier records for those skills). Returns how
    /// many skills need setup.
    pub fn check_requirements<'a>(
        &mut self,
        skills: impl IntoIterator<Item = &'a SkillMetadata>,
        probe: &dyn Probe,
    ) -> usize {
        for skill in skills {
            let missing = skill.extensions.requires.missing(probe);
            if missing.is_empty() {
                self.needs_setup.remove(skill.name.as_str());
            } else {
                self.needs_setup.insert(skill.name.to_string(), missing);
            }
        }
        self.needs_setup.len()
    }

    /// Rule names that match none of `known` (typos in a config file), sorted.
    pub fn unknown_skills<'a>(
        &'a self,
        known: impl IntoIterator<Item = &'a SkillName>,
    ) -> Vec<&'a str> {
        let known: std::collections::BTreeSet<&str> =
            known.into_iter().map(SkillName::as_str).collect();
        self.skills
            .keys()
            .map(String::as_str)
            .filter(|name| !known.contains(name))
            .collect()
    }

    /// For skills sorted by name (a catalog's entries), each one's effective
    /// tier, priority and whether it needs setup, in one merge pass over the
    /// rules instead of a lookup per skill.
    pub(crate) fn resolve_sorted<'a>(
        &'a self,
        skills: &'a [SkillMetadata],
    ) -> impl Iterator<Item = (Tier, i32, bool)> + 'a {
        let mut rules = self.skills.iter().peekable();
        let mut setup = self.needs_setup.keys().peekable();
        skills.iter().map(move |skill| {
            let name = skill.name.as_str();
            // One comparison per skill and per rule passed.
            let mut rule = None;
            while let Some((key, value)) = rules.peek() {
                match key.as_str().cmp(name) {
                    std::cmp::Ordering::Less => {
                        rules.next();
                    }
                    std::cmp::Ordering::Equal => {
                        rule = Some(**value);
                        break;
                    }
                    std::cmp::Ordering::Greater => break,
                }
            }
            let mut needs_setup = false;
            while let Some(key) = setup.peek() {
                match key.as_str().cmp(name) {
                    std::cmp::Ordering::Less => {
                        setup.next();
                    }
                    std::cmp::Ordering::Equal => {
                        needs_setup = true;
                        break;
                    }
                    std::cmp::Ordering::Greater => break,
                }
            }
            let tier = rule
                .and_then(|rule| rule.tier)
                .unwrap_or_else(|| self.own_tier(skill));
            (tier, rule.map_or(0, |rule| rule.priority), needs_setup)
        })
    }

    /// Skills whose effective tier is [`Tier::Preloaded`], in name order.
    pub fn preloaded<'a>(
        &self,
        skills: impl IntoIterator<Item = &'a SkillMetadata>,
    ) -> Vec<&'a SkillName> {
        let mut out: Vec<&SkillName> = skills
            .into_iter()
            .filter(|skill| self.tier(skill) == Tier::Preloaded)
            .map(|skill| &skill.name)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn skill(name: &str) -> SkillMetadata {
        SkillMetadata::new(SkillName::parse(name).unwrap(), "Does things.")
    }

    #[test]
    fn tiers_parse_with_the_other_hosts_aliases() {
        for tier in Tier::ALL {
            assert_eq!(tier.as_str().parse::<Tier>().unwrap(), tier);
        }
        assert_eq!("user-invocable-only".parse::<Tier>().unwrap(), Tier::Manual);
        assert_eq!("NAMES_ONLY".parse::<Tier>().unwrap(), Tier::NameOnly);
        assert_eq!("required".parse::<Tier>().unwrap(), Tier::Preloaded);
        assert_eq!("disabled".parse::<Tier>().unwrap(), Tier::Off);
        let err = "sometimes".parse::<Tier>().unwrap_err();
        assert!(err.to_string().contains("name-only"), "{err}");
    }

    #[test]
    fn rules_beat_what_the_skill_says() {
        let mut manual = skill("deploy");
        manual.extensions.disable_model_invocation = true;
        let mut codex = skill("codex");
        codex.extensions.allow_implicit_invocation = Some(false);
        let plain = skill("plain");
        let policy = VisibilityPolicy::new().with_tier("deploy", Tier::Pinned);
        assert_eq!(policy.tier(&manual), Tier::Pinned);
        assert_eq!(policy.tier(&codex), Tier::Manual);
        assert_eq!(policy.tier(&plain), Tier::Listed);
        assert!(!policy.is_listed(&codex));
        assert!(policy.is_listed(&plain));
        let policy = policy.with_priority("plain", 3);
        assert_eq!(policy.priority("plain"), 3);
        assert_eq!(policy.tier(&plain), Tier::Listed);
        assert_eq!(policy.unknown_skills([&plain.name]), ["deploy"]);
    }

    #[test]
    fn the_merge_pass_agrees_with_the_lookups() {
        let mut skills: Vec<SkillMetadata> = ["a", "b-1", "b-2", "c", "d", "zz"]
            .into_iter()
            .map(skill)
            .collect();
        skills[3].extensions.disable_model_invocation = true;
        let mut policy = VisibilityPolicy::new()
            .with_tier("aa", Tier::Off)
            .with_tier("b-2", Tier::NameOnly)
            .with_priority("b-2", 4)
            .with_tier("d", Tier::Pinned)
            .with_priority("y", 1);
        policy
            .needs_setup
            .insert("zz".into(), vec![Missing::Env("X".into())]);
        let merged: Vec<(Tier, i32, bool)> = policy.resolve_sorted(&skills).collect();
        let looked_up: Vec<(Tier, i32, bool)> = skills
            .iter()
            .map(|s| {
                let name = s.name.as_str();
                (
                    policy.tier(s),
                    policy.priority(name),
                    policy.missing(name).is_some(),
                )
            })
            .collect();
        assert_eq!(merged, looked_up);
        assert_eq!(merged[2], (Tier::NameOnly, 4, false));
        assert_eq!(merged[3].0, Tier::Manual);
        assert!(merged[5].2);
    }

    struct NoBins;

    impl Probe for NoBins {
        fn has_bin(&self, _: &str) -> bool {
            false
        }
        fn has_env(&self, _: &str) -> bool {
            true
        }
        fn os(&self) -> &str {
            "linux"
        }
    }

    #[test]
    fn unmet_requirements_keep_a_skill_out_of_the_catalog() {
        let mut needy = skill("needy");
        needy.extensions.requires.bins = vec!["jq".into()];
        let plain = skill("plain");
        let mut policy = VisibilityPolicy::new().with_tier("needy", Tier::Pinned);
        assert_eq!(policy.check_requirements([&needy, &plain], &NoBins), 1);
        assert!(!policy.is_listed(&needy));
        assert!(policy.is_listed(&plain));
        assert_eq!(
            policy.missing("needy").unwrap(),
            [Missing::Bin("jq".into())]
        );
        needy.extensions.requires.bins.clear();
        assert_eq!(policy.check_requirements([&needy], &NoBins), 0);
        assert!(policy.is_listed(&needy));
    }
}
