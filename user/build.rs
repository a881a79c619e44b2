// The userspace mode's BPF side (bpf/) and Rust connector (src/bpf.rs) are
// scx_rustland_core's, vendored with a wake-up stamp in
// vendor/scx_rustland_core/ (its README says what changed and why); this
// compiles the BPF side, as scx_rustland_core's own builder would.
const VENDORED: &str = "vendor/scx_rustland_core";

fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf(&format!("{VENDORED}/bpf/intf.h"), "bpf_intf.rs")
        .enable_skel(&format!("{VENDORED}/bpf/main.bpf.c"), "bpf")
        // scx_bpf_error() messages name __FILE__: keep it relative to the
        // vendored folder ("bpf/main.bpf.c:LINE: ...", as before the move)
        .add_cflag(&format!("-fmacro-prefix-map={VENDORED}/="))
        .build()
        .unwrap();
}
