use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The `-D` name of breakage `name`: upper case, `-` as `_`.
fn break_define(name: &str) -> String {
    format!("SCX_TICK_BREAK_{}", name.to_uppercase().replace('-', "_"))
}

/// The test-only breakages, read from their one declaration, bpf/breakages.h:
/// each `#define SCX_TICK_BREAK_<NAME> 0 /* <name>: what it breaks */`.
fn breakages() -> Vec<String> {
    let path = "bpf/breakages.h";
    let header = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let blocks = header
        .lines()
        .filter(|l| l.starts_with("#ifndef SCX_TICK_BREAK_"))
        .count();
    let names: Vec<String> = header
        .lines()
        .filter(|l| l.starts_with("#define SCX_TICK_BREAK_"))
        .map(|l| {
            l.split_once(" 0 /* ")
                .and_then(|(_, c)| c.split_once(':'))
                .map(|(n, _)| n.to_string())
                .filter(|n| l.starts_with(&format!("#define {} 0 ", break_define(n))))
                .unwrap_or_else(|| panic!("{path}: not in its one form: {l}"))
        })
        .collect();
    if names.len() != blocks {
        panic!(
            "{path}: {blocks} #ifndef blocks, {} breakages in their one form",
            names.len()
        );
    }
    names
}

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

    // scx_cargo reruns this for every bpf/*.[hc]: main.bpf.c and the files it includes.
    let mut bpf = scx_cargo::BpfBuilder::new().unwrap();
    bpf.enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf");
    // Tests only: a deliberately broken policy (bpf/breakages.h, scripts/mutants.sh).
    println!("cargo:rerun-if-env-changed=SCX_TICK_BREAK");
    println!("cargo:rerun-if-changed=bpf/breakages.h");
    let allowed = breakages();
    let broken = std::env::var("SCX_TICK_BREAK").ok();
    if let Some(name) = &broken {
        if !allowed.contains(name) {
            panic!("SCX_TICK_BREAK={name}: allowed: {}", allowed.join(", "));
        }
        bpf.add_cflag(&format!("-D{}=1", break_define(name)));
        println!("cargo:warning=scx_tick built with the test-only breakage {name}");
    }
    write_rust_breakages(&allowed, broken.as_deref());
    bpf.build().unwrap();
}

/// The same breakages for the Rust code: one `bool` constant each, named as
/// the C macro (so `git grep` finds both), in `$OUT_DIR/breakages.rs`.
fn write_rust_breakages(allowed: &[String], broken: Option<&str>) {
    let consts: String = allowed
        .iter()
        .map(|n| {
            format!(
                "/// `{n}` (bpf/breakages.h)\npub const {}: bool = {};\n",
                break_define(n),
                broken == Some(n.as_str())
            )
        })
        .collect();
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("breakages.rs");
    std::fs::write(&path, consts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
