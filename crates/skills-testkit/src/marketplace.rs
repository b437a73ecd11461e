//! A skill library shaped like a public skills marketplace.
//!
//! Such marketplaces hold thousands of skills written by many authors, and a
//! host such as Claude Code loads every one of them. Their shape, which
//! [`generate`] reproduces from a seed (rates per mille are constants below):
//! * `name:` is a display title (`name: Academic Paper Citation Network Mapper`)
//!   in a folder named with the slug (`academic-paper-citation-network-mapper/`);
//! * about a fifth of the titles are whole sentences, so their folder names are
//!   longer than the 64 characters a name may have
//!   (`add-ide-style-semantic-code-navigation-and-symbol-safe-refactors-…/`);
//! * a few folders are not valid names themselves (`Sales_Forecast_Checker/`),
//!   and a few skills have no `name:` at all;
//! * about 3 % of the skills have an empty description (`description: ""`) and
//!   about 1 % no `description` key; a fifth of those have a body with no
//!   paragraph to take a description from (only a fenced code block, or
//!   nothing);
//! * most carry fields outside the specification (`category`, `tags`, `version`,
//!   `author`, ...);
//! * other bodies are realistic Markdown of 1 to 5 KB: headings, steps, lists
//!   and a fenced code block.
//!
//! Every `SKILL.md` has well-formed YAML frontmatter, so a lenient loader must
//! load every folder: [`MarketSkill::name`] is the name it should load it under
//! (unique in the library). The output is deterministic: the same seed and
//! count give the same bytes.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;

use crate::{Lcg, words};

/// Per mille of skills with an empty description (3 %).
pub const EMPTY_DESCRIPTION_PER_MILLE: usize = 30;
/// Per mille of skills with no `description` key (1 %).
pub const MISSING_DESCRIPTION_PER_MILLE: usize = 10;
/// Per mille of skills whose title is a sentence, so that the folder name is
/// longer than 64 characters (20 %, as in a real marketplace).
pub const LONG_FOLDER_PER_MILLE: usize = 200;
/// Per mille of skills in a folder whose name is not a valid skill name
/// (`Sales_Forecast_Checker`, 1 %).
pub const ODD_FOLDER_PER_MILLE: usize = 10;
/// Per mille of skills with no `name` key (0.5 %).
pub const MISSING_NAME_PER_MILLE: usize = 5;
/// Of the skills without a description, one in this many has a body with no
/// paragraph.
pub const PARAGRAPHLESS_ONE_IN: usize = 5;

/// The longest a skill name may be, in characters (the specification's limit).
const MAX_NAME_CHARS: usize = 64;

/// One generated skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketSkill {
    /// The folder name: the slug of the title, or (for [`odd_folder`](Self::odd_folder))
    /// the title's words joined by `_`; unique in the library.
    pub folder: String,
    /// The display title written as `name:` (unless
    /// [`missing_name`](Self::missing_name)).
    pub title: String,
    /// The name a lenient loader should load the skill under: the slug of the
    /// title, which is the folder name unless the folder is odd. Unique.
    pub name: String,
    /// The `SKILL.md` text.
    pub skill_md: String,
    /// Whether the frontmatter has no usable description (empty, or no key).
    pub empty_description: bool,
    /// Whether the frontmatter has no `description` key at all (implies
    /// [`empty_description`](Self::empty_description)).
    pub missing_description: bool,
    /// Whether the frontmatter has no `name` key.
    pub missing_name: bool,
    /// Whether the body has no paragraph (only a code block, or nothing).
    pub paragraphless_body: bool,
    /// Whether the folder name is longer than 64 characters.
    pub long_folder: bool,
    /// Whether the folder name is not a valid skill name.
    pub odd_folder: bool,
}

