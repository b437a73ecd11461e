//! The command parser of the run policy (`skills_exec::parse_command`): any
//! text. Nothing may panic; an accepted command holds no newline or control
//! character other than a tab (a separator) and a non-empty program without `=`, and quoting its words
//! again gives back the same words.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_exec::parse_command;

/// Single-quotes a word for the policy parser (`'` becomes `'"'"'`).
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\"'\"'"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = parse_command(command) else {
        return;
    };
    assert!(
        !command.chars().any(|c| c.is_control() && c != '\t'),
        "{command:?}"
    );
    assert!(!parsed.program.is_empty() && !parsed.program.contains('='));
    let words: Vec<String> = std::iter::once(parsed.program.clone())
        .chain(parsed.args.iter().cloned())
        .collect();
    let requoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
    let again = parse_command(&requoted.join(" ")).expect("re-quoted words parse");
    assert_eq!(again.program, parsed.program);
    assert_eq!(again.args, parsed.args);
});
