//! CUBIC (RFC 9438), Linux's default congestion control, without ECN (as
//! `reno`: data is Not-ECT). In congestion avoidance the window follows a
//! cubic function of the time since the last reduction,
//! W_cubic(t) = C·(t − K)³ + W_max, whose plateau is the window where that
//! reduction happened; each ACK moves cwnd a step towards W_cubic one RTT
//! ahead (§4.4, §4.5), and never below W_est, the window Reno would have
//! reached by now (§4.3). A loss cuts cwnd to β·cwnd, β = 0.7 (§4.6), and
//! remembers W_max, lowered when the window had not regained the last one
//! (fast convergence, §4.7). After a timeout the next epoch starts flat at
//! its own cwnd (§4.8; Linux's bictcp_reset does the same). Slow start is
//! standard, or ends early by Linux's HyStart with `hystart`
//! (`host/recovery/hystart.rs`); the epoch's restart after idle (Linux's
//! CA_EVENT_TX_START) is not modelled. Its keys appear in the resolved
//! config of CUBIC runs only, so that older configs resolve as they did.

use super::cubic_linux::{LinuxCubic, LinuxCubicParams};
use super::{AckInfo, CcDecl, CongestionControl, EchoMode, Window, MIN_CWND};
use crate::config::bad;
use crate::config::param::section;
use crate::units::{secs, Time};

section! {
    /// CUBIC's keys in `[transport]`.
    pub struct CubicParams {
        /// β_cubic: the window after a congestion event, as a fraction of the window before it.
        cubic_beta: f64 = 0.7, range "(0, 1)", source "RFC 9438 §4.6 (Linux tcp_cubic.c: 717/1024)",
            resolved InUse, lenient true;
        /// C: the cubic function's aggressiveness, in segments per second cubed.
        cubic_c: f64 = 0.4, range "> 0", source "RFC 9438 §5 (Linux tcp_cubic.c: bic_scale 41/1024 × 10)",
            resolved InUse, lenient true;
        /// Fast convergence (§4.7): release bandwidth to newer flows by lowering W_max.
        cubic_fast_convergence: bool = true, source "RFC 9438 §4.7", resolved InUse,
            lenient true;
    }
}

impl CubicParams {
    pub fn of(t: &crate::config::TransportCfg) -> Result<CubicParams, crate::config::ConfigError> {
        t.scheme_keys(CubicParams::read)
    }
}

pub const DECL: CcDecl = CcDecl {
    about: crate::switch::scheme::About {
        // `cubic_linux` last, in `cubic_linux.rs`, whose arithmetic it picks.
        params: &[CubicParams::PARAMS, LinuxCubicParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "cubic",
            "CUBIC without ECN: the window follows a cubic function of the time since the last loss, cut to 0.7 on loss",
            "RFC 9438",
        )
    },
    defaults: &[],
    echo: EchoMode::None,
    pfabric: false,
    rdma: false,
    validate: |t| {
        let p = CubicParams::of(t)?;
        let linux = LinuxCubicParams::of(t)?.cubic_linux;
        if !(p.cubic_beta > 0.0 && p.cubic_beta < 1.0) {
            return Err(bad("transport.cubic_beta", p.cubic_beta, "must lie in (0, 1)"));
        }
        if !(p.cubic_c > 0.0 && p.cubic_c.is_finite()) {
            return Err(bad("transport.cubic_c", p.cubic_c, "must be a positive number"));
        }
        if linux && (p.cubic_beta * 1024.0).round() >= 1024.0 {
            return Err(bad(
                "transport.cubic_beta",
                p.cubic_beta,
                "must round below 1024/1024 with cubic_linux (Linux counts beta in 1/1024: at most 0.9995)",
            ));
        }
        Ok(())
    },
    build: |t| {
        let p = CubicParams::of(t).expect("checked");
        super::Cc::Cubic(if LinuxCubicParams::of(t).expect("checked").cubic_linux {
            Cubic::Linux(Box::new(LinuxCubic::new(p.cubic_beta, p.cubic_c, p.cubic_fast_convergence)))
        } else {
            Cubic::Rfc(Rfc::new(&p))
        })
    },
};

