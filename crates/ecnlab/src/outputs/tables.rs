//! The output tables and their columns, in the order they are written
//! (docs/guide/running.md: "Each run writes these files").

use crate::outputs::output::table_rows;
use crate::outputs::report::Table;

table_rows! {
    /// Per flow, written when the run ends (its counters can change until then).
    FlowRows = "flows" {
        id: U32(u32),
        src: U32(u32),
        dst: U32(u32),
        service: U32(u32),
        size: I64(i64),
        start: F64(f64),
        finish: F64(f64),
        fct: F64(f64),
        ideal_fct: F64(f64),
        slowdown: F64(f64),
        bytes_received: U64(u64),
        timeouts: U32(u32),
        retransmits: U32(u32),
        spurious_retransmits: U32(u32),
        ce_marks: U32(u32),
        drops: U32(u32),
        reordered: U32(u32),
        kind: Str(String),
    }
}

table_rows! {
    /// Goodput per service and bin, written as bins close.
    GoodputRows = "goodput" {
        time: F64(f64),
        service: U32(u32),
        gbps: F64(f64),
    }
}

table_rows! {
    /// Queue-length samples of the sampled ports.
    QueueRows = "queues" {
        time: F64(f64),
        port: U32(u32),
        queue: U32(u32),
        bytes: U64(u64),
        packets: U32(u32),
    }
}

table_rows! {
    /// Every enqueue (+1) and dequeue (-1) at the traced ports within the
    /// trace window, with the queue's occupancy after it.
    TraceRows = "trace" {
        time: F64(f64),
        port: U32(u32),
        queue: U32(u32),
        event: I64(i64),
        bytes: U64(u64),
        packets: U32(u32),
    }
}

table_rows! {
    /// The congestion window and ssthresh (segments) of the flows
    /// `run.trace_cwnd` names, a row at the flow's start and at each change,
    /// within the trace window.
    CwndRows = "cwnd" {
        time: F64(f64),
        flow: U32(u32),
        cwnd: F64(f64),
        ssthresh: F64(f64),
    }
}

table_rows! {
    /// Ping round trips.
    RttRows = "rtt" {
        time: F64(f64),
        src: U32(u32),
        dst: U32(u32),
        service: U32(u32),
        rtt: F64(f64),
    }
}

table_rows! {
    /// Port (queue = -1) and queue counters, written when the run ends.
    PortRows = "ports" {
        port: U32(u32),
        node: Str(String),
        peer: Str(String),
        queue: I64(i64),
        enqueued: U64(u64),
        marked: U64(u64),
        unmarked: U64(u64),
        dropped_overflow: U64(u64),
        dropped_aqm: U64(u64),
        max_bytes: U64(u64),
        sent_packets: U64(u64),
        sent_bytes: U64(u64),
    }
}

table_rows! {
    /// Incast rounds, written as they complete.
    IncastRows = "incast" {
        round: U32(u32),
        start: F64(f64),
        finish: F64(f64),
        goodput_gbps: F64(f64),
    }
}

table_rows! {
    /// PFC and the shared buffer per (port, priority), written when the run
    /// ends, in runs with either (`docs/pfc.md`). As the port that sends
    /// frames: the PAUSEs and RESUMEs it sent about what its peer sends in,
    /// that ingress queue's headroom, peaks and drops; as the port that is
    /// paused: the frames that took effect there and the time paused.
    PfcRows = "pfc" {
        port: U32(u32),
        node: Str(String),
        peer: Str(String),
        priority: U32(u32),
        pause_sent: U64(u64),
        resume_sent: U64(u64),
        pause_received: U64(u64),
        resume_received: U64(u64),
        paused_seconds: F64(f64),
        headroom_bytes: U64(u64),
        peak_headroom_bytes: U64(u64),
        peak_ingress_bytes: U64(u64),
        headroom_drops: U64(u64),
        threshold_drops: U64(u64),
        watchdog_trips: U64(u64),
        receiver_drops: U64(u64),
    }
}

table_rows! {
    /// Each switch's shared buffer at every sample (`run.sample_interval`,
    /// in runs with a shared buffer or PFC and sampled ports).
    BufferRows = "buffer" {
        time: F64(f64),
        switch: Str(String),
        shared_bytes: U64(u64),
        shared_size: U64(u64),
        headroom_bytes: U64(u64),
    }
}

/// Every output table with no rows, in the order of the list above: the
/// tables' names, columns and column types, for a writer outside the
/// engine (`ecnlab testbed`) to follow instead of spelling them again.
pub fn empty_tables() -> Vec<Table> {
    vec![
        FlowRows::default().take(0),
        GoodputRows::default().take(0),
        QueueRows::default().take(0),
        TraceRows::default().take(0),
        CwndRows::default().take(0),
        RttRows::default().take(0),
        PortRows::default().take(0),
        IncastRows::default().take(0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_tables_name_every_table_once_with_no_rows() {
        let t = empty_tables();
        let names: Vec<_> = t.iter().map(|t| t.name).collect();
        assert_eq!(names, ["flows", "goodput", "queues", "trace", "cwnd", "rtt", "ports", "incast"]);
        assert!(t.iter().all(|t| t.rows() == 0 && !t.columns.is_empty()));
        let incast: Vec<_> = t[7].columns.iter().map(|c| c.0).collect();
        assert_eq!(incast, ["round", "start", "finish", "goodput_gbps"]);
    }
}
