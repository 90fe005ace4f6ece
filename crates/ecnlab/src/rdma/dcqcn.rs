//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015): a queue pair's sending rate, cut on
//! congestion notification packets (CNPs) and recovered by timer and byte
//! counter, QCN's way.
//!
//! - Notification point (the receiver): a CE-marked packet makes it send a
//!   CNP to the sender, at most one per `dcqcn_cnp_interval` per queue pair
//!   (`qp.rs`'s receiver side, in `world/rdma.rs`).
//! - Reaction point (here), per queue pair: current rate R_C, target R_T,
//!   α. A cut: R_T ← R_C, R_C ← R_C·(1 − α/2) (never below the minimum),
//!   then α ← (1 − g)·α + g (the paper's Eq. 1 in its order; the authors'
//!   ns-3 raises α first, a g-sized difference). Without a CNP for a period
//!   K, α ← (1 − g)·α, and again every K after. Every
//!   timer period T (T_c += 1) and every B bytes sent (BC += 1) the rate
//!   rises: while max(T_c, BC) < F, fast recovery, R_C ← (R_T + R_C)/2;
//!   once min(T_c, BC) > F, hyper increase, R_T += i·R_HAI with i =
//!   min(T_c, BC) − F; otherwise additive increase, R_T += R_AI; both then
//!   R_C ← (R_T + R_C)/2. R_T stays at most the line rate. A cut resets
//!   T_c, BC and the byte count and restarts the timer. The stage
//!   boundaries are the paper's state machine (its Fig. 6, QCN's rule);
//!   the authors' ns-3 enters hyper increase one step earlier (min ≥ F,
//!   i = min − F + 1) and htsim keeps fast recovery one step longer
//!   (max ≤ F): with B = 10 MB both matter only after 50 MB sent since a
//!   cut, which the timer-driven recovery rarely reaches. QCN's details
//!   that the paper does not name (halved T and B in hyper increase, R_T
//!   divided by 8 when far above R_C) are left out.
//!
//! Two forms (`transport.profile`): "dcqcn-paper" as above, and
//! "dcqcn-nic", the NIC firmware form the HPCC simulator models
//! (`rdma-hw.cc`): CNPs arrive as a flag on ACKs; the first one sets α = 1
//! and starts two free-running timers without cutting; every
//! `dcqcn_decrease_interval` the rate is cut once if a CNP came since the
//! last check (R_T ← R_C only with `dcqcn_clamp_target` or after an
//! increase since the last cut); every K, α ← (1 − g)·α + g if a CNP came
//! in that period, else (1 − g)·α; the increase is by timer alone, with a
//! constant hyper step (`dcqcn_hyper_grows = false`).
//!
//! Per-packet functions: `Dcqcn::on_cnp`, `Dcqcn::on_sent`; timers:
//! `Dcqcn::next_timer`, `Dcqcn::on_timer`. Tests: below.

use crate::config::param::section;
use crate::config::{bad, ConfigError, Dur, Rate, Table, TransportCfg};
use crate::units::Time;

