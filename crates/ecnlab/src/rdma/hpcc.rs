//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM
//! 2019): a queue pair's rate and window from in-band telemetry of every
//! link on its path (`int.rs`).
//!
//! On each ACK, per hop i, against the hop's previous record: the link's
//! utilisation u_i = txRate_i / B_i + min(q_i, q_i,prev) / (B_i · T), with
//! txRate from the bytes-sent and time differences, B the link's rate and
//! T the base RTT (the queue term as the HPCC simulator writes it: q times
//! the NIC's rate over B_i and the base window W = T · NIC rate). The most
//! utilised hop gives u and τ (its time difference, at most T); the
//! estimate moves U ← U·(1 − τ/T) + u·τ/T (§3.3, Alg. 1 MeasureInflight).
//! Then (ComputeWind, in the rate form the simulator runs): if U ≥ η or the
//! additive stage count reached `hpcc_max_stage`, R = R_c·η/U + R_AI (and
//! the stage count restarts), else R = R_c + R_AI (and it grows); R within
//! [min rate, line rate]. The reference R_c and the stage count move only
//! once per RTT — on the first ACK beyond the sequence sent at the last
//! such update; the ACKs between change only the sending rate
//! (`hpcc_fast_react`, the simulator's FAST_REACT). The window is W·R/line
//! (`rdma_var_window`), the pacing rate R.
//!
//! Choices, from the HPCC simulator (kwzhao/High-Precision-Congestion-
//! Control 0e2b031, rdma-hw.cc UpdateRateHp; run.py's `hp` settings):
//! η = 0.95, R_AI = 10 Mb/s per 25 Gb/s of link (W_AI = R_AI·T), min rate
//! 1 Gb/s, maxStage 0 — the paper gives maxStage 5, which the authors'
//! project page (liyuliang001.github.io/projects/hpcc) calls a typo for
//! their simulations, run with 0 (every update multiplicative): 0 is the
//! default, 5 one key away. The INT stack adds `hpcc_int_bytes` (42: five 8-byte hops and a
//! 2-byte count) to every data packet and every ACK.
//!
//! Per-packet function: `Hpcc::on_ack`. Tests: below.

use super::int::{IntHop, IntStack, MAX_HOPS};
use crate::config::param::section;
use crate::config::{bad, Bytes, ConfigError, Rate, Table, TransportCfg};
use crate::units::Time;

section! {
    /// HPCC's keys (`transport.cc = "hpcc"`), in `[transport]`.
    pub struct HpccKeys {
        /// η: the utilisation HPCC aims each link at.
        hpcc_eta: f64 = 0.95, range "(0, 1]", source "HPCC §3.3", resolved InUse;
        /// maxStage: additive steps before a multiplicative update is forced (0: every update
        /// is multiplicative, the HPCC simulator's run.py; the paper's table says 5).
        hpcc_max_stage: u32 = 0, source "HPCC simulator run.py (MI_THRESH)", resolved InUse;
        /// R_AI (W_AI / T): the additive step; unset, 10 Mb/s per 25 Gb/s of the host's link.
        hpcc_rai: Option<Rate> = None, resolved InUse, default_doc "10 Mb/s per 25 Gb/s of link";
        /// The lowest rate an update leaves.
        hpcc_min_rate: Rate = Rate(1_000_000_000), range "positive", source "HPCC simulator run.py (MIN_RATE)", resolved InUse;
        /// ACKs between once-per-RTT updates change the sending rate too (FAST_REACT).
        hpcc_fast_react: bool = true, source "HPCC simulator run.py (FAST_REACT)", resolved InUse;
        /// Fast reactions skip hops whose queue is empty (SAMPLE_FEEDBACK).
        hpcc_sample_feedback: bool = false, source "HPCC simulator rdma-hw.cc", resolved InUse;
        /// INT values rounded as the simulator's 8-byte hop (bytes in 128·m, queue in 80·m);
        /// 0: exact; unset, m = the host's link over 25 Gb/s (run.py's INT_MULTI).
        hpcc_int_multi: Option<u32> = None, resolved InUse, default_doc "link rate / 25 Gb/s";
        /// The INT stack's bytes on every data packet and ACK (5 hops × 8 B + 2 B).
        hpcc_int_bytes: Bytes = Bytes(42), source "HPCC simulator int-header.h", resolved InUse;
    }
}

