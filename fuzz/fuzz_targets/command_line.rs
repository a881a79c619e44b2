//! A command line (arguments split at NUL bytes): clap, the configuration
//! and its validation, as `scx_tick` runs them before loading anything.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scx_tick::config::fuzz::command_line_bytes(data);
});