section! {
    /// DCQCN's keys (`transport.cc = "dcqcn"`); `transport.profile` "dcqcn-paper" or
    /// "dcqcn-nic" fills them.
    pub struct DcqcnKeys {
        /// g: α's EWMA gain.
        dcqcn_g: f64 = 1.0 / 256.0, range "(0, 1]", source "DCQCN §3.1", resolved InUse;
        /// K: α's update period (paper: α decays after K without a CNP; NIC: every K).
        dcqcn_alpha_timer: Dur = Dur(55_000_000), range "positive", source "DCQCN §3.1", resolved InUse;
        /// T: the rate-increase timer.
        dcqcn_increase_timer: Dur = Dur(55_000_000), range "positive", source "DCQCN §3.1", resolved InUse;
        /// B: bytes sent per byte-counter increase step; 0: no byte counter (the NIC form).
        dcqcn_byte_counter: u64 = 10_000_000, source "DCQCN §3.1", resolved InUse;
        /// F: fast-recovery steps before additive increase.
        dcqcn_f: u32 = 5, range "1 or more", source "DCQCN §3.1", resolved InUse;
        /// R_AI: the additive-increase step; unset, 5 Mb/s per 25 Gb/s of the host's link (the
        /// HPCC simulator's run.py).
        dcqcn_rai: Option<Rate> = None, resolved InUse, default_doc "5 Mb/s per 25 Gb/s of link";
        /// R_HAI: the hyper-increase step; unset, 10 × R_AI (the HPCC simulator's run.py).
        dcqcn_rhai: Option<Rate> = None, resolved InUse, default_doc "10 × dcqcn_rai";
        /// The lowest rate a cut leaves.
        dcqcn_min_rate: Rate = Rate(100_000_000), range "positive", resolved InUse;
        /// The receiver's gap between two CNPs of one queue pair (the paper's notification
        /// point); 0: every marked packet's ACK carries the CNP (the NIC form).
        dcqcn_cnp_interval: Dur = Dur(50_000_000), source "DCQCN §3.1", resolved InUse;
        /// 0: a CNP cuts at once (the paper); else the NIC form: a cut at most once per interval.
        dcqcn_decrease_interval: Dur = Dur(0), resolved InUse;
        /// The NIC form: R_T ← R_C at every cut (else only after an increase since the last).
        dcqcn_clamp_target: bool = true, resolved InUse;
        /// Hyper increase grows by i·R_HAI (the paper); false: a constant R_HAI (the NIC form).
        dcqcn_hyper_grows: bool = true, resolved InUse;
        /// α when the first CNP comes (the paper gives none; 1 as NVIDIA's NICs,
        /// INITIAL_ALPHA_VALUE 1023/1024; the authors' ns-3 starts at 0.5).
        dcqcn_alpha_init: f64 = 1.0, range "(0, 1]", resolved InUse;
    }
}

impl DcqcnKeys {
    pub fn of(t: &TransportCfg) -> DcqcnKeys {
        DcqcnKeys::read(&Table::new("transport", t.extra.clone()), true).expect("checked keys read")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        for (k, v) in [("dcqcn_g", self.dcqcn_g), ("dcqcn_alpha_init", self.dcqcn_alpha_init)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(bad(&format!("transport.{k}"), v, "must be in (0, 1]"));
            }
        }
        for (k, d) in
            [("dcqcn_alpha_timer", self.dcqcn_alpha_timer), ("dcqcn_increase_timer", self.dcqcn_increase_timer)]
        {
            if d.0 == 0 {
                return Err(bad(&format!("transport.{k}"), "0s", "must be positive"));
            }
        }
        if self.dcqcn_f == 0 {
            return Err(bad("transport.dcqcn_f", 0, "must be 1 or more"));
        }
        Ok(())
    }
}

/// DCQCN's constants for one queue pair, resolved for its line rate.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub line: f64,
    pub g: f64,
    pub k: Time,
    pub t: Time,
    pub b: u64,
    pub f: u32,
    pub rai: f64,
    pub rhai: f64,
    pub min: f64,
    pub decrease_every: Time,
    pub clamp: bool,
    pub hyper_grows: bool,
    /// α at the first CNP.
    pub alpha0: f64,
}

impl Params {
    pub fn new(k: &DcqcnKeys, line_bps: u64) -> Params {
        let rai = k.dcqcn_rai.map_or(5e6 * line_bps as f64 / 25e9, |r| r.0 as f64);
        Params {
            line: line_bps as f64,
            g: k.dcqcn_g,
            k: k.dcqcn_alpha_timer.0,
            t: k.dcqcn_increase_timer.0,
            b: k.dcqcn_byte_counter,
            f: k.dcqcn_f,
            rai,
            rhai: k.dcqcn_rhai.map_or(10.0 * rai, |r| r.0 as f64),
            min: k.dcqcn_min_rate.0 as f64,
            decrease_every: k.dcqcn_decrease_interval.0,
            clamp: k.dcqcn_clamp_target,
            hyper_grows: k.dcqcn_hyper_grows,
            alpha0: k.dcqcn_alpha_init,
        }
    }

    /// The NIC form (cuts on a check timer).
    fn nic(&self) -> bool {
        self.decrease_every > 0
    }
}

