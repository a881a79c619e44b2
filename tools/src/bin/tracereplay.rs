//! tracereplay: replay a decision trace (`scx_tick --trace-decisions FILE`)
//! through the model in src/model/dispatch.rs. Prints what it replayed and how
//! many decisions the model makes differently; exit status 1 if any.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use scx_tick::model::trace::{self, Model};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Alter {
    /// The model steals without waiting for the threshold.
    NoThreshold,
    /// The model gives a runner parked behind another no turn.
    NoParkedTurn,
    /// The model has a runner spilled to a non-tick CPU take turns with its home's queue.
    HomeTurns,
    /// The model has a tick CPU steal even when its own head is late enough to be stolen.
    StealOverLateLocal,
    /// The model starts a tick at every wake-up (no identity from the period grid).
    WakeTicks,
    /// The model has a process's light threads start and split its ticks (no helpers).
    NoHelpers,
    /// The model counts no miss for a process's step that starts late.
    NoLateSteps,
    /// The model never rolls a process's tick over into the next.
    NoRollOver,
}

#[derive(Debug, Parser)]
#[command(
    name = "tracereplay",
    about = "Check scx_tick's BPF decisions against its model"
)]
struct Args {
    /// The trace scx_tick wrote (--trace-decisions FILE).
    file: PathBuf,
    /// Replay through a deliberately altered model (it must disagree).
    #[arg(long)]
    alter: Option<Alter>,
    /// Print every runner wake-up first: tid, time, its tick's grid point
    /// before, the next tick's (0: the wake-up continued its tick), the
    /// deadline after, the latest on-time start of a late step it started
    /// (0: none; ns); and every roll-over check of a process's tick
    /// ("roll", the same fields, the next tick's grid point 0 when it did
    /// not roll over, then the thread's CPU time in its tick, a step's
    /// usual, and when the process's tick before started). A process's
    /// wake-up ("wake" as above) then adds whether it was a helper's and
    /// ended a quiet spell (0/1), when the process went quiet, and the
    /// thread's own tick before it (grid point, deadline, work done).
    #[arg(long)]
    wakes: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let model = match args.alter {
        None => Model::AsIs,
        Some(Alter::NoThreshold) => Model::NoThreshold,
        Some(Alter::NoParkedTurn) => Model::NoParkedTurn,
        Some(Alter::HomeTurns) => Model::HomeTurns,
        Some(Alter::StealOverLateLocal) => Model::StealOverLateLocal,
        Some(Alter::WakeTicks) => Model::WakeTicks,
        Some(Alter::NoHelpers) => Model::NoHelpers,
        Some(Alter::NoLateSteps) => Model::NoLateSteps,
        Some(Alter::NoRollOver) => Model::NoRollOver,
    };
    let records = trace::parse(&bytes);
    if args.wakes {
        for d in &records {
            let kind = if trace::is_wake(d) {
                "wake"
            } else if trace::is_roll_over_check(d) {
                "roll"
            } else {
                continue;
            };
            print!(
                "{kind} {} {} {} {} {} {}",
                d.tid, d.now, d.grid_before, d.grid_after, d.deadline_after, d.late_step
            );
            if kind == "roll" {
                print!(" {} {} {}", d.ran, d.mspt, d.proc_started);
            } else if d.proc_wake != 0 {
                print!(
                    " helper {} fresh {} quiet {} own {} {} {}",
                    d.helper, d.fresh, d.proc_idle_since, d.own_grid, d.own_deadline, d.work_done
                );
            }
            println!();
        }
    }
    let r = trace::replay(&records, model);
    let [local, global, steal, nothing] = r.picks;
    println!(
        "replayed {} decisions (local {local}, global {global}, steal {steal}, nothing {nothing}; \
         raced {}; yield checks {}, yielded {}, parked {} (a turn in {}); wakes {}, continued {}, \
         of a process tick {}, helpers {}; roll-over checks {}, rolled over {}) through the model ({model:?}): {} disagreements",
        r.decisions,
        r.raced,
        r.yield_checks,
        r.yielded,
        r.parked,
        r.parked_turns,
        r.wakes,
        r.continued,
        r.proc_wakes,
        r.helpers,
        r.roll_over_checks,
        r.rolled_over,
        r.disagreements
    );
    for e in &r.examples {
        println!("  {e}");
    }
    std::process::exit(if r.disagreements == 0 { 0 } else { 1 })
}
