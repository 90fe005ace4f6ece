//! DCTCP's reaction on a queue pair (`transport.cc = "rdma-dctcp"`): the
//! rate form the HPCC simulator runs as its DCTCP baseline (CC_MODE 8,
//! rdma-hw.cc HandleAckDctcp), with DCTCP's α (Alizadeh et al., SIGCOMM
//! 2010, §3.1) over a rate instead of a window.
//!
//! Receivers echo each CE mark as a flag on the ACK of the marked packet.
//! Once per window of data (the first ACK beyond what was sent at the last
//! update) α ← (1 − g)·α + g·F, F the flagged ACKs over the packets of that
//! window (at most 1); a flagged ACK outside the CWR state cuts the rate
//! R ← R·(1 − α/2) (at least the floor) and enters CWR until what was sent
//! by then is acknowledged; each window update outside CWR adds R_AI.
//!
//! Defaults: the simulator's run.py `dctcp` settings: g = 1/16, R_AI
//! 615 Mb/s (one 1 KB packet per 13 µs RTT), floor 1 Gb/s, and a BDP window
//! scaled by the rate (as HPCC). Its switches mark at one threshold
//! (K_min = K_max, P_max = 1: run.py gives 30 KB per 10 Gb/s).
//!
//! Per-packet function: `RdmaDctcp::on_ack`. Tests: below.

use crate::config::param::section;
use crate::config::{bad, ConfigError, Rate, Table, TransportCfg};

section! {
    /// The keys of DCTCP on queue pairs, in `[transport]`.
    pub struct RdmaDctcpKeys {
        /// g: α's EWMA gain per window.
        rdma_dctcp_g: f64 = 0.0625, range "(0, 1]", source "HPCC simulator run.py (EWMA_GAIN for dctcp)", resolved InUse;
        /// R_AI: the rate added per window without a cut.
        rdma_dctcp_rai: Rate = Rate(615_000_000), range "positive", source "HPCC simulator run.py (DCTCP_RATE_AI)", resolved InUse;
        /// The lowest rate a cut leaves.
        rdma_dctcp_min_rate: Rate = Rate(1_000_000_000), range "positive", source "HPCC simulator run.py (MIN_RATE)", resolved InUse;
    }
}

