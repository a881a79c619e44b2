//! benchreport: the benchmark's bookkeeping. `record` (in the guest) turns
//! one run's raw outputs into a JSON line; `report` (on the host) turns the
//! JSON lines of a results folder into a markdown table and PNG plots.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use plotters::prelude::*;
use scx_tick_tools::bench::capacity;
use scx_tick_tools::bench::parse::{
    bpf_overhead, bpftool_progs, cyclictest_summary, process_cpu_pct, stress_ng_bogo_ops_per_s,
};
use scx_tick_tools::bench::report::{
    BASELINE, Cell, FLOOR_LABEL, RunRecord, Scenario, cell, colour, headline_table, median_curve,
    scaling_points, scaling_table, scenario_table, schedulers, skipped, targets_section,
    vcpu_counts,
};
use scx_tick_tools::workload::Summary;

#[derive(Parser)]
#[command(
    name = "benchreport",
    about = "Record and report scx_tick benchmark runs"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print one run's record (a JSON line) from its raw outputs.
    Record(Box<RecordArgs>),
    /// Write results.md and PNG plots from the *.jsonl records in DIR.
    Report { dir: PathBuf },
}

#[derive(clap::Args)]
struct RecordArgs {
    #[arg(long)]
    vcpus: usize,
    /// T, the scenarios' unit of runners (half the guest's cores)
    #[arg(long)]
    t: usize,
    #[arg(long)]
    scheduler: String,
    #[arg(long, value_enum, default_value_t = Scenario::Standard)]
    scenario: Scenario,
    /// Repetition of the cell, from 0.
    #[arg(long, default_value_t = 0)]
    rep: usize,
    #[arg(long)]
    runners: usize,
    #[arg(long)]
    headline: bool,
    #[arg(long)]
    duration_s: f64,
    /// The scheduler gave no numbers: why.
    #[arg(long)]
    skipped: Option<String>,
    /// tickload --json output.
    #[arg(long)]
    tickload: Option<PathBuf>,
    /// stress-ng --metrics-brief output.
    #[arg(long)]
    stress: Option<PathBuf>,
    /// Completed hackbench runs during the window.
    #[arg(long)]
    hackbench_runs: Option<u64>,
    /// cyclictest -q output.
    #[arg(long)]
    cyclictest: Option<PathBuf>,
    #[arg(long)]
    cyclictest_policy: Option<String>,
    /// `bpftool -j prog show` before and after the window.
    #[arg(long, requires = "bpf_after")]
    bpf_before: Option<PathBuf>,
    #[arg(long)]
    bpf_after: Option<PathBuf>,
    /// The scheduler process's /proc/PID/stat before and after the window.
    #[arg(long, requires = "sched_stat_after")]
    sched_stat_before: Option<PathBuf>,
    #[arg(long)]
    sched_stat_after: Option<PathBuf>,
    /// isolation-beside: the overloaded server's tickload --json output.
    #[arg(long)]
    overloaded: Option<PathBuf>,
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
}

