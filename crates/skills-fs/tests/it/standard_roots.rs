//! Standard roots (F-PRV-7) on real folders: which roots are found and in what
//! order, precedence, collision warnings naming both skill folders, repository
//! root detection, symlinks, and missing folders. Every input (working directory,
//! home, `CODEX_HOME`) is injected: nothing depends on the real home folder.

use std::fs;
use std::path::{Path, PathBuf};

use skills_core::{Code, Diagnostic, ErrorKind, SkillProvider};
use skills_fs::{FsOptions, StandardProvider, StandardRoots};
use skills_fs::{Scope, StandardRoot, project_dirs};
use skills_testkit::fixture::SkillDir;
use tempfile::TempDir;

use super::support::{block_on, expect_kind, write_file};

/// A temporary world: `base/home` is the home folder, `base/repo` a repository
/// (its `.git` is created by the test), `base/repo/a/b` the working directory.
struct World {
    base: TempDir,
}

impl World {
    fn new() -> Self {
        let base = tempfile::tempdir().expect("temp dir");
        let world = Self { base };
        fs::create_dir_all(world.cwd()).expect("cwd");
        fs::create_dir_all(world.home()).expect("home");
        world
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.path().join(rel)
    }

    fn home(&self) -> PathBuf {
        self.path("home")
    }

    fn repo(&self) -> PathBuf {
        self.path("repo")
    }

    fn cwd(&self) -> PathBuf {
        self.path("repo/a/b")
    }

    /// Writes a valid skill `<root>/<name>/SKILL.md` whose body says `body`.
    fn skill(&self, root: &str, name: &str, body: &str) -> PathBuf {
        SkillDir::new(name, &format!("The {name} skill. Use it in tests."))
            .body(format!("{body}\n"))
            .write_in(&self.path(root))
            .expect("write skill")
    }

    fn git_dir(&self) {
        fs::create_dir_all(self.path("repo/.git")).expect(".git");
    }

    /// Roots with every input injected; `CODEX_HOME` and `XDG_CONFIG_HOME`
    /// unset.
    fn roots(&self) -> StandardRoots {
        StandardRoots::new()
            .cwd(self.cwd())
            .home(self.home())
            .codex_home(None)
            .config_home(None)
    }

    fn provider(&self) -> StandardProvider {
        self.roots().provider(FsOptions::default())
    }
}

fn body(provider: &StandardProvider, name: &str) -> String {
    block_on(provider.get(name)).expect("get").body.clone()
}

fn names(provider: &StandardProvider) -> Vec<String> {
    let catalog = block_on(provider.list()).expect("list");
    catalog.names().map(str::to_owned).collect()
}

fn collisions(provider: &StandardProvider) -> Vec<Diagnostic> {
    block_on(provider.diagnostics())
        .into_iter()
        .filter(|d| d.code == Code::LayerCollision)
        .collect()
}

fn paths(roots: &[StandardRoot]) -> Vec<(Scope, PathBuf)> {
    roots.iter().map(|r| (r.scope, r.path.clone())).collect()
}

/// Whether any ancestor of the temp folder has a `.git` (then the "no
/// repository" tests cannot run meaningfully).
fn temp_is_inside_a_repository(world: &World) -> bool {
    world
        .base
        .path()
        .ancestors()
        .any(|d| fs::symlink_metadata(d.join(".git")).is_ok())
}

