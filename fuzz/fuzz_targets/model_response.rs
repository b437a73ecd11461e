//! Whole (non-streamed) model answers as the HTTP adapters read them: any
//! bytes as the body of an OpenAI Chat completion, an OpenAI Responses
//! response or an Anthropic message, and any text as a `retry-after` value.
//! Nothing may panic; an error says what was wrong.
//!
//! Input: `[wire selector][body…]`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_models::fuzzing::{Wire, parse_response, retry_after};

const WIRES: [Wire; 3] = [Wire::OpenAiChat, Wire::OpenAiResponses, Wire::Anthropic];

fuzz_target!(|data: &[u8]| {
    let [selector, body @ ..] = data else {
        return;
    };
    let wire = WIRES[usize::from(*selector) % WIRES.len()];
    match parse_response(wire, body) {
        Ok(response) => {
            // Normalized usage never counts fewer prompt tokens than cached.
            assert!(
                response.usage.input_tokens >= response.usage.cache_read_tokens
                    || wire != Wire::Anthropic,
                "{response:?}"
            );
        }
        Err(error) => assert!(!error.message().is_empty()),
    }
    if let Ok(value) = std::str::from_utf8(body) {
        let _ = retry_after(value, 1_700_000_000);
    }
});
