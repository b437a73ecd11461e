//! The messages between the runtime and the sandbox helper
//! (`skills_sandbox::protocol`): any bytes as a request or a reply body, a
//! stream of frames, or the helper's configuration argument. Nothing may
//! panic or allocate beyond the input's size; whatever decodes encodes
//! back to a frame that decodes to the same message, and a reply always
//! fits one atomic pipe write.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_sandbox::protocol::{
    FRAME_HEADER, HelperConfig, MAX_REPLY_FRAME, MAX_REQUEST_FRAME, Reply, Request, frame_len,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = Request::decode(data) {
        let frame = request.encode();
        assert_eq!(
            frame_len(&frame, MAX_REQUEST_FRAME),
            Ok(Some(frame.len() - FRAME_HEADER))
        );
        assert_eq!(Request::decode(&frame[FRAME_HEADER..]), Ok(request));
    }
    if let Ok(reply) = Reply::decode(data) {
        let frame = reply.encode();
        assert!(frame.len() <= MAX_REPLY_FRAME);
        assert_eq!(Reply::decode(&frame[FRAME_HEADER..]), Ok(reply));
    }
    // The same bytes as a stream of frames, as the reader on a pipe sees
    // them: each length is checked before the body is taken.
    let mut rest = data;
    while let Ok(Some(n)) = frame_len(rest, MAX_REQUEST_FRAME) {
        let Some(body) = rest.get(FRAME_HEADER..FRAME_HEADER + n) else {
            break;
        };
        let _ = Request::decode(body);
        let _ = Reply::decode(body);
        rest = &rest[FRAME_HEADER + n..];
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(cfg) = HelperConfig::from_arg(text)
    {
        assert_eq!(HelperConfig::from_arg(&cfg.to_arg()), Ok(cfg));
    }
});
