//! The interval clock both policy modes run their periodic statistics by,
//! and the exit line that ends their JSON lines.

use std::time::{Duration, Instant};

use log::warn;

use super::json::JsonSink;
use super::reporter::Reporter;
use super::stats::{Counters, GroupCounters, Metrics};

/// The periodic statistics both policy modes write: every `--stats`
/// interval (every second when only `--stats-json` is given), the metrics
/// of the interval that ended, to the live view and as one JSON line.
pub struct Intervals {
    every: Option<Duration>,
    live: bool,
    at: Instant,
    prev: Vec<GroupCounters>,
}

impl Intervals {
    /// `groups`: the counts the first interval starts from.
    pub fn new(print_every: Option<Duration>, json: bool, groups: &[GroupCounters]) -> Intervals {
        Intervals {
            every: print_every.or(json.then_some(Duration::from_secs(1))),
            live: print_every.is_some(),
            at: Instant::now(),
            prev: groups.to_vec(),
        }
    }

    /// Has an interval ended?
    pub fn due(&self) -> bool {
        self.every.is_some_and(|e| self.at.elapsed() >= e)
    }

    /// End the interval at the counts now: its metrics go to `live` (with
    /// `--stats`; the mode writes its live view) and to `json`. A sink that
    /// fails (its reader gone, a full disk) is logged and dropped: the
    /// scheduler and its other outputs go on.
    pub fn emit(
        &mut self,
        reporter: &mut Reporter,
        counters: &Counters,
        groups: &[GroupCounters],
        json: &mut Option<JsonSink>,
        live: impl FnOnce(&mut Reporter, &Metrics),
    ) {
        let secs = self.at.elapsed().as_secs_f64();
        let m = reporter.metrics(counters, groups, &self.prev, secs);
        if self.live {
            live(reporter, &m);
        }
        if let Some(Err(e)) = json.as_mut().map(|j| j.write(&m)) {
            warn!("--stats-json: {e:#}: no more JSON lines are written; scheduling goes on");
            *json = None;
        }
        (self.at, self.prev) = (Instant::now(), groups.to_vec());
    }
}

/// The exit line: the whole run as one sample (`"sample": "exit"`), the
/// last JSON line, where scripts read the totals. Both modes write it with
/// their exit summary; a sink that fails is logged.
pub fn write_exit_line(
    reporter: &Reporter,
    counters: &Counters,
    groups: &[GroupCounters],
    json: &mut Option<JsonSink>,
) {
    let Some(sink) = json.as_mut() else {
        return;
    };
    let mut m = reporter.metrics(counters, groups, &[], reporter.uptime_s());
    m.sample = "exit".into();
    if let Err(e) = sink.write(&m) {
        warn!("--stats-json: {e:#}: the exit line was not written");
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn the_exit_line_is_the_whole_run() {
        #[derive(Clone, Default)]
        struct Buf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.borrow_mut().write(b)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let mut json = Some(JsonSink::from_writer(Box::new(buf.clone())));
        let mut reporter = Reporter::new(vec!["world".into()], false);
        let groups = [GroupCounters {
            ticks: 40,
            misses: 3,
            ..Default::default()
        }];
        let mut intervals = Intervals::new(None, true, &groups);
        // an interval that saw nothing new, then the exit line: the run's counts
        intervals.emit(
            &mut reporter,
            &Counters::default(),
            &groups,
            &mut json,
            |_, _| {},
        );
        write_exit_line(&reporter, &Counters::default(), &groups, &mut json);
        let text = String::from_utf8(buf.0.borrow().clone()).unwrap();
        let lines: Vec<Metrics> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0].sample, "interval");
        assert_eq!(lines[0].groups["world"].interval_misses, 0);
        let exit = &lines[1];
        assert_eq!(exit.sample, "exit");
        assert_eq!(exit.groups["world"].ticks, 40);
        assert_eq!(
            exit.groups["world"].interval_misses, 3,
            "its interval is the whole run"
        );
        assert!(exit.interval_s > 0.0 && exit.interval_s <= exit.uptime_s);
    }

    #[test]
    fn a_failing_json_sink_is_dropped_and_the_rest_goes_on() {
        struct Gone;
        impl Write for Gone {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let groups = [GroupCounters::default()];
        let mut intervals = Intervals::new(Some(Duration::from_secs(1)), true, &groups);
        let mut reporter = Reporter::new(vec!["world".into()], false);
        let mut json = Some(JsonSink::from_writer(Box::new(Gone)));
        let mut live = 0;
        for _ in 0..2 {
            intervals.emit(
                &mut reporter,
                &Counters::default(),
                &groups,
                &mut json,
                |_, _| live += 1,
            );
            assert!(json.is_none(), "the failed sink is dropped");
        }
        assert_eq!(live, 2, "the live view goes on");
    }
}
