//! JSON lines: one object of statistics per interval, to a file or stdout.

use std::fs::File;
use std::io::{LineWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::stats::Metrics;

/// One JSON object per line to a file or stdout (`-`).
pub struct JsonSink {
    out: Box<dyn Write>,
    /// Write the groups' histograms (`--stats-json-no-histograms`: no).
    histograms: bool,
}

/// `--stats-json FILE`: `-`, or a file that can be created in an existing
/// directory. Checked before loading; nothing is created here.
pub fn check_json_path(path: &Path) -> Result<()> {
    if path == Path::new("-") {
        return Ok(());
    }
    if path.is_dir() {
        bail!(
            "--stats-json {}: is a directory; allowed: a file path or -",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "--stats-json {}: directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}

impl JsonSink {
    /// `append`: keep what the file holds (a service restarting keeps its history).
    pub fn open(path: &Path, append: bool) -> Result<JsonSink> {
        if path == Path::new("-") {
            return Ok(JsonSink::from_writer(Box::new(std::io::stdout())));
        }
        let f = if append {
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
        } else {
            File::create(path)
        }
        .with_context(|| format!("--stats-json {}", path.display()))?;
        Ok(JsonSink::from_writer(Box::new(LineWriter::new(f))))
    }

    /// JSON lines to any writer (the userspace mode's non-blocking stdout).
    pub fn from_writer(out: Box<dyn Write>) -> JsonSink {
        JsonSink {
            out,
            histograms: true,
        }
    }

    /// With the groups' histograms, or without them (`false`).
    pub fn histograms(self, histograms: bool) -> JsonSink {
        JsonSink { histograms, ..self }
    }

    pub fn write(&mut self, m: &Metrics) -> Result<()> {
        if self.histograms {
            serde_json::to_writer(&mut self.out, m)?;
        } else {
            // empty histograms are left out of the object (stats.rs)
            let mut m = m.clone();
            for g in m.groups.values_mut() {
                g.lateness_hist.clear();
                g.overshoot_hist.clear();
            }
            serde_json::to_writer(&mut self.out, &m)?;
        }
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::reporter::Reporter;
    use crate::output::stats::{Counters, GroupCounters};

    #[test]
    fn histograms_can_be_left_out_of_the_json_lines() {
        #[derive(Clone, Default)]
        struct Buf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let total = GroupCounters {
            ticks: 7,
            ..Default::default()
        };
        let reporter = Reporter::new(vec!["world".into()], false);
        let m = reporter.metrics(&Counters::default(), &[total], &[], 1.0);
        let line = |hist: bool| {
            let buf = Buf::default();
            let mut sink = JsonSink::from_writer(Box::new(buf.clone())).histograms(hist);
            sink.write(&m).unwrap();
            let text = String::from_utf8(buf.0.borrow().clone()).unwrap();
            serde_json::from_str::<serde_json::Value>(text.trim()).unwrap()
        };
        let (with, without) = (line(true), line(false));
        assert!(with["groups"]["world"]["lateness_hist"].is_array());
        assert!(without["groups"]["world"].get("lateness_hist").is_none());
        assert!(without["groups"]["world"].get("overshoot_hist").is_none());
        assert_eq!(without["groups"]["world"]["ticks"], 7);
        // what a client reads back still parses
        serde_json::from_value::<Metrics>(without).unwrap();
    }

    #[test]
    fn the_json_file_is_appended_to_or_started_anew() {
        let path = std::env::temp_dir().join(format!("scx_tick-json-{}", std::process::id()));
        std::fs::write(&path, "{\"earlier\":1}\n").unwrap();
        JsonSink::open(&path, true)
            .unwrap()
            .write(&Metrics::default())
            .unwrap();
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(kept.lines().count(), 2, "{kept}");
        assert!(kept.starts_with("{\"earlier\":1}\n"), "{kept}");
        JsonSink::open(&path, false)
            .unwrap()
            .write(&Metrics::default())
            .unwrap();
        let fresh = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(fresh.lines().count(), 1, "{fresh}");
        serde_json::from_str::<serde_json::Value>(fresh.trim()).unwrap();
    }
}
