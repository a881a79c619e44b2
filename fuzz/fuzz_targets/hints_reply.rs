//! What scx_tick answers a registration, read as the client library does.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scx_tick_hint::protocol::checks::reply_bytes(data);
});
