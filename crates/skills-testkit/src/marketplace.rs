//! A skill library shaped like a public skills marketplace.
//!
//! Such marketplaces hold thousands of skills written by many authors. Their
//! shape, which [`generate`] reproduces from a seed:
//! * `name:` is a display title (`name: Academic Paper Citation Network Mapper`)
//!   in a folder named with the slug (`academic-paper-citation-network-mapper/`);
//! * about 3 % of the skills have an empty description (`description: ""`);
//! * most carry fields outside the specification (`category`, `tags`, `version`,
//!   `author`, ...);
//! * bodies are realistic Markdown of 1 to 5 KB: headings, steps, lists and a
//!   fenced code block.
//!
//! The output is deterministic: the same seed and count give the same bytes.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;

use crate::{Lcg, words};

/// Per mille of skills with an empty description (3 %).
pub const EMPTY_DESCRIPTION_PER_MILLE: usize = 30;

/// One generated skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketSkill {
    /// The folder name: the slug of the title, unique in the library.
    pub folder: String,
    /// The display title written as `name:`.
    pub title: String,
    /// The `SKILL.md` text.
    pub skill_md: String,
    /// Whether the description is empty (the skill cannot load).
    pub empty_description: bool,
}

/// What [`write()`] created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarketStats {
    /// Skills written.
    pub skills: usize,
    /// Skills with a non-empty description.
    pub with_description: usize,
    /// Skills with at least one field outside the specification.
    pub with_extension_fields: usize,
    /// Bytes of `SKILL.md` text written.
    pub bytes: usize,
}

const TOPICS: &[&str] = &[
    "Academic",
    "Paper",
    "Citation",
    "Network",
    "Mapper",
    "PDF",
    "Invoice",
    "Parser",
    "Sales",
    "Forecast",
    "Kubernetes",
    "Deployment",
    "Checker",
    "Email",
    "Campaign",
    "Writer",
    "SQL",
    "Query",
    "Optimizer",
    "Legal",
    "Contract",
    "Reviewer",
    "Brand",
    "Voice",
    "Guide",
    "Data",
    "Pipeline",
    "Auditor",
    "Recipe",
    "Planner",
    "Resume",
    "Tailor",
    "Security",
    "Scanner",
    "Meeting",
    "Notes",
    "Summarizer",
    "Changelog",
    "Generator",
    "Figma",
    "Design",
    "Tokens",
    "Excel",
    "Formula",
    "Helper",
    "Podcast",
    "Show",
    "Outline",
    "Travel",
    "Itinerary",
];

const PROSE: &[&str] = &[
    "the", "user", "file", "report", "check", "each", "section", "output", "table", "value",
    "source", "result", "with", "and", "for", "before", "after", "summary", "format", "list",
    "step", "data", "clear", "short", "review", "missing", "field", "draft", "final", "note",
];

const CATEGORIES: &[&str] = &[
    "data-analysis",
    "development",
    "marketing",
    "productivity",
    "research",
    "writing",
];

/// `n` skills from `seed`, in folder order.
pub fn generate(seed: u64, n: usize) -> Vec<MarketSkill> {
    let mut rng = Lcg::new(seed);
    let mut folders = BTreeSet::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let count = 2 + rng.below(4);
        let mut parts: Vec<&str> = (0..count)
            .map(|_| TOPICS[rng.below(TOPICS.len())])
            .collect();
        parts.dedup();
        let mut title = parts.join(" ");
        if rng.below(10) == 0 {
            title.push_str(" & Assistant");
        }
        let mut folder = slug(&title);
        if !folders.insert(folder.clone()) {
            title.push_str(&format!(" {i}"));
            folder = slug(&title);
            folders.insert(folder.clone());
        }
        let empty_description = rng.below(1000) < EMPTY_DESCRIPTION_PER_MILLE;
        let description = if empty_description {
            "\"\"".to_owned()
        } else {
            let len = 40 + rng.below(120);
            let what = words(&mut rng, PROSE, len);
            let when = if rng.below(3) == 0 {
                ""
            } else {
                " Use when the user asks for it."
            };
            format!("{title} helps with {what}.{when}")
        };
        let mut md = format!("---\nname: {title}\ndescription: {description}\n");
        if rng.below(10) < 8 {
            md.push_str(&format!(
                "category: {}\nversion: 1.{}.0\nauthor: author-{}\ntags:\n  - {}\n  - {}\n",
                CATEGORIES[rng.below(CATEGORIES.len())],
                rng.below(10),
                rng.below(500),
                slug(TOPICS[rng.below(TOPICS.len())]),
                slug(TOPICS[rng.below(TOPICS.len())]),
            ));
        }
        md.push_str("---\n\n");
        md.push_str(&body(&mut rng, &title));
        out.push(MarketSkill {
            folder,
            title,
            skill_md: md,
            empty_description,
        });
    }
    out.sort_by(|a, b| a.folder.cmp(&b.folder));
    out
}

/// Writes [`generate()`]`(seed, n)` under `root`, one folder per skill.
///
/// # Errors
/// Any file-system error.
pub fn write(root: &Path, seed: u64, n: usize) -> io::Result<MarketStats> {
    let mut stats = MarketStats {
        skills: 0,
        with_description: 0,
        with_extension_fields: 0,
        bytes: 0,
    };
    for skill in generate(seed, n) {
        let dir = root.join(&skill.folder);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("SKILL.md"), &skill.skill_md)?;
        stats.skills += 1;
        stats.with_description += usize::from(!skill.empty_description);
        stats.with_extension_fields += usize::from(skill.skill_md.contains("\ncategory: "));
        stats.bytes += skill.skill_md.len();
    }
    Ok(stats)
}

/// A Markdown body of 1 to 5 KB.
fn body(rng: &mut Lcg, title: &str) -> String {
    let target = 1_000 + rng.below(4_000);
    let mut out = format!("# {title}\n\n## When to use\n\n");
    out.push_str(&words(rng, PROSE, 120));
    out.push_str(".\n\n## Steps\n\n");
    let mut step = 1;
    while out.len() < target {
        match rng.below(4) {
            0 => {
                out.push_str("```bash\npython scripts/run.py --input data.csv\n```\n\n");
            }
            1 => {
                out.push_str(&format!("### Part {step}\n\n"));
            }
            _ => {
                out.push_str(&format!("{step}. "));
                let len = 60 + rng.below(200);
                out.push_str(&words(rng, PROSE, len));
                out.push_str(".\n");
                if rng.below(3) == 0 {
                    out.push('\n');
                }
            }
        }
        step += 1;
    }
    out
}

/// `Academic Paper & Assistant` → `academic-paper-assistant`.
pub fn slug(title: &str) -> String {
    title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_shaped_like_a_marketplace() {
        let a = generate(11, 400);
        assert_eq!(a, generate(11, 400));
        assert_ne!(a, generate(12, 400));
        let folders: BTreeSet<&str> = a.iter().map(|s| s.folder.as_str()).collect();
        assert_eq!(folders.len(), 400, "unique folders");
        let empty = a.iter().filter(|s| s.empty_description).count();
        assert!((4..=24).contains(&empty), "about 3 %: {empty}");
        for s in &a {
            assert!(s.skill_md.starts_with(&format!("---\nname: {}\n", s.title)));
            assert_eq!(slug(&s.title), s.folder);
            assert_ne!(s.title, s.folder);
            let body = s.skill_md.split("---\n\n").nth(1).unwrap_or_default();
            assert!((1_000..6_000).contains(&body.len()), "{}", body.len());
        }
        assert_eq!(slug("PDF & Excel: Helper"), "pdf-excel-helper");
    }
}
