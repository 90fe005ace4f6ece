//! `[run]`: the run's length, its seed, and what it records.

use super::error::{bad, fmt_dur, fmt_t, ConfigError};
use super::param::section;
use super::values::{Bytes, Dur, FctEnd, OneOrList};

/// `run.max_output`'s default: 10 GB.
pub const DEFAULT_MAX_OUTPUT: u64 = 10_000_000_000;

section! {
    /// `[run]`.
    pub struct RunCfg {
        /// Seed of every random stream of the run (a run is a pure function of its config and seed).
        seed: u64 = 1;
        /// Simulated time to run. Optional when every flow is finite (sized flows, a Poisson
        /// workload): the run then ends when the last one finishes, and a duration given is a cap.
        duration: Option<Dur> = None, range "positive";
        /// Left out of goodput, queue and RTT statistics.
        warmup: Dur = Dur(0), range "shorter than duration";
        /// Queue-length sampling period.
        sample_interval: Dur = Dur(100 * 1_000_000), range "1ns or more";
        /// Bin width of the goodput time series.
        goodput_interval: Dur = Dur(1_000_000_000), range "1ns or more";
        /// Ports whose queues are sampled: "auto" (every switch port when there are at most 64,
        /// else none), "all", "none", "hosts" (switch ports that face hosts), or a list of
        /// "node:peer" names such as "leaf0:host3".
        sample_ports: OneOrList<String> = OneOrList::All("auto".into());
        /// Switch ports handle a departure when something next looks at the port instead of with
        /// a TxDone event of its own (a quarter fewer events). false schedules every TxDone, for
        /// cross-checking: the runs are the same (every table), only the event count differs.
        lazy_departures: bool = true;
        /// Switch ports ("node:peer", as in sample_ports) whose sent packets are written to one
        /// pcap file each.
        pcap: OneOrList<String> = OneOrList::List(Vec::new()), resolved Given;
        /// Switch ports ("node:peer") whose every enqueue and dequeue is written, with the queue's
        /// occupancy, to the `trace` table: the fine queue evolution of CEDM Figs. 3 and 8.
        trace_ports: OneOrList<String> = OneOrList::List(Vec::new()), resolved Given;
        /// Flows (ids, as in the flows table) whose congestion window and ssthresh are written to
        /// the `cwnd` table, in segments, when their first data leave and at each change within
        /// [trace_from, trace_to).
        trace_cwnd: Vec<u32> = Vec::new(), resolved Given;
        /// Start of the traced window [trace_from, trace_to) of trace_ports and trace_cwnd; default
        /// the warmup's end.
        trace_from: Option<Dur> = None, resolved Given, default_doc "run.warmup";
        /// End of the traced window; default the run's end.
        trace_to: Option<Dur> = None, resolved Given, default_doc "the run's end";
        /// Budget for what a run writes and holds, estimated before it starts (`budget.rs`).
        max_output: Bytes = Bytes(DEFAULT_MAX_OUTPUT), resolved Given, range "positive";
        /// Where a sized flow's completion time ends: "receiver" (its last byte arrives) or
        /// "sender" (its last byte is acknowledged, as the MQ-ECN authors' ns-2 scripts measure it).
        fct_end: FctEnd = FctEnd::Receiver, resolved Given;
        /// Threads of the partitioned engine (`world/parallel/`). 0: the sequential engine, one
        /// event queue. N >= 1: the fabric is cut into parts (pods of a fat-tree, groups of leaves)
        /// that advance in windows of the shortest link between parts, on N threads. A speed
        /// setting only: every table is the same for every N and the sequential engine's.
        threads: u32 = 0, resolved Given;
        /// Parts of the partitioned engine (with `run.threads`), each whole pods of a fat-tree or
        /// groups of leaves of a leaf-spine; 0: one per thread. A speed setting only, as threads.
        partitions: u32 = 0, resolved Given;
    }
}

impl RunCfg {
    /// Ports are traced.
    pub fn traced(&self) -> bool {
        !matches!(&self.trace_ports, OneOrList::List(l) if l.is_empty())
    }

    /// Some flow's congestion window is traced.
    pub fn traces_cwnd(&self) -> bool {
        !self.trace_cwnd.is_empty()
    }

    /// The checks of `[run]` alone; `open_ended` says what keeps the run
    /// going without a duration, if anything; `nothing` that it has no
    /// traffic at all.
    pub fn validate(&self, open_ended: Option<String>, nothing: bool) -> Result<(), ConfigError> {
        match self.duration {
            Some(Dur(0)) => return Err(bad("run.duration", "0s", "must be positive")),
            Some(d) if self.warmup.0 >= d.0 => {
                return Err(bad("run.warmup", fmt_t(self.warmup.0), "must be shorter than run.duration"))
            }
            Some(_) => {}
            None => {
                if let Some(why) = open_ended {
                    return Err(ConfigError(format!(
                        "run.duration: missing; it may be left out only when every flow is finite, and {why}"
                    )));
                }
                if nothing {
                    return Err(ConfigError(
                        "run.duration: missing; with no [workload] and no [[flows]] the run would have nothing to wait for".into(),
                    ));
                }
            }
        }
        // A queue or a goodput bin does not change within a nanosecond
        // (a 64-byte packet takes 51 ns at 10 Gbps); finer intervals only
        // multiply the output.
        for (key, d) in [("run.sample_interval", self.sample_interval), ("run.goodput_interval", self.goodput_interval)]
        {
            if d.0 < 1_000 {
                return Err(bad(key, fmt_dur(d.0), "must be at least 1ns"));
            }
        }
        if self.max_output.0 == 0 {
            return Err(bad("run.max_output", "0B", "must be positive, e.g. \"10GB\""));
        }
        for (key, t) in [("run.trace_from", self.trace_from), ("run.trace_to", self.trace_to)] {
            if t.is_some() && !self.traced() && !self.traces_cwnd() {
                return Err(ConfigError(format!(
                    "{key}: set, but run.trace_ports and run.trace_cwnd name nothing to trace"
                )));
            }
        }
        if let (Some(a), Some(b)) = (self.trace_from, self.trace_to) {
            if b.0 <= a.0 {
                return Err(bad("run.trace_to", fmt_t(b.0), &format!("must be after run.trace_from ({})", fmt_t(a.0))));
            }
        }
        Ok(())
    }
}
