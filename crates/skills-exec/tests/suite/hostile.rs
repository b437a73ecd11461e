//! A hostile command against the runtime's own file work (threat model in
//! docs/exec.md: H1 to H6), in both runtimes. Every link, FIFO and swap here
//! is planted by a real command run through the runtime, or by a real
//! `renameat2(RENAME_EXCHANGE)` loop racing the runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use skills_exec::{InMemoryArtifacts, LocalRuntime, SandboxRuntime};
use skills_testkit::fixture::SkillDir;
use skills_workspace::{
    Attachment, ExecRequest, InputSpec, RunRequest, SkillSource, WorkspaceErrorKind,
    WorkspaceRuntime,
};

use crate::common::*;

/// The runtimes (local, a shared sandbox, a `bwrap` per run), each with its
/// root in `dir` and an artifact store.
fn runtimes(dir: &Path) -> Vec<(&'static str, Arc<dyn WorkspaceRuntime>)> {
    let artifacts = Arc::new(InMemoryArtifacts::new());
    let mut all = both_runtimes(dir, |b| b.artifacts(artifacts.clone()));
    let per_run = SandboxRuntime::builder(dir.join("per-run"))
        .policy(skills_exec::CommandPolicy::unrestricted())
        .artifacts(artifacts)
        .sandbox_options(crate::sandbox::options(true))
        .build_sandbox()
        .unwrap_or_else(|e| panic!("the sandbox cannot run on this machine: {e}"));
    all.push(("sandbox, bwrap per run", Arc::new(per_run)));
    all
}

/// Builds the runtimes a hostile check runs against, roots in a folder.
pub(crate) type Runtimes = fn(&Path) -> Vec<(&'static str, Arc<dyn WorkspaceRuntime>)>;

/// A host folder the command must never make the runtime write into, with
/// one file the runtime must never change or read back.
fn outside(dir: &Path) -> PathBuf {
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "TOPSECRET\n").unwrap();
    outside
}

/// Everything below `dir`, as sorted relative paths.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Fails the test when `fut` takes longer than `secs` (a host call that
/// blocks on a FIFO hangs forever).
async fn within<T>(secs: u64, what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(secs), fut)
        .await
        .unwrap_or_else(|_| panic!("{what} hung (a FIFO or a link followed?)"))
}

// threat model: H2, H3, H4
#[tokio::test(flavor = "multi_thread")]
async fn links_and_fifos_a_command_plants_never_redirect_the_runtime() {
    links_and_fifos(runtimes).await;
}

/// Links and FIFOs planted by a command, against each of `runtimes`
/// (the container runtime's test calls it too).
pub(crate) async fn links_and_fifos(runtimes: Runtimes) {
    let dir = tempfile::tempdir().unwrap();
    let outside = outside(dir.path());
    let victim = outside.join("secret.txt");
    let before = tree(&outside);
    for (name, rt) in runtimes(dir.path()) {
        let rt = rt.as_ref();
        rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "hostile"))
            .await
            .unwrap();
        // Where the runtime kept its bookkeeping file (and its temporary
        // name), what it reads, where it writes inputs: links and FIFOs.
        let plant = format!(
            "cd \"$WORKSPACE_DIR\" && ln -s {v} metadata.json.tmp && rm -f metadata.json && mkfifo metadata.json && \
             ln -s {v} out/victim.txt && mkfifo out/fifo.txt && ln -s /dev/zero out/zero.txt && \
             rm -rf work/inputs && ln -s {o} work/inputs && ln -s {o} work/evil && echo planted",
            v = victim.display(),
            o = outside.display()
        );
        let r = run(rt, "s", RunRequest::new("hostile", plant)).await;
        assert_eq!(r.stdout, "planted\n", "{name}: {r:?}");
        // Staging another skill (the runtime used to rewrite metadata.json
        // through its temporary name here, and read it back).
        within(
            10,
            "staging",
            rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "second")),
        )
        .await
        .unwrap();
        // Collecting: the link out, the FIFO and /dev/zero are refused.
        let r = within(
            10,
            "collecting",
            rt.run(
                &sid("s"),
                &RunRequest::new("hostile", "echo ok > out/ok.txt").output_file("out/*"),
            ),
        )
        .await
        .unwrap();
        let names: Vec<_> = r.output_files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["out/ok.txt"], "{name}: {r:?}");
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("refused `out/victim.txt`")),
            "{name}: {:?}",
            r.warnings
        );
        for (path, kind) in [
            ("out/victim.txt", WorkspaceErrorKind::PathEscape),
            ("out/zero.txt", WorkspaceErrorKind::PathEscape),
            ("out/fifo.txt", WorkspaceErrorKind::InvalidRequest),
            ("metadata.json", WorkspaceErrorKind::InvalidRequest),
        ] {
            let e = within(10, "read_file", rt.read_file(&sid("s"), path, 1 << 20))
                .await
                .unwrap_err();
            assert_eq!(e.kind(), kind, "{name}: {path}: {e}");
        }
        // Inputs and attachments never land outside, and no folder is made
        // there on the way.
        let data = InputSpec::new("workspace://out/ok.txt");
        for spec in [
            data.clone(),
            data.clone().to("work/inputs/x.txt"),
            data.clone().to("work/evil/sub/deeper/x.txt"),
            InputSpec::new("workspace://out/fifo.txt").to("work/copy.txt"),
            InputSpec::new("workspace://out/victim.txt").to("work/copy.txt"),
        ] {
            let e = within(
                10,
                "staging an input",
                rt.stage_inputs(&sid("s"), std::slice::from_ref(&spec)),
            )
            .await
            .unwrap_err();
            assert!(
                matches!(
                    e.kind(),
                    WorkspaceErrorKind::PathEscape | WorkspaceErrorKind::InvalidRequest
                ),
                "{name}: {spec:?}: {e}"
            );
        }
        let e = rt
            .stage_attachments(&sid("s"), &[Attachment::new("a.txt", "x")])
            .await
            .unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape, "{name}: {e}");
        // Run folders: `runs/` swapped for a link makes runs fail, never
        // creates a folder outside.
        let r = run(
            rt,
            "s",
            RunRequest::new(
                "hostile",
                format!(
                    "cd \"$WORKSPACE_DIR\" && mv runs runs.old && ln -s {} runs",
                    outside.display()
                ),
            ),
        )
        .await;
        assert_eq!(r.exit_code, Some(0), "{name}: {r:?}");
        for _ in 0..3 {
            let e = rt
                .run(&sid("s"), &RunRequest::new("hostile", "true"))
                .await
                .unwrap_err();
            assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape, "{name}: {e}");
        }
        assert_eq!(tree(&outside), before, "{name}: something was made outside");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "TOPSECRET\n");
        // Cleanup removes the links, never what they point at.
        assert!(
            within(20, "cleanup", rt.cleanup(&sid("s")))
                .await
                .unwrap()
                .removed
        );
        assert_eq!(tree(&outside), before, "{name}: cleanup reached outside");
    }
}

