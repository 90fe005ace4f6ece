//! Linux's RTT estimator and RTO (net/ipv4/tcp_input.c tcp_rtt_estimator,
//! include/net/tcp.h __tcp_set_rto), opt-in by `transport.linux_rto`.
//!
//! RFC 6298 adds 4·rttvar to srtt, and with steady RTTs rttvar decays to
//! nothing: the RTO then sits just above srtt (plus the floor `min_rto`
//! only where srtt is below it), and a queue that grows by a fraction of
//! an RTT fires it spuriously. Linux keeps the mean deviation (mdev, the
//! RFC's rttvar) but adds to srtt a larger term, here `var`:
//!
//! - `var` follows the largest mdev seen within each window of data
//!   (`mdev_max`), and `mdev_max` restarts every window at `rto_min`, so
//!   `var` never falls below `rto_min`: RTO ≥ srtt + rto_min, always.
//! - When `var` exceeds the last window's largest mdev, it decays a quarter
//!   of the gap per window (per round trip), not per sample.
//! - A sample below srtt by more than mdev moves mdev with 1/32 rather than
//!   1/4 gain (Linux's variant of Eifel), so a sudden RTT drop does not
//!   raise the RTO.
//!
//! Times are unscaled f64 picoseconds; `mdev` and `var` are kept as Linux's
//! `mdev_us` and `rttvar_us` are, four times the deviation, so RTO =
//! srtt + var. The first sample R gives srtt = R, 4·mdev = 2R and var =
//! max(2R, rto_min): RTO = max(3R, R + rto_min).

use super::mechanism::{Mechanism, MechanismDecl};
use crate::config::param::section;
use crate::config::TransportCfg;
use crate::host::snd::Snd;
use crate::units::Time;

section! {
    /// The key of Linux's RTO estimator in `[transport]`.
    pub struct LinuxRtoParams {
        /// Linux's RTO estimator: RTO = srtt + max(per-window peak of 4·mdev, min_rto), so it never
        /// sits just above srtt when RTTs are steady (off: RFC 6298's srtt + 4·rttvar, floored at
        /// min_rto). The `linux` profile turns it on.
        linux_rto: bool = false, resolved Given, source "Linux tcp_input.c tcp_rtt_estimator; RFC 6298";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[LinuxRtoParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "linux_rto",
            "Linux's RTT estimator and RTO: srtt + max(4·mdev peak, rto_min), the peak decaying once a window is acknowledged",
            "Linux tcp_input.c tcp_rtt_estimator; RFC 6298",
        )
    },
};

impl LinuxRtoParams {
    pub fn of(t: &crate::config::TransportCfg) -> LinuxRtoParams {
        t.scheme_keys(LinuxRtoParams::read).expect("a checked config")
    }
}

/// The state Linux keeps beside srtt.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxRtt {
    /// 4·mdev (Linux mdev_us).
    mdev: f64,
    /// The largest `mdev` this window, at least rto_min (mdev_max_us).
    mdev_max: f64,
    /// The term added to srtt (rttvar_us).
    pub var: f64,
    /// The window ends when snd_una passes this (rtt_seq).
    rtt_seq: u64,
}

impl LinuxRtt {
    /// Take RTT sample `r` with snd_una `una` and snd_nxt `nxt`; `srtt` is
    /// updated in place (0: no sample yet). Returns the RTO, srtt + var,
    /// before any clamping.
    pub fn sample(&mut self, srtt: &mut f64, r: f64, una: u64, nxt: u64, rto_min: f64) -> f64 {
        if *srtt == 0.0 {
            *srtt = r;
            self.mdev = 2.0 * r;
            self.var = self.mdev.max(rto_min);
            self.mdev_max = self.var;
            self.rtt_seq = nxt;
        } else {
            let err = r - *srtt;
            *srtt += err / 8.0;
            let mut step = err.abs() - self.mdev / 4.0;
            if err < 0.0 && step > 0.0 {
                // RTT fell by more than mdev: smaller gain (α·β = 1/32).
                step /= 8.0;
            }
            self.mdev += step;
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                self.var = self.var.max(self.mdev_max);
            }
            if una > self.rtt_seq {
                // A window of data has been acknowledged: decay towards
                // its peak, and start the next window's peak at rto_min.
                if self.mdev_max < self.var {
                    self.var -= (self.var - self.mdev_max) / 4.0;
                }
                self.rtt_seq = nxt;
                self.mdev_max = rto_min;
            }
        }
        *srtt + self.var
    }

    /// A persistent connection's next flow starts from the last one's
    /// srtt and var (`var` as carried in the sender's rttvar).
    pub fn resume(&mut self, var: f64, rto_min: f64) {
        self.var = var.max(rto_min);
        self.mdev = var;
        self.mdev_max = self.var;
        self.rtt_seq = 0;
    }
}

