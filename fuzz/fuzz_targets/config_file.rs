//! A configuration file's text: parsed, then checked against two machines.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scx_tick::config::fuzz::config_file_bytes(data);
});
