//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the
//! Datacenter", SIGCOMM 2015): a queue pair's rate from the gradient of its
//! RTT samples.
//!
//! Once per RTT (the first ACK beyond the sequence sent at the last update,
//! as the HPCC simulator runs it), with the ACK's RTT sample: the difference
//! from the previous sample is smoothed, d ← (1 − α)·d + α·(rtt − rtt_prev),
//! and normalised by the minimum RTT, g = d / minRTT (§4.2). Then
//! (Alg. 1): below T_low, additive increase R += δ; above T_high, a cut
//! R ← R·(1 − β·(1 − T_high/rtt)); otherwise g ≤ 0 increases by δ and
//! g > 0 cuts R ← R·(1 − β·g). After `timely_hai_after` increases in a row
//! (N = 5) the step is the hyper-active one, R_HAI. R within [min, line].
//!
//! Defaults: the HPCC simulator's (rdma-hw.cc attributes and run.py's
//! `timely`): T_low 50 µs, T_high 500 µs, α 0.875, β 0.8, minRTT 20 µs,
//! δ = 10 Mb/s and R_HAI = 50 Mb/s per 10 Gb/s of link, min rate 1 Gb/s.
//! The paper's own testbed values differ (Table 1); every key is open.
//!
//! Per-packet function: `Timely::on_ack`. Tests: below.

use crate::config::param::section;
use crate::config::{bad, ConfigError, Dur, Rate, Table, TransportCfg};
use crate::units::Time;

section! {
    /// TIMELY's keys (`transport.cc = "timely"`), in `[transport]`.
    pub struct TimelyKeys {
        /// T_low: below this RTT the rate rises whatever the gradient.
        timely_t_low: Dur = Dur(50_000_000), range "positive", source "HPCC simulator rdma-hw.cc (TimelyTLow)", resolved InUse;
        /// T_high: above this RTT the rate is cut by β·(1 − T_high/rtt).
        timely_t_high: Dur = Dur(500_000_000), range "positive", source "HPCC simulator rdma-hw.cc (TimelyTHigh)", resolved InUse;
        /// α: the EWMA gain of the RTT difference.
        timely_alpha: f64 = 0.875, range "(0, 1]", source "HPCC simulator rdma-hw.cc (TimelyAlpha)", resolved InUse;
        /// β: the multiplicative decrease factor.
        timely_beta: f64 = 0.8, range "(0, 1]", source "HPCC simulator rdma-hw.cc (TimelyBeta)", resolved InUse;
        /// The minimum RTT the gradient is normalised by.
        timely_min_rtt: Dur = Dur(20_000_000), range "positive", source "HPCC simulator rdma-hw.cc (TimelyMinRtt)", resolved InUse;
        /// δ: the additive step; unset, 10 Mb/s per 10 Gb/s of the host's link (run.py).
        timely_rai: Option<Rate> = None, resolved InUse, default_doc "10 Mb/s per 10 Gb/s of link";
        /// The hyper-active step; unset, 50 Mb/s per 10 Gb/s of the host's link (run.py).
        timely_rhai: Option<Rate> = None, resolved InUse, default_doc "50 Mb/s per 10 Gb/s of link";
        /// Increases in a row before the hyper-active step (TIMELY's N).
        timely_hai_after: u32 = 5, source "TIMELY §4.3 (N = 5)", resolved InUse;
        /// The lowest rate a cut leaves.
        timely_min_rate: Rate = Rate(1_000_000_000), range "positive", source "HPCC simulator run.py (MIN_RATE)", resolved InUse;
    }
}

