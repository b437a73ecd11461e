//! The config file (`docs/config.md`): per-skill visibility tiers and
//! priorities and the catalog budget, read by `skills catalog`,
//! `agent` and `mcp`, so a user decides what the model sees without editing
//! any skill.
//!
//! Where it is read from, later files overriding earlier ones skill by skill
//! and key by key:
//! 1. the user's file, `$XDG_CONFIG_HOME/skills/config.toml` (else
//!    `~/.config/skills/config.toml`);
//! 2. the project's `skills.toml`, the nearest one from the working folder
//!    up to the repository root (the first folder holding `.git`); outside a
//!    repository, only the working folder's.
//!
//! `--config FILE` (or `$SKILLS_CONFIG`) reads that one file instead; it must
//! exist. Unknown keys and unknown tiers are errors naming the file; a rule
//! for a skill that does not exist is only a warning (`tier-unknown-skill`),
//! since one user file serves many projects.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use skills_core::{BudgetLimit, Catalog, Tier, VisibilityPolicy};

use crate::failure::Failure;

/// The environment variable naming the one config file to read.
pub(crate) const CONFIG_ENV: &str = "SKILLS_CONFIG";

/// The project file's name.
pub(crate) const PROJECT_FILE: &str = "skills.toml";

/// Largest config file read (a config is a few hundred bytes).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// What the config files say.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// Tiers and priorities.
    pub(crate) policy: VisibilityPolicy,
    /// `[catalog] budget`.
    pub(crate) budget: Option<BudgetLimit>,
    /// `[catalog] description-cap`.
    pub(crate) description_cap: Option<usize>,
    /// The files read, in order.
    pub(crate) files: Vec<PathBuf>,
}

impl Settings {
    /// Reads `explicit` (from `--config`), else `$SKILLS_CONFIG`, else the user
    /// and project files that exist.
    pub(crate) fn load(explicit: Option<&Path>) -> Result<Self, Failure> {
        let env = std::env::var_os(CONFIG_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        if let Some(path) = explicit.map(Path::to_path_buf).or(env) {
            if !path.is_file() {
                return Err(Failure::usage(format!(
                    "the config file {} does not exist (from {})",
                    path.display(),
                    if explicit.is_some() {
                        "--config"
                    } else {
                        "$SKILLS_CONFIG"
                    }
                )));
            }
            let mut settings = Self::default();
            settings.read(&path)?;
            return Ok(settings);
        }
        let mut settings = Self::default();
        for path in default_files() {
            if path.is_file() {
                settings.read(&path)?;
            }
        }
        Ok(settings)
    }

    /// Reads one file over what was read before.
    fn read(&mut self, path: &Path) -> Result<(), Failure> {
        let fail = |what: String| Failure::usage(format!("config file {}: {what}", path.display()));
        let size = std::fs::metadata(path)
            .map_err(|err| fail(err.to_string()))?
            .len();
        if size > MAX_CONFIG_BYTES {
            return Err(fail(format!(
                "{size} bytes is more than the {MAX_CONFIG_BYTES} a config file may have"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|err| fail(err.to_string()))?;
        let file: File = toml::from_str(&text).map_err(|err| fail(err.to_string()))?;
        if let Some(catalog) = file.catalog {
            if let Some(budget) = catalog.budget {
                self.budget = Some(budget.limit().map_err(fail)?);
            }
            if let Some(cap) = catalog.description_cap {
                self.description_cap = Some(cap);
            }
            if let Some(tier) = catalog.default_tier {
                self.policy.default_tier =
                    parse_tier(&tier, "[catalog] default-tier").map_err(fail)?;
            }
        }
        for (name, rule) in file.skills {
            if let Some(tier) = rule.tier {
                let tier = parse_tier(&tier, &format!("[skills.{name}] tier")).map_err(fail)?;
                self.policy.set_tier(name.clone(), tier);
            }
            if let Some(priority) = rule.priority {
                self.policy.set_priority(name, priority);
            }
        }
        self.files.push(path.to_path_buf());
        Ok(())
    }

    /// Warnings about rules naming skills `catalog` does not have.
    pub(crate) fn warnings(&self, catalog: &Catalog) -> Vec<String> {
        let unknown = self
            .policy
            .unknown_skills(catalog.entries().iter().map(|m| &m.name));
        if unknown.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "[tier-unknown-skill] the config ({}) has rules for skills that were not found: {}",
            self.files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            unknown.join(", ")
        )]
    }
}

fn parse_tier(text: &str, key: &str) -> Result<Tier, String> {
    text.parse::<Tier>().map_err(|err| format!("{key}: {err}"))
}

/// The user file, then the project file, when their folders are known.
fn default_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        });
    if let Some(home) = config_home {
        out.push(home.join("skills").join("config.toml"));
    }
    if let Ok(cwd) = std::env::current_dir() {
        // Up to the repository root; outside a repository only the working
        // folder (a `skills.toml` in a shared folder above, such as /tmp, is
        // not this project's: any local user could have put it there).
        let in_repository = cwd.ancestors().any(|dir| dir.join(".git").exists());
        let mut candidates = cwd.ancestors();
        let mut first = true;
        while let Some(dir) = candidates.next().filter(|_| first || in_repository) {
            first = false;
            let candidate = dir.join(PROJECT_FILE);
            if candidate.is_file() {
                out.push(candidate);
                break;
            }
            if dir.join(".git").exists() {
                break;
            }
        }
    }
    out
}