/// One queue pair's reaction point.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    pub p: Params,
    /// R_C and R_T, bits per second.
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
    /// Increase steps by timer and by byte counter since the last cut.
    t_count: u32,
    bc_count: u32,
    bytes: u64,
    /// When the increase timer, α's timer and (NIC) the cut check fire
    /// next; 0: not running.
    next_increase: Time,
    next_alpha: Time,
    next_check: Time,
    /// A CNP came since α's last update, and since the last cut check.
    cnp_for_alpha: bool,
    cnp_for_cut: bool,
    /// An increase step happened since the last cut (the NIC's clamp rule).
    increased: bool,
    pub cuts: u32,
}

impl Dcqcn {
    /// A queue pair starting at line rate.
    pub fn new(p: Params) -> Dcqcn {
        Dcqcn {
            rc: p.line,
            rt: p.line,
            alpha: p.alpha0,
            p,
            t_count: 0,
            bc_count: 0,
            bytes: 0,
            next_increase: 0,
            next_alpha: 0,
            next_check: 0,
            cnp_for_alpha: false,
            cnp_for_cut: false,
            increased: false,
            cuts: 0,
        }
    }

    /// The rate to pace the next packet at, bits per second.
    #[inline]
    pub fn rate(&self) -> f64 {
        self.rc
    }

    /// A CNP (or an ACK flagged with one) at `now`.
    pub fn on_cnp(&mut self, now: Time) {
        if self.p.nic() {
            if self.next_alpha == 0 {
                // The first CNP: α starts (1 by default) and both timers
                // start; no cut yet.
                self.alpha = self.p.alpha0;
                self.next_alpha = now + self.p.k;
                self.next_check = now + self.p.decrease_every;
            }
            self.cnp_for_alpha = true;
            self.cnp_for_cut = true;
            return;
        }
        self.cut(now);
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        // α decays after K without a CNP: its timer starts again.
        self.next_alpha = now + self.p.k;
    }

    /// R_T ← R_C (unless the NIC's rule keeps it), R_C ← R_C·(1 − α/2),
    /// and the increase starts over.
    fn cut(&mut self, now: Time) {
        if !self.p.nic() || self.p.clamp || self.increased {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.min);
        self.t_count = 0;
        self.bc_count = 0;
        self.bytes = 0;
        self.increased = false;
        self.next_increase = now + self.p.t;
        self.cuts += 1;
    }

    /// `bytes` more were sent: the byte counter's steps.
    #[inline]
    pub fn on_sent(&mut self, bytes: u64) {
        if self.p.b == 0 || self.next_increase == 0 {
            return; // No byte counter, or nothing to recover from yet.
        }
        self.bytes += bytes;
        while self.bytes >= self.p.b {
            self.bytes -= self.p.b;
            self.bc_count += 1;
            self.increase();
        }
    }

    /// One increase step (a timer or byte-counter event just counted).
    fn increase(&mut self) {
        let f = self.p.f;
        let (hi, lo) = if self.p.b == 0 {
            (self.t_count, self.t_count)
        } else {
            (self.t_count.max(self.bc_count), self.t_count.min(self.bc_count))
        };
        if hi < f {
            // Fast recovery: towards the rate before the cut.
        } else if lo > f {
            let i = if self.p.hyper_grows { (lo - f) as f64 } else { 1.0 };
            self.rt = (self.rt + i * self.p.rhai).min(self.p.line);
        } else {
            self.rt = (self.rt + self.p.rai).min(self.p.line);
        }
        self.rc = ((self.rt + self.rc) / 2.0).min(self.p.line);
        self.increased = true;
    }

    /// When a timer fires next (0: none).
    pub fn next_timer(&self) -> Time {
        [self.next_increase, self.next_alpha, self.next_check].into_iter().filter(|&t| t > 0).min().unwrap_or(0)
    }

    /// Run the timers due at `now`.
    pub fn on_timer(&mut self, now: Time) {
        if self.next_alpha > 0 && self.next_alpha <= now {
            let g = self.p.g;
            if self.p.nic() {
                let hit = std::mem::take(&mut self.cnp_for_alpha);
                self.alpha = (1.0 - g) * self.alpha + if hit { g } else { 0.0 };
                self.next_alpha = now + self.p.k;
            } else {
                self.alpha *= 1.0 - g;
                self.next_alpha = now + self.p.k;
            }
        }
        // The cut check after α's update when both are due (the HPCC
        // simulator schedules it 1 ns later).
        if self.next_check > 0 && self.next_check <= now {
            self.next_check = now + self.p.decrease_every;
            if std::mem::take(&mut self.cnp_for_cut) {
                self.cut(now);
            }
        }
        if self.next_increase > 0 && self.next_increase <= now {
            self.next_increase = now + self.p.t;
            self.t_count += 1;
            self.increase();
            if !self.p.nic() && self.rc >= self.p.line && self.rt >= self.p.line {
                // Back at line rate: nothing left to recover.
                self.next_increase = 0;
            }
        }
    }
}