fn record(a: &RecordArgs) -> Result<()> {
    let mut r = RunRecord {
        vcpus: a.vcpus,
        t: a.t,
        scheduler: a.scheduler.clone(),
        scenario: a.scenario,
        rep: a.rep,
        runners: a.runners,
        headline: a.headline,
        duration_s: a.duration_s,
        skipped: a.skipped.clone(),
        ..Default::default()
    };
    if let Some(p) = &a.tickload {
        let v: serde_json::Value = serde_json::from_str(&read(p)?)
            .with_context(|| format!("{} is not tickload --json output", p.display()))?;
        r.ticks = serde_json::from_value::<Summary>(v["total"].clone())?;
        r.lateness_quantiles_ms = serde_json::from_value(v["lateness_quantiles_ms"].clone())?;
    }
    if let Some(p) = &a.overloaded {
        let v: serde_json::Value = serde_json::from_str(&read(p)?)
            .with_context(|| format!("{} is not tickload --json output", p.display()))?;
        let ticks = v["ticks"].as_f64().unwrap_or(0.0);
        let work_ms = v["config"]["work_ms"].as_f64().unwrap_or(0.0);
        r.overloaded_cpus = Some(ticks * work_ms / 1000.0 / a.duration_s);
    }
    if let Some(p) = &a.stress {
        r.bogo_ops_per_s = stress_ng_bogo_ops_per_s(&read(p)?);
    }
    r.hackbench_per_s = a.hackbench_runs.map(|n| n as f64 / a.duration_s);
    if let Some(p) = &a.cyclictest {
        r.cyclictest = cyclictest_summary(&read(p)?);
        r.cyclictest_policy = a.cyclictest_policy.clone();
    }
    if let (Some(b), Some(f)) = (&a.bpf_before, &a.bpf_after) {
        let before = bpftool_progs(&read(b)?).context("bpftool output (before)")?;
        let after = bpftool_progs(&read(f)?).context("bpftool output (after)")?;
        r.bpf = bpf_overhead(&before, &after, a.duration_s, a.vcpus);
    }
    if let (Some(b), Some(f)) = (&a.sched_stat_before, &a.sched_stat_after) {
        // SAFETY: sysconf has no preconditions.
        let clk_tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        r.sched_process_cpu_pct =
            process_cpu_pct(&read(b)?, &read(f)?, clk_tck, a.duration_s, a.vcpus);
    }
    println!("{}", serde_json::to_string(&r)?);
    Ok(())
}

fn load(dir: &Path) -> Result<Vec<RunRecord>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        // runs-NvCPU.jsonl: the real-server families keep their own records
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("runs-"))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        for (i, line) in read(&f)?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            out.push(
                serde_json::from_str(line)
                    .with_context(|| format!("{}:{}: not a run record", f.display(), i + 1))?,
            );
        }
    }
    if out.is_empty() {
        bail!("no run records (runs-*.jsonl) in {}", dir.display());
    }
    Ok(out)
}

