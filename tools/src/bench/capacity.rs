//! The benchmark's capacity and isolation families: how many runners each
//! scheduler holds beside CPU hogs before misses pass 0.5 % (what a host
//! pays for: servers per machine), and what an overloaded server costs a
//! well-behaved neighbour in its own tick group.

use std::fmt::Write;

use super::report::{
    Cell, FIFO, RunRecord, Scenario, TICK, cell, cell_median, cell_spread, fmt_spread, num,
    runner_counts_of, schedulers,
};
use super::schedulers::peers;

/// A runner count is held while the median miss % stays at or below this.
pub const HELD_MISS_PCT: f64 = 0.5;
/// A capacity runner's CPU time per tick over its period (12 ms per 50 ms).
pub const RUNNER_CPUS: f64 = 12.0 / 50.0;

/// The runner counts the capacity sweep measured on one vCPU count.
pub fn counts(records: &[RunRecord], vcpus: usize) -> Vec<usize> {
    runner_counts_of(records, vcpus, Scenario::Capacity)
}

fn miss_at(records: &[RunRecord], vcpus: usize, sched: &str, n: usize) -> Option<f64> {
    cell_median(
        &cell(records, vcpus, sched, Cell::At(Scenario::Capacity, n)),
        |r| Some(r.ticks.miss_pct),
    )
}

/// The capacity: the most runners at which the median miss % of that count
/// and of every smaller count measured stays <= [`HELD_MISS_PCT`]; 0 when
/// the smallest fails, None when the scheduler has no capacity runs.
pub fn capacity(records: &[RunRecord], vcpus: usize, sched: &str) -> Option<usize> {
    let mut held = None;
    for n in counts(records, vcpus) {
        match miss_at(records, vcpus, sched, n) {
            Some(m) if m <= HELD_MISS_PCT => held = Some(n),
            Some(_) => return Some(held.unwrap_or(0)),
            // the sweep stopped before this count (it failed a smaller one)
            None => break,
        }
    }
    held
}

/// (CPUs of tick work, median miss %) per measured count, for the plot.
pub fn points(records: &[RunRecord], vcpus: usize, sched: &str) -> Vec<(f64, f64)> {
    counts(records, vcpus)
        .into_iter()
        .filter_map(|n| miss_at(records, vcpus, sched, n).map(|m| (n as f64 * RUNNER_CPUS, m)))
        .collect()
}

/// The capacity table: per scheduler its capacity, then miss % and the
/// hogs' bogo-ops/s at each count (median and min-max of the rounds).
pub fn capacity_table(records: &[RunRecord], vcpus: usize) -> String {
    let ns = counts(records, vcpus);
    let mut s = String::new();
    if ns.is_empty() {
        return s;
    }
    s.push_str("| scheduler | capacity (runners, CPUs of tick work) |");
    for n in &ns {
        let _ = write!(s, " miss % @{n} ({:.1}) |", *n as f64 * RUNNER_CPUS);
    }
    for n in &ns {
        let _ = write!(s, " hogs bogo-ops/s @{n} |");
    }
    s.push_str("\n|---|---:|");
    s.push_str(&"---:|".repeat(2 * ns.len()));
    s.push('\n');
    for name in schedulers(records) {
        let Some(cap) = capacity(records, vcpus, &name) else {
            continue;
        };
        let _ = write!(s, "| {name} | {cap} ({:.1}) |", cap as f64 * RUNNER_CPUS);
        let cells: Vec<_> = ns
            .iter()
            .map(|&n| cell(records, vcpus, &name, Cell::At(Scenario::Capacity, n)))
            .collect();
        for c in &cells {
            let _ = write!(
                s,
                " {} |",
                fmt_spread(cell_spread(c, |r| Some(r.ticks.miss_pct)), 2)
            );
        }
        for c in &cells {
            let _ = write!(
                s,
                " {} |",
                fmt_spread(cell_spread(c, |r| r.bogo_ops_per_s), 0)
            );
        }
        s.push('\n');
    }
    s
}

/// The isolation table: the well-behaved server alone and beside the
/// overloaded one, per scheduler.
pub fn isolation_table(records: &[RunRecord], vcpus: usize) -> String {
    let mut s = String::new();
    let alone = |n: &str| cell(records, vcpus, n, Cell::Scenario(Scenario::IsolationAlone));
    let beside = |n: &str| cell(records, vcpus, n, Cell::Scenario(Scenario::IsolationBeside));
    for name in schedulers(records) {
        let (a, b) = (alone(&name), beside(&name));
        if a.is_empty() && b.is_empty() {
            continue;
        }
        if s.is_empty() {
            s.push_str(
                "| scheduler | misses alone % | misses beside % | p50 start lateness alone ms \
                 | beside ms | overloaded server's CPUs | hogs bogo-ops/s alone | beside |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|\n",
            );
        }
        let miss = |c: &[&RunRecord]| fmt_spread(cell_spread(c, |r| Some(r.ticks.miss_pct)), 2);
        let p50 =
            |c: &[&RunRecord]| fmt_spread(cell_spread(c, |r| Some(r.ticks.lateness_p50_ms)), 2);
        let hogs = |c: &[&RunRecord]| fmt_spread(cell_spread(c, |r| r.bogo_ops_per_s), 0);
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            miss(&a),
            miss(&b),
            p50(&a),
            p50(&b),
            fmt_spread(cell_spread(&b, |r| r.overloaded_cpus), 2),
            hogs(&a),
            hogs(&b)
        );
    }
    s
}

