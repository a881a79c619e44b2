//! benchreport: the benchmark's bookkeeping. `record` (in the guest) turns
//! one run's raw outputs into a JSON line; `report` (on the host) turns the
//! JSON lines of a results folder into a markdown table and PNG plots.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use plotters::prelude::*;
use scx_tick::bench::parse::{
    bpf_overhead, bpftool_progs, cyclictest_summary, process_cpu_pct, stress_ng_bogo_ops_per_s,
};
use scx_tick::bench::report::{
    RunRecord, headline_table, scaling_table, schedulers, skipped, vcpu_counts,
};
use scx_tick::workload::Summary;

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
    #[arg(long)]
    tick_cpus: usize,
    #[arg(long)]
    scheduler: String,
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
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
}

fn record(a: &RecordArgs) -> Result<()> {
    let mut r = RunRecord {
        vcpus: a.vcpus,
        tick_cpus: a.tick_cpus,
        scheduler: a.scheduler.clone(),
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
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
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
        bail!("no run records (*.jsonl) in {}", dir.display());
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
         `=` both 0, `-` no ratio because EEVDF measured 0).\n",
    );
    let plots = font().map(|_| ()).map_err(|e| e.to_string());
    for v in vcpu_counts(&records) {
        md.push_str(&format!("\n## {v} vCPUs\n\n"));
        md.push_str(&headline_table(&records, v));
        let scaling = scaling_table(&records, v);
        if !scaling.is_empty() {
            md.push_str("\nScaling (miss % and scx BPF cost per call, by number of runners):\n\n");
            md.push_str(&scaling);
        }
        if plots.is_ok() {
            let png = format!("lateness-{v}vcpu.png");
            plot_lateness(&records, v, &dir.join(&png))?;
            md.push_str(&format!("\n![start lateness, {v} vCPUs]({png})\n"));
            if !scaling.is_empty() {
                let png = format!("scaling-{v}vcpu.png");
                plot_scaling(&records, v, &dir.join(&png))?;
                md.push_str(&format!("\n![miss % by runners, {v} vCPUs]({png})\n"));
            }
        }
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

fn color(i: usize) -> RGBColor {
    const C: &[RGBColor] = &[
        RGBColor(0, 0, 0),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 158, 115),
        RGBColor(213, 94, 0),
        RGBColor(204, 121, 167),
        RGBColor(0, 114, 178),
        RGBColor(170, 0, 0),
        RGBColor(120, 120, 120),
        RGBColor(140, 200, 40),
    ];
    C[i % C.len()]
}

/// Start lateness as a distribution (CDF, log time axis), one line per scheduler.
fn plot_lateness(records: &[RunRecord], vcpus: usize, out: &Path) -> Result<()> {
    let runs: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.vcpus == vcpus && r.headline && !r.lateness_quantiles_ms.is_empty())
        .collect();
    // the axis starts at the power of ten below the smallest lateness
    let min = runs
        .iter()
        .flat_map(|r| r.lateness_quantiles_ms.iter().copied())
        .filter(|&v| v > 0.0)
        .fold(1.0f64, f64::min);
    let floor = 10f64.powf(min.log10().floor()).max(0.001);
    let max = runs
        .iter()
        .flat_map(|r| r.lateness_quantiles_ms.iter().copied())
        .fold(1.0f64, f64::max);
    let root = BitMapBackend::new(out, (1100, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = match runs.first() {
        Some(r) => format!(
            "Tick start lateness, {vcpus} vCPUs, {} runners (TCG: compare shapes, not absolute ms)",
            r.runners
        ),
        None => format!("Tick start lateness, {vcpus} vCPUs"),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
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
    for (i, r) in runs.iter().enumerate() {
        let c = color(i);
        let pts = r
            .lateness_quantiles_ms
            .iter()
            .enumerate()
            .map(|(p, &ms)| (ms.max(floor), p as f64));
        chart
            .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
            .label(r.scheduler.as_str())
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

/// Miss % against the number of runners, one line per scheduler.
fn plot_scaling(records: &[RunRecord], vcpus: usize, out: &Path) -> Result<()> {
    let runs: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.vcpus == vcpus && r.skipped.is_none())
        .collect();
    let max_n = runs.iter().map(|r| r.runners).max().unwrap_or(1) as u32;
    let max_miss = runs.iter().map(|r| r.ticks.miss_pct).fold(1.0f64, f64::max);
    let root = BitMapBackend::new(out, (1100, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Deadline misses by number of tick runners, {vcpus} vCPUs"),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(0..max_n + 1, 0.0..(max_miss * 1.1).min(100.0))?;
    chart
        .configure_mesh()
        .x_desc("tick runners")
        .y_desc("deadline misses (%)")
        .label_style(("sans-serif", 14))
        .draw()?;
    for (i, name) in schedulers(records).iter().enumerate() {
        let mut pts: Vec<(u32, f64)> = runs
            .iter()
            .filter(|r| &r.scheduler == name)
            .map(|r| (r.runners as u32, r.ticks.miss_pct))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by_key(|p| p.0);
        let c = color(i);
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