fn report(dir: &Path) -> Result<()> {
    let records = load(dir)?;
    let mut md = std::fs::read_to_string(dir.join("meta.md")).unwrap_or_default();
    md.push_str(
        "\nAll numbers come from one guest per vCPU count under software emulation (TCG): \
         absolute times are not real-machine times. Compare schedulers only through the \
         ratios to EEVDF measured in the same guest and run (`x EEVDF`: below 1 is better \
         for misses, lateness and MSPT, above 1 is better for background throughput; \
         `=` both 0, `-` no ratio because EEVDF measured 0). A cell run more than once \
         shows the median and, in brackets, the min-max over its runs; ratios and targets \
         use the medians.\n",
    );
    let plots = font().map(|_| ()).map_err(|e| e.to_string());
    for v in vcpu_counts(&records) {
        md.push_str(&format!("\n## {v} vCPUs\n"));
        let table = scenario_table(&records, v, Scenario::Standard);
        if !table.is_empty() {
            md.push_str(
                "\n### standard: the tick workload beside CPU hogs and a fork/pipe storm\n\n",
            );
            md.push_str(&table);
            md.push_str("\nDetails of the same runs (medians):\n\n");
            md.push_str(&headline_table(&records, v));
            if plots.is_ok() {
                let png = format!("lateness-{v}vcpu.png");
                plot_lateness(&records, v, Scenario::Standard, &dir.join(&png))?;
                md.push_str(&format!(
                    "\n![start lateness, standard, {v} vCPUs]({png})\n"
                ));
            }
        }
        let scaling = scaling_table(&records, v);
        if !scaling.is_empty() {
            md.push_str(
                "\nScaling (standard scenario; miss % and scx BPF cost per call by number of \
                 runners, medians where a count ran more than once):\n\n",
            );
            md.push_str(&scaling);
            if plots.is_ok() {
                let png = format!("scaling-{v}vcpu.png");
                plot_scaling(&records, v, &dir.join(&png))?;
                md.push_str(&format!("\n![miss % by runners, {v} vCPUs]({png})\n"));
            }
        }
        for (scenario, title) in [
            (
                Scenario::HeavyIdle,
                "heavy-idle: 3T runners x 20 ms per 50 ms, nothing else running",
            ),
            (
                Scenario::HeavyHogs,
                "heavy-hogs: the same runners beside 2 x vCPUs CPU hogs \
                 (floor: EEVDF beside one hog)",
            ),
        ] {
            let table = scenario_table(&records, v, scenario);
            if table.is_empty() {
                continue;
            }
            md.push_str(&format!("\n### {title}\n\n"));
            md.push_str(&table);
            if plots.is_ok() {
                let png = format!("lateness-{}-{v}vcpu.png", scenario.name());
                plot_lateness(&records, v, scenario, &dir.join(&png))?;
                md.push_str(&format!(
                    "\n![start lateness, {}, {v} vCPUs]({png})\n",
                    scenario.name()
                ));
            }
        }
        let cap = capacity::capacity_table(&records, v);
        if !cap.is_empty() {
            md.push_str(
                "\n### capacity: runners x 12 ms per 50 ms beside 2 x vCPUs CPU hogs, swept \
                 upward\n\nCapacity is the most runners held (median miss % <= 0.5 at that \
                 count and every smaller one). A round's sweep stops after a count that misses \
                 more than 5 %, so the counts above one show only the rounds that reached \
                 them.\n\n",
            );
            md.push_str(&cap);
            if plots.is_ok() {
                let png = format!("capacity-{v}vcpu.png");
                plot_capacity(&records, v, &dir.join(&png))?;
                md.push_str(&format!(
                    "\n![miss % by CPUs of tick work, {v} vCPUs]({png})\n"
                ));
            }
        }
        let iso = capacity::isolation_table(&records, v);
        if !iso.is_empty() {
            md.push_str(
                "\n### isolation: a well-behaved server (vCPUs runners x 12 ms per 50 ms) beside \
                 vCPUs CPU hogs, alone and beside an overloaded server in its own tick group \
                 (3/4 x vCPUs runners, 70 ms of work per 50 ms tick, never sleeping between \
                 ticks: the scenario's line above says whether they block mid-tick)\n\n",
            );
            md.push_str(&iso);
        }
        let extra = capacity::targets(&records, v);
        if !extra.is_empty() {
            md.push_str("\n### Capacity and isolation targets (issue 27), against the medians\n\n");
            for t in extra {
                md.push_str(&format!("- {t}\n"));
            }
        }
        md.push_str("\n### Targets (issue 12), checked against the medians\n\n");
        md.push_str(&targets_section(&records, v));
    }
    let sk = skipped(&records);
    if !sk.is_empty() {
        md.push_str("\n## Skipped\n\n");
        for s in sk {
            md.push_str(&format!("- {s}\n"));
        }
    }
    if let Err(e) = plots {
        md.push_str(&format!("\n(no plots: {e})\n"));
        eprintln!("benchreport: no plots: {e}");
    }
    let out = dir.join("results.md");
    std::fs::write(&out, md).with_context(|| format!("writing {}", out.display()))?;
    println!("{}", out.display());
    Ok(())
}

