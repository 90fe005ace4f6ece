//! DCTCP (Alizadeh et al., SIGCOMM 2010). The sender keeps α, the EWMA
//! with gain g of the fraction of its bytes that were marked, updated once
//! per window of data: α ← (1 − g)·α + g·F. On ECE it cuts
//! cwnd ← cwnd·(1 − α/2), at most once per window, and sets CWR. With
//! `dctcp_linux` its arithmetic and loss response are Linux's
//! (`dctcp_linux.rs`).

use super::{AckInfo, CcDecl, CongestionControl, EchoMode, OncePerWindow, Window, MIN_CWND};
use crate::config::bad;
use crate::config::param::section;

section! {
    /// DCTCP's keys in `[transport]`.
    pub struct DctcpParams {
        /// The EWMA gain g of α (the DCTCP paper: 1/16).
        dctcp_g: f64 = 1.0 / 16.0, range "(0, 1]", source "Alizadeh et al., DCTCP (SIGCOMM 2010) §3.1",
            lenient true;
        /// α before the first window (Linux starts at 1).
        dctcp_alpha_init: f64 = 1.0, range "[0, 1]", source "Linux tcp_dctcp.c (dctcp_alpha_on_init)", lenient true;
    }
}

impl DctcpParams {
    pub fn of(t: &crate::config::TransportCfg) -> Result<DctcpParams, crate::config::ConfigError> {
        t.scheme_keys(DctcpParams::read)
    }
}

