//! `scx_tick topology`: the CPU topology table and the tick CPUs scx_tick
//! would choose, or the same as JSON.

use anyhow::Result;

use crate::config::cli::TopologyArgs;
use crate::model::topology::{
    Machine, choose_tick_cpus, default_tick_cpu_count, max_tick_cpus, table,
};

/// `scx_tick topology`
pub fn run(args: &TopologyArgs) -> Result<()> {
    let m = Machine::read()?;
    let count = match &args.tick_cpus {
        Some(s) => s.trim().parse::<usize>().map_err(|_| {
            anyhow::anyhow!("--tick-cpus {s:?}: expected a count of tick CPUs (1 or more)")
        })?,
        None => default_tick_cpu_count(&m),
    };
    let choice = choose_tick_cpus(&m, count);
    if args.json {
        let v = serde_json::json!({
            "machine": m,
            "choice": choice.as_ref().ok(),
            "max_tick_cpus": max_tick_cpus(&m),
            "error": choice.as_ref().err().map(|e| e.to_string()),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        if args.tick_cpus.is_some() {
            choice?;
        }
        return Ok(());
    }
    print!("{}", table(&m));
    println!();
    match choice {
        Ok(c) => {
            println!(
                "Tick CPUs scx_tick would choose ({count}): {:?}",
                c.tick_cpus
            );
            for r in &c.reasons {
                println!("  {r}");
            }
            Ok(())
        }
        // an explicit count that cannot be chosen is the user's error,
        // said once (on stderr, by the caller)
        Err(e) if args.tick_cpus.is_some() => Err(e),
        Err(e) => {
            println!("No tick CPU choice: {e:#}");
            Ok(())
        }
    }
}