#[test]
fn candidates_in_precedence_order() {
    let w = World::new();
    w.git_dir();
    let found = w.roots().candidates();
    assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
    let p = Scope::Project;
    let u = Scope::User;
    assert_eq!(
        paths(&found.roots),
        vec![
            (p, w.path("repo/a/b/.agents/skills")),
            (p, w.path("repo/a/b/.claude/skills")),
            (p, w.path("repo/a/b/.codex/skills")),
            (p, w.path("repo/a/b/.opencode/skills")),
            (p, w.path("repo/a/.agents/skills")),
            (p, w.path("repo/a/.claude/skills")),
            (p, w.path("repo/a/.codex/skills")),
            (p, w.path("repo/a/.opencode/skills")),
            (p, w.path("repo/.agents/skills")),
            (p, w.path("repo/.claude/skills")),
            (p, w.path("repo/.codex/skills")),
            (p, w.path("repo/.opencode/skills")),
            (u, w.path("home/.agents/skills")),
            (u, w.path("home/.claude/skills")),
            (u, w.path("home/.codex/skills")),
            (u, w.path("home/.config/opencode/skills")),
        ]
    );
    assert_eq!(
        found.roots[0].label,
        found.roots[0].path.display().to_string()
    );

    let with_codex = w.roots().codex_home(Some(w.path("codex"))).candidates();
    assert_eq!(
        with_codex.roots.iter().rev().nth(1).map(|r| r.path.clone()),
        Some(w.path("codex/skills"))
    );
    let with_config = w.roots().config_home(Some(w.path("xdg"))).candidates();
    assert_eq!(
        with_config.roots.last().map(|r| r.path.clone()),
        Some(w.path("xdg/opencode/skills"))
    );
}

/// A repository where each tool keeps its own skills folder, as a team that
/// uses Claude Code, Codex and opencode side by side would: every folder is
/// read, in the stated order, and a name in two folders is taken from the
/// first with a `layer-collision` warning naming both.
#[test]
fn codex_and_opencode_folders_in_a_realistic_layout() {
    let w = World::new();
    w.git_dir();
    w.skill("repo/.agents/skills", "shared", "agents");
    w.skill("repo/.claude/skills", "review", "claude");
    w.skill("repo/.codex/skills", "release", "codex");
    w.skill("repo/.codex/skills", "deploy", "codex");
    w.skill("repo/.opencode/skills", "deploy", "opencode");
    w.skill("repo/.opencode/skills", "lint", "opencode");
    w.skill("home/.codex/skills", "user-codex", "u");
    w.skill("home/.config/opencode/skills", "user-opencode", "u");
    w.skill("home/.config/opencode/skills", "lint", "user");
    let provider = w.provider();
    assert_eq!(
        names(&provider),
        [
            "deploy",
            "lint",
            "release",
            "review",
            "shared",
            "user-codex",
            "user-opencode"
        ]
    );
    assert_eq!(body(&provider, "deploy").trim(), "codex");
    assert_eq!(body(&provider, "lint").trim(), "opencode");
    let found: Vec<String> = collisions(&provider)
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().any(|m| m.contains("`deploy`")
            && m.contains(".codex/skills/deploy")
            && m.contains(".opencode/skills/deploy")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|m| m.contains("`lint`")
            && m.contains("repo/.opencode/skills/lint")
            && m.contains(".config/opencode/skills/lint")),
        "{found:?}"
    );
    // `XDG_CONFIG_HOME` moves opencode's user folder.
    w.skill("xdg/opencode/skills", "from-xdg", "x");
    let moved = w
        .roots()
        .config_home(Some(w.path("xdg")))
        .provider(FsOptions::default());
    let moved_names = names(&moved);
    assert!(
        moved_names.contains(&"from-xdg".to_owned()),
        "{moved_names:?}"
    );
    assert!(
        !moved_names.contains(&"user-opencode".to_owned()),
        "{moved_names:?}"
    );
}

#[test]
fn missing_standard_folders_are_fine() {
    let w = World::new();
    w.git_dir();
    let found = w.roots().discover();
    assert!(found.roots.is_empty());
    assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
    let provider = w.provider();
    assert!(names(&provider).is_empty());
    assert!(block_on(provider.diagnostics()).is_empty());
    let err = expect_kind(block_on(provider.get("x")), ErrorKind::SkillNotFound);
    assert!(err.available().is_empty());
}

#[test]
fn only_existing_folders_are_roots() {
    let w = World::new();
    w.git_dir();
    w.skill("repo/a/.claude/skills", "one", "x");
    w.skill("home/.codex/skills", "two", "y");
    let found = w.roots().discover();
    assert_eq!(
        paths(&found.roots),
        vec![
            (Scope::Project, w.path("repo/a/.claude/skills")),
            (Scope::User, w.path("home/.codex/skills")),
        ]
    );
    let provider = w.provider();
    assert_eq!(provider.roots(), found.roots.as_slice());
    assert_eq!(names(&provider), ["one", "two"]);
}