/// What [`write()`] created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarketStats {
    /// Skills written.
    pub skills: usize,
    /// Skills with a non-empty description.
    pub with_description: usize,
    /// Skills with no `description` key (counted in `skills - with_description`
    /// too).
    pub missing_description: usize,
    /// Skills whose body has no paragraph.
    pub paragraphless_bodies: usize,
    /// Skills whose folder name is longer than 64 characters.
    pub long_folders: usize,
    /// Skills whose folder name is not a valid skill name.
    pub odd_folders: usize,
    /// Skills with no `name` key.
    pub missing_name: usize,
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

/// First words of sentence titles.
const VERBS: &[&str] = &[
    "Add", "Build", "Keep", "Review", "Run", "Track", "Turn", "Generate",
];

/// Words of sentence titles, some with the punctuation real titles have.
const SENTENCE: &[&str] = &[
    "a",
    "the",
    "before",
    "after",
    "with",
    "for",
    "into",
    "every",
    "agent",
    "IDE-style",
    "symbol-safe",
    "semantic",
    "code",
    "navigation",
    "refactors",
    "browser",
    "review",
    "checkpoint",
    "risky",
    "actions",
    "(beta)",
    "AI:",
    "team's",
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
    // Slugs taken so far: folder names and the names skills load under.
    let mut slugs = BTreeSet::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let long = rng.below(1000) < LONG_FOLDER_PER_MILLE;
        let mut title = if long {
            sentence_title(&mut rng)
        } else {
            short_title(&mut rng)
        };
        if !slugs.insert(slug(&title)) {
            title.push_str(&format!(" {i}"));
            slugs.insert(slug(&title));
        }
        let name = slug(&title);
        let odd_folder = !long && title.contains(' ') && rng.below(1000) < ODD_FOLDER_PER_MILLE;
        let folder = if odd_folder {
            title
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join("_")
        } else {
            name.clone()
        };
        let missing_name = rng.below(1000) < MISSING_NAME_PER_MILLE;
        let roll = rng.below(1000);
        let empty_description = roll < EMPTY_DESCRIPTION_PER_MILLE + MISSING_DESCRIPTION_PER_MILLE;
        let missing_description = roll < MISSING_DESCRIPTION_PER_MILLE;
        let paragraphless_body = empty_description && rng.below(PARAGRAPHLESS_ONE_IN) == 0;

        let mut md = String::from("---\n");
        if !missing_name {
            md.push_str(&format!("name: {}\n", yaml_text(&title)));
        }
        if !missing_description {
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
                yaml_text(&format!("{title} helps with {what}.{when}"))
            };
            md.push_str(&format!("description: {description}\n"));
        }
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
        if paragraphless_body {
            if rng.below(2) == 0 {
                md.push_str("```bash\npython scripts/run.py --input data.csv\n```\n");
            }
        } else {
            md.push_str(&body(&mut rng, &title));
        }
        out.push(MarketSkill {
            folder,
            title,
            name,
            skill_md: md,
            empty_description,
            missing_description,
            missing_name,
            paragraphless_body,
            long_folder: long,
            odd_folder,
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
        missing_description: 0,
        paragraphless_bodies: 0,
        long_folders: 0,
        odd_folders: 0,
        missing_name: 0,
        with_extension_fields: 0,
        bytes: 0,
    };
    for skill in generate(seed, n) {
        let dir = root.join(&skill.folder);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("SKILL.md"), &skill.skill_md)?;
        stats.skills += 1;
        stats.with_description += usize::from(!skill.empty_description);
        stats.missing_description += usize::from(skill.missing_description);
        stats.paragraphless_bodies += usize::from(skill.paragraphless_body);
        stats.long_folders += usize::from(skill.long_folder);
        stats.odd_folders += usize::from(skill.odd_folder);
        stats.missing_name += usize::from(skill.missing_name);
        stats.with_extension_fields += usize::from(skill.skill_md.contains("\ncategory: "));
        stats.bytes += skill.skill_md.len();
    }
    Ok(stats)
}

/// Two to five topic words, sometimes with `& Assistant`.
fn short_title(rng: &mut Lcg) -> String {
    let count = 2 + rng.below(4);
    let mut parts: Vec<&str> = (0..count)
        .map(|_| TOPICS[rng.below(TOPICS.len())])
        .collect();
    parts.dedup();
    let mut title = parts.join(" ");
    if rng.below(10) == 0 {
        title.push_str(" & Assistant");
    }
    title
}

