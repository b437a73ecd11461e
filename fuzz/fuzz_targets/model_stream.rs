//! Streamed model answers as the HTTP adapters read them: any bytes as a
//! server-sent-event body, cut into chunks of any size, through the stream
//! decoder of OpenAI Chat, OpenAI Responses or Anthropic. Nothing may panic;
//! the stream ends at its first error; an answer completes at most once, as
//! the last event, and then its text is the concatenation of the text
//! deltas and its tool calls are the tool-call events, in order.
//!
//! Input: `[wire selector][chunk size][SSE bytes…]`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_agent::ModelEvent;
use skills_models::fuzzing::{Wire, decode_stream};

const WIRES: [Wire; 3] = [Wire::OpenAiChat, Wire::OpenAiResponses, Wire::Anthropic];

fuzz_target!(|data: &[u8]| {
    let [selector, size, body @ ..] = data else {
        return;
    };
    let wire = WIRES[usize::from(*selector) % WIRES.len()];
    let size = usize::from(*size % 64) + 1;
    let chunks: Vec<Vec<u8>> = body.chunks(size).map(<[u8]>::to_vec).collect();
    let events = decode_stream(wire, chunks);

    let mut text = String::new();
    let mut calls = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let last = i + 1 == events.len();
        match event {
            Ok(ModelEvent::TextDelta(delta)) => text.push_str(delta),
            Ok(ModelEvent::ToolCall(call)) => calls.push(call.clone()),
            Ok(ModelEvent::Completed(response)) => {
                assert!(last, "events after the completion: {events:?}");
                assert_eq!(response.message.content, text, "{wire:?}");
                assert_eq!(response.message.tool_calls, calls, "{wire:?}");
            }
            Ok(other) => panic!("a decoder yielded {other:?}"),
            Err(error) => {
                assert!(last, "events after an error: {events:?}");
                assert!(!error.message().is_empty());
            }
        }
    }
});