/// A small skill whose script swaps two paths with
/// `renameat2(RENAME_EXCHANGE)` in a loop for a few seconds (python3's
/// ctypes; glibc has had `renameat2` since 2.28).
fn exchanger(parent: &Path) -> SkillSource {
    let dir = SkillDir::new("swapper", "Swaps folders. Use in tests.")
        .file(
            "scripts/swap.py",
            "import ctypes, sys, time\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             a, b, secs = sys.argv[1].encode(), sys.argv[2].encode(), float(sys.argv[3])\n\
             end, n = time.time() + secs, 0\n\
             print('swapping', flush=True)\n\
             while time.time() < end:\n\
             \x20   if libc.renameat2(-100, a, -100, b, 2) == 0:\n\
             \x20       n += 1\n\
             print('swapped', n, flush=True)\n",
        )
        .write_in(parent)
        .unwrap();
    SkillSource::folder("swapper", dir.display().to_string())
}

/// Swaps `a` and `b` with `renameat2(RENAME_EXCHANGE)` from a thread of
/// this process until `stop`.
fn swap_thread(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            if rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .is_ok()
            {
                n += 1;
            }
        }
        n
    })
}

// threat model: H5
#[tokio::test(flavor = "multi_thread")]
async fn swapping_folders_for_links_while_the_runtime_works_never_redirects_it() {
    swapping_folders(runtimes).await;
}