impl TimelyKeys {
    pub fn of(t: &TransportCfg) -> TimelyKeys {
        TimelyKeys::read(&Table::new("transport", t.extra.clone()), true).expect("checked keys read")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        for (k, v) in [("timely_alpha", self.timely_alpha), ("timely_beta", self.timely_beta)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(bad(&format!("transport.{k}"), v, "must be in (0, 1]"));
            }
        }
        for (k, d) in [
            ("timely_t_low", self.timely_t_low),
            ("timely_t_high", self.timely_t_high),
            ("timely_min_rtt", self.timely_min_rtt),
        ] {
            if d.0 == 0 {
                return Err(bad(&format!("transport.{k}"), "0s", "must be positive"));
            }
        }
        if self.timely_t_low.0 >= self.timely_t_high.0 {
            return Err(bad(
                "transport.timely_t_low",
                crate::units::fmt_duration(self.timely_t_low.0),
                &format!("must be below timely_t_high ({})", crate::units::fmt_duration(self.timely_t_high.0)),
            ));
        }
        if self.timely_min_rate.0 == 0 {
            return Err(bad("transport.timely_min_rate", "0bps", "must be positive"));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub line: f64,
    pub t_low: Time,
    pub t_high: Time,
    pub alpha: f64,
    pub beta: f64,
    pub min_rtt: Time,
    pub rai: f64,
    pub rhai: f64,
    pub hai_after: u32,
    pub min: f64,
}

impl Params {
    pub fn new(k: &TimelyKeys, line_bps: u64) -> Params {
        let line = line_bps as f64;
        Params {
            line,
            t_low: k.timely_t_low.0,
            t_high: k.timely_t_high.0,
            alpha: k.timely_alpha,
            beta: k.timely_beta,
            min_rtt: k.timely_min_rtt.0,
            rai: k.timely_rai.map_or(10e6 * line / 10e9, |r| r.0 as f64),
            rhai: k.timely_rhai.map_or(50e6 * line / 10e9, |r| r.0 as f64),
            hai_after: k.timely_hai_after,
            min: k.timely_min_rate.0 as f64,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Timely {
    pub p: Params,
    pub rate: f64,
    /// The smoothed RTT difference (ps) and the previous update's sample.
    pub rtt_diff: f64,
    prev_rtt: Time,
    inc_stage: u32,
    last_update: Option<u64>,
    pub cuts: u32,
}

impl Timely {
    pub fn new(p: Params) -> Timely {
        Timely { rate: p.line, p, rtt_diff: 0.0, prev_rtt: 0, inc_stage: 0, last_update: None, cuts: 0 }
    }

    /// An ACK of every byte below `ack` whose packet took `rtt`, with
    /// `snd_nxt` the sender's next byte. True when the rate changed.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, rtt: Time) -> bool {
        let first = self.last_update.is_none();
        if !first && ack <= self.last_update.unwrap_or(0) {
            return false; // Within the RTT since the last update.
        }
        self.last_update = Some(snd_nxt);
        let prev = std::mem::replace(&mut self.prev_rtt, rtt);
        if first {
            return false; // A baseline sample, no gradient yet.
        }
        let p = self.p;
        let diff = (1.0 - p.alpha) * self.rtt_diff + p.alpha * (rtt as f64 - prev as f64);
        self.rtt_diff = diff;
        let gradient = diff / p.min_rtt as f64;
        let before = self.rate;
        let cut = if rtt < p.t_low {
            None
        } else if rtt > p.t_high {
            Some(1.0 - p.beta * (1.0 - p.t_high as f64 / rtt as f64))
        } else if gradient <= 0.0 {
            None
        } else {
            Some((1.0 - p.beta * gradient).max(0.0))
        };
        match cut {
            None => {
                let step = if self.inc_stage < p.hai_after { p.rai } else { p.rhai };
                self.rate = (self.rate + step).min(p.line);
                self.inc_stage += 1;
            }
            Some(c) => {
                self.rate = (self.rate * c).max(p.min);
                self.inc_stage = 0;
                self.cuts += 1;
            }
        }
        self.rate != before
    }
}

/// `transport.cc = "timely"`.
pub const DECL: super::cc::RdmaDecl = super::cc::RdmaDecl {
    cc: super::cc::queue_pair_cc(
        crate::switch::scheme::About {
            params: &[TimelyKeys::PARAMS, super::RdmaKeys::PARAMS],
            ..crate::switch::scheme::About::new(
                "timely",
                "RoCEv2 queue pairs with TIMELY: the rate rises below T_low and with a falling RTT, is cut by beta \
                 times the normalised RTT gradient, and above T_high",
                "Mittal et al., TIMELY (SIGCOMM 2015) §4; the HPCC simulator's rdma-hw.cc for its defaults",
            )
        },
        &[],
        |t| {
            TimelyKeys::of(t).validate()?;
            super::RdmaKeys::of(t).validate()
        },
    ),
    factory: |t| {
        let k = TimelyKeys::of(t);
        Box::new(move |env| Box::new(Timely::new(Params::new(&k, env.line))))
    },
    telemetry: None,
    notifies: None,
};

impl super::cc::RateControl for Timely {
    fn rate(&self) -> f64 {
        self.rate
    }
    fn cuts(&self) -> u32 {
        self.cuts
    }
    fn on_ack(&mut self, a: &super::cc::Ack) -> bool {
        Timely::on_ack(self, a.ack, a.snd_nxt, a.rtt);
        false // As the HPCC simulator: the next packet keeps its slot.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params {
            line: 100e9,
            t_low: 50_000_000,
            t_high: 500_000_000,
            alpha: 0.875,
            beta: 0.8,
            min_rtt: 20_000_000,
            rai: 100e6,
            rhai: 500e6,
            hai_after: 5,
            min: 1e9,
        }
    }

    /// A rising RTT in the band cuts by β·g: samples 100 then 110 µs give
    /// d = 0.875·10 µs, g = 8.75/20 = 0.4375, R ← R·(1 − 0.8·0.4375) = 0.65·R
    /// (TIMELY Alg. 1); only once per RTT.
    #[test]
    fn positive_gradient_cuts_by_beta_g() {
        let mut t = Timely::new(params());
        assert!(!t.on_ack(1_000, 10_000, 100_000_000));
        assert!(t.on_ack(20_000, 30_000, 110_000_000));
        assert!((t.rate - 100e9 * 0.65).abs() < 1.0, "{}", t.rate);
        assert!(!t.on_ack(25_000, 40_000, 200_000_000), "ack below 30000: no update");
    }

    /// Above T_high: R·(1 − β·(1 − T_high/rtt)); below T_low: +δ, and after
    /// five increases in a row the hyper-active step.
    #[test]
    fn thresholds_and_hyper_active_increase() {
        let mut t = Timely::new(params());
        t.on_ack(1, 10, 600_000_000);
        t.on_ack(20, 30, 1_000_000_000);
        assert!((t.rate - 100e9 * (1.0 - 0.8 * 0.5)).abs() < 1.0, "{}", t.rate);
        let r = t.rate;
        for (i, ack) in (40..46u64).enumerate() {
            t.on_ack(ack * 100, ack * 100 + 50, 30_000_000);
            let want = r + 100e6 * (i.min(5) as f64 + 1.0) + if i >= 5 { 400e6 } else { 0.0 };
            assert!((t.rate - want).abs() < 1.0, "step {i}: {} vs {want}", t.rate);
        }
    }
}