/// CUBIC as RFC 9438 has it, or as Linux computes it (`cubic_linux`).
pub enum Cubic {
    Rfc(Rfc),
    /// Boxed: its state beside `Rfc`'s would grow `Cc` (and `Flow`) by a
    /// word for every flow of every run.
    Linux(Box<LinuxCubic>),
}

// Kept to 56 bytes, so that `Cc` stays DCTCP's 64 and `Flow` six cache
// lines (world/apps.rs): hence f32 constants and K, and the epoch's fields
// flat with a flag (whose spare values also hold `Cubic`'s tag).
pub struct Rfc {
    beta: f64,
    c: f32,
    fast_convergence: bool,
    /// `epoch` is valid (set at the first ACK of congestion avoidance).
    in_epoch: bool,
    /// The window before the last reduction (after fast convergence); 0
    /// when forgotten (at the start and after a timeout).
    w_max: f64,
    /// cwnd when the last reduction set ssthresh (RFC 9438's cwnd_prior).
    cwnd_prior: f32,
    /// The current congestion-avoidance epoch: its start, K (s), its
    /// plateau and the Reno estimate W_est.
    start: Time,
    k: f32,
    origin: f64,
    w_est: f64,
}

impl Cubic {
    /// When the current congestion-avoidance epoch began, if one runs.
    pub fn epoch_start(&self) -> Option<Time> {
        match self {
            Cubic::Rfc(c) => c.in_epoch.then_some(c.start),
            Cubic::Linux(c) => c.epoch_start(),
        }
    }
}

impl Rfc {
    pub fn new(p: &CubicParams) -> Rfc {
        Rfc {
            beta: p.cubic_beta,
            c: p.cubic_c as f32,
            fast_convergence: p.cubic_fast_convergence,
            in_epoch: false,
            w_max: 0.0,
            cwnd_prior: 0.0,
            start: 0,
            k: 0.0,
            origin: 0.0,
            w_est: 0.0,
        }
    }

    /// W_cubic at `t` seconds into the epoch (RFC 9438 Eq. 1).
    fn w_cubic(&self, t: f64) -> f64 {
        self.c as f64 * (t - self.k as f64).powi(3) + self.origin
    }

    /// Congestion avoidance for `segs` segments newly acknowledged.
    fn avoid(&mut self, w: &mut Window, segs: f64, now: Time, rtt: Time) {
        if !self.in_epoch {
            // The plateau is the last W_max, or the window itself when it
            // is already above it (or W_max was forgotten): then K = 0 and
            // the epoch starts in its convex part (Linux bictcp_update).
            let origin = self.w_max.max(w.cwnd);
            self.k = ((origin - w.cwnd) / self.c as f64).cbrt() as f32;
            (self.start, self.origin, self.w_est) = (now, origin, w.cwnd);
            self.in_epoch = true;
        }
        let beta = self.beta;
        let t = secs(now.saturating_sub(self.start));
        // W_est grows by α per window, α = 3(1 − β)/(1 + β), Reno's 1 once
        // W_est has passed the window of the last reduction (§4.3).
        let alpha = if self.w_est >= self.cwnd_prior as f64 { 1.0 } else { 3.0 * (1.0 - beta) / (1.0 + beta) };
        self.w_est += alpha * segs / w.cwnd;
        let w_est = self.w_est;
        if self.w_cubic(t) < w_est {
            // The Reno-friendly region (§4.3).
            w.cwnd = w.cwnd.max(w_est);
        } else {
            // Concave and convex regions (§4.4, §4.5): aim one RTT ahead,
            // at least the window itself and at most 1.5 times it.
            let target = self.w_cubic(t + secs(rtt)).clamp(w.cwnd, 1.5 * w.cwnd);
            w.cwnd += segs * (target - w.cwnd) / w.cwnd;
        }
        w.cwnd = w.cwnd.min(w.max_cwnd());
    }
}