/// `transport.cc = "dcqcn"`.
pub const DECL: super::cc::RdmaDecl = super::cc::RdmaDecl {
    cc: super::cc::queue_pair_cc(
        crate::switch::scheme::About {
            params: &[DcqcnKeys::PARAMS, super::RdmaKeys::PARAMS],
            ..crate::switch::scheme::About::new(
                "dcqcn",
                "RoCEv2 queue pairs with DCQCN: a paced rate cut by CNPs (R_C·(1 − α/2)) and recovered by timer and \
                 byte counter; switches mark (RED), receivers notify",
                "Zhu et al., DCQCN (SIGCOMM 2015) §3; the HPCC simulator's rdma-hw.cc for the NIC form",
            )
        },
        &[],
        |t| {
            DcqcnKeys::of(t).validate()?;
            super::RdmaKeys::of(t).validate()
        },
    ),
    factory: |t| {
        let k = DcqcnKeys::of(t);
        Box::new(move |env| Box::new(Dcqcn::new(Params::new(&k, env.line))))
    },
    telemetry: None,
    notifies: Some(|t| DcqcnKeys::of(t).dcqcn_cnp_interval.0),
};

impl super::cc::RateControl for Dcqcn {
    fn rate(&self) -> f64 {
        self.rc
    }
    fn cuts(&self) -> u32 {
        self.cuts
    }
    fn on_sent(&mut self, bytes: u64) {
        Dcqcn::on_sent(self, bytes)
    }
    fn on_cnp(&mut self, now: Time) {
        Dcqcn::on_cnp(self, now)
    }
    fn next_timer(&self) -> Time {
        Dcqcn::next_timer(self)
    }
    fn on_timer(&mut self, now: Time) {
        Dcqcn::on_timer(self, now)
    }
}

/// `transport.profile = "dcqcn-paper"`: the paper's constants (§3.1: CNP
/// interval N = 50 µs, K = 55 µs; its fluid-model parameter choice: T = 55 µs,
/// B = 10 MB, F = 5, g = 1/256, R_AI = 40 Mb/s, the values fluid-model
/// re-implementations of the paper and htsim's DCQCN also use) and, where
/// it gives none, the DCQCN authors' ns-3 (github.com/bobzhuyb/ns3-rdma:
/// config.txt's R_HAI 200 Mb/s, qbb-net-device.cc's 100 Mb/s floor). α
/// starts at 1 (`dcqcn_alpha_init`'s default). docs/rdma.md lists each
/// constant's source and what could not be read.
pub const PAPER: crate::host::profile::ProfileDecl = crate::host::profile::ProfileDecl {
    about: crate::switch::scheme::About::new(
        "dcqcn-paper",
        "DCQCN as the paper specifies it: CNPs at most every 50us per QP, cut at once, K = T = 55us, B = 10MB, \
         F = 5, R_AI 40Mbps, R_HAI 200Mbps",
        "Zhu et al., DCQCN (SIGCOMM 2015) §3.1; the authors' ns-3 (ns3-rdma) config.txt",
    ),
    fills: &[
        ("dcqcn_g", crate::host::cc::Fill::Json("0.00390625")),
        ("dcqcn_alpha_timer", crate::host::cc::Fill::Json("\"55us\"")),
        ("dcqcn_increase_timer", crate::host::cc::Fill::Json("\"55us\"")),
        ("dcqcn_byte_counter", crate::host::cc::Fill::Json("10000000")),
        ("dcqcn_f", crate::host::cc::Fill::Json("5")),
        ("dcqcn_rai", crate::host::cc::Fill::Json("\"40Mbps\"")),
        ("dcqcn_rhai", crate::host::cc::Fill::Json("\"200Mbps\"")),
        ("dcqcn_min_rate", crate::host::cc::Fill::Json("\"100Mbps\"")),
        ("dcqcn_cnp_interval", crate::host::cc::Fill::Json("\"50us\"")),
        ("dcqcn_decrease_interval", crate::host::cc::Fill::Json("\"0s\"")),
        ("dcqcn_clamp_target", crate::host::cc::Fill::Json("true")),
        ("dcqcn_hyper_grows", crate::host::cc::Fill::Json("true")),
    ],
};

