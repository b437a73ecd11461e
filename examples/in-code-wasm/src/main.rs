//! Prints the first model request of a session over in-code skills.
//!
//! ```text
//! cargo run -p in-code-wasm -- [USER_MESSAGE]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let user = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What is in sales.csv?".to_owned());
    match in_code_wasm::first_request(&user, "claude-sonnet-4-5") {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
