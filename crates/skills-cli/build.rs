//! Build script of the `skills` binary: the link layout of a release build on
//! Linux, so that `skills mcp` keeps fewer pages of the executable resident.
//!
//! A page fault on the executable maps the 64 KiB around it (the kernel's
//! fault-around), so a process's file-backed resident memory counts every
//! 64 KiB window of code it ever ran. The MCP server runs about 1.5 MiB of
//! the binary's 10 MiB of code, but left where the compiler puts it that code
//! touches almost every window. Two link arguments change that, for the
//! `skills` binary only and only in release builds (`PROFILE=release`, which
//! includes profiles that inherit from it) for Linux:
//!
//! * `-T link/hot-text.ld`: a linker script (made by
//!   `scripts/link-order.py`) that places the functions the MCP server runs
//!   in an output section `.text.hot` before the rest of the code: first
//!   what runs while it serves, then what only its start-up runs (the
//!   server releases its code's pages every 2 s, so only the first group
//!   stays resident). It names them by their v0 symbol names
//!   (`-Csymbol-mangling-version=v0`, set in `.cargo/config.toml`), which
//!   spell out each generic instance, without the parts that differ between
//!   builds (crate disambiguators, back-references, the crate that
//!   instantiated a generic function), so it keeps working
//!   when the code or the compiler changes; a function it no longer names
//!   only stays where it was. Built with legacy names (`RUSTFLAGS` in the
//!   environment replace the config's), the build warns: the script then
//!   places the standard library's functions only. GNU ld and LLD read it;
//!   other linkers may not, so it is left out when `RUSTFLAGS` choose mold
//!   or gold.
//! * `-z pack-relative-relocs` (DT_RELR): the relative relocations of the
//!   position-independent executable as a bitmap of a few KiB instead of a
//!   table of 0.6 MiB that the dynamic loader reads whole at every start.
//!   The executable then needs glibc 2.36 or later, so it is used only when
//!   building for the machine it builds on (no cross build) and that
//!   machine's glibc is 2.36 or later.
//!
//! `SKILLS_LINK_LAYOUT=0` turns both off; `SKILLS_LINK_MAP=FILE` writes the
//! linker's map (input sections with their addresses) with or without them:
//! `scripts/link-order.py` reads the map of a release build without them.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    println!("cargo:rerun-if-env-changed=SKILLS_LINK_LAYOUT");
    println!("cargo:rerun-if-env-changed=SKILLS_LINK_MAP");
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("PROFILE") != "release" {
        return;
    }
    let arg = |value: &str| println!("cargo:rustc-link-arg-bin=skills={value}");
    if let Some(map) = env::var_os("SKILLS_LINK_MAP").filter(|m| !m.is_empty()) {
        arg("-Xlinker");
        arg(&format!("-Map={}", PathBuf::from(map).display()));
    }
    if var("SKILLS_LINK_LAYOUT") == "0" {
        return;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if ["mold", "gold", "linker-flavor"]
        .iter()
        .any(|other| flags.contains(other))
    {
        println!(
            "cargo:warning=RUSTFLAGS choose another linker: the MCP server's code is not \
             grouped (see crates/skills-cli/build.rs)"
        );
        return;
    }
    if !flags.contains("symbol-mangling-version=v0") {
        println!(
            "cargo:warning=RUSTFLAGS replace -Csymbol-mangling-version=v0 \
             (.cargo/config.toml): the MCP server's code is grouped less tightly \
             (see crates/skills-cli/build.rs)"
        );
    }
    let script = PathBuf::from(var("CARGO_MANIFEST_DIR")).join("link/hot-text.ld");
    if script.is_file() {
        // The compiler driver's `-T FILE`, two arguments: the path may hold a
        // comma, which `-Wl,` would split on.
        arg("-T");
        arg(&script.display().to_string());
    }
    if var("CARGO_CFG_TARGET_ENV") == "gnu" && var("HOST") == var("TARGET") && glibc_has_relr() {
        arg("-Wl,-z,pack-relative-relocs");
    }
}

/// `true` when this machine's glibc (as `ldd --version` reports it) is 2.36
/// or later, the first to load DT_RELR relocations.
fn glibc_has_relr() -> bool {
    let Ok(output) = Command::new("ldd").arg("--version").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(first) = text.lines().next() else {
        return false;
    };
    if !first.contains("GLIBC") && !first.contains("GNU libc") {
        return false;
    }
    let Some(version) = first.split_whitespace().last() else {
        return false;
    };
    let mut parts = version.split('.').map(str::parse::<u32>);
    match (parts.next(), parts.next()) {
        (Some(Ok(major)), Some(Ok(minor))) => (major, minor) >= (2, 36),
        _ => false,
    }
}
