//! The contract of [`WorkspaceRuntime`] as a conformance suite any runtime
//! can run (feature `runtime`).
//!
//! The checks stage one skill the suite writes itself ([`skill`]: a
//! `SKILL.md` and an executable `scripts/hello.sh`) and run POSIX shell
//! commands in it, so the runtime must run commands with `sh` and must not
//! stage skills on demand (a skill nobody staged is
//! [`WorkspaceErrorKind::SkillNotLoaded`]). [`check_all`] runs every check,
//! each in a session of its own: write the skill with [`skill`] into a
//! temporary folder, build the runtime over another one, and await
//! `check_all(&runtime, &source)` in a test (skills-exec's
//! `tests/suite/conformance.rs` does so for its local and sandbox runtimes).
//!
//! The checks panic (they are test assertions) when the runtime breaks the
//! contract.

// Test assertions: a failed check is a panic with the runtime's error.
#![allow(clippy::unwrap_used)]

use std::io;
use std::path::Path;

use skills_workspace::{RunRequest, SessionId, SkillSource, WorkspaceErrorKind, WorkspaceRuntime};

use crate::fixture::SkillDir;

/// The name of the suite's skill.
pub const SKILL: &str = "conformance-skill";

/// Writes the suite's skill under `parent` and returns it as a source to
/// stage: `SKILL.md` and `scripts/hello.sh` (executable), which prints
/// `hello from $SKILL_NAME`.
///
/// # Errors
/// The first I/O error.
pub fn skill(parent: &Path) -> io::Result<SkillSource> {
    let dir = SkillDir::new(
        SKILL,
        "Checks workspace runtimes. Use in conformance tests.",
    )
    .body("Run scripts/hello.sh.\n")
    .executable(
        "scripts/hello.sh",
        "#!/bin/sh\necho \"hello from $SKILL_NAME\"\n",
    )
    .write_in(parent)?;
    Ok(SkillSource::folder(SKILL, dir.display().to_string()))
}

/// Runs every check against `runtime` with the skill `source` from
/// [`skill`], each in its own session (`conformance-1`, …), cleaned up
/// afterwards.
pub async fn check_all(runtime: &dyn WorkspaceRuntime, source: &SkillSource) {
    let session = |n: u32| SessionId::new(format!("conformance-{n}")).unwrap();
    stages_and_runs_a_skill(runtime, &session(1), source).await;
    reports_exit_codes(runtime, &session(2), source).await;
    collects_output_files(runtime, &session(3), source).await;
    refuses_unstaged_skills(runtime, &session(4)).await;
    cleans_up_once(runtime, &session(5), source).await;
}

/// A staged skill lands in `skills/<name>`, and its script runs from the
/// skill's folder with `SKILL_NAME` set.
pub async fn stages_and_runs_a_skill(
    runtime: &dyn WorkspaceRuntime,
    session: &SessionId,
    source: &SkillSource,
) {
    let staged = runtime.stage_skill(session, source).await.unwrap();
    assert_eq!(staged.name, SKILL);
    assert_eq!(staged.path, format!("skills/{SKILL}"));
    let result = runtime
        .run(session, &RunRequest::new(SKILL, "sh scripts/hello.sh"))
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    assert!(result.success());
    assert!(!result.timed_out);
    assert_eq!(result.stdout, format!("hello from {SKILL}\n"), "{result:?}");
    runtime.cleanup(session).await.unwrap();
}

/// A command's exit code comes back; a non-zero one is no success.
pub async fn reports_exit_codes(
    runtime: &dyn WorkspaceRuntime,
    session: &SessionId,
    source: &SkillSource,
) {
    runtime.stage_skill(session, source).await.unwrap();
    let result = runtime
        .run(session, &RunRequest::new(SKILL, "echo oops >&2; exit 3"))
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(3), "{result:?}");
    assert!(!result.success());
    assert!(result.stderr.contains("oops"), "{result:?}");
    runtime.cleanup(session).await.unwrap();
}

/// Files a command writes to `out/` are collected when asked for, with their
/// text inlined.
pub async fn collects_output_files(
    runtime: &dyn WorkspaceRuntime,
    session: &SessionId,
    source: &SkillSource,
) {
    runtime.stage_skill(session, source).await.unwrap();
    let request = RunRequest::new(SKILL, "echo done > out/result.txt").output_file("out/**");
    let result = runtime.run(session, &request).await.unwrap();
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    let file = result
        .output_files
        .iter()
        .find(|f| f.name == "out/result.txt")
        .unwrap_or_else(|| panic!("out/result.txt not collected: {result:?}"));
    assert_eq!(file.content.as_deref(), Some("done\n"));
    runtime.cleanup(session).await.unwrap();
}

/// Running a skill nobody staged is [`WorkspaceErrorKind::SkillNotLoaded`].
/// (A session id that could leave the workspace root cannot reach a
/// runtime: [`SessionId`] refuses it.)
pub async fn refuses_unstaged_skills(runtime: &dyn WorkspaceRuntime, session: &SessionId) {
    let err = runtime
        .run(session, &RunRequest::new(SKILL, "true"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), WorkspaceErrorKind::SkillNotLoaded, "{err}");
    for bad in ["../x", "a/b", ""] {
        let err = SessionId::new(bad).unwrap_err();
        assert_eq!(
            err.kind(),
            WorkspaceErrorKind::InvalidRequest,
            "{bad:?}: {err}"
        );
    }
    runtime.cleanup(session).await.unwrap();
}

/// Cleanup removes a session's workspace once; a second cleanup has nothing
/// to remove.
pub async fn cleans_up_once(
    runtime: &dyn WorkspaceRuntime,
    session: &SessionId,
    source: &SkillSource,
) {
    runtime.stage_skill(session, source).await.unwrap();
    let report = runtime.cleanup(session).await.unwrap();
    assert_eq!(report.session_id, session.as_str());
    assert!(report.removed, "{report:?}");
    assert!(!runtime.cleanup(session).await.unwrap().removed);
}