impl RdmaDctcpKeys {
    pub fn of(t: &TransportCfg) -> RdmaDctcpKeys {
        RdmaDctcpKeys::read(&Table::new("transport", t.extra.clone()), true).expect("checked keys read")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.rdma_dctcp_g > 0.0 && self.rdma_dctcp_g <= 1.0) {
            return Err(bad("transport.rdma_dctcp_g", self.rdma_dctcp_g, "must be in (0, 1]"));
        }
        for (k, r) in [("rdma_dctcp_rai", self.rdma_dctcp_rai), ("rdma_dctcp_min_rate", self.rdma_dctcp_min_rate)] {
            if r.0 == 0 {
                return Err(bad(&format!("transport.{k}"), "0bps", "must be positive"));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub line: f64,
    pub g: f64,
    pub rai: f64,
    pub min: f64,
    /// Payload bytes per packet, to count a window's packets.
    pub mss: u64,
}

#[derive(Clone, Debug)]
pub struct RdmaDctcp {
    pub p: Params,
    pub rate: f64,
    pub alpha: f64,
    /// Flagged ACKs in this window, and the window's packets.
    marked: u64,
    batch: u64,
    /// The sequence sent at the last window update (None: no ACK yet).
    last_update: Option<u64>,
    /// In CWR until this byte is acknowledged.
    cwr_until: Option<u64>,
    pub cuts: u32,
}

impl RdmaDctcp {
    pub fn new(p: Params) -> RdmaDctcp {
        RdmaDctcp { rate: p.line, alpha: 1.0, p, marked: 0, batch: 0, last_update: None, cwr_until: None, cuts: 0 }
    }

    /// An ACK of every byte below `ack`, flagged (`ce`) if its packet was
    /// marked; `snd_nxt` the sender's next byte. True when the rate changed.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, ce: bool) -> bool {
        let before = self.rate;
        self.marked += ce as u64;
        let mut new_batch = false;
        match self.last_update {
            None => {
                new_batch = true;
                self.last_update = Some(snd_nxt);
                self.batch = snd_nxt / self.p.mss + 1;
            }
            Some(last) if ack > last => {
                new_batch = true;
                let frac = (self.marked as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * frac;
                self.last_update = Some(snd_nxt);
                self.marked = 0;
                self.batch = snd_nxt.saturating_sub(ack) / self.p.mss + 1;
            }
            Some(_) => {}
        }
        if self.cwr_until.is_some_and(|h| ack > h) {
            self.cwr_until = None;
        }
        if ce && self.cwr_until.is_none() {
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.p.min);
            self.cwr_until = Some(snd_nxt);
            self.cuts += 1;
        }
        if self.cwr_until.is_none() && new_batch {
            self.rate = (self.rate + self.p.rai).min(self.p.line);
        }
        self.rate != before
    }
}

/// `transport.cc = "rdma-dctcp"`.
pub const DECL: super::cc::RdmaDecl = super::cc::RdmaDecl {
    cc: super::cc::queue_pair_cc(
        crate::switch::scheme::About {
            params: &[RdmaDctcpKeys::PARAMS, super::RdmaKeys::PARAMS],
            ..crate::switch::scheme::About::new(
                "rdma-dctcp",
                "RoCEv2 queue pairs with DCTCP's reaction on a rate: alpha from the marked share per window, a cut \
                 of alpha/2 at most once per window, R_AI per window otherwise (the HPCC simulator's DCTCP)",
                "Alizadeh et al., DCTCP (SIGCOMM 2010) §3.1; the HPCC simulator's rdma-hw.cc and run.py",
            )
        },
        super::cc::BDP_WINDOW,
        |t| {
            RdmaDctcpKeys::of(t).validate()?;
            super::RdmaKeys::of(t).validate()
        },
    ),
    factory: |t| {
        let k = RdmaDctcpKeys::of(t);
        let mss = t.mss as u64;
        Box::new(move |env| {
            Box::new(RdmaDctcp::new(Params {
                line: env.line as f64,
                g: k.rdma_dctcp_g,
                rai: k.rdma_dctcp_rai.0 as f64,
                min: k.rdma_dctcp_min_rate.0 as f64,
                mss,
            }))
        })
    },
    telemetry: None,
    notifies: None,
};

impl super::cc::RateControl for RdmaDctcp {
    fn rate(&self) -> f64 {
        self.rate
    }
    fn cuts(&self) -> u32 {
        self.cuts
    }
    fn on_ack(&mut self, a: &super::cc::Ack) -> bool {
        RdmaDctcp::on_ack(self, a.ack, a.snd_nxt, a.ce);
        false // As the simulator: the next packet keeps its slot.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params { line: 100e9, g: 1.0 / 16.0, rai: 615e6, min: 1e9, mss: 1000 }
    }

    /// A flagged ACK at α = 1 halves the rate and enters CWR: a second flag
    /// in the same window does not cut again (DCTCP §3.1: once per window).
    #[test]
    fn one_cut_per_window() {
        let mut d = RdmaDctcp::new(params());
        d.on_ack(1_000, 10_000, false); // first ACK: window of 11 packets, +R_AI capped
        assert_eq!(d.rate, 100e9);
        d.on_ack(2_000, 10_000, true);
        assert_eq!((d.rate, d.cuts), (50e9, 1));
        d.on_ack(3_000, 10_000, true);
        assert_eq!(d.cuts, 1, "within CWR");
    }

    /// α after a window with F = 2 of 11 packets flagged: (15/16)·1 +
    /// (1/16)·(2/11); leaving CWR with the new window adds R_AI.
    #[test]
    fn alpha_is_the_marked_share_per_window() {
        let mut d = RdmaDctcp::new(params());
        d.on_ack(1_000, 10_000, false);
        d.on_ack(2_000, 10_000, true);
        d.on_ack(3_000, 10_000, true);
        d.on_ack(11_000, 20_000, false);
        let want = 15.0 / 16.0 + 1.0 / 16.0 * 2.0 / 11.0;
        assert!((d.alpha - want).abs() < 1e-12, "{}", d.alpha);
        assert_eq!(d.rate, 50e9 + 615e6);
    }
}