impl HpccKeys {
    pub fn of(t: &TransportCfg) -> HpccKeys {
        HpccKeys::read(&Table::new("transport", t.extra.clone()), true).expect("checked keys read")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.hpcc_eta > 0.0 && self.hpcc_eta <= 1.0) {
            return Err(bad("transport.hpcc_eta", self.hpcc_eta, "must be in (0, 1]"));
        }
        if self.hpcc_min_rate.0 == 0 {
            return Err(bad("transport.hpcc_min_rate", "0bps", "must be positive"));
        }
        if self.hpcc_rai.is_some_and(|r| r.0 == 0) {
            return Err(bad("transport.hpcc_rai", "0bps", "must be positive (leave it out for the default)"));
        }
        Ok(())
    }

    /// The INT rounding for a host on a `line_bps` link.
    pub fn int_multi(&self, line_bps: u64) -> u32 {
        self.hpcc_int_multi.unwrap_or((line_bps / 25_000_000_000).max(1) as u32)
    }
}

/// HPCC's constants for one queue pair.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub line: f64,
    pub eta: f64,
    pub max_stage: u32,
    pub rai: f64,
    pub min: f64,
    pub fast_react: bool,
    pub sample_feedback: bool,
    /// T, and W = T · line, bytes.
    pub t: Time,
    pub w: f64,
}

impl Params {
    pub fn new(k: &HpccKeys, line_bps: u64, base_rtt: Time) -> Params {
        let line = line_bps as f64;
        Params {
            line,
            eta: k.hpcc_eta,
            max_stage: k.hpcc_max_stage,
            rai: k.hpcc_rai.map_or(10e6 * line / 25e9, |r| r.0 as f64),
            min: k.hpcc_min_rate.0 as f64,
            fast_react: k.hpcc_fast_react,
            sample_feedback: k.hpcc_sample_feedback,
            t: base_rtt,
            w: line * base_rtt as f64 * 1e-12 / 8.0,
        }
    }
}

/// One queue pair's HPCC sender.
#[derive(Clone, Debug)]
pub struct Hpcc {
    pub p: Params,
    /// The sending rate R and the reference R_c, bits per second.
    pub rate: f64,
    pub rc: f64,
    /// U, the smoothed utilisation.
    pub u: f64,
    inc_stage: u32,
    /// The sequence sent at the last once-per-RTT update (None: no ACK yet).
    last_update: Option<u64>,
    prev: [IntHop; MAX_HOPS],
    pub updates: u32,
}

impl Hpcc {
    pub fn new(p: Params) -> Hpcc {
        Hpcc {
            rate: p.line,
            rc: p.line,
            u: 1.0,
            p,
            inc_stage: 0,
            last_update: None,
            prev: Default::default(),
            updates: 0,
        }
    }

    /// An ACK of every byte below `ack` carrying `int`, with `snd_nxt` the
    /// sender's next byte. True when the sending rate changed.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, int: &IntStack) -> bool {
        let hops = int.hops();
        let Some(last) = self.last_update else {
            // The first ACK: its records are the baseline.
            self.prev[..hops.len()].copy_from_slice(hops);
            self.last_update = Some(snd_nxt);
            return false;
        };
        let full = ack > last;
        if !full && !self.p.fast_react {
            return false;
        }
        let (mut u_max, mut tau_max, mut any) = (0.0f64, 0u64, false);
        for (i, h) in hops.iter().enumerate() {
            if self.p.sample_feedback && !full && h.qlen == 0 {
                continue;
            }
            let prev = self.prev[i];
            self.prev[i] = *h;
            let tau = h.ts.saturating_sub(prev.ts);
            if tau == 0 {
                continue; // Two records of one instant say nothing of a rate.
            }
            any = true;
            let tx_rate = h.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0 / (tau as f64 * 1e-12);
            let b = h.rate as f64;
            let u = tx_rate / b + h.qlen.min(prev.qlen) as f64 * self.p.line / b / self.p.w;
            if u > u_max {
                (u_max, tau_max) = (u, tau);
            }
        }
        let mut changed = false;
        if any {
            let tau = tau_max.min(self.p.t) as f64;
            let t = self.p.t as f64;
            self.u = (self.u * (t - tau) + u_max * tau) / t;
            let c = self.u / self.p.eta;
            let (rate, stage) = if c >= 1.0 || self.inc_stage >= self.p.max_stage {
                (self.rc / c + self.p.rai, 0)
            } else {
                (self.rc + self.p.rai, self.inc_stage + 1)
            };
            let rate = rate.clamp(self.p.min, self.p.line);
            changed = rate != self.rate;
            self.rate = rate;
            if full {
                self.rc = rate;
                self.inc_stage = stage;
                self.updates += 1;
            }
        }
        if full && snd_nxt > last {
            self.last_update = Some(snd_nxt);
        }
        changed
    }
}

