//! The helper of the bubblewrap sandbox (see the `skills-sandbox` crate):
//! started by `SandboxRuntime` inside `bwrap`, never by hand.

fn main() {
    std::process::exit(skills_sandbox::main_with_args(std::env::args_os()));
}