/// Folders swapped for links while the runtime works, against each of
/// `runtimes` (the container runtime's test calls it too).
pub(crate) async fn swapping_folders(runtimes: Runtimes) {
    let dir = tempfile::tempdir().unwrap();
    let outside = outside(dir.path());
    let before = tree(&outside);
    for (name, rt) in runtimes(dir.path()) {
        let rt = rt.as_ref();
        let info = rt.create_workspace(&sid("s")).await.unwrap();
        let ws = PathBuf::from(&info.root);
        rt.stage_skill(&sid("s"), &exchanger(dir.path()))
            .await
            .unwrap();
        let setup = format!(
            "mkdir -p $WORK_DIR/inputs && ln -s {o} $WORK_DIR/decoy && \
             ln -s {o} $WORKSPACE_DIR/runs-decoy && \
             mkdir -p out && echo mine > out/mine.txt && ln -s {o} $WORKSPACE_DIR/out-decoy && \
             echo data > $WORK_DIR/data.txt",
            o = outside.display()
        );
        let r = run(rt, "s", RunRequest::new("swapper", setup)).await;
        assert_eq!(r.exit_code, Some(0), "{name}: {r:?}");
        // The real attack: a command of the session swaps `work/inputs`
        // and a link to the host folder, from an interactive session,
        // while the runtime stages inputs into it. The container runtime
        // has no interactive sessions (nor python3): there this process
        // swaps them, the same race from the other side.
        let started = if rt.name() == "container" {
            None
        } else {
            let started = rt
                .start_exec(
                    &sid("s"),
                    &ExecRequest::new(
                        "swapper",
                        format!(
                            "python3 scripts/swap.py {w}/work/inputs {w}/work/decoy 8",
                            w = ws.display()
                        ),
                    )
                    .tty(false)
                    .yield_ms(2000),
                )
                .await
                .unwrap();
            assert!(started.output.contains("swapping"), "{name}: {started:?}");
            Some(started)
        };
        // And from this process, on `runs/` and `out/` at the same time.
        let stop = Arc::new(AtomicBool::new(false));
        let mut swaps = vec![
            swap_thread(ws.join("runs"), ws.join("runs-decoy"), Arc::clone(&stop)),
            swap_thread(ws.join("out"), ws.join("out-decoy"), Arc::clone(&stop)),
        ];
        if started.is_none() {
            swaps.push(swap_thread(
                ws.join("work/inputs"),
                ws.join("work/decoy"),
                Arc::clone(&stop),
            ));
        }
        let (mut refused, mut placed, mut runs) = (0, 0, 0);
        let deadline = std::time::Instant::now() + Duration::from_secs(6);
        let mut i = 0u32;
        while std::time::Instant::now() < deadline {
            i += 1;
            let input =
                InputSpec::new("workspace://work/data.txt").to(format!("work/inputs/in-{i}.txt"));
            match rt.stage_inputs(&sid("s"), &[input]).await {
                Ok(_) => placed += 1,
                Err(e) if e.kind() == WorkspaceErrorKind::PathEscape => refused += 1,
                Err(e) => panic!("{name}: {e}"),
            }
            match rt
                .stage_attachments(&sid("s"), &[Attachment::new(format!("att-{i}.txt"), "x")])
                .await
            {
                Ok(_) => placed += 1,
                Err(e) if e.kind() == WorkspaceErrorKind::PathEscape => refused += 1,
                Err(e) => panic!("{name}: {e}"),
            }
            // Runs make their folder in `runs/` and collect from `out/`:
            // nothing may be made outside, nothing read from there.
            if let Ok(r) = rt
                .run(
                    &sid("s"),
                    &RunRequest::new("swapper", "true").output_file("out/*"),
                )
                .await
            {
                runs += 1;
                for f in &r.output_files {
                    assert!(
                        !f.content.as_deref().unwrap_or("").contains("TOPSECRET"),
                        "{name}: read through a swapped link: {f:?}"
                    );
                }
            }
            if let Ok(f) = rt.read_file(&sid("s"), "out/secret.txt", 100).await {
                panic!("{name}: read_file went through a swapped link: {f:?}");
            }
        }
        stop.store(true, Ordering::Relaxed);
        let swapped: u64 = swaps.into_iter().map(|t| t.join().unwrap()).sum();
        if let Some(started) = &started {
            let _ = rt.kill_exec(&sid("s"), &started.session_id).await;
        }
        eprintln!("{name}: {swapped} swaps, {refused} refused, {placed} placed, {runs} runs");
        assert!(swapped > 0, "{name}: the swapping threads never swapped");
        assert!(
            refused > 0,
            "{name}: the swap was never seen ({placed} placed): the race did not run"
        );
        assert!(
            placed > 0 && runs > 0,
            "{name}: {placed} placed, {runs} runs"
        );
        assert_eq!(tree(&outside), before, "{name}: the runtime wrote outside");
        rt.cleanup(&sid("s")).await.unwrap();
        assert_eq!(tree(&outside), before, "{name}: cleanup reached outside");
    }
}

// threat model: H1
#[tokio::test(flavor = "multi_thread")]
async fn a_root_another_user_could_have_made_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root_user = rustix::process::geteuid().is_root();
    // A root folder this process does not own: made for another user when
    // running as root, a system folder otherwise.
    let theirs = if root_user {
        let p = dir.path().join("theirs");
        std::fs::create_dir(&p).unwrap();
        std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
        p
    } else {
        PathBuf::from("/var/tmp")
    };
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    for root in [theirs.clone(), open.clone(), open.join("below")] {
        let e = LocalRuntime::builder(&root).build().unwrap_err();
        assert_eq!(
            e.kind(),
            WorkspaceErrorKind::InvalidRequest,
            "{root:?}: {e}"
        );
        assert!(e.message().contains("H1"), "{e}");
        let e = SandboxRuntime::builder(&root)
            .sandbox_options(crate::sandbox::options(false))
            .build_sandbox()
            .unwrap_err();
        assert_eq!(
            e.kind(),
            WorkspaceErrorKind::InvalidRequest,
            "{root:?}: {e}"
        );
    }
    assert!(
        !open.join("below").exists(),
        "a folder was made below an open one"
    );
    // A root the runtime picks is fresh, private and unpredictable.
    let picked = skills_exec::private_root("skills-test");
    assert!(!picked.exists());
    let rt = LocalRuntime::builder(&picked).build().unwrap();
    assert_eq!(rt.root(), picked.canonicalize().unwrap());
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&picked).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o700);
        assert_eq!(meta.uid(), rustix::process::geteuid().as_raw());
    }
    std::fs::remove_dir(&picked).unwrap();
}
