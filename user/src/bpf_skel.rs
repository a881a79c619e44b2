//! rustland's BPF skeleton (generated at build time).
include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
