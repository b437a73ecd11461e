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
//! * Every resource path is checked lexically, canonicalized and required to stay
//!   inside the skill folder; symlinks pointing out are refused.
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

pub mod cache;
pub mod discover;
pub mod lint;
pub mod options;
pub mod provider;
pub mod read;
#[cfg(feature = "remote")]
pub mod remote;
pub mod standard_roots;
pub mod vfs;

#[cfg(feature = "testing")]
pub use cache::ManualClock;
pub use cache::{Clock, FsEnv, SystemClock};
pub use discover::{DiscoveredSkill, Discovery, discover, find_skill_md, load_skill_dir};
pub use lint::{lint_skill_dir, resource_facts};
pub use options::FsOptions;
pub use provider::{FsProvider, load_skill};
pub use read::{list_resources, read_resource};
pub use standard_roots::{
    FoundRoots, Scope, StandardProvider, StandardRoot, StandardRoots, standard_provider,
};
pub use vfs::{CountingFs, FileKind, FileStat, FsCounts, FsOp, RealFs, Vfs};

/// The examples in `docs/providers.md`, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/providers.md")]
pub struct ProvidersGuide;

/// The examples in `docs/standard-roots.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/standard-roots.md")]
pub struct StandardRootsGuide;