pub const DECL: CcDecl = CcDecl {
    about: crate::switch::scheme::About {
        params: &[DctcpParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "dctcp",
            "DCTCP: cuts cwnd by α/2 on ECE, α the EWMA of the fraction of marked bytes per window",
            "Alizadeh et al., Data Center TCP (SIGCOMM 2010)",
        )
    },
    defaults: &[],
    echo: EchoMode::Exact,
    pfabric: false,
    rdma: false,
    validate: |t| {
        let p = DctcpParams::of(t)?;
        if !(p.dctcp_g > 0.0 && p.dctcp_g <= 1.0) {
            return Err(bad("transport.dctcp_g", p.dctcp_g, "must lie in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&p.dctcp_alpha_init) {
            return Err(bad("transport.dctcp_alpha_init", p.dctcp_alpha_init, "must lie in [0, 1]"));
        }
        if super::dctcp_linux::active(t) && super::dctcp_linux::shift_of(p.dctcp_g).is_none() {
            return Err(bad(
                "transport.dctcp_g",
                p.dctcp_g,
                "must be 1/2^k for k in 0..=10 with dctcp_linux (Linux's dctcp_shift_g)",
            ));
        }
        Ok(())
    },
    build: |t| {
        let p = DctcpParams::of(t).expect("checked");
        let d = Dctcp::new(p.dctcp_g, p.dctcp_alpha_init);
        super::Cc::Dctcp(if super::dctcp_linux::active(t) { d.linux() } else { d })
    },
};

// 64 bytes, the size of `Cc` (see `Flow` in world/apps.rs): hence the
// byte counts in u32 (a window of 4 GB is out of reach; they saturate).
pub struct Dctcp {
    /// α; with `dctcp_linux` always a whole number of 1/1024.
    pub alpha: f64,
    g: f64,
    acked_bytes: u32,
    marked_bytes: u32,
    /// α is updated when snd_una passes this (end of the observed window).
    window_end: u64,
    pub window: OncePerWindow,
    /// Linux's arithmetic (`dctcp_linux.rs`): k with g = 2^−k.
    linux_shift: Option<u8>,
}

impl Dctcp {
    pub fn new(g: f64, alpha_init: f64) -> Self {
        Dctcp {
            alpha: alpha_init,
            g,
            acked_bytes: 0,
            marked_bytes: 0,
            window_end: 0,
            window: OncePerWindow::default(),
            linux_shift: None,
        }
    }

    /// Linux's DCTCP (`dctcp_linux.rs`): α in 1/1024 from here on.
    pub fn linux(mut self) -> Self {
        self.linux_shift = Some(super::dctcp_linux::shift_of(self.g).expect("a checked dctcp_g") as u8);
        self.set_alpha(self.alpha);
        self
    }

    #[inline]
    pub fn observe(&mut self, a: AckInfo) {
        let acked = a.acked.min(u32::MAX as u64) as u32;
        self.acked_bytes = self.acked_bytes.saturating_add(acked);
        if a.ece {
            self.marked_bytes = self.marked_bytes.saturating_add(acked);
        }
        if self.window_end == 0 && self.linux_shift.is_none() {
            self.window_end = a.snd_max;
        } else if a.una >= self.window_end {
            if let Some(k) = self.linux_shift {
                // dctcp_update_alpha: every window, also one with nothing
                // acknowledged; the first ends at the first ACK.
                let fx = (self.alpha * super::dctcp_linux::MAX_ALPHA as f64) as u32;
                let fx =
                    super::dctcp_linux::update_alpha(fx, self.acked_bytes as u64, self.marked_bytes as u64, k as u32);
                self.alpha = fx as f64 / super::dctcp_linux::MAX_ALPHA as f64;
            } else if self.acked_bytes > 0 {
                let f = self.marked_bytes as f64 / self.acked_bytes as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked_bytes = 0;
            self.marked_bytes = 0;
            self.window_end = a.snd_max;
        }
    }

    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        self.observe(a);
        let alpha = self.alpha;
        let linux = self.linux_shift.is_some();
        self.window.on_ack(w, &a, |w| {
            w.cwnd = if linux {
                let fx = (alpha * super::dctcp_linux::MAX_ALPHA as f64) as u32;
                super::dctcp_linux::ecn_ssthresh(w.cwnd, fx)
            } else {
                (w.cwnd * (1.0 - alpha / 2.0)).max(MIN_CWND)
            };
            w.ssthresh = w.cwnd;
        })
    }
}

impl CongestionControl for Dctcp {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        Dctcp::on_ack(self, w, a)
    }
    #[inline]
    fn observe(&mut self, a: AckInfo) {
        Dctcp::observe(self, a)
    }
    fn in_cwr(&self, una: u64) -> bool {
        self.window.draining(una)
    }
    fn on_loss(&mut self, snd_max: u64) {
        self.window.loss(snd_max)
    }
    /// Linux halves cwnd on a loss (`dctcp_linux.rs`); otherwise RFC 5681's
    /// half the flight, as every congestion control here.
    fn loss_ssthresh(&mut self, w: &Window, flight_segs: f64) -> f64 {
        if self.linux_shift.is_some() {
            super::dctcp_linux::loss_ssthresh(w.cwnd)
        } else {
            (flight_segs / 2.0).max(MIN_CWND)
        }
    }
    fn recovery_in_cwr(&mut self, w: &Window) -> Option<f64> {
        self.linux_shift.map(|_| super::dctcp_linux::loss_ssthresh(w.cwnd))
    }
    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
    fn set_alpha(&mut self, alpha: f64) {
        self.alpha = if self.linux_shift.is_some() {
            let m = super::dctcp_linux::MAX_ALPHA as f64;
            (alpha * m).floor().min(m) / m
        } else {
            alpha
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(una: u64, snd_max: u64, ece: bool) -> AckInfo {
        AckInfo {
            acked: 1460,
            delivered: 1460,
            ece,
            una,
            snd_max,
            mss: 1460,
            cwnd_limited: true,
            now: 0,
            srtt: 0,
            rtt: 0,
        }
    }

    /// α is the EWMA of the marked fraction: with half of every window
    /// marked it converges to 0.5, and one unmarked window scales it by
    /// exactly (1 − g) (DCTCP paper §3.1, Eq. 1).
    #[test]
    fn alpha_tracks_marked_fraction() {
        let g = 1.0 / 16.0;
        let mut d = Dctcp::new(g, 0.0);
        // Ten segments always in flight: a window closes every ten ACKs.
        let mut una = 0;
        d.observe(ack(0, 14600, false));
        for i in 0..4000u64 {
            una += 1460;
            d.observe(ack(una, una + 14600, i % 2 == 0));
        }
        assert!((d.alpha - 0.5).abs() < 0.02, "alpha = {}", d.alpha);
        // Finish the current window, then one window with no marks at all.
        let mut updates = Vec::new();
        for _ in 0..30u64 {
            una += 1460;
            let before = d.alpha;
            d.observe(ack(una, una + 14600, false));
            if d.alpha != before {
                updates.push((before, d.alpha));
            }
        }
        let (before, after) = updates[1];
        assert!((after - before * (1.0 - g)).abs() < 1e-12, "{before} -> {after}");
    }

    /// The cut is cwnd·(1 − α/2) and happens at most once per window.
    #[test]
    fn cut_once_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0, 1.0);
        let mut w = Window::new(40.0, &crate::config::TransportCfg::default());
        assert!(d.on_ack(&mut w, ack(1460, 40 * 1460, true)));
        assert_eq!(w.cwnd, 20.0);
        // Further ECE within the same window: no second cut.
        assert!(!d.on_ack(&mut w, ack(2 * 1460, 41 * 1460, true)));
        assert_eq!(w.cwnd, 20.0);
        // Past the window: cut again.
        assert!(d.on_ack(&mut w, ack(41 * 1460, 60 * 1460, true)));
        assert!(w.cwnd < 20.0);
    }

    /// Linux's α (`dctcp_linux.rs`), window by window, ten segments in
    /// flight. The first window ends at the first ACK (next_seq starts at
    /// the established connection's snd_nxt): one unmarked segment, α =
    /// 1024 − 64 = 960. Then windows of ten ACKs with 0, 5, 10 and 3
    /// marked: 960 − 60 = 900; 900 − 56 + (5·1460 << 6)/(10·1460) = 876;
    /// 876 − 54 + 64 = 886; 886 − 55 + 19 = 850 (192/10 truncated), all
    /// in 1/1024 (dctcp_update_alpha); ecnlab's own DCTCP would have taken
    /// no step at the first ACK.
    #[test]
    fn linux_alpha_per_window_exact() {
        let mut d = Dctcp::new(1.0 / 16.0, 1.0).linux();
        let mut una = 1460;
        d.observe(ack(una, 11 * 1460, false));
        assert_eq!(d.alpha * 1024.0, 960.0);
        let mut seen = Vec::new();
        for marked in [0u64, 5, 10, 3] {
            for i in 0..10u64 {
                una += 1460;
                d.observe(ack(una, una + 10 * 1460, i < marked));
            }
            seen.push(d.alpha * 1024.0);
        }
        assert_eq!(seen, [900.0, 876.0, 886.0, 850.0]);
    }

    /// Linux's cut (dctcp_ssthresh): α = 1 halves Linux's whole-segment
    /// cwnd (40.6 → 20), once per window (CWR: ECE again before snd_una
    /// passes the cut's snd_nxt does nothing); past it, α is still 1
    /// (every window so far fully marked: 1024 − 64 + 64), so 20 → 10. A
    /// loss then halves cwnd whatever α (dctcp_react_to_loss): 10 → 5.
    #[test]
    fn linux_cut_once_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0, 1.0).linux();
        let mut w = Window::new(40.6, &crate::config::TransportCfg::default());
        assert!(d.on_ack(&mut w, ack(1460, 40 * 1460, true)));
        assert_eq!((w.cwnd, w.ssthresh), (20.0, 20.0));
        assert!(!d.on_ack(&mut w, ack(2 * 1460, 41 * 1460, true)));
        assert!(!d.on_ack(&mut w, ack(40 * 1460, 41 * 1460, true)));
        assert_eq!(w.cwnd, 20.0);
        assert!(d.on_ack(&mut w, ack(41 * 1460, 60 * 1460, true)));
        assert_eq!(d.alpha, 1.0);
        assert_eq!(w.cwnd, 10.0);
        assert_eq!(d.loss_ssthresh(&w, 30.0), 5.0);
        assert_eq!(d.recovery_in_cwr(&w), Some(5.0));
        // Without dctcp_linux: half the flight, and the ECN cut carries on.
        let mut plain = Dctcp::new(1.0 / 16.0, 1.0);
        assert_eq!(plain.loss_ssthresh(&w, 30.0), 15.0);
        assert_eq!(plain.recovery_in_cwr(&w), None);
    }
}