#[test]
fn project_wins_over_user_and_the_collision_names_both_folders() {
    let w = World::new();
    w.git_dir();
    let project = w.skill("repo/.agents/skills", "shared", "from project");
    let user = w.skill("home/.agents/skills", "shared", "from user");
    w.skill("home/.agents/skills", "user-only", "only user");
    let provider = w.provider();
    assert_eq!(names(&provider), ["shared", "user-only"]);
    assert_eq!(body(&provider, "shared"), "from project");
    assert_eq!(body(&provider, "user-only"), "only user");
    assert_eq!(provider.skill_dir("shared"), Some(project.clone()));

    let found = collisions(&provider);
    assert_eq!(found.len(), 1, "{found:#?}");
    let d = &found[0];
    assert!(!d.is_error());
    let (p, u) = (project.display().to_string(), user.display().to_string());
    assert!(d.message.contains(&format!("`{p}`")), "{d}");
    assert!(d.message.contains(&format!("`{u}`")), "{d}");
    assert!(
        d.message.contains(&format!("the one in `{p}` is used")),
        "{d}"
    );
    assert!(
        d.message.contains("project root") && d.message.contains("user root"),
        "{d}"
    );
    assert_eq!(
        d.file.as_deref(),
        Some(user.join("SKILL.md").display().to_string().as_str())
    );
    // A resource read goes to the winning folder.
    write_file(&project.join("references/r.md"), "project ref\n");
    write_file(&user.join("references/r.md"), "user ref\n");
    let text = block_on(provider.read_resource("shared", "references/r.md", None)).expect("read");
    assert_eq!(text.text, "project ref\n");
}

#[test]
fn nearer_project_folders_win_and_agents_before_claude() {
    let w = World::new();
    w.git_dir();
    let near = w.skill("repo/a/b/.claude/skills", "tool", "near claude");
    let far = w.skill("repo/.agents/skills", "tool", "far agents");
    let agents = w.skill("repo/a/.agents/skills", "pair", "agents");
    let claude = w.skill("repo/a/.claude/skills", "pair", "claude");
    let provider = w.provider();
    assert_eq!(body(&provider, "tool"), "near claude");
    assert_eq!(body(&provider, "pair"), "agents");

    let found = collisions(&provider);
    assert_eq!(found.len(), 2, "{found:#?}");
    let mentions = |d: &Diagnostic, a: &Path, b: &Path| {
        d.message.contains(&a.display().to_string()) && d.message.contains(&b.display().to_string())
    };
    assert!(found.iter().any(|d| mentions(d, &near, &far)), "{found:#?}");
    assert!(
        found.iter().any(|d| mentions(d, &agents, &claude)),
        "{found:#?}"
    );
}

#[test]
fn three_way_collision_warns_for_each_loser() {
    let w = World::new();
    w.git_dir();
    let first = w.skill("repo/.agents/skills", "x", "1");
    let second = w.skill("home/.claude/skills", "x", "2");
    let third = w.skill("home/.codex/skills", "x", "3");
    let provider = w.provider();
    assert_eq!(body(&provider, "x"), "1");
    let found = collisions(&provider);
    assert_eq!(found.len(), 2, "{found:#?}");
    let f = first.display().to_string();
    for (d, loser) in found.iter().zip([&second, &third]) {
        assert!(d.message.contains(&f), "{d}");
        assert!(d.message.contains(&loser.display().to_string()), "{d}");
    }
}

#[test]
fn duplicates_inside_one_root_are_reported_too() {
    let w = World::new();
    w.git_dir();
    w.skill("repo/.agents/skills/group-a", "dup", "a");
    write_file(
        &w.path("repo/.agents/skills/group-b/other/SKILL.md"),
        "---\nname: dup\ndescription: Same name. Use never.\n---\nb\n",
    );
    let provider = w.provider();
    assert_eq!(body(&provider, "dup"), "a");
    let dups: Vec<_> = block_on(provider.diagnostics())
        .into_iter()
        .filter(|d| d.code == Code::SkillDuplicate)
        .collect();
    assert_eq!(dups.len(), 1, "{dups:#?}");
    assert!(dups[0].message.contains("group-a") && dups[0].message.contains("group-b"));
}

