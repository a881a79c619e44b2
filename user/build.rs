// The userspace mode's BPF side (bpf/: scx_rustland_core's backend with a
// wake-up stamp) and its Rust connector (src/bpf.rs) live in this crate;
// this compiles the BPF side, as scx_rustland_core's own builder would.
fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();
}
