//! Collectors filled during a run: goodput bins per service, queue-length
//! samples, ping RTTs and incast rounds. Each holds only the rows not yet
//! handed to the run's output (see `output.rs`).

use crate::outputs::output::{Output, BATCH_ROWS};
use crate::outputs::report::{Column, Table};
use crate::outputs::tables::{CwndRows, GoodputRows, IncastRows, QueueRows, RttRows, TraceRows};
use crate::units::{secs, Time};

/// Payload delivered in order at receivers, per service, in bins of
/// `run.goodput_interval`. Only the bin being filled is kept: time only
/// moves forward, so a delivery in a later bin closes every earlier one.
pub struct Goodput {
    bin: Time,
    /// Index of the bin being filled; it ends at `bin_end`.
    cur: u64,
    bin_end: Time,
    /// Bytes of the bin being filled, per service.
    bytes: Vec<u64>,
    /// Services that carry a flow: one row each per bin.
    active: Vec<usize>,
    /// One past the last bin that saw a delivery.
    bins_delivered: u64,
    pub rows: GoodputRows,
    /// A part of a partitioned run keeps its bins' bytes here instead of
    /// writing rows (`keep_bytes`): the parts' bytes are summed, then
    /// written once (`write_summed`), so every row is the sequential
    /// engine's to the bit (summing the parts' rates would round
    /// differently). (bin, service, bytes, width).
    kept: Option<Vec<(u64, u32, u64, Time)>>,
    /// Written by `write_summed`: `finish` has nothing left to do.
    done: bool,
}

impl Goodput {
    pub fn new(services: usize, active: Vec<usize>, bin: Time) -> Self {
        Goodput {
            bin,
            cur: 0,
            bin_end: bin,
            bytes: vec![0; services],
            active,
            bins_delivered: 0,
            rows: GoodputRows::default(),
            kept: None,
            done: false,
        }
    }

    /// Keep bytes, not rows (see `kept`).
    pub fn keep_bytes(&mut self) {
        self.kept = Some(Vec::new());
    }

    /// The bytes kept, once the run has finished (`finish`).
    pub fn take_kept(&mut self) -> Vec<(u64, u32, u64, Time)> {
        self.kept.take().expect("keep_bytes was called")
    }

    /// Write the rows of the bins that `parts` kept, summed: a bin a part
    /// did not reach counts zero bytes there.
    pub fn write_summed(&mut self, parts: Vec<Vec<(u64, u32, u64, Time)>>, out: &mut Output) {
        let mut bins: std::collections::BTreeMap<(u64, u32), (u64, Time)> = std::collections::BTreeMap::new();
        for (bin, s, bytes, width) in parts.into_iter().flatten() {
            let e = bins.entry((bin, s)).or_insert((0, width));
            debug_assert_eq!(e.1, width, "one bin, one width in every part");
            e.0 += bytes;
        }
        for ((bin, s), (bytes, width)) in bins {
            self.rows.push(secs(bin * self.bin + width), s, rate(bytes, width));
            self.rows.flush_full(out);
        }
        self.rows.flush(out);
        self.done = true;
    }

    #[inline]
    pub fn deliver(&mut self, service: usize, now: Time, bytes: u64, out: &mut Output) {
        if now >= self.bin_end {
            self.advance(now, out);
        }
        self.bytes[service] += bytes;
    }

    /// A delivery in a later bin: the bins before it are complete.
    #[cold]
    #[inline(never)]
    fn advance(&mut self, now: Time, out: &mut Output) {
        let b = now / self.bin;
        while self.cur < b {
            self.close(self.bin, out);
        }
        self.bin_end = (b + 1).saturating_mul(self.bin);
        self.bins_delivered = b + 1;
    }

    /// Write the bin being filled, `width` long, and start the next.
    fn close(&mut self, width: Time, out: &mut Output) {
        let start = self.cur * self.bin;
        for &s in &self.active {
            match &mut self.kept {
                Some(kept) => kept.push((self.cur, s as u32, self.bytes[s], width)),
                None => self.rows.push(secs(start + width), s as u32, rate(self.bytes[s], width)),
            }
        }
        self.bytes.fill(0);
        self.cur += 1;
        self.rows.flush_full(out);
    }

