//! Fuzzing the configuration entry points (TOML file, `--tick-cgroup`
//! specs, `--tick-cpus`, the whole command line). The checks every input
//! must pass are public: the coverage-guided targets in `fuzz/` (built
//! with `--cfg fuzzing`) call them, and `cargo test` replays their
//! committed corpus and runs a deterministic generator (thousands of
//! random and mutated inputs, the same every run). Each input must end in
//! `Ok` or in an `Err` whose message is one non-empty line; none may panic
//! or abort. Inputs that are bad by construction (a wrong type or an
//! out-of-range value for a known key) must be refused with a message
//! naming the key.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

use super::Config;
use super::cli::Cli;
use super::parse::{parse_group_spec, parse_tick_cpus};
use crate::model::topology::tests::i9_14900hx;
use crate::model::topology::{CpuInfo, Machine};

/// The 4-CPU test guest, without SMT.
fn small_vm() -> Machine {
    Machine {
        model: "vm".into(),
        cpus: (0..4)
            .map(|id| CpuInfo {
                id,
                core: id,
                core_id: id,
                socket: 0,
                node: 0,
                llc: 0,
                caches: [Some(id), Some(id), Some(id), Some(0)],
                capacity: 1024,
                max_freq_khz: 0,
                core_type: "P-core".into(),
            })
            .collect(),
    }
}

fn resolve_ok(p: &str) -> Result<(PathBuf, u64)> {
    if p.is_empty() || p.contains('\0') {
        anyhow::bail!("tick group {p:?}: cgroup does not exist");
    }
    Ok((PathBuf::from("/sys/fs/cgroup").join(p), p.len() as u64))
}

/// An error must be one non-empty line.
fn check_message(input: &str, e: &anyhow::Error) {
    let msg = format!("{e:#}");
    assert!(!msg.trim().is_empty(), "empty error message for {input:?}");
    assert!(
        !msg.contains('\n'),
        "multi-line error message for {input:?}: {msg}"
    );
}

/// Run `f` on `input`; a panic fails the test with the input that caused it.
fn no_panic<T>(input: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => panic!("panicked on input {input:?}"),
    }
}

/// A parsed configuration validated on two machines: no panic, Ok or one-line Err.
fn validate_everywhere(input: &str, c: &Config) -> Vec<Result<()>> {
    [i9_14900hx(), small_vm()]
        .iter()
        .map(|m| {
            let r = no_panic(input, || c.validate(m, &resolve_ok)).map(|_| ());
            if let Err(e) = &r {
                check_message(input, e);
            }
            r
        })
        .collect()
}

/// A configuration file's text.
pub fn toml_file(doc: &str) -> Result<()> {
    match no_panic(doc, || Config::from_toml(doc)) {
        Ok(c) => {
            validate_everywhere(doc, &c);
            Ok(())
        }
        Err(e) => {
            check_message(doc, &e);
            Err(e)
        }
    }
}

/// A `--tick-cgroup` spec.
pub fn group_spec(spec: &str) {
    match no_panic(spec, || parse_group_spec(spec)) {
        Ok(g) => {
            let c = Config {
                groups: vec![g],
                ..Default::default()
            };
            validate_everywhere(spec, &c);
        }
        Err(e) => check_message(spec, &e),
    }
}

/// A `--tick-cpus` value.
pub fn tick_cpus(s: &str) {
    match no_panic(s, || parse_tick_cpus(s)) {
        Ok(t) => {
            let c = Config {
                tick_cpus: t,
                ..Default::default()
            };
            validate_everywhere(s, &c);
        }
        Err(e) => check_message(s, &e),
    }
}

/// A command line (`argv[0]` included), parsed as `scx_tick` does up to
/// the point of loading: clap, then the configuration, then validation.
/// False when clap refuses it.
pub fn command_line(argv: &[String]) -> bool {
    let input = argv.join(" ");
    // clap's own errors are multi-line usage texts by design: only no panic here
    let Ok(cli) = no_panic(&input, || Cli::try_parse_from(argv)) else {
        return false;
    };
    match no_panic(&input, || Config::from_args(&cli.run)) {
        Ok(c) => {
            validate_everywhere(&input, &c);
        }
        Err(e) => check_message(&input, &e),
    }
    true
}

