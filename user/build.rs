// scx_rustland_core's builder writes its BPF side (intf.h, main.bpf.c) and
// the Rust connector (src/bpf.rs) into this crate, then compiles them.
fn main() {
    scx_rustland_core::RustLandBuilder::new()
        .unwrap()
        .build()
        .unwrap();
}
