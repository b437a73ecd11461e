//! File-system skills for `skills`: discovery over one or more roots, safe resource
//! reads and resource listings, behind the [`SkillProvider`](skills_core::SkillProvider)
//! trait of `skills-core`.
//!
//! # What it must not depend on
//! No agent, model, HTTP or execution code: this crate only finds and reads skills.
//! It depends on `skills-core` for every rule (parsing, validation, path checks),
//! so a skill behaves the same whether it comes from disk or from code.
//!
//! # Safety rules
//! * A bad skill produces diagnostics and is skipped; it never breaks discovery.
//! * Every resource path is checked lexically, then opened by handle beneath the
//!   skill folder (`openat2(RESOLVE_BENEATH)` or a component walk, see
//!   [`Refusal`]); symlinks pointing out are refused, and only regular files are
//!   read, without blocking on pipes or devices.
//! * Every read is bounded: `SKILL.md` size, resource size, bytes per read, folders
//!   searched, files listed. See [`FsOptions`].
//!
//! ```no_run
//! use skills_core::SkillProvider;
//! use skills_fs::{FsOptions, FsProvider};
//! let provider = FsProvider::new(["examples/skills"], FsOptions::default());
//! let catalog = pollster::block_on(provider.list()).expect("list");
//! for name in catalog.names() {
//!     println!("{name}");
//! }
//! ```

mod beneath;
mod cache;
mod discover;
mod lint;
mod openai_yaml;
mod options;
mod parallel;
mod probe;
mod provider;
mod read;
#[cfg(feature = "remote")]
pub mod remote;
mod skill_fs;
mod standard_roots;
mod vfs;

pub use beneath::Refusal;
#[cfg(feature = "testing")]
pub use beneath::force_walk_on_this_thread;
#[cfg(feature = "testing")]
pub use cache::ManualClock;
pub use cache::{Clock, FsEnv, RACY_WINDOW, SystemClock};
pub use discover::{DiscoveredSkill, Discovery};
pub use lint::{lint_discovery, lint_skill_dir, resource_facts};
pub use openai_yaml::MAX_OPENAI_YAML_BYTES;
pub use options::{
    DEFAULT_COOLDOWN, DEFAULT_MAX_RESOURCE_BYTES, DEFAULT_MAX_SKILL_MD_BYTES, DEFAULT_SKIP_DIRS,
    FsOptions,
};
pub use probe::SystemProbe;
pub use provider::FsProvider;
pub use read::LISTING_WALK_CAP;
pub use skill_fs::SkillFs;
pub use standard_roots::{
    FoundRoots, PROJECT_DIRS, Scope, StandardProvider, StandardRoot, StandardRoots, USER_DIRS,
    project_dirs, standard_provider,
};
#[cfg(feature = "testing")]
pub use vfs::{CountingFs, FsCounts, FsOp};
pub use vfs::{DirEntries, FileKind, FileStat, HeldDir, RealFs, Vfs};

/// The examples in `docs/providers.md`, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/providers.md")]
pub struct ProvidersGuide;

/// The example in `docs/remote-roots.md`, compiled as a doc test.
#[cfg(all(doctest, feature = "remote"))]
#[doc = include_str!("../../../docs/remote-roots.md")]
pub struct RemoteRootsGuide;

/// The example in `docs/skill-format.md` ("Requirements"), compiled and run
/// as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/skill-format.md")]
pub struct SkillFormatGuide;

/// The example in `docs/lockfile.md` (the folder digest), compiled and run as
/// a doc test.
#[cfg(all(doctest, feature = "remote"))]
#[doc = include_str!("../../../docs/lockfile.md")]
pub struct LockfileGuide;

/// The examples in `docs/standard-roots.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/standard-roots.md")]
pub struct StandardRootsGuide;
