//! `[host]`: the batching of a host's network stack (CEDM §II-A) and
//! ML-ECN's stage tags, all off by default. See `host/nic/lso.rs`,
//! `host/nic/coalesce.rs`, `host/nic/gro.rs` and `host/stage.rs`.

use super::error::{bad, ConfigError};
use super::param::section;
use super::values::{Bytes, Dur, StageBy, TimeOrPkts};
use crate::units;

/// Most stage thresholds a host may tag with: a stage (1 to this + 1) fits
/// DSCP's 6 bits with room to spare.
pub const MAX_STAGE_THRESHOLDS: usize = 62;

section! {
    /// `[host]`.
    pub struct HostCfg {
        /// TCP hands the NIC segments of several packets (LSO/TSO), deferring a send until a
        /// large enough one is allowed.
        lso: bool = false, source "CEDM §II-A";
        /// Largest segment, one header and its payload (Linux: 64 KB).
        lso_max: Bytes = Bytes(64_000), range "one full packet or more";
        /// β: sending stops deferring once the window allows this fraction of cwnd (Linux
        /// `tcp_tso_win_divisor` = 3).
        lso_fraction: f64 = 0.333, range "(0, 1]", source "CEDM Table I";
        /// Longest a deferral lasts (CEDM Table I cond. 6: 2 ticks).
        lso_defer_limit: Dur = Dur(2 * units::PS_PER_S / 1000), range "positive", source "CEDM Table I";
        /// Keep deferring in the CWR state after an ECN cut. Off by default: CWR is not the open
        /// state, so Linux (and CEDM Table I cond. 4) send at once there; on, only loss recovery
        /// stops deferring.
        lso_defer_in_cwr: bool = false, source "CEDM Table I";
        /// Each frame a host sends lands at the first switch a seeded, uniform [0, jitter) later
        /// than the wire alone makes it, in order: the timing noise of real NICs and switch ingress
        /// that keeps a backlogged host from staying phase-locked with the port it feeds (a
        /// drop-tail lock-out). A duration, or full packets' transmission times at each host's own
        /// NIC rate ("1pkt": 1.2 us at 10 Gbps, 12 us at 1 Gbps; Floyd and Jacobson's size for
        /// breaking phase effects, which at 1 Gbps and below the 100 ns default does not: see
        /// docs/model.md). 0: off, an exact replay as ns-2 runs (see `host/nic/jitter.rs`).
        jitter: TimeOrPkts = TimeOrPkts::Time(100_000), range "0 or more",
            source "Floyd & Jacobson, On Traffic Phase Effects in Packet-Switched Gateways (1992)";
        /// Receive interrupt coalescing: arrivals wait at most this long after the first unhandled
        /// one (0: every arrival is handled at once).
        interrupt_coalescing: Dur = Dur(0), source "CEDM §II-A";
        /// ...or until this many frames wait (0: no frame limit).
        interrupt_frames: u32 = 0;
        /// Receive offload: in-order packets of a flow handled in one batch merge into one
        /// segment, acknowledged once.
        gro: bool = false;
        /// Largest merged segment, one header and its payload.
        gro_max: Bytes = Bytes(64_000), range "one full packet or more";
        /// ML-ECN's elevation thresholds α_1 < α_2 < ... on a flow's bytes sent: data packets
        /// carry stage 1, 2, ... (the paper's classes: ["100KB", "10MB"]). Empty: no tags.
        stages: Vec<Bytes> = Vec::<Bytes>::new(), range "increasing, at most 62", source "ML-ECN §III-B-1";
        /// What the stage counts: "sent" (bytes sent so far, the paper's tag) or "size" (the
        /// flow's whole size, known in advance: ML-ECN Fig. 2).
        stage_by: StageBy = StageBy::Sent, source "ML-ECN §II-B";
        /// Send only these stages' packets ECN-capable, so only they can be marked (ML-ECN
        /// Fig. 2); default all.
        ect_stages: Option<Vec<u32>> = None, default_doc "every stage", source "ML-ECN §II-B";
    }
}

impl Default for HostCfg {
    fn default() -> Self {
        HostCfg::from_json("host", serde_json::json!({})).expect("every key has a default")
    }
}

impl HostCfg {
    /// Receive batching is on.
    pub fn coalescing(&self) -> bool {
        self.interrupt_coalescing.0 > 0
    }

    /// The checks of `[host]`; `packet` is a full packet's bytes on the wire.
    pub fn validate(&self, packet: u64) -> Result<(), ConfigError> {
        let h = self;
        if !(h.lso_fraction > 0.0 && h.lso_fraction <= 1.0) {
            return Err(bad(
                "host.lso_fraction",
                h.lso_fraction,
                "must be in (0, 1]: the share of cwnd one segment may take",
            ));
        }
        for (key, b) in [("host.lso_max", h.lso_max), ("host.gro_max", h.gro_max)] {
            if b.0 < packet {
                return Err(bad(
                    key,
                    format!("{}B", b.0),
                    &format!("must hold at least one full packet ({packet}B: transport.mss + transport.header)"),
                ));
            }
        }
        if h.lso_defer_limit.0 == 0 {
            return Err(bad("host.lso_defer_limit", "0s", "must be positive (Linux: 2 ticks, \"2ms\")"));
        }
        if h.interrupt_frames > 0 && !h.coalescing() {
            return Err(bad(
                "host.interrupt_frames",
                h.interrupt_frames,
                "needs host.interrupt_coalescing (a delay): without one, fewer frames would wait forever",
            ));
        }
        if h.stages.len() > MAX_STAGE_THRESHOLDS {
            return Err(bad(
                "host.stages",
                format!("a list of {}", h.stages.len()),
                &format!("at most {MAX_STAGE_THRESHOLDS} thresholds (a stage fits DSCP's 6 bits)"),
            ));
        }
        for (i, w) in h.stages.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(bad(
                    &format!("host.stages[{}]", i + 1),
                    format!("{}B", w[1].0),
                    &format!("thresholds must increase (host.stages[{i}] is {}B)", w[0].0),
                ));
            }
        }
        if h.stages.first().is_some_and(|b| b.0 == 0) {
            return Err(bad("host.stages[0]", "0B", "must be positive: a flow starts in stage 1"));
        }
        if let Some(list) = &h.ect_stages {
            let last = h.stages.len() as u32 + 1;
            if h.stages.is_empty() {
                return Err(bad("host.ect_stages", format!("{list:?}"), "needs host.stages"));
            }
            if let Some(&s) = list.iter().find(|&&s| s == 0 || s > last) {
                return Err(bad(
                    "host.ect_stages",
                    s,
                    &format!("stages are 1 to {last} (host.stages has {} threshold(s))", h.stages.len()),
                ));
            }
        }
        if h.stage_by != StageBy::Sent && h.stages.is_empty() {
            return Err(bad("host.stage_by", "\"size\"", "needs host.stages"));
        }
        if h.gro && !h.coalescing() {
            return Err(bad(
                "host.gro",
                true,
                "needs host.interrupt_coalescing: without receive batching every packet is handled alone and nothing merges",
            ));
        }
        Ok(())
    }
}