    /// The run stopped at `stopped`: write the bins that start before it,
    /// the last one cut short there. With a duration every such bin has a
    /// row; without one the series ends with the last delivery's bin.
    pub fn finish(&mut self, stopped: Time, has_duration: bool, out: &mut Output) {
        if self.done {
            return;
        }
        if self.bytes.iter().any(|&b| b > 0) {
            self.bins_delivered = self.bins_delivered.max(self.cur + 1);
        }
        let mut bins = stopped.div_ceil(self.bin);
        if !has_duration {
            bins = bins.min(self.bins_delivered);
        }
        while self.cur < bins {
            let start = self.cur * self.bin;
            let width = (stopped.min(start + self.bin) - start).max(1);
            self.close(width, out);
        }
        self.rows.flush(out);
    }
}

/// The order `Stats::finish` writes a kept series in, by the values of
/// each row: traces by time, then port (a port's rows of one instant in
/// the order they happened); windows by time, then flow; round trips by
/// send time, then sender, receiver, service; rounds by finish, then
/// start and round.
fn row_order(t: &Table) -> Vec<(u64, u64, u64, u64)> {
    let col = |name: &str| -> Vec<u64> {
        match t.column(name) {
            Some(Column::F64(v)) => v.iter().map(|x| x.to_bits()).collect(),
            Some(Column::U32(v)) => v.iter().map(|&x| x as u64).collect(),
            _ => vec![0; t.rows()],
        }
    };
    let names: [&str; 4] = match t.name {
        "trace" => ["time", "port", "", ""],
        "cwnd" => ["time", "flow", "", ""],
        "rtt" => ["time", "src", "dst", "service"],
        "incast" => ["finish", "start", "round", ""],
        other => unreachable!("{other} is not a kept series"),
    };
    let [a, b, c, d] = names.map(col);
    (0..t.rows()).map(|i| (a[i], b[i], c[i], d[i])).collect()
}