impl CongestionControl for Rfc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        if !a.cwnd_limited || a.acked == 0 {
            return false;
        }
        let mut segs = a.acked as f64 / a.mss as f64;
        if w.cwnd < w.ssthresh {
            // Standard slow start up to ssthresh; the rest is avoidance.
            let ss = segs.min(w.ssthresh - w.cwnd);
            w.cwnd = (w.cwnd + ss).min(w.max_cwnd());
            segs -= ss;
        }
        if segs > 0.0 {
            self.avoid(w, segs, a.now, a.srtt);
        }
        false
    }

    /// A congestion event (§4.6, §4.7): ssthresh = β·cwnd, and W_max, the
    /// next epoch's plateau, is this window, or less under fast convergence
    /// when the window had not regained the last W_max.
    fn loss_ssthresh(&mut self, w: &Window, _flight_segs: f64) -> f64 {
        let beta = self.beta;
        self.w_max = if self.fast_convergence && w.cwnd < self.w_max { w.cwnd * (1.0 + beta) / 2.0 } else { w.cwnd };
        self.cwnd_prior = w.cwnd as f32;
        self.in_epoch = false;
        (w.cwnd * beta).max(MIN_CWND)
    }

    /// After a timeout the first epoch starts at its own window with K = 0
    /// (§4.8).
    fn on_timeout(&mut self) {
        self.w_max = 0.0;
        self.in_epoch = false;
    }
}

