//! Resource paths: `ResourcePath::parse` on any text, then a real read through
//! `FsProvider::read_resource` on a skill folder built once, with the fuzzed
//! path and line range. The folder holds symlinks that lead out of the skill
//! (a file and a folder); a read must never return the text behind them.
//!
//! Input: `PATH` or `PATH\nRANGE` (RANGE as `skills read --lines`).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use skills_core::{LineRange, ResourcePath, SkillProvider};
use skills_fs::{FsOptions, FsProvider};

/// Text of the file outside the skill folder; must never be read.
const SECRET: &str = "FUZZ-SECRET-OUTSIDE-THE-SKILL";

struct Fixture {
    _dir: tempfile::TempDir,
    provider: FsProvider,
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("root");
        let skill = root.join("demo");
        write(
            skill.join("SKILL.md"),
            "---\nname: demo\ndescription: A fuzzing fixture. Use never.\n---\n# Demo\n",
        );
        write(skill.join("references/guide.md"), "one\ntwo\nthree\n");
        write(skill.join("references/deep/a b.md"), "spaced\n");
        write(skill.join("references/ünïcode.md"), "unicode\n");
        write(skill.join("scripts/run.py"), "print('hi')\n");
        write(skill.join("assets/template.txt"), "{{x}}\n");
        std::fs::write(skill.join("assets/blob.bin"), [0u8, 159, 146, 150, 0, 1]).expect("bin");
        write(dir.path().join("outside/secret.md"), SECRET);
        write(root.join("other/SKILL.md"), SECRET);
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(
                dir.path().join("outside/secret.md"),
                skill.join("references/escape.md"),
            )
            .expect("symlink");
            symlink("../../outside", skill.join("references/out")).expect("symlink");
            symlink("guide.md", skill.join("references/inside.md")).expect("symlink");
        }
        let provider = FsProvider::new([root], FsOptions::default());
        Fixture {
            _dir: dir,
            provider,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (path, range) = match text.split_once('\n') {
        Some((path, range)) => (path, Some(range)),
        None => (&*text, None),
    };
    if let Ok(parsed) = ResourcePath::parse(path) {
        // A parsed path prints back to something that parses the same.
        let shown = parsed.to_string();
        let again = ResourcePath::parse(&shown).expect("a printed path parses");
        assert_eq!(again.to_string(), shown);
    }
    let range = match range.map(LineRange::parse) {
        Some(Ok(range)) => Some(range),
        Some(Err(_)) => return,
        None => None,
    };
    let fixture = fixture();
    let result = pollster::block_on(fixture.provider.read_resource("demo", path, range));
    match result {
        Ok(content) => assert!(
            !content.text.contains(SECRET),
            "read escaped the skill: {path:?}"
        ),
        Err(err) => assert!(!err.to_string().contains(SECRET)),
    }
});