/// `t`'s rows in `row_order` (a stable sort: rows of equal keys keep
/// theirs).
fn ordered(mut t: Table) -> Table {
    let keys = row_order(&t);
    if keys.windows(2).all(|w| w[0] <= w[1]) {
        return t;
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    for (_, c) in t.columns.iter_mut() {
        *c = c.select(&order);
    }
    t
}

fn send_ordered(t: Table, out: &mut Output) {
    send_batches(ordered(t), out)
}

/// `t` in batches of `BATCH_ROWS` (one, empty, if it has no rows), as a
/// series written as it goes would be.
pub(crate) fn send_batches(t: Table, out: &mut Output) {
    let rows = t.rows();
    if rows <= BATCH_ROWS {
        return out.send(t);
    }
    for from in (0..rows).step_by(BATCH_ROWS) {
        let idx: Vec<usize> = (from..(from + BATCH_ROWS).min(rows)).collect();
        out.send(Table { name: t.name, columns: t.columns.iter().map(|(n, c)| (*n, c.select(&idx))).collect() });
    }
}

/// `bytes` over `width`, in Gbps.
fn rate(bytes: u64, width: Time) -> f64 {
    bytes as f64 * 8.0 / secs(width) / 1e9
}

/// Every time series of a run.
pub struct Stats {
    pub goodput: Goodput,
    pub queues: QueueRows,
    /// Written only when some port is traced (`run.trace_ports`).
    pub trace: TraceRows,
    pub tracing: bool,
    /// Written only when some flow's window is traced (`run.trace_cwnd`).
    pub cwnd: CwndRows,
    pub tracing_cwnd: bool,
    pub rtt: RttRows,
    pub incast: IncastRows,
    /// Sum and count of incast rounds' goodput (the summary's mean).
    pub incast_gbps_sum: f64,
    pub incast_rounds: u64,
}

impl Stats {
    pub fn new(services: usize, active: Vec<usize>, goodput_bin: Time) -> Self {
        Stats {
            goodput: Goodput::new(services, active, goodput_bin),
            queues: QueueRows::default(),
            trace: TraceRows::default(),
            tracing: false,
            cwnd: CwndRows::default(),
            tracing_cwnd: false,
            rtt: RttRows::default(),
            incast: IncastRows::default(),
            incast_gbps_sum: 0.0,
            incast_rounds: 0,
        }
    }

    pub fn incast_round(&mut self, round: u32, start: Time, finish: Time, gbps: f64) {
        self.incast.push(round, secs(start), secs(finish), gbps);
        self.incast_rounds += 1;
    }

    /// A partitioned run's other part's rows of the series it keeps to the
    /// end (`finish` orders them): traces, windows, round trips, rounds.
    pub fn take_rows_of(&mut self, other: &mut Stats) {
        self.trace.append(&mut other.trace);
        self.cwnd.append(&mut other.cwnd);
        self.rtt.append(&mut other.rtt);
        self.incast.append(&mut other.incast);
        self.incast_rounds += other.incast_rounds;
    }

    /// Hand over what is left of every series: the run stopped at `stopped`.
    /// The traces, windows, round trips and rounds are kept to the end and
    /// written in an order of their own values (`row_order`), the order
    /// of the events that wrote them being the engine's business: a lazy
    /// port writes its departures when it catches up, and the parts of a
    /// partitioned run each keep their own.
    pub fn finish(&mut self, stopped: Time, has_duration: bool, out: &mut Output) {
        self.goodput.finish(stopped, has_duration, out);
        self.queues.flush(out);
        if self.tracing {
            send_ordered(self.trace.take_all(), out);
        }
        if self.tracing_cwnd {
            send_ordered(self.cwnd.take_all(), out);
        }
        send_ordered(self.rtt.take_all(), out);
        let rounds = ordered(self.incast.take_all());
        if let Some(Column::F64(g)) = rounds.column("goodput_gbps") {
            self.incast_gbps_sum = g.iter().sum();
        }
        send_batches(rounds, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outputs::output::Collect;
    use crate::outputs::report::Column;

    fn table(c: &Collect) -> (Vec<f64>, Vec<u32>, Vec<f64>) {
        let t = c.tables.iter().find(|t| t.name == "goodput").expect("goodput sent");
        let (Some(Column::F64(time)), Some(Column::U32(svc)), Some(Column::F64(g))) =
            (t.column("time"), t.column("service"), t.column("gbps"))
        else {
            panic!("goodput columns")
        };
        (time.clone(), svc.clone(), g.clone())
    }

    /// Bins close as later deliveries arrive; empty bins get rows of 0;
    /// the last bin is cut at the stop, and a run without a duration ends
    /// its series with the last delivery's bin.
    #[test]
    fn goodput_bins_close_in_order_and_the_last_is_cut_short() {
        const MS: Time = 1_000_000_000;
        for has_duration in [true, false] {
            let mut c = Collect::default();
            let mut out = Output::new(&mut c);
            let mut g = Goodput::new(3, vec![0, 2], MS);
            g.deliver(0, MS / 2, 125_000, &mut out); // 1 Gbps over bin 0
            g.deliver(2, 3 * MS + 1, 250_000, &mut out); // bin 3; bins 1, 2 empty
            g.deliver(0, 3 * MS + 2, 125_000, &mut out);
            g.finish(3 * MS + MS / 2, has_duration, &mut out);
            let (time, svc, gbps) = table(&c);
            assert_eq!(svc, [0, 2, 0, 2, 0, 2, 0, 2]);
            let t: Vec<f64> = time.iter().map(|t| (t * 1e4).round() / 1e4).collect();
            assert_eq!(t, [0.001, 0.001, 0.002, 0.002, 0.003, 0.003, 0.0035, 0.0035]);
            let g: Vec<f64> = gbps.iter().map(|x| (x * 1e9).round() / 1e9).collect();
            // Half a bin: 125 kB in 0.5 ms is 2 Gbps.
            assert_eq!(g, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 4.0]);
        }
        // Stopped well after the last delivery: with a duration the empty
        // bins up to the stop are written, without one they are not.
        for (has_duration, rows) in [(true, 5), (false, 1)] {
            let mut c = Collect::default();
            let mut out = Output::new(&mut c);
            let mut g = Goodput::new(1, vec![0], MS);
            g.deliver(0, 10, 1, &mut out);
            g.finish(5 * MS, has_duration, &mut out);
            assert_eq!(table(&c).0.len(), rows);
        }
    }
}