#[test]
fn repository_root_found_by_a_git_file() {
    let w = World::new();
    // A worktree or submodule has a `.git` *file*.
    write_file(&w.path("repo/.git"), "gitdir: /elsewhere\n");
    w.skill("repo/.agents/skills", "in-repo", "in");
    // Above the repository root: never a project root.
    w.skill(".agents/skills", "above", "above");
    let dirs = project_dirs(&w.cwd());
    assert_eq!(dirs, vec![w.cwd(), w.path("repo/a"), w.repo()]);
    let provider = w.provider();
    assert_eq!(names(&provider), ["in-repo"]);
}

#[test]
fn cwd_at_the_repository_root() {
    let w = World::new();
    w.git_dir();
    assert_eq!(project_dirs(&w.repo()), vec![w.repo()]);
}

#[test]
fn without_a_repository_only_the_working_directory_counts() {
    let w = World::new();
    assert!(
        !temp_is_inside_a_repository(&w),
        "the temp folder {} is inside a git repository, so the no-repository case cannot \
         be checked; set TMPDIR to a folder outside any repository",
        w.base.path().display()
    );
    w.skill("repo/a/b/.agents/skills", "here", "here");
    w.skill("repo/a/.agents/skills", "parent", "parent");
    w.skill("repo/.claude/skills", "grandparent", "grandparent");
    assert_eq!(project_dirs(&w.cwd()), vec![w.cwd()]);
    let provider = w.roots().without_home().provider(FsOptions::default());
    assert_eq!(names(&provider), ["here"]);
    assert!(block_on(provider.diagnostics()).is_empty());
}

#[test]
fn a_relative_working_directory_is_made_absolute() {
    let found = StandardRoots::new()
        .cwd("some/relative/dir")
        .without_home()
        .codex_home(None)
        .candidates();
    assert!(
        found.roots.iter().all(|r| r.path.is_absolute()),
        "{found:?}"
    );
    assert!(
        found.roots.is_empty()
            || found.roots[0]
                .path
                .ends_with("some/relative/dir/.agents/skills")
    );
}

#[test]
fn codex_home_replaces_the_default_codex_folder() {
    let w = World::new();
    w.git_dir();
    w.skill("home/.codex/skills", "default-codex", "d");
    w.skill("codex/skills", "custom-codex", "c");
    let default = w.provider();
    assert_eq!(names(&default), ["default-codex"]);
    let custom = w
        .roots()
        .codex_home(Some(w.path("codex")))
        .provider(FsOptions::default());
    assert_eq!(names(&custom), ["custom-codex"]);
    // CODEX_HOME applies even without a home folder.
    let no_home = w
        .roots()
        .without_home()
        .codex_home(Some(w.path("codex")))
        .provider(FsOptions::default());
    assert_eq!(names(&no_home), ["custom-codex"]);
}

#[test]
fn a_root_that_is_a_file_is_reported_and_skipped() {
    let w = World::new();
    w.git_dir();
    let file = write_file(&w.path("repo/.agents/skills"), "not a folder");
    w.skill("home/.agents/skills", "ok", "ok");
    let provider = w.provider();
    assert_eq!(names(&provider), ["ok"]);
    let diags = block_on(provider.diagnostics());
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(!diags[0].is_error());
    assert!(
        diags[0].message.contains(&file.display().to_string()),
        "{}",
        diags[0]
    );
}

#[test]
fn the_same_folder_in_both_scopes_is_one_root() {
    let w = World::new();
    // The repository is the home folder (a dotfiles repository).
    fs::create_dir_all(w.path("home/.git")).expect(".git");
    fs::create_dir_all(w.path("home/work")).expect("work");
    w.skill("home/.agents/skills", "mine", "m");
    let provider = StandardRoots::new()
        .cwd(w.path("home/work"))
        .home(w.home())
        .codex_home(None)
        .provider(FsOptions::default());
    assert_eq!(
        paths(provider.roots()),
        vec![(Scope::Project, w.path("home/.agents/skills"))]
    );
    assert_eq!(names(&provider), ["mine"]);
    assert!(block_on(provider.diagnostics()).is_empty());
}

