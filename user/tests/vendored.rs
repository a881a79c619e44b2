//! The vendored scx_rustland_core files are the crate's with exactly
//! scx_rustland_core.patch (vendor/scx_rustland_core/check-patch.sh).

use std::process::Command;

#[test]
fn vendored_files_are_the_crate_with_the_patch() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("bash")
        .arg(format!("{dir}/vendor/scx_rustland_core/check-patch.sh"))
        .output()
        .expect("running check-patch.sh");
    let said = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        // no registry copy to compare with: nothing to check
        Some(77) => eprintln!("{said}"),
        _ => panic!("{said}{}", String::from_utf8_lossy(&out.stdout)),
    }
}
