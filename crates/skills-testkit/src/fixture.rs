//! Skill folders on disk for tests: one builder instead of a hand-written
//! writer in every test crate.
//!
//! A [`SkillDir`] is one skill folder: its `SKILL.md` (built from a name, a
//! description, extra frontmatter lines and a body, or given whole for the
//! broken-skill cases) and the files beside it (`scripts/`, `references/`,
//! `assets/`, with an executable bit where asked). A [`Library`] is a set of
//! them, plus loose files, written under one root. The bytes written are
//! exactly the bytes given: the builder adds the frontmatter fences and
//! nothing else, so snapshot tests keep their inputs.
//!
//! ```
//! use skills_testkit::fixture::{Library, SkillDir};
//!
//! let dir = tempfile::tempdir()?;
//! let paths = Library::new()
//!     .skill(
//!         SkillDir::new("charts", "Draws charts. Use for plots.")
//!             .body("# Charts\n")
//!             .file("references/styles.md", "bar, line\n")
//!             .executable("scripts/plot.sh", "#!/bin/sh\necho plotted\n"),
//!     )
//!     .skill(SkillDir::raw("broken", "no frontmatter\n"))
//!     .write_to(dir.path())?;
//! assert_eq!(
//!     std::fs::read_to_string(dir.path().join("charts/SKILL.md"))?,
//!     "---\nname: charts\ndescription: Draws charts. Use for plots.\n---\n# Charts\n"
//! );
//! assert_eq!(paths, [dir.path().join("charts"), dir.path().join("broken")]);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What a [`SkillDir`]'s `SKILL.md` holds.
#[derive(Debug, Clone)]
enum SkillMd {
    /// `---\n{frontmatter}\n---\n{body}`.
    Parts { frontmatter: String, body: String },
    /// These bytes, verbatim.
    Raw(Vec<u8>),
}

/// One file of a skill folder.
#[derive(Debug, Clone)]
struct FileSpec {
    rel: String,
    bytes: Vec<u8>,
    executable: bool,
}

/// One skill folder: a `SKILL.md` and the files beside it.
///
/// The `SKILL.md` is `---\n` + frontmatter + `\n---\n` + body. The
/// frontmatter is `name: {name}\ndescription: {description}` followed by each
/// [`SkillDir::frontmatter_line`], or the text given to
/// [`SkillDir::with_frontmatter`]; the body is written as given (end it with
/// `\n` for a final newline). [`SkillDir::raw`] writes any bytes instead, for
/// skills that must be broken.
#[derive(Debug, Clone)]
pub struct SkillDir {
    folder: String,
    skill_md: SkillMd,
    files: Vec<FileSpec>,
}

impl SkillDir {
    /// A skill `name` with `description`, in the folder `name`, with an empty
    /// body.
    pub fn new(name: &str, description: &str) -> Self {
        Self {
            folder: name.to_owned(),
            skill_md: SkillMd::Parts {
                frontmatter: format!("name: {name}\ndescription: {description}"),
                body: String::new(),
            },
            files: Vec::new(),
        }
    }

    /// A skill in `folder` whose frontmatter (between the `---` fences, no
    /// final newline) is `frontmatter`, verbatim, with an empty body.
    pub fn with_frontmatter(folder: &str, frontmatter: &str) -> Self {
        Self {
            folder: folder.to_owned(),
            skill_md: SkillMd::Parts {
                frontmatter: frontmatter.to_owned(),
                body: String::new(),
            },
            files: Vec::new(),
        }
    }

    /// A skill in `folder` whose `SKILL.md` is `skill_md`, verbatim: for
    /// broken frontmatter, odd encodings and other malformed cases.
    pub fn raw(folder: &str, skill_md: impl AsRef<[u8]>) -> Self {
        Self {
            folder: folder.to_owned(),
            skill_md: SkillMd::Raw(skill_md.as_ref().to_vec()),
            files: Vec::new(),
        }
    }

    /// Puts the skill in `folder` (relative, `/`-separated, several segments
    /// allowed) instead of the folder named after it.
    #[must_use]
    pub fn in_folder(mut self, folder: &str) -> Self {
        folder.clone_into(&mut self.folder);
        self
    }

    /// Appends one line (no newline) to the frontmatter. No effect on a
    /// [`SkillDir::raw`] skill.
    #[must_use]
    pub fn frontmatter_line(mut self, line: &str) -> Self {
        if let SkillMd::Parts { frontmatter, .. } = &mut self.skill_md {
            frontmatter.push('\n');
            frontmatter.push_str(line);
        }
        self
    }

    /// The body after the closing fence, written as given. No effect on a
    /// [`SkillDir::raw`] skill.
    #[must_use]
    pub fn body(mut self, text: impl Into<String>) -> Self {
        if let SkillMd::Parts { body, .. } = &mut self.skill_md {
            *body = text.into();
        }
        self
    }

