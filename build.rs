use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The test-only breakages bpf/breakages.h knows.
const BREAKAGES: [&str; 18] = [
    "fifo",
    "nosteal",
    "steal-early",
    "nolend",
    "nomiss",
    "stall",
    "selfkick",
    "noparked",
    "hometurn",
    "nicestall",
    "nospill",
    "waketicks",
    "notickreplenish",
    "threadticks",
    "noinherit",
    "nodemote",
    "nosteps",
    "sharecharge",
];

fn main() {
    // The commit for `--version`, "-dirty" when tracked files differ from
    // it (as scx schedulers mark it); "unknown" when built outside a git
    // checkout. --no-optional-locks: status must not rewrite the index,
    // which would rerun this script at every build.
    let mut commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    if git(&[
        "--no-optional-locks",
        "status",
        "--porcelain",
        "--untracked-files=no",
    ])
    .is_some_and(|s| !s.is_empty())
    {
        commit.push_str("-dirty");
    }
    println!("cargo:rustc-env=SCX_TICK_GIT={commit}");
    // Rebuild the string when HEAD moves (a commit, a checkout), the index
    // changes (git add) or the sources do (bpf/ is the BPF build's).
    for path in ["HEAD", "logs/HEAD", "index"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    for path in ["src", "build.rs", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={path}");
    }

    let mut bpf = scx_cargo::BpfBuilder::new().unwrap();
    bpf.enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf");
    // Tests only: a deliberately broken policy (bpf/breakages.h, scripts/mutants.sh).
    println!("cargo:rerun-if-env-changed=SCX_TICK_BREAK");
    println!("cargo:rerun-if-changed=bpf/breakages.h");
    if let Ok(name) = std::env::var("SCX_TICK_BREAK") {
        if !BREAKAGES.contains(&name.as_str()) {
            panic!("SCX_TICK_BREAK={name}: allowed: {}", BREAKAGES.join(", "));
        }
        let define = name.to_uppercase().replace('-', "_");
        bpf.add_cflag(&format!("-DSCX_TICK_BREAK_{define}=1"));
        println!("cargo:warning=scx_tick built with the test-only breakage {name}");
    }
    bpf.build().unwrap();
}