/// The capacity and isolation targets of issue 27, as checked lines.
pub fn targets(records: &[RunRecord], vcpus: usize) -> Vec<String> {
    let mut out = Vec::new();
    let verdict = |ok: bool| if ok { "met" } else { "NOT MET" };
    if let Some(tick) = capacity(records, vcpus, TICK) {
        if let Some(fifo) = capacity(records, vcpus, FIFO) {
            out.push(format!(
                "**{}**: capacity >= SCHED_FIFO's: scx_tick {tick}, SCHED_FIFO {fifo} runners",
                verdict(tick >= fifo)
            ));
        }
        if let Some((peer, cap)) = peers()
            .filter_map(|p| capacity(records, vcpus, p).map(|c| (p, c)))
            .max_by_key(|p| p.1)
        {
            out.push(format!(
                "**{}**: capacity >= 1.5 x the best peer's: scx_tick {tick}, {peer} {cap} runners",
                verdict(tick as f64 >= 1.5 * cap as f64)
            ));
        }
    }
    let m = |sc: Scenario, f: fn(&RunRecord) -> f64| {
        cell_median(&cell(records, vcpus, TICK, Cell::Scenario(sc)), |r| {
            Some(f(r))
        })
    };
    let (ma, mb) = (
        m(Scenario::IsolationAlone, |r| r.ticks.miss_pct),
        m(Scenario::IsolationBeside, |r| r.ticks.miss_pct),
    );
    let (la, lb) = (
        m(Scenario::IsolationAlone, |r| r.ticks.lateness_p50_ms),
        m(Scenario::IsolationBeside, |r| r.ticks.lateness_p50_ms),
    );
    if let (Some(ma), Some(mb), Some(la), Some(lb)) = (ma, mb, la, lb) {
        out.push(format!(
            "**{}**: beside an overloaded server, misses <= alone + 1 point: {} % against {} %",
            verdict(mb <= ma + 1.0),
            num(Some(mb), 2),
            num(Some(ma), 2)
        ));
        out.push(format!(
            "**{}**: beside an overloaded server, p50 start lateness <= 1.5 x alone: {} ms \
             against {} ms",
            verdict(lb <= 1.5 * la),
            num(Some(lb), 2),
            num(Some(la), 2)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sched: &str, n: usize, rep: usize, miss: f64) -> RunRecord {
        let mut r = RunRecord {
            vcpus: 4,
            scheduler: sched.into(),
            scenario: Scenario::Capacity,
            runners: n,
            rep,
            ..Default::default()
        };
        r.ticks.miss_pct = miss;
        r
    }

    #[test]
    fn capacity_is_the_last_count_held_from_the_bottom() {
        let rs = vec![
            run("fifo", 6, 0, 0.0),
            run("fifo", 8, 0, 0.2),
            run("fifo", 10, 0, 0.4),
            run("fifo", 12, 0, 3.0),
            // medians over rounds: 0.3 at 8 (0.0, 0.3, 9.0) holds
            run("scx_tick", 6, 0, 0.0),
            run("scx_tick", 8, 0, 0.0),
            run("scx_tick", 8, 1, 0.3),
            run("scx_tick", 8, 2, 9.0),
            run("scx_tick", 10, 0, 0.9),
            // a miss at a smaller count ends it even if a larger one held
            run("scx_flash", 6, 0, 5.0),
            run("scx_flash", 8, 0, 0.0),
        ];
        assert_eq!(counts(&rs, 4), vec![6, 8, 10, 12]);
        assert_eq!(capacity(&rs, 4, "fifo"), Some(10));
        assert_eq!(capacity(&rs, 4, "scx_tick"), Some(8));
        assert_eq!(capacity(&rs, 4, "scx_flash"), Some(0));
        assert_eq!(capacity(&rs, 4, "eevdf"), None);
        assert_eq!(points(&rs, 4, "scx_tick")[1], (8.0 * RUNNER_CPUS, 0.3));
        let t = capacity_table(&rs, 4);
        assert!(t.contains("| fifo | 10 (2.4) |"), "{t}");
        let ts = targets(&rs, 4);
        assert!(ts[0].starts_with("**NOT MET**") && ts[0].contains("scx_tick 8, SCHED_FIFO 10"));
        assert!(
            ts[1].starts_with("**met**") && ts[1].contains("scx_flash 0"),
            "{ts:?}"
        );
    }

    #[test]
    fn isolation_compares_the_neighbour_alone_and_beside() {
        let mut a = run("scx_tick", 4, 0, 0.0);
        a.scenario = Scenario::IsolationAlone;
        a.ticks.lateness_p50_ms = 2.0;
        let mut b = run("scx_tick", 4, 0, 4.0);
        b.scenario = Scenario::IsolationBeside;
        b.ticks.lateness_p50_ms = 2.5;
        b.overloaded_cpus = Some(2.4);
        let rs = vec![a, b];
        let t = isolation_table(&rs, 4);
        assert!(
            t.contains("| scx_tick | 0.00 | 4.00 | 2.00 | 2.50 | 2.40 |"),
            "{t}"
        );
        let ts = targets(&rs, 4);
        assert!(ts[0].starts_with("**NOT MET**"), "{ts:?}");
        assert!(ts[1].starts_with("**met**"), "{ts:?}");
    }
}