impl CongestionControl for Cubic {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        match self {
            Cubic::Rfc(c) => c.on_ack(w, a),
            Cubic::Linux(c) => {
                c.on_ack(w, &a);
                false
            }
        }
    }

    /// During loss recovery Linux still takes RTT samples (no epoch runs).
    fn observe(&mut self, a: AckInfo) {
        if let Cubic::Linux(c) = self {
            c.observe(&a);
        }
    }

    fn loss_ssthresh(&mut self, w: &Window, flight_segs: f64) -> f64 {
        match self {
            Cubic::Rfc(c) => c.loss_ssthresh(w, flight_segs),
            Cubic::Linux(c) => c.loss_ssthresh(w),
        }
    }

    fn on_timeout(&mut self) {
        match self {
            Cubic::Rfc(c) => c.on_timeout(),
            Cubic::Linux(c) => c.on_timeout(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportCfg;
    use crate::units::PS_PER_S;

    const MSS: u32 = 1460;

    fn cubic() -> (Rfc, Window) {
        let t: TransportCfg = serde_json::from_str("{}").unwrap();
        (Rfc::new(&CubicParams::of(&t).unwrap()), Window::new(10.0, &t))
    }

    fn ack(now: Time, srtt: Time) -> AckInfo {
        AckInfo {
            acked: MSS as u64,
            delivered: MSS as u64,
            ece: false,
            una: 0,
            snd_max: 0,
            mss: MSS,
            cwnd_limited: true,
            now,
            srtt,
            rtt: srtt,
        }
    }

    /// After a loss at cwnd 100 the window is 70 (β = 0.7), and then, one
    /// window of ACKs per 200 ms RTT, it follows W_cubic(t) =
    /// 0.4·(t − K)³ + 100 with K = ∛((100 − 70)/0.4) = 4.217 s (RFC 9438
    /// Eqs. 1, 2): each RTT's ACKs take it most of the way to W_cubic one
    /// RTT ahead (§4.4–4.5), so it arrives there as that time comes. Checked
    /// once a second for 8 s, through the plateau at K into the convex part,
    /// within one segment. Reno's estimate, 70 + 0.53 per RTT, reaches only
    /// about 91 by then and never takes over.
    #[test]
    fn window_follows_the_cubic_function_after_a_loss() {
        let (mut c, mut w) = cubic();
        w.cwnd = 100.0;
        w.ssthresh = c.loss_ssthresh(&w, 100.0);
        assert!((w.ssthresh - 70.0).abs() < 1e-9);
        w.cwnd = w.ssthresh;
        let rtt = PS_PER_S / 5;
        let k = (30.0f64 / 0.4).cbrt();
        assert!((k - 4.2172).abs() < 1e-3, "{k}");
        let mut now = 0;
        let mut checked = 0;
        while now <= 8 * PS_PER_S {
            if now % PS_PER_S == 0 && now > 0 {
                let want = 0.4 * (secs(now) - k).powi(3) + 100.0;
                assert!((w.cwnd - want).abs() < 1.0, "t = {} s: cwnd {} want {want}", secs(now), w.cwnd);
                checked += 1;
            }
            let n = w.cwnd.floor() as u64;
            for i in 0..n {
                c.on_ack(&mut w, ack(now + i * rtt / n, rtt));
            }
            now += rtt;
        }
        assert_eq!(checked, 8);
        // At 8 s the check above wanted 0.4·(8 − 4.217)³ + 100 ≈ 121.7
        // segments; one more RTT of ACKs has passed since.
        assert!(c.w_est < 95.0, "{}", c.w_est);
    }

    /// With a short RTT the cubic function grows slower than Reno would,
    /// so the window follows W_est: 70 + 0.529 segments per window of
    /// ACKs (α = 3·0.3/1.7), and 1 per window once it passes cwnd_prior = 100
    /// (RFC 9438 §4.3). 60 windows of ACKs take it to about 70 + 0.529·57 + 3
    /// (a window of ACKs at cwnd c is c ACKs of 1/c each).
    #[test]
    fn short_rtts_follow_the_reno_estimate() {
        let (mut c, mut w) = cubic();
        w.cwnd = 100.0;
        w.ssthresh = c.loss_ssthresh(&w, 100.0);
        w.cwnd = w.ssthresh;
        let rtt = PS_PER_S / 10_000; // 100 µs
        let mut now = 0;
        let mut windows = 0;
        let mut est = 70.0;
        while windows < 60 {
            // One window of ACKs per RTT.
            let n = w.cwnd.floor() as u64;
            for i in 0..n {
                c.on_ack(&mut w, ack(now + i * rtt / n, rtt));
            }
            for _ in 0..n {
                est += if est >= 100.0 { 1.0 } else { 0.5294 } / w.cwnd;
            }
            now += rtt;
            windows += 1;
        }
        // 60 windows is 6 ms: W_cubic has barely moved from its concave start
        // (70 + ... well under 100), so Reno's estimate sets the window.
        assert!(c.w_cubic(secs(now)) < w.cwnd);
        assert!(w.cwnd > 95.0 && w.cwnd < 110.0, "{}", w.cwnd);
    }

    /// Linux counts β in 1/1024 (beta_scale's denominator is 1024 − b):
    /// with cubic_linux a β that rounds to 1024/1024 is refused by key.
    #[test]
    fn cubic_linux_refuses_a_beta_of_one_in_1024ths() {
        let t = |beta: f64| -> TransportCfg {
            serde_json::from_str(&format!(r#"{{"cc": "cubic", "cubic_linux": true, "cubic_beta": {beta}}}"#)).unwrap()
        };
        let e = (DECL.validate)(&t(0.9996)).unwrap_err().to_string();
        assert!(e.contains("transport.cubic_beta") && e.contains("0.9996") && e.contains("0.9995"), "{e}");
        assert!((DECL.validate)(&t(0.9995)).is_ok());
    }

    /// Fast convergence (§4.7): a loss at 80 after one at 100 sets W_max to
    /// 80·(1 + 0.7)/2 = 68; without it, to 80.
    #[test]
    fn fast_convergence_lowers_w_max() {
        let (mut c, mut w) = cubic();
        w.cwnd = 100.0;
        c.loss_ssthresh(&w, 100.0);
        w.cwnd = 80.0;
        assert!((c.loss_ssthresh(&w, 80.0) - 56.0).abs() < 1e-9);
        assert!((c.w_max - 68.0).abs() < 1e-9);
        c.fast_convergence = false;
        w.cwnd = 60.0;
        c.loss_ssthresh(&w, 60.0);
        assert!((c.w_max - 60.0).abs() < 1e-9);
    }

    /// After a timeout the epoch starts at its own window with K = 0
    /// (§4.8): its first ACKs grow it in the convex part, from 10.
    #[test]
    fn after_a_timeout_the_epoch_starts_flat() {
        let (mut c, mut w) = cubic();
        w.cwnd = 100.0;
        w.ssthresh = c.loss_ssthresh(&w, 100.0);
        c.on_timeout();
        w.cwnd = 10.0;
        w.ssthresh = 10.0;
        c.on_ack(&mut w, ack(PS_PER_S, PS_PER_S / 1000));
        assert!(c.in_epoch);
        assert_eq!(c.k, 0.0);
        assert_eq!(c.origin, 10.0);
    }
}
