//! A configuration file's text: parsed, then checked against two machines.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // the file reader refuses text that is not UTF-8 before parsing
    if let Ok(doc) = std::str::from_utf8(data) {
        let _ = scx_tick::config::fuzz::toml_file(doc);
    }
});