/// The PNG text needs a TrueType font; plotters' ab_glyph backend takes it as
/// bytes, so load the first one found, once.
fn font() -> Result<()> {
    const CANDIDATES: &[&str] = &[
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
    ];
    static LOADED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *LOADED.get_or_init(|| {
        CANDIDATES.iter().any(|p| {
            std::fs::read(p).ok().is_some_and(|b| {
                let bytes: &'static [u8] = Box::leak(b.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            })
        })
    }) {
        Ok(())
    } else {
        bail!("no TrueType font found (install fonts-dejavu-core)")
    }
}

fn rgb(name: &str) -> RGBColor {
    let (r, g, b) = colour(name);
    RGBColor(r, g, b)
}

/// Start lateness of one scenario as a distribution (CDF, log time axis):
/// per scheduler the pointwise median of its runs' curves.
fn plot_lateness(
    records: &[RunRecord],
    vcpus: usize,
    scenario: Scenario,
    out: &Path,
) -> Result<()> {
    let which = match scenario {
        Scenario::Standard => Cell::Headline,
        s => Cell::Scenario(s),
    };
    let mut curves: Vec<(String, usize, Vec<f64>)> = schedulers(records)
        .into_iter()
        .map(|name| {
            let runs = cell(records, vcpus, &name, which);
            (name, runs.len(), median_curve(&runs))
        })
        .collect();
    if scenario == Scenario::HeavyHogs {
        let floor = cell(
            records,
            vcpus,
            BASELINE,
            Cell::Scenario(Scenario::HeavyFloor),
        );
        curves.push((FLOOR_LABEL.to_string(), floor.len(), median_curve(&floor)));
    }
    curves.retain(|c| !c.2.is_empty());
    // the axis starts at the power of ten below the smallest lateness
    let min = curves
        .iter()
        .flat_map(|c| c.2.iter().copied())
        .filter(|&v| v > 0.0)
        .fold(1.0f64, f64::min);
    let floor = 10f64.powf(min.log10().floor()).max(0.001);
    let max = curves
        .iter()
        .flat_map(|c| c.2.iter().copied())
        .fold(1.0f64, f64::max);
    let root = BitMapBackend::new(out, (1100, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let runners = records
        .iter()
        .filter(|r| r.vcpus == vcpus && r.skipped.is_none())
        .find(|r| match which {
            Cell::Headline => r.scenario == Scenario::Standard && r.headline,
            _ => r.scenario == scenario,
        })
        .map(|r| r.runners);
    let reps = curves.iter().map(|c| c.1).max().unwrap_or(0);
    let title = format!(
        "Tick start lateness, {}, {vcpus} vCPUs, {} runners, median of {reps} run(s) (TCG: compare shapes)",
        scenario.name(),
        runners.map_or("?".into(), |n| n.to_string())
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d((floor..max * 1.5).log_scale(), 0.0..100.0)?;
    chart
        .configure_mesh()
        .x_desc("start lateness (ms, log scale)")
        .y_desc("percent of ticks started by then")
        .label_style(("sans-serif", 14))
        .draw()?;
    for (name, _, curve) in &curves {
        let c = rgb(name);
        let pts = curve
            .iter()
            .enumerate()
            .map(|(p, &ms)| (ms.max(floor), p as f64));
        chart
            .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Miss % against the number of runners (standard scenario), one line per
/// scheduler, medians where a count ran more than once.
fn plot_scaling(records: &[RunRecord], vcpus: usize, out: &Path) -> Result<()> {
    let lines = miss_lines(records, |name| {
        scaling_points(records, vcpus, name)
            .into_iter()
            .map(|(n, m)| (n as f64, m))
            .collect()
    });
    let max_n = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    plot_miss_lines(
        lines,
        0.0..max_n + 1.0,
        &format!("Deadline misses by number of tick runners, {vcpus} vCPUs"),
        "tick runners",
        out,
    )
}

/// Miss % against the CPUs of tick work the runners ask for (capacity
/// scenario), one line per scheduler, medians over the rounds.
fn plot_capacity(records: &[RunRecord], vcpus: usize, out: &Path) -> Result<()> {
    let lines = miss_lines(records, |name| capacity::points(records, vcpus, name));
    let max_x = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    plot_miss_lines(
        lines,
        0.0..max_x * 1.05,
        &format!("Deadline misses by CPUs of tick work beside CPU hogs, {vcpus} vCPUs"),
        "CPUs of tick work (runners x 12 ms / 50 ms)",
        out,
    )
}

/// Each scheduler's (x, miss %) points, those with any.
fn miss_lines(
    records: &[RunRecord],
    points: impl Fn(&str) -> Vec<(f64, f64)>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    schedulers(records)
        .into_iter()
        .map(|name| {
            let pts = points(&name);
            (name, pts)
        })
        .filter(|(_, pts)| !pts.is_empty())
        .collect()
}

/// Miss % lines, one per scheduler in its colour, over `x`.
fn plot_miss_lines(
    lines: Vec<(String, Vec<(f64, f64)>)>,
    x: std::ops::Range<f64>,
    caption: &str,
    x_desc: &str,
    out: &Path,
) -> Result<()> {
    let max_miss = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.1))
        .fold(1.0f64, f64::max);
    let root = BitMapBackend::new(out, (1100, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(x, 0.0..(max_miss * 1.1).min(100.0))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("deadline misses (%)")
        .label_style(("sans-serif", 14))
        .draw()?;
    for (name, pts) in lines {
        let c = rgb(&name);
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() -> ExitCode {
    let r = match Cli::parse().cmd {
        Cmd::Record(a) => record(&a),
        Cmd::Report { dir } => report(&dir),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("benchreport: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
