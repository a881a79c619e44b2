//! The generated BPF skeleton and the types shared through `bpf/intf.h`.

#[allow(non_camel_case_types, non_upper_case_globals, dead_code)]
#[allow(clippy::all)]
pub mod intf {
    include!(concat!(env!("OUT_DIR"), "/bpf_intf.rs"));
}

#[allow(clippy::all)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
}

pub use skel::*;