impl Mechanism for LinuxRtt {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        LinuxRtoParams::of(t).linux_rto.then_some(())
    }

    /// RTO = srtt + max(4·mdev peak, rto_min), `rttvar` holding that
    /// second term.
    #[inline]
    fn rtt_sample(&mut self, _: &(), s: &mut Snd, r: Time) -> bool {
        let (una, nxt, min_rto) = (s.una, s.nxt, s.p.min_rto as f64);
        let rto = self.sample(&mut s.srtt, r as f64, una, nxt, min_rto) as Time;
        s.rttvar = self.var;
        s.set_rto(rto);
        true
    }

    fn resume(&mut self, _: &(), rttvar: f64, min_rto: Time) {
        LinuxRtt::resume(self, rttvar, min_rto as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: f64 = 1e6;

    /// Steady 100 us RTTs with min_rto 5 ms: RFC 6298's RTO decays to
    /// srtt + 4·rttvar → 100 us, floored at 5 ms, so a queue of 4.9 ms
    /// fires it; Linux's stays at srtt + rto_min = 5.1 ms (rttvar_us is
    /// never below tcp_rto_min_us), whatever the number of samples.
    #[test]
    fn rto_never_sits_just_above_srtt() {
        let mut l = LinuxRtt::default();
        let mut srtt = 0.0;
        let (mut una, mut nxt) = (0u64, 10u64);
        let first = l.sample(&mut srtt, 100.0 * US, una, nxt, 5000.0 * US);
        // First sample: var = max(2R, rto_min) = 5 ms.
        assert_eq!(first, 5100.0 * US);
        for i in 0..10_000 {
            una += 1;
            if i % 10 == 0 {
                nxt += 10;
            }
            let rto = l.sample(&mut srtt, 100.0 * US, una, nxt, 5000.0 * US);
            assert!(rto >= srtt + 5000.0 * US, "sample {i}: rto {rto} srtt {srtt}");
        }
        assert!((srtt - 100.0 * US).abs() < 1e-6);
    }

    /// With a variable RTT the deviation term can exceed rto_min: samples
    /// alternating 100 us and 10 ms with rto_min 1 ms hold 4·mdev near
    /// 4·(9.9/2) ms ≈ 19.8 ms, and the RTO is srtt + that peak, well above
    /// srtt + rto_min.
    #[test]
    fn a_large_deviation_still_counts() {
        let mut l = LinuxRtt::default();
        let mut srtt = 0.0;
        let mut rto = 0.0;
        for i in 0..400u64 {
            let r = if i % 2 == 0 { 100.0 * US } else { 10_000.0 * US };
            rto = l.sample(&mut srtt, r, i, i + 1, 1000.0 * US);
        }
        assert!(rto - srtt > 10_000.0 * US, "rto {rto} srtt {srtt}");
    }

    /// A sudden RTT drop moves mdev with gain 1/32, not 1/4 (Linux's
    /// Eifel-like rule): after steady 1 ms samples (4·mdev → small), one
    /// sample of 0 changes 4·mdev by (1 ms − mdev)/8 rather than by
    /// (1 ms − mdev).
    #[test]
    fn an_rtt_drop_barely_moves_mdev() {
        let mut l = LinuxRtt::default();
        let mut srtt = 0.0;
        for _ in 0..200 {
            l.sample(&mut srtt, 1000.0 * US, 0, 0, 1.0);
        }
        let before = l.mdev;
        let s0 = srtt;
        l.sample(&mut srtt, 0.0, 0, 0, 1.0);
        let want = before + (s0 - before / 4.0) / 8.0;
        assert!((l.mdev - want).abs() < 1.0, "{} vs {want}", l.mdev);
    }
}