/// `transport.cc = "hpcc"`.
pub const DECL: super::cc::RdmaDecl = super::cc::RdmaDecl {
    cc: super::cc::queue_pair_cc(
        crate::switch::scheme::About {
            params: &[HpccKeys::PARAMS, super::RdmaKeys::PARAMS],
            ..crate::switch::scheme::About::new(
                "hpcc",
                "RoCEv2 queue pairs with HPCC: switches append INT (queue, bytes sent, time, rate) at egress; the \
                 sender sets its window and rate from the most utilised link, aiming at eta",
                "Li et al., HPCC (SIGCOMM 2019) §3; the HPCC simulator's rdma-hw.cc and run.py",
            )
        },
        super::cc::BDP_WINDOW,
        |t| {
            HpccKeys::of(t).validate()?;
            super::RdmaKeys::of(t).validate()
        },
    ),
    factory: |t| {
        let k = HpccKeys::of(t);
        Box::new(move |env| Box::new(Hpcc::new(Params::new(&k, env.line, env.base_rtt))))
    },
    telemetry: Some(|t, line| {
        let k = HpccKeys::of(t);
        super::cc::Telemetry { bytes: k.hpcc_int_bytes.0 as u32, multi: k.int_multi(line) }
    }),
    notifies: None,
};

impl super::cc::RateControl for Hpcc {
    fn rate(&self) -> f64 {
        self.rate
    }
    fn cuts(&self) -> u32 {
        self.updates
    }
    fn on_ack(&mut self, a: &super::cc::Ack) -> bool {
        a.int.is_some_and(|int| Hpcc::on_ack(self, a.ack, a.snd_nxt, int))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        // 100 Gb/s, T = 4 µs: W = 50 KB; R_AI 40 Mb/s.
        Params {
            line: 100e9,
            eta: 0.95,
            max_stage: 0,
            rai: 40e6,
            min: 1e9,
            fast_react: true,
            sample_feedback: false,
            t: 4_000_000,
            w: 50_000.0,
        }
    }

    fn stack(ts: Time, tx: u64, q: u64) -> IntStack {
        let mut s = IntStack { n: 1, ..IntStack::default() };
        s.hops[0] = IntHop { ts, tx_bytes: tx, qlen: q, rate: 100_000_000_000 };
        s
    }

    /// A link at full rate with a standing queue of half a BDP: u = 1 +
    /// 0.5 = 1.5 over a whole T moves U from 1 to 1.5 (Alg. 1 with τ = T);
    /// the rate becomes R_c·η/U + R_AI = 100·0.95/1.5 Gb/s + 40 Mb/s.
    #[test]
    fn a_queue_of_half_a_bdp_cuts_to_eta_over_u() {
        let mut h = Hpcc::new(params());
        h.on_ack(1_000, 50_000, &stack(0, 0, 25_000));
        // 4 µs later the port has sent 4 µs of line rate: 50,000 B.
        assert!(h.on_ack(60_000, 100_000, &stack(4_000_000, 50_000, 25_000)));
        assert!((h.u - 1.5).abs() < 1e-9, "{}", h.u);
        let want = 100e9 * 0.95 / 1.5 + 40e6;
        assert!((h.rate - want).abs() < 1.0, "{} vs {want}", h.rate);
        assert_eq!(h.rc, h.rate, "a full update moves the reference");
    }

    /// A short τ weighs the sample by τ/T; a fast reaction changes R but not
    /// R_c; an idle link (u = 0.5 < η) with maxStage 5 adds R_AI to R_c.
    #[test]
    fn ewma_by_tau_fast_react_and_additive_stage() {
        let mut h = Hpcc::new(params());
        h.on_ack(1_000, 50_000, &stack(0, 0, 0));
        // 1 µs at half rate, no queue: u = 0.5, U = 1·(3/4) + 0.5·(1/4) = 0.875.
        h.on_ack(2_000, 50_000, &stack(1_000_000, 6_250, 0));
        assert!((h.u - 0.875).abs() < 1e-12, "{}", h.u);
        assert_eq!(h.rc, 100e9, "ack 2000 ≤ 50000: a fast reaction");
        let fast: f64 = 100e9 * 0.95 / 0.875 + 40e6;
        assert_eq!(h.rate, fast.min(100e9));
        let mut p = params();
        p.max_stage = 5;
        let mut a = Hpcc::new(p);
        a.rc = 50e9;
        a.on_ack(1_000, 10_000, &stack(0, 0, 0));
        a.on_ack(20_000, 30_000, &stack(4_000_000, 25_000, 0)); // u = 0.5 for a whole T
        assert!((a.u - 0.5).abs() < 1e-12);
        assert!((a.rc - (50e9 + 40e6)).abs() < 1.0, "{}", a.rc);
    }

    /// The window follows the rate: W·R/line (the simulator's VAR_WIN).
    #[test]
    fn window_scales_with_rate() {
        use crate::rdma::cc::RateControl;
        let mut h = Hpcc::new(params());
        h.rate = 25e9;
        assert_eq!(h.window(52_300, true, 100e9), 13_075);
        assert_eq!(h.window(52_300, false, 100e9), 52_300);
    }
}
