// This software may be used and distributed according to the terms of the
// GNU General Public License version 2.

include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