/// The file's shape.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    catalog: Option<CatalogSection>,
    #[serde(default)]
    skills: BTreeMap<String, SkillSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct CatalogSection {
    budget: Option<BudgetValue>,
    description_cap: Option<usize>,
    default_tier: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillSection {
    tier: Option<String>,
    priority: Option<i32>,
}

/// `budget = 8000` or `budget = "2000t"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum BudgetValue {
    Chars(usize),
    Text(String),
}

impl BudgetValue {
    fn limit(&self) -> Result<BudgetLimit, String> {
        match self {
            Self::Chars(n) => Ok(BudgetLimit::Chars(*n)),
            Self::Text(text) => {
                crate::catalog::parse_budget(text).map_err(|err| format!("[catalog] budget: {err}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn settings(text: &str) -> Result<Settings, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skills.toml");
        std::fs::write(&path, text).unwrap();
        let mut settings = Settings::default();
        settings.read(&path).map_err(|f| f.message)?;
        Ok(settings)
    }

    #[test]
    fn tiers_priorities_and_the_budget_are_read() {
        let s = settings(
            "[catalog]\nbudget = \"2000t\"\ndescription-cap = 120\n\n\
             [skills.pdf]\ntier = \"pinned\"\npriority = 3\n\n\
             [skills.old]\ntier = \"user-invocable-only\"\n",
        )
        .unwrap();
        assert_eq!(s.budget, Some(BudgetLimit::Tokens(2000)));
        assert_eq!(s.description_cap, Some(120));
        assert_eq!(s.policy.skills["pdf"].tier, Some(Tier::Pinned));
        assert_eq!(s.policy.priority("pdf"), 3);
        assert_eq!(s.policy.skills["old"].tier, Some(Tier::Manual));
        assert_eq!(
            settings("[catalog]\nbudget = 900\n").unwrap().budget,
            Some(BudgetLimit::Chars(900))
        );
    }

    #[test]
    fn mistakes_name_the_file_and_the_key() {
        let err = settings("[skills.pdf]\ntier = \"sometimes\"\n").unwrap_err();
        assert!(
            err.contains("skills.toml") && err.contains("[skills.pdf] tier"),
            "{err}"
        );
        assert!(err.contains("unknown tier `sometimes`"), "{err}");
        let err = settings("[skills.pdf]\ntiers = \"off\"\n").unwrap_err();
        assert!(err.contains("unknown field `tiers`"), "{err}");
        let err = settings("[catalog]\nbudget = \"lots\"\n").unwrap_err();
        assert!(err.contains("invalid budget `lots`"), "{err}");
        let err = settings("[skills\n").unwrap_err();
        assert!(err.contains("skills.toml"), "{err}");
    }
}