/// `transport.profile = "dcqcn-nic"`: the NIC firmware form as the HPCC
/// simulator runs it (its run.py's DCQCN settings: ALPHA_RESUME_INTERVAL
/// 1us, RATE_DECREASE_INTERVAL 4us, RP_TIMER 300us, FAST_RECOVERY_TIMES 1,
/// no byte counter, MIN_RATE 1Gbps, CLAMP_TARGET_RATE 0, R_AI 5 Mb/s and
/// R_HAI 50 Mb/s per 25 Gb/s of link; CNPs as a flag on every marked
/// packet's ACK).
pub const NIC: crate::host::profile::ProfileDecl = crate::host::profile::ProfileDecl {
    about: crate::switch::scheme::About::new(
        "dcqcn-nic",
        "DCQCN as NIC firmware runs it (the HPCC simulator): CNP flags on ACKs, a cut at most every 4us, alpha \
         every 1us, timer-only increase every 300us, F = 1, per-rate R_AI/R_HAI",
        "HPCC simulator (kwzhao/High-Precision-Congestion-Control 0e2b031), rdma-hw.cc and run.py",
    ),
    fills: &[
        ("dcqcn_g", crate::host::cc::Fill::Json("0.00390625")),
        ("dcqcn_alpha_timer", crate::host::cc::Fill::Json("\"1us\"")),
        ("dcqcn_increase_timer", crate::host::cc::Fill::Json("\"300us\"")),
        ("dcqcn_byte_counter", crate::host::cc::Fill::Json("0")),
        ("dcqcn_f", crate::host::cc::Fill::Json("1")),
        ("dcqcn_min_rate", crate::host::cc::Fill::Json("\"1Gbps\"")),
        ("dcqcn_cnp_interval", crate::host::cc::Fill::Json("\"0s\"")),
        ("dcqcn_decrease_interval", crate::host::cc::Fill::Json("\"4us\"")),
        ("dcqcn_clamp_target", crate::host::cc::Fill::Json("false")),
        ("dcqcn_hyper_grows", crate::host::cc::Fill::Json("false")),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn paper(line: f64) -> Params {
        Params {
            line,
            g: 1.0 / 256.0,
            k: 55_000_000,
            t: 55_000_000,
            b: 10_000_000,
            f: 5,
            rai: 40e6,
            rhai: 400e6,
            min: 100e6,
            decrease_every: 0,
            clamp: true,
            hyper_grows: true,
            alpha0: 1.0,
        }
    }

    /// DCQCN §3.1: a CNP at α = 1 halves the rate and keeps the old one as
    /// the target; α then rises by g·(1 − α) = 0 (it stays 1); five timer
    /// periods of fast recovery take R_C half-way to R_T each time.
    #[test]
    fn a_cnp_halves_and_fast_recovery_halves_the_gap() {
        let mut d = Dcqcn::new(paper(40e9));
        d.on_cnp(0);
        assert_eq!((d.rc, d.rt, d.alpha), (20e9, 40e9, 1.0));
        let mut gap = 20e9;
        for k in 1..=4 {
            d.on_timer(k * 55_000_000);
            gap /= 2.0;
            assert!((d.rt - d.rc - gap).abs() < 1.0, "step {k}: {}", d.rt - d.rc);
            assert_eq!(d.rt, 40e9);
        }
    }

    /// α decays by (1 − g) per K without a CNP: after 256 periods from 1,
    /// (255/256)^256 = 0.3671; the next cut is then by α/2 = 18.4%.
    #[test]
    fn alpha_decays_without_cnps() {
        let mut d = Dcqcn::new(paper(40e9));
        d.on_cnp(0);
        for k in 1..=256u64 {
            d.on_timer(k * 55_000_000);
        }
        let want = (255.0f64 / 256.0).powi(256);
        assert!((d.alpha - want).abs() < 1e-9, "{}", d.alpha);
        let before = d.rc;
        d.on_cnp(257 * 55_000_000);
        assert!((d.rc - before * (1.0 - want / 2.0)).abs() < 1.0);
        assert!((d.alpha - ((1.0 - 1.0 / 256.0) * want + 1.0 / 256.0)).abs() < 1e-12);
    }

    /// After F fast-recovery steps the target grows by R_AI per step
    /// (timer alone, byte counter not reached), and once both counters pass
    /// F by i·R_HAI.
    #[test]
    fn additive_then_hyper_increase() {
        let mut p = paper(40e9);
        p.b = 1_000_000;
        let mut d = Dcqcn::new(p);
        d.on_cnp(0);
        d.rt = 20e9; // a target well below the line, so steps show
        for k in 1..=5 {
            d.on_timer(k * 55_000_000);
        }
        // T_c = 5, BC = 0: max = 5 = F, not < F: additive, once.
        assert!((d.rt - (20e9 + 40e6)).abs() < 1.0, "{}", d.rt);
        // Six byte-counter steps: BC = 6, T_c = 5. BC 1-5: additive (min
        // ≤ F); BC 6: min(5, 6) = 5, not > F: additive.
        d.on_sent(6_000_000);
        assert!((d.rt - (20e9 + 7.0 * 40e6)).abs() < 1.0, "{}", d.rt);
        // T_c = 6, 7 with BC = 6: min 6, then 6 again (T_c 7, BC 6): i = 1.
        d.on_timer(6 * 55_000_000);
        assert!((d.rt - (20e9 + 7.0 * 40e6 + 400e6)).abs() < 1.0, "{}", d.rt);
        d.on_sent(1_000_000); // BC = 7, T_c = 6: i = 1
        d.on_timer(7 * 55_000_000); // T_c = 7, BC = 7: i = 2
        assert!((d.rt - (20e9 + 7.0 * 40e6 + 400e6 + 400e6 + 800e6)).abs() < 1.0, "{}", d.rt);
    }

    /// The NIC form: the first CNP only starts the timers; the cut comes at
    /// the next check, once however many CNPs came; α moves every K.
    #[test]
    fn nic_form_cuts_on_its_check_timer() {
        let mut p = paper(100e9);
        p.decrease_every = 4_000_000;
        p.k = 1_000_000;
        p.b = 0;
        p.clamp = false;
        let mut d = Dcqcn::new(p);
        d.on_cnp(0);
        d.on_cnp(1_000);
        assert_eq!(d.rc, 100e9, "no cut on the first CNP");
        d.on_timer(1_000_000); // α: a CNP in the slot: 1 stays 1
        assert_eq!(d.alpha, 1.0);
        d.on_timer(2_000_000); // no CNP: α·(1 − g)
        d.on_timer(3_000_000);
        d.on_timer(4_000_000); // the check: one cut by α/2
        let a = (255.0f64 / 256.0).powi(3);
        assert!((d.alpha - a).abs() < 1e-12);
        assert!((d.rc - 100e9 * (1.0 - a / 2.0)).abs() < 1.0, "{}", d.rc);
        assert_eq!(d.cuts, 1);
        assert_eq!(d.rt, 100e9, "no clamp and no increase yet: R_T kept");
        d.on_timer(8_000_000); // no CNP since: no cut
        assert_eq!(d.cuts, 1);
    }

    /// α's start value sets the first cut: at 0.5 (the authors' ns-3) a
    /// CNP takes R_C·(1 − 0.5/2) = 75%, and α then rises by g·(1 − 0.5).
    #[test]
    fn the_first_cut_follows_alphas_start() {
        let mut p = paper(40e9);
        p.alpha0 = 0.5;
        let mut d = Dcqcn::new(p);
        d.on_cnp(0);
        assert_eq!((d.rc, d.rt), (30e9, 40e9));
        assert!((d.alpha - (0.5 + 0.5 / 256.0)).abs() < 1e-12, "{}", d.alpha);
    }

    /// A cut never leaves less than the minimum rate.
    #[test]
    fn the_floor_holds() {
        let mut d = Dcqcn::new(paper(1e9));
        for k in 0..20 {
            d.on_cnp(k);
        }
        assert_eq!(d.rc, 100e6);
    }
}