#[test]
fn limits_apply_to_each_root() {
    let w = World::new();
    w.git_dir();
    w.skill("repo/.agents/skills", "shallow", "s");
    w.skill("repo/.agents/skills/x/y/z", "deep", "d");
    let all = w.provider();
    assert_eq!(names(&all), ["deep", "shallow"]);
    let bounded = w.roots().provider(FsOptions::default().with_max_depth(1));
    assert_eq!(names(&bounded), ["shallow"]);
    let few = w.roots().provider(FsOptions::default().with_max_dirs(0));
    assert!(names(&few).is_empty());
    assert!(
        block_on(few.diagnostics())
            .iter()
            .any(|d| d.message.contains("stopped searching")),
        "the folder limit is reported"
    );
}

#[cfg(unix)]
mod symlinks {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_symlinked_skill_folder_inside_a_root_is_followed() {
        let w = World::new();
        w.git_dir();
        let real = w.skill("elsewhere", "linked", "through a link");
        fs::create_dir_all(w.path("repo/.agents/skills")).expect("root");
        symlink(&real, w.path("repo/.agents/skills/linked")).expect("symlink");
        write_file(&real.join("references/guide.md"), "guide\n");
        let provider = w.provider();
        assert_eq!(names(&provider), ["linked"]);
        assert_eq!(body(&provider, "linked"), "through a link");
        let text =
            block_on(provider.read_resource("linked", "references/guide.md", None)).expect("read");
        assert_eq!(text.text, "guide\n");
    }

    #[test]
    fn a_resource_symlink_pointing_outside_the_skill_is_refused() {
        let w = World::new();
        w.git_dir();
        let secret = write_file(&w.path("secret.txt"), "secret\n");
        let real = w.skill("elsewhere", "linked", "x");
        fs::create_dir_all(w.path("repo/.agents/skills")).expect("root");
        symlink(&real, w.path("repo/.agents/skills/linked")).expect("symlink");
        fs::create_dir_all(real.join("references")).expect("refs");
        symlink(&secret, real.join("references/leak.md")).expect("symlink");
        let provider = w.provider();
        let err = expect_kind(
            block_on(provider.read_resource("linked", "references/leak.md", None)),
            ErrorKind::InvalidPath,
        );
        assert!(err.message().contains("outside the skill folder"), "{err}");
        let skill = block_on(provider.get("linked")).expect("get");
        assert!(skill.resources.paths().is_empty(), "{:?}", skill.resources);
    }

    #[test]
    fn claude_linked_to_agents_is_one_root_without_collisions() {
        let w = World::new();
        w.git_dir();
        w.skill("repo/.agents/skills", "tool", "t");
        fs::create_dir_all(w.path("repo/.claude")).expect(".claude");
        symlink(w.path("repo/.agents/skills"), w.path("repo/.claude/skills")).expect("symlink");
        let provider = w.provider();
        assert_eq!(
            paths(provider.roots()),
            vec![(Scope::Project, w.path("repo/.agents/skills"))]
        );
        assert!(block_on(provider.diagnostics()).is_empty());
    }

    #[test]
    fn one_skill_linked_into_two_roots_is_not_a_collision() {
        let w = World::new();
        w.git_dir();
        let real = w.skill("repo/.agents/skills", "tool", "t");
        fs::create_dir_all(w.path("home/.claude/skills")).expect("root");
        symlink(&real, w.path("home/.claude/skills/tool")).expect("symlink");
        let provider = w.provider();
        assert_eq!(names(&provider), ["tool"]);
        assert!(collisions(&provider).is_empty());
    }

    #[test]
    fn a_root_that_is_itself_a_symlink_is_followed() {
        let w = World::new();
        w.git_dir();
        w.skill("shared-skills", "shared", "s");
        fs::create_dir_all(w.path("home/.agents")).expect(".agents");
        symlink(w.path("shared-skills"), w.path("home/.agents/skills")).expect("symlink");
        let provider = w.provider();
        assert_eq!(names(&provider), ["shared"]);
    }
}
