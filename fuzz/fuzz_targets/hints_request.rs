//! What a client of the hints socket sends, framed and read as scx_tick does.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scx_tick_hint::protocol::checks::request_bytes(data);
});