/// A sentence whose slug is 65 to about 140 characters long.
fn sentence_title(rng: &mut Lcg) -> String {
    let target = MAX_NAME_CHARS + 1 + rng.below(70);
    let mut title = VERBS[rng.below(VERBS.len())].to_owned();
    while slug(&title).chars().count() < target {
        let word = if rng.below(3) == 0 {
            TOPICS[rng.below(TOPICS.len())]
        } else {
            SENTENCE[rng.below(SENTENCE.len())]
        };
        title.push(' ');
        title.push_str(word);
    }
    title
}

/// A YAML scalar for `text`: plain when it is safe, double-quoted otherwise
/// (titles may hold `: `, `'`, `(` or `&`).
fn yaml_text(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '.' | ','))
        && !text.starts_with(['-', ' '])
        && !text.ends_with(' ');
    if plain {
        text.to_owned()
    } else {
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    }
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
        let a = generate(11, 2_000);
        assert_eq!(a, generate(11, 2_000));
        assert_ne!(a, generate(12, 2_000));
        let folders: BTreeSet<&str> = a.iter().map(|s| s.folder.as_str()).collect();
        assert_eq!(folders.len(), a.len(), "unique folders");
        let names: BTreeSet<&str> = a.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), a.len(), "unique names");
        // No folder is another skill's loaded name unless it is its own.
        for s in &a {
            if s.odd_folder {
                assert!(!names.contains(s.folder.as_str()), "{}", s.folder);
            }
        }
        let count = |f: fn(&MarketSkill) -> bool| a.iter().filter(|s| f(s)).count();
        let empty = count(|s| s.empty_description);
        assert!((50..=110).contains(&empty), "about 4 %: {empty}");
        let missing = count(|s| s.missing_description);
        assert!((8..=35).contains(&missing), "about 1 %: {missing}");
        let paragraphless = count(|s| s.paragraphless_body);
        assert!((4..=30).contains(&paragraphless), "{paragraphless}");
        let long = count(|s| s.long_folder);
        assert!((300..=500).contains(&long), "about 20 %: {long}");
        assert!((8..=40).contains(&count(|s| s.odd_folder)));
        assert!((2..=25).contains(&count(|s| s.missing_name)));
        for s in &a {
            assert_eq!(slug(&s.title), s.name);
            assert_ne!(s.title, s.folder);
            assert_eq!(s.long_folder, s.folder.chars().count() > MAX_NAME_CHARS);
            assert!(s.folder.chars().count() < 200, "{}", s.folder);
            assert_eq!(s.odd_folder, s.folder != s.name);
            assert!(!s.missing_description || s.empty_description);
            assert!(!s.paragraphless_body || s.empty_description);
            assert_eq!(
                s.skill_md.contains("\nname: "),
                !s.missing_name,
                "{}",
                s.skill_md
            );
            assert_eq!(
                s.skill_md.contains("\ndescription: "),
                !s.missing_description
            );
            let body = s.skill_md.split_once("\n---\n").map(|(_, b)| b);
            let body = body.unwrap_or_default();
            if s.paragraphless_body {
                assert!(body.trim().is_empty() || body.trim().starts_with("```"));
            } else {
                assert!((1_000..6_000).contains(&body.len()), "{}", body.len());
            }
        }
        assert_eq!(slug("PDF & Excel: Helper"), "pdf-excel-helper");
    }

    #[test]
    fn titles_are_quoted_when_yaml_needs_it() {
        assert_eq!(yaml_text("Sales Forecast"), "Sales Forecast");
        assert_eq!(yaml_text("Add AI: review"), "\"Add AI: review\"");
        assert_eq!(yaml_text("PDF & Assistant"), "\"PDF & Assistant\"");
        assert_eq!(yaml_text("say \"hi\""), "\"say \\\"hi\\\"\"");
    }
}
