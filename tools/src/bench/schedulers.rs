//! The benchmark's schedulers as scripts/bench-schedulers lists them (the
//! one list: the scripts read it too), built into benchreport: the peers,
//! and every scheduler's plot colour.

use std::sync::LazyLock;

/// One line of scripts/bench-schedulers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduler {
    /// As `--schedulers` and the records spell it.
    pub name: &'static str,
    pub kind: Kind,
    /// Run by the real-server families.
    pub real: bool,
    /// Its plot colour, the same in every plot.
    pub colour: (u8, u8, u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The kernel's own policies.
    Kernel,
    /// A sched_ext scheduler a user could pick instead.
    Peer,
    /// scx_tick and its variants.
    Tick,
    /// No longer run (old records keep their colour).
    Retired,
}

const LIST: &str = include_str!("../../../scripts/bench-schedulers");

/// Every scheduler of the list, in its order.
pub static SCHEDULERS: LazyLock<Vec<Scheduler>> =
    LazyLock::new(|| parse(LIST).unwrap_or_else(|e| panic!("scripts/bench-schedulers: {e}")));

fn parse(text: &'static str) -> Result<Vec<Scheduler>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first().is_none_or(|f| f.starts_with('#')) {
            continue;
        }
        let bad = || format!("line {}: not NAME KIND yes|no R G B: {line}", i + 1);
        let [name, kind, real, r, g, b] = fields[..] else {
            return Err(bad());
        };
        let kind = match kind {
            "kernel" => Kind::Kernel,
            "peer" => Kind::Peer,
            "tick" => Kind::Tick,
            "retired" => Kind::Retired,
            _ => return Err(bad()),
        };
        let real = match real {
            "yes" => true,
            "no" => false,
            _ => return Err(bad()),
        };
        let c = |v: &str| v.parse::<u8>().map_err(|_| bad());
        let colour = (c(r)?, c(g)?, c(b)?);
        out.push(Scheduler {
            name,
            kind,
            real,
            colour,
        });
    }
    Ok(out)
}

/// The sched_ext schedulers a user could pick instead ("the peers"), in
/// the list's order.
pub fn peers() -> impl Iterator<Item = &'static str> {
    SCHEDULERS
        .iter()
        .filter(|s| s.kind == Kind::Peer)
        .map(|s| s.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_reads() {
        let names: Vec<&str> = SCHEDULERS.iter().map(|s| s.name).collect();
        assert_eq!(names[..3], ["eevdf", "fifo", "deadline"]);
        assert!(names.contains(&super::super::report::TICK));
        assert_eq!(
            peers().collect::<Vec<_>>(),
            ["scx_bpfland", "scx_flash", "scx_lavd"]
        );
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn a_bad_line_is_named() {
        assert!(parse("a peer yes 1 2 3\n# b\n\n").is_ok());
        let e = parse("a peer yes 1 2\n").unwrap_err();
        assert!(e.starts_with("line 1: "), "{e}");
        assert!(parse("a peer maybe 1 2 3").is_err());
        assert!(parse("a other yes 1 2 3").is_err());
        assert!(parse("a peer yes 1 2 300").is_err());
    }
}