    /// Adds the file `rel` (relative to the skill folder, e.g.
    /// `references/guide.md`) with these bytes.
    #[must_use]
    pub fn file(mut self, rel: &str, bytes: impl AsRef<[u8]>) -> Self {
        self.files.push(FileSpec {
            rel: rel.to_owned(),
            bytes: bytes.as_ref().to_vec(),
            executable: false,
        });
        self
    }

    /// Adds the file `rel` with these bytes, executable (mode `0755` on
    /// Unix; a plain file elsewhere).
    #[must_use]
    pub fn executable(mut self, rel: &str, bytes: impl AsRef<[u8]>) -> Self {
        self.files.push(FileSpec {
            rel: rel.to_owned(),
            bytes: bytes.as_ref().to_vec(),
            executable: true,
        });
        self
    }

    /// The folder the skill is written to, relative to the root.
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// The bytes of the `SKILL.md` this writes.
    pub fn skill_md(&self) -> Vec<u8> {
        match &self.skill_md {
            SkillMd::Parts { frontmatter, body } => {
                format!("---\n{frontmatter}\n---\n{body}").into_bytes()
            }
            SkillMd::Raw(bytes) => bytes.clone(),
        }
    }

    /// Writes the skill under `root` (`root/<folder>/SKILL.md` first, then
    /// the files in the order they were added), creating folders as needed,
    /// and returns the skill folder.
    ///
    /// # Errors
    /// The first I/O error.
    pub fn write_in(&self, root: &Path) -> io::Result<PathBuf> {
        let dir = root.join(&self.folder);
        write_file(&dir.join("SKILL.md"), self.skill_md())?;
        for file in &self.files {
            let path = write_file(&dir.join(&file.rel), &file.bytes)?;
            if file.executable {
                make_executable(&path)?;
            }
        }
        Ok(dir)
    }
}

/// A skills root: skill folders and loose files, written together.
#[derive(Debug, Clone, Default)]
pub struct Library {
    skills: Vec<SkillDir>,
    files: Vec<(String, Vec<u8>)>,
}

impl Library {
    /// An empty library.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a skill folder.
    #[must_use]
    pub fn skill(mut self, skill: SkillDir) -> Self {
        self.skills.push(skill);
        self
    }

    /// Adds a file `rel` (relative to the root) outside the skill folders'
    /// own lists: a stray file, a file in a nested skill's parent, ...
    #[must_use]
    pub fn file(mut self, rel: &str, bytes: impl AsRef<[u8]>) -> Self {
        self.files.push((rel.to_owned(), bytes.as_ref().to_vec()));
        self
    }

    /// Writes the skills (in the order added), then the loose files, under
    /// `root`, and returns the skill folders in the same order.
    ///
    /// # Errors
    /// The first I/O error.
    pub fn write_to(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        let mut dirs = Vec::with_capacity(self.skills.len());
        for skill in &self.skills {
            dirs.push(skill.write_in(root)?);
        }
        for (rel, bytes) in &self.files {
            write_file(&root.join(rel), bytes)?;
        }
        Ok(dirs)
    }

    /// Writes the library into a new temporary folder, removed when the
    /// returned handle drops.
    ///
    /// # Errors
    /// The first I/O error.
    pub fn write_temp(&self) -> io::Result<tempfile::TempDir> {
        let dir = tempfile::tempdir()?;
        self.write_to(dir.path())?;
        Ok(dir)
    }
}

/// Writes `path` with `bytes`, creating its parent folders, and returns it.
///
/// # Errors
/// The first I/O error.
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<PathBuf> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, bytes)?;
    Ok(path.to_path_buf())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_md_is_fences_frontmatter_and_body_exactly() {
        let skill = SkillDir::new("a", "Does a.")
            .frontmatter_line("license: MIT")
            .body("Body.\n");
        assert_eq!(
            skill.skill_md(),
            b"---\nname: a\ndescription: Does a.\nlicense: MIT\n---\nBody.\n"
        );
        let custom = SkillDir::with_frontmatter("x", "name: y").body("z");
        assert_eq!(custom.skill_md(), b"---\nname: y\n---\nz");
        let raw = SkillDir::raw("r", "no fences").body("ignored");
        assert_eq!(raw.skill_md(), b"no fences");
    }

    #[test]
    fn writes_files_and_returns_folders() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dirs = Library::new()
            .skill(
                SkillDir::new("b", "Does b.")
                    .in_folder("group/b")
                    .executable("scripts/run.sh", "#!/bin/sh\n")
                    .file("assets/x.bin", [0u8, 255]),
            )
            .file("stray.txt", "x")
            .write_to(dir.path())
            .expect("write");
        assert_eq!(dirs, [dir.path().join("group/b")]);
        assert_eq!(
            fs::read(dir.path().join("group/b/assets/x.bin")).expect("read"),
            [0, 255]
        );
        assert!(dir.path().join("stray.txt").is_file());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join("group/b/scripts/run.sh"))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
    }
}
