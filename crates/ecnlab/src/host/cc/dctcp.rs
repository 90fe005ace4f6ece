//! DCTCP (Alizadeh et al., SIGCOMM 2010). The sender keeps α, the EWMA
//! with gain g of the fraction of its bytes that were marked, updated once
//! per window of data: α ← (1 − g)·α + g·F. On ECE it cuts
//! cwnd ← cwnd·(1 − α/2), at most once per window, and sets CWR.

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
        ..crate::switch::scheme::About::new("dctcp", "DCTCP: cuts cwnd by α/2 on ECE, α the EWMA of the fraction of marked bytes per window", "Alizadeh et al., Data Center TCP (SIGCOMM 2010)")
    },
    defaults: &[],
    echo: EchoMode::Exact,
    pfabric: false,
    validate: |t| {
        let p = DctcpParams::of(t)?;
        if !(p.dctcp_g > 0.0 && p.dctcp_g <= 1.0) {
            return Err(bad("transport.dctcp_g", p.dctcp_g, "must lie in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&p.dctcp_alpha_init) {
            return Err(bad("transport.dctcp_alpha_init", p.dctcp_alpha_init, "must lie in [0, 1]"));
        }
        Ok(())
    },
    build: |t| {
        let p = DctcpParams::of(t).expect("checked");
        super::Cc::Dctcp(Dctcp::new(p.dctcp_g, p.dctcp_alpha_init))
    },
};

pub struct Dctcp {
    pub alpha: f64,
    g: f64,
    acked_bytes: u64,
    marked_bytes: u64,
    /// α is updated when snd_una passes this (end of the observed window).
    window_end: u64,
    pub window: OncePerWindow,
}

impl Dctcp {
    pub fn new(g: f64, alpha_init: f64) -> Self {
        Dctcp { alpha: alpha_init, g, acked_bytes: 0, marked_bytes: 0, window_end: 0, window: OncePerWindow::default() }
    }

    #[inline]
    pub fn observe(&mut self, a: AckInfo) {
        self.acked_bytes += a.acked;
        if a.ece {
            self.marked_bytes += a.acked;
        }
        if self.window_end == 0 {
            self.window_end = a.snd_max;
        } else if a.una >= self.window_end {
            if self.acked_bytes > 0 {
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
        self.window.on_ack(w, &a, |w| {
            w.cwnd = (w.cwnd * (1.0 - alpha / 2.0)).max(MIN_CWND);
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
    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
    fn set_alpha(&mut self, alpha: f64) {
        self.alpha = alpha;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(una: u64, snd_max: u64, ece: bool) -> AckInfo {
        AckInfo { acked: 1460, ece, una, snd_max, mss: 1460, cwnd_limited: true, now: 0, srtt: 0 }
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
}