/// A fuzzer's bytes as a configuration file: the file reader refuses text
/// that is not UTF-8 before parsing.
pub fn config_file_bytes(data: &[u8]) {
    if let Ok(doc) = std::str::from_utf8(data) {
        let _ = toml_file(doc);
    }
}

/// A fuzzer's bytes as a command line: arguments split at NUL bytes.
pub fn command_line_bytes(data: &[u8]) {
    command_line(&fuzz_argv(data));
}

/// Arguments split at NUL bytes, after `argv[0]`.
fn fuzz_argv(data: &[u8]) -> Vec<String> {
    std::iter::once("scx_tick".to_string())
        .chain(
            data.split(|&b| b == 0)
                .filter(|_| !data.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned()),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::file::FILE_KEYS;
    use scx_tick_hint::protocol::checks;

    /// xorshift64*: small, deterministic, good enough to pick inputs.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// The committed corpus of a target in `fuzz/` (all four are replayed
    /// here, the hints protocol's too: scx_tick reads its requests).
    fn corpus(target: &str) -> Vec<Vec<u8>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/corpus")
            .join(target);
        let inputs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        assert!(
            inputs.len() >= 10,
            "{}: {} inputs",
            dir.display(),
            inputs.len()
        );
        inputs
    }

    #[test]
    fn the_fuzzing_corpus_passes_the_checks() {
        corpus("config_file")
            .iter()
            .for_each(|d| config_file_bytes(d));
        corpus("command_line")
            .iter()
            .for_each(|d| command_line_bytes(d));
        corpus("hints_request")
            .iter()
            .for_each(|d| checks::request_bytes(d));
        corpus("hints_reply")
            .iter()
            .for_each(|d| checks::reply_bytes(d));
    }

    /// Every key of the file, a table, and keys that are not (a typo, a group key).
    fn keys() -> Vec<&'static str> {
        let known = FILE_KEYS.iter().flat_map(|&(k, a, _)| [k, a]);
        let other = [
            "group",
            "steal_treshold_ms",
            "cgroup",
            "\"quoted key\"",
            "a.b",
        ];
        known.filter(|k| !k.is_empty()).chain(other).collect()
    }

    const GROUP_KEYS: &[&str] = &["cgroup", "period_ms", "deadline_ms", "cpus", "speed"];
    const VALUES: &[&str] = &[
        "0",
        "1",
        "3",
        "-1",
        "50",
        "9223372036854775807",
        "-9223372036854775808",
        "99999999999999999999",
        "0.05",
        "1e308",
        "-0.0",
        "nan",
        "inf",
        "-inf",
        "true",
        "false",
        "\"soft\"",
        "\"hard\"",
        "\"firm\"",
        "\"2,4\"",
        "\"0-99999999999\"",
        "\"0-18446744073709551615\"",
        "\"3-1\"",
        "\"\"",
        "\"x\"",
        "\"ünï©ødé\"",
        "\"\\u0000\"",
        "\"world\"",
        "[]",
        "[1, 2]",
        "[-1]",
        "[\"2\", \"4\"]",
        "[1.5]",
        "[[1]]",
        "[true]",
        "[1, \"2\"]",
        "{ a = 1 }",
        "1979-05-27T07:32:00Z",
        "'''multi\nline'''",
    ];
    const NOISE: &[&str] = &[
        "=", "\"", "'", "[", "]", "[[", "]]", "{", "}", ",", "\n", "#", ".", "-", "é", "\u{0}",
        "\t", "0x", "e", "_", "\\", "\r\n", "🦀",
    ];

    fn random_toml(rng: &mut Rng, keys: &[&str]) -> String {
        let mut doc = String::new();
        for _ in 0..rng.below(6) {
            doc += &format!("{} = {}\n", rng.pick(keys), rng.pick(VALUES));
        }
        for _ in 0..rng.below(3) {
            doc += if rng.below(5) == 0 {
                "[group]\n"
            } else {
                "[[group]]\n"
            };
            for _ in 0..rng.below(5) {
                doc += &format!("{} = {}\n", rng.pick(GROUP_KEYS), rng.pick(VALUES));
            }
        }
        // byte-level mutations at char boundaries
        for _ in 0..rng.below(4) {
            let bounds: Vec<usize> = (0..=doc.len())
                .filter(|&i| doc.is_char_boundary(i))
                .collect();
            let at = bounds[rng.below(bounds.len())];
            match rng.below(3) {
                0 => doc.insert_str(at, rng.pick(NOISE)),
                1 if at < doc.len() => {
                    let end = bounds
                        .iter()
                        .copied()
                        .find(|&b| b > at)
                        .unwrap_or(doc.len());
                    doc.replace_range(at..end, "");
                }
                _ => doc.truncate(at),
            }
        }
        doc
    }

    #[test]
    fn random_toml_never_panics() {
        let mut rng = Rng(0x5eed_0f71_c6c6);
        let (mut ok, mut refused) = (0, 0);
        let keys = keys();
        for _ in 0..6000 {
            let doc = random_toml(&mut rng, &keys);
            match toml_file(&doc) {
                Ok(()) => ok += 1,
                Err(_) => refused += 1,
            }
        }
        // the generator must reach both sides, or it tests nothing
        assert!(ok > 100 && refused > 100, "ok {ok}, refused {refused}");
    }

    /// Values of the wrong type for a key of this type.
    fn wrong_values(ty: &str) -> &'static [&'static str] {
        match ty {
            "f64" => &["\"fast\"", "true", "[1]", "{ a = 1 }", "1979-05-27"],
            "bool" => &["1", "\"yes\"", "[true]", "1.0"],
            "String" => &["1", "true", "[\"soft\"]"],
            "CpuValue" => &["true", "1.5", "[1.5]", "[true]", "{ a = 1 }"],
            _ => panic!("no wrong values for {ty}"),
        }
    }

    #[test]
    fn wrong_types_are_refused_naming_the_key() {
        for &(key, _, ty) in FILE_KEYS {
            for v in wrong_values(ty) {
                let doc = format!("{key} = {v}\n");
                let e = Config::from_toml(&doc).expect_err(&doc);
                check_message(&doc, &e);
                assert!(format!("{e:#}").contains(key), "{doc:?}: {e:#}");
            }
        }
        for (key, v) in [
            ("cgroup", "5"),
            ("period_ms", "\"50\""),
            ("deadline_ms", "true"),
            ("cpus", "1.5"),
        ] {
            let doc = format!("[[group]]\ncgroup = \"w\"\n{key} = {v}\n");
            let e = Config::from_toml(&doc).expect_err(&doc);
            check_message(&doc, &e);
            assert!(format!("{e:#}").contains(key), "{doc:?}: {e:#}");
        }
    }

    #[test]
    fn out_of_range_values_are_refused_naming_the_key() {
        let cases = [
            ("steal_threshold_ms = -1", "steal_threshold_ms"),
            ("steal_threshold_ms = nan", "steal_threshold_ms"),
            ("steal_threshold_ms = inf", "steal_threshold_ms"),
            ("run_tasks_buffer_ms = 101", "run_tasks_buffer_ms"),
            ("run_tasks_buffer_ms = -0.5", "run_tasks_buffer_ms"),
            ("slice_ms = 0", "slice_ms"),
            ("slice_ms = 1e308", "slice_ms"),
            ("tick_cpus = 0", "tick_cpus"),
            ("tick_cpus = -3", "tick_cpus"),
            ("tick_cpus = 9223372036854775807", "tick_cpus"),
            ("tick_cpus = \"0-99999999999\"", "tick_cpus"),
            ("tick_cpus = \"0-18446744073709551615\"", "tick_cpus"),
            ("tick_cpus = [99]", "tick_cpus"),
            ("tick_cpus = [-1]", "tick_cpus"),
            ("tick_cpus = [1, 1]", "tick_cpus"),
            ("tick_cpus = []", "tick_cpus"),
            ("pin = \"firm\"", "pin"),
            ("[[group]]\ncgroup = \"w\"\nperiod_ms = 0", "period_ms"),
            ("[[group]]\ncgroup = \"w\"\nperiod_ms = 1e9", "period_ms"),
            ("[[group]]\ncgroup = \"w\"\ndeadline_ms = 0", "deadline_ms"),
            (
                "[[group]]\ncgroup = \"w\"\ndeadline_ms = 201",
                "deadline_ms",
            ),
            ("[[group]]\ncgroup = \"w\"\ncpus = [0]", "cpus"),
            ("[[group]]\ncgroup = \"w\"\ncpus = 2", "cpus"),
            ("[[group]]\ncgroup = \"\"", "group"),
        ];
        for (doc, key) in cases {
            let r = Config::from_toml(doc).and_then(|c| {
                c.validate(&small_vm(), &resolve_ok)?;
                Ok(())
            });
            let e = r.expect_err(doc);
            check_message(doc, &e);
            assert!(format!("{e:#}").contains(key), "{doc:?}: {e:#}");
        }
    }

    const SPEC_PARTS: &[&str] = &[
        "tick",
        "/sys/fs/cgroup/tick",
        "",
        "a/b/c",
        "period=50",
        "period=0",
        "period=-1",
        "period=nan",
        "period=1e400",
        "period=5ms",
        "period=",
        "deadline=45",
        "deadline=x",
        "cpus=1",
        "cpus=1-2",
        "cpus=2-1",
        "cpus=0-99999999999",
        "cpus=",
        "cpus=x",
        "speed=3",
        "=",
        "==",
        "é",
        "2",
        "-",
    ];

    #[test]
    fn random_group_specs_never_panic() {
        let mut rng = Rng(0x7ec0_c90f_5a5a);
        for _ in 0..4000 {
            let spec = (0..1 + rng.below(5))
                .map(|_| rng.pick(SPEC_PARTS))
                .collect::<Vec<_>>()
                .join(",");
            group_spec(&spec);
        }
    }

    const CPU_PARTS: &[&str] = &[
        "0",
        "1",
        "2",
        "3",
        "99",
        "1023",
        "1024",
        "-",
        ",",
        " ",
        "x",
        "18446744073709551616",
        "99999999999",
        "3-1",
        "1-3",
        "",
        "é",
        "+1",
    ];

    #[test]
    fn random_tick_cpus_never_panic() {
        let mut rng = Rng(0xc0ffee);
        for _ in 0..4000 {
            let s: String = (0..rng.below(6)).map(|_| rng.pick(CPU_PARTS)).collect();
            tick_cpus(&s);
        }
    }

    /// Every run flag (clap's, which the options table declares), and two
    /// that are not.
    fn flags() -> Vec<String> {
        use clap::CommandFactory;
        let cli = Cli::command();
        let known = (cli.get_arguments())
            .filter_map(|a| a.get_long())
            .filter(|l| !["help", "version", "config"].contains(l));
        known
            .map(|l| format!("--{l}"))
            .chain(["-v".into(), "--bogus".into()])
            .collect()
    }

    const FLAG_VALUES: &[&str] = &[
        "1",
        "0",
        "-1",
        "3",
        "50",
        "nan",
        "inf",
        "1e400",
        "x",
        "soft",
        "hard",
        "1,2",
        "0-99999999999",
        "tick,period=20,cpus=1",
        "tick,deadline=60",
        "127.0.0.1:9470",
        "0.0.0.0:1",
        "",
        "=",
        "-",
    ];

    /// Random command lines, parsed like `scx_tick` does up to the point of
    /// loading: clap, then the configuration, then validation.
    #[test]
    fn random_command_lines_never_panic() {
        let mut rng = Rng(0x0a11_f1a9_5a5a);
        let (mut parsed, mut refused) = (0, 0);
        let flags = flags();
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        for _ in 0..4000 {
            let mut argv = vec!["scx_tick".to_string()];
            for _ in 0..rng.below(5) {
                argv.push(rng.pick(&flags).to_string());
                if rng.below(4) != 0 {
                    argv.push(rng.pick(FLAG_VALUES).to_string());
                }
            }
            if command_line(&argv) {
                parsed += 1;
            } else {
                refused += 1;
            }
        }
        assert!(
            parsed > 100 && refused > 100,
            "parsed {parsed}, refused {refused}"
        );
    }
}
