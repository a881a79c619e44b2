use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    // The commit for `--version`; "unknown" when built outside a git checkout.
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SCX_TICK_GIT={commit}");
    // Rebuild the string when HEAD moves (a commit, a checkout).
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }

    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();
}
