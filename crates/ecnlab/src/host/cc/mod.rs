//! Congestion control, one file per algorithm. Each one sees every ACK that
//! advances or duplicates snd_una and may grow or cut the window; loss
//! recovery itself (fast retransmit, RTO) is common TCP in `tcp_tx.rs`.
//! Each declares itself (`CcDecl`: name, doc, paper, keys, defaults, how
//! it is built) and joins `Cc` and the registry's list with one line in
//! `congestion_controls!` below.

use crate::config::{CaKind, ConfigError, TransportCfg};
use crate::switch::scheme::About;

/// A value a congestion control or a profile fills in for a key the
/// experiment leaves out.
#[derive(Clone, Copy, Debug)]
pub enum Fill {
    /// A value, as JSON text ("12", "\"45us\"", "true").
    Json(&'static str),
    /// The switch buffer in full packets, less one, at least 1 (FQ-CoDel
    /// in the DCN Table II's max cwnd, "queue − 1").
    QueueMinusOne,
}

/// What a congestion control declares of itself.
pub struct CcDecl {
    /// Its name (what `transport.cc` gives), doc, paper and own keys in
    /// `[transport]`.
    pub about: About,
    /// `[transport]` keys it fills when the experiment and its profile
    /// leave them out.
    pub defaults: &'static [(&'static str, Fill)],
    /// What the receiver echoes of CE marks (and whether data is ECT).
    pub echo: EchoMode,
    /// pFabric's transport (`host/pfabric.rs`): recovery by timeouts only
    /// with a fixed RTO, probe mode, and each data packet stamped with its
    /// flow's remaining bytes, the priority pFabric's port schedules by.
    pub pfabric: bool,
    /// An RDMA transport (`rdma/`): every flow runs on a queue pair, not
    /// TCP; its `build` gives the TCP side a placeholder it never uses.
    pub rdma: bool,
    /// Checks of its keys.
    pub validate: fn(&TransportCfg) -> Result<(), ConfigError>,
    pub build: fn(&TransportCfg) -> Cc,
}

/// The algorithm's side of every ACK. Only `on_ack` is required.
pub trait CongestionControl {
    /// Called on every ACK outside loss recovery. Returns true when the
    /// window was cut for ECN, so the next data packet carries CWR.
    fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool;

    /// Called during loss recovery, where the window is frozen (DCTCP keeps
    /// counting marked bytes for α).
    #[inline]
    fn observe(&mut self, _a: AckInfo) {}

    /// In the CWR state: after an ECN cut, until its window is acknowledged.
    fn in_cwr(&self, _una: u64) -> bool {
        false
    }

    /// A loss response (fast retransmit or RTO) has just cut the window:
    /// no ECN cut until the data now outstanding is acknowledged.
    fn on_loss(&mut self, _snd_max: u64) {}

    /// ssthresh after a loss, with `flight_segs` segments outstanding
    /// (RFC 5681 Eq. 4: half the flight, at least two segments). Called
    /// once per loss event, before the window is cut.
    fn loss_ssthresh(&mut self, _w: &Window, flight_segs: f64) -> f64 {
        (flight_segs / 2.0).max(MIN_CWND)
    }

    /// Loss recovery starts while an ECN cut's reduction (PRR's CWR) is
    /// under way, which carries on: a new ssthresh for it, or None to keep
    /// the cut's (Linux: DCTCP halves cwnd, `dctcp_linux.rs`).
    fn recovery_in_cwr(&mut self, _w: &Window) -> Option<f64> {
        None
    }

    /// The retransmission timer fired (after `loss_ssthresh`, if that was
    /// called for it).
    fn on_timeout(&mut self) {}

    /// DCTCP's α, for a persistent connection to carry to its next flow.
    fn alpha(&self) -> Option<f64> {
        None
    }

    fn set_alpha(&mut self, _alpha: f64) {}
}

/// Declares the congestion controls: `Variant(module::Type)` per line loads
/// the algorithm's file, adds the variant to `Cc` with its dispatch, and
/// puts `module::DECL` on the registry's list `CCS`.
macro_rules! congestion_controls {
    ($($variant:ident($module:ident :: $ty:ident)),* $(,)?) => {
        $(mod $module; pub use $module::$ty;)*

        /// Every congestion control: the registry's list (RDMA transports,
        /// which `transport.cc` names too, are `rdma::TRANSPORTS`).
        pub const CCS: &[&CcDecl] = &[$(&$module::DECL),*];

        pub enum Cc {
            $($variant($ty)),*
        }

        impl Cc {
            /// The configured algorithm (`transport.cc`, checked).
            pub fn new(t: &TransportCfg) -> Cc {
                // An RDMA transport's name (checked by the registry) is none
                // of these: its flows never run TCP, whose side gets Reno.
                decl(t.cc.as_str()).map_or(Cc::Reno(Reno), |d| (d.build)(t))
            }

            pub fn echo_mode(&self) -> EchoMode {
                match self { $(Cc::$variant(_) => $module::DECL.echo),* }
            }

            #[inline]
            pub fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
                match self { $(Cc::$variant(c) => CongestionControl::on_ack(c, w, a)),* }
            }

            #[inline]
            pub fn observe(&mut self, a: AckInfo) {
                match self { $(Cc::$variant(c) => CongestionControl::observe(c, a)),* }
            }

            pub fn in_cwr(&self, una: u64) -> bool {
                match self { $(Cc::$variant(c) => CongestionControl::in_cwr(c, una)),* }
            }

            pub fn on_loss(&mut self, snd_max: u64) {
                match self { $(Cc::$variant(c) => CongestionControl::on_loss(c, snd_max)),* }
            }

            pub fn loss_ssthresh(&mut self, w: &Window, flight_segs: f64) -> f64 {
                match self { $(Cc::$variant(c) => CongestionControl::loss_ssthresh(c, w, flight_segs)),* }
            }

            pub fn recovery_in_cwr(&mut self, w: &Window) -> Option<f64> {
                match self { $(Cc::$variant(c) => CongestionControl::recovery_in_cwr(c, w)),* }
            }

            pub fn on_timeout(&mut self) {
                match self { $(Cc::$variant(c) => CongestionControl::on_timeout(c)),* }
            }

            pub fn alpha(&self) -> Option<f64> {
                match self { $(Cc::$variant(c) => CongestionControl::alpha(c)),* }
            }

            /// A persistent connection's α, carried to its next flow.
            pub fn set_alpha(&mut self, alpha: f64) {
                match self { $(Cc::$variant(c) => CongestionControl::set_alpha(c, alpha)),* }
            }
        }
    };
}

pub mod cubic_linux;
pub mod dctcp_linux;

// The registry of congestion controls: one line per algorithm.
congestion_controls! {
    Reno(reno::Reno),
    EcnStar(ecn_star::EcnStar),
    Dctcp(dctcp::Dctcp),
    MinTcp(min_tcp::MinTcp),
    Cubic(cubic::Cubic),
}

impl Cc {
    /// When CUBIC's congestion-avoidance epoch began, if one is running
    /// (HyStart's filter, `hystart.rs`); None for the others.
    pub fn cubic_epoch_start(&self) -> Option<crate::units::Time> {
        match self {
            Cc::Cubic(c) => c.epoch_start(),
            _ => None,
        }
    }
}

/// The congestion control named `name`.
pub fn decl(name: &str) -> Option<&'static CcDecl> {
    CCS.iter().copied().find(|d| d.about.name == name)
}

/// The window state congestion control acts on, in segments.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Growth stops here (`transport.max_cwnd`, ns-2 maxcwnd_); infinite
    /// when unset. An f32 (exact for every whole number of segments up to
    /// 2^24) so that `Window` has room for nothing more than before and
    /// `TcpSender` room for its boxed Linux state (see `Flow`'s size in
    /// world/apps.rs); read through `max_cwnd()`.
    max_cwnd: f32,
    /// How congestion avoidance grows the window (`transport.ca`).
    pub ca: CaKind,
    /// Basic congestion avoidance: segments acknowledged since the last
    /// whole-segment step (ns-2's count_).
    ca_acked: f64,
}

/// Smallest window an ECN or loss response may leave (Linux: 2 segments).
pub const MIN_CWND: f64 = 2.0;

impl Window {
    /// The window a connection starts with: `cwnd` segments (within
    /// max_cwnd) and no ssthresh yet.
    pub fn new(cwnd: f64, t: &TransportCfg) -> Window {
        let max_cwnd = t.max_cwnd.map(|m| m as f32).unwrap_or(f32::INFINITY);
        Window { cwnd: cwnd.min(max_cwnd as f64), ssthresh: f64::INFINITY, max_cwnd, ca: t.ca, ca_acked: 0.0 }
    }

    /// The largest cwnd, in segments (infinite: no limit).
    #[inline]
    pub fn max_cwnd(&self) -> f64 {
        self.max_cwnd as f64
    }

    /// Slow start below ssthresh, then one segment per window (RFC 5681);
    /// no growth when the sender was not using its window (RFC 7661).
    #[inline]
    pub fn grow(&mut self, a: &AckInfo) {
        if a.cwnd_limited {
            self.open(a.acked as f64 / a.mss as f64);
        }
    }

    /// Grow for `segs` segments newly acknowledged, up to max_cwnd.
    #[inline]
    pub fn open(&mut self, mut segs: f64) {
        if self.cwnd < self.ssthresh {
            // Slow start up to ssthresh; what is left over counts as
            // congestion avoidance (Linux tcp_slow_start).
            let room = self.ssthresh - self.cwnd;
            let ss = segs.min(room);
            self.cwnd += ss;
            segs -= ss;
        }
        if segs > 0.0 {
            match self.ca {
                CaKind::Standard => self.cwnd += segs / self.cwnd,
                CaKind::Basic => {
                    // ns-2 windowOption_ 0 (tcp.cc opencwnd): a whole
                    // segment once cwnd segments have been acknowledged.
                    self.ca_acked += segs;
                    if self.ca_acked >= self.cwnd {
                        self.ca_acked = 0.0;
                        self.cwnd += 1.0;
                    }
                }
            }
        }
        self.cwnd = self.cwnd.min(self.max_cwnd());
    }
}

/// The rule both ECN algorithms share (RFC 3168 §6.1.2): react at most once
/// per window of data, to ECN or to loss. After an ECN cut the window does
/// not grow while the reduced window drains (Linux's CWR state); after a
/// loss response ECE is ignored for the data already sent, while loss
/// recovery itself governs the window.
#[derive(Clone, Copy, Debug, Default)]
pub struct OncePerWindow {
    /// An ECN cut's window ends when snd_una passes this.
    cut_end: u64,
    cut: bool,
    /// ECE is ignored until snd_una passes this (after a loss response).
    quiet_end: u64,
}

impl OncePerWindow {
    /// On ECE outside the last reduction's window apply `cut` and return
    /// true (the sender then sets CWR); otherwise grow unless draining.
    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, a: &AckInfo, cut: impl FnOnce(&mut Window)) -> bool {
        let draining = self.cut && a.una <= self.cut_end;
        if a.ece && !draining && a.una > self.quiet_end {
            cut(w);
            self.cut_end = a.snd_max;
            self.cut = true;
            return true;
        }
        if !draining {
            w.grow(a);
        }
        false
    }

    /// The reduced window of an ECN cut is still draining (Linux's CWR
    /// state) with snd_una at `una`.
    #[inline]
    pub fn draining(&self, una: u64) -> bool {
        self.cut && una <= self.cut_end
    }

    /// A loss response covered the data sent up to `snd_max`.
    pub fn loss(&mut self, snd_max: u64) {
        self.quiet_end = snd_max;
    }
}

/// What the receiver echoes back for congestion experienced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EchoMode {
    /// No ECN: data is Not-ECT, nothing is echoed.
    None,
    /// RFC 3168: ECE on every ACK from a CE arrival until a CWR arrives.
    Latched,
    /// DCTCP: each ACK's ECE equals the CE bit of the data it covers.
    Exact,
    /// DCTCP as Linux (`dctcp_linux.rs`): Exact, and the packet that
    /// changes the CE state is ACKed at once. Only the receiver holds it.
    ExactAckNow,
}

/// Facts about one ACK, for congestion control.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// Bytes newly acknowledged (0 for a duplicate ACK); with
    /// `linux_cwnd`, `delivered`.
    pub acked: u64,
    /// Bytes newly delivered: acknowledged and not SACKed before, or newly
    /// SACKed (Linux's count, `linux_cwnd.rs`); `acked` where the sender
    /// does not count it.
    pub delivered: u64,
    pub ece: bool,
    /// snd_una after this ACK.
    pub una: u64,
    /// Highest sequence sent so far.
    pub snd_max: u64,
    pub mss: u32,
    /// The window, not the application or the NIC, limited sending.
    pub cwnd_limited: bool,
    /// When the ACK arrived, and the smoothed RTT after it (CUBIC's clock).
    pub now: crate::units::Time,
    pub srtt: crate::units::Time,
    /// This ACK's RTT sample (0: none; Linux CUBIC's delay_min).
    pub rtt: crate::units::Time,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slow start stops at ssthresh; the rest of a stretch ACK counts as
    /// congestion avoidance (Linux tcp_slow_start).
    #[test]
    fn slow_start_capped_at_ssthresh() {
        let mut w = Window::new(8.0, &TransportCfg::default());
        w.ssthresh = 10.0;
        let a = AckInfo {
            acked: 5 * 1460,
            delivered: 5 * 1460,
            ece: false,
            una: 0,
            snd_max: 0,
            mss: 1460,
            cwnd_limited: true,
            now: 0,
            srtt: 0,
            rtt: 0,
        };
        w.grow(&a);
        assert!((w.cwnd - (10.0 + 3.0 / 10.0)).abs() < 1e-12, "{}", w.cwnd);
    }

    fn window(json: &str, cwnd: f64, ssthresh: f64) -> Window {
        let t: TransportCfg = serde_json::from_str(json).unwrap();
        let mut w = Window::new(cwnd, &t);
        w.ssthresh = ssthresh;
        w
    }

    /// Congestion avoidance from cwnd 10, one segment per ACK (ns-2 tcp.cc
    /// opencwnd). Basic (windowOption_ 0): nothing for 9 ACKs, exactly +1
    /// at the 10th, then 11 more ACKs for the next. Standard (windowOption_
    /// 1): +1/cwnd per ACK, 10 ACKs → 10 + Σ 1/cwnd ≈ 10.95.
    #[test]
    fn basic_ca_adds_a_whole_segment_per_window_standard_a_fraction_per_ack() {
        let mut basic = window(r#"{"ca": "basic"}"#, 10.0, 5.0);
        let mut steps = Vec::new();
        for i in 1..=21 {
            let before = basic.cwnd;
            basic.open(1.0);
            if basic.cwnd != before {
                steps.push((i, basic.cwnd));
            }
        }
        assert_eq!(steps, vec![(10, 11.0), (21, 12.0)]);

        let mut std = window("{}", 10.0, 5.0);
        let mut want = 10.0;
        for _ in 0..10 {
            std.open(1.0);
            want += 1.0 / want;
        }
        assert!((std.cwnd - want).abs() < 1e-12 && (std.cwnd - 10.95).abs() < 0.01, "{}", std.cwnd);
    }

    /// max_cwnd (ns-2 maxcwnd_) caps the window from the start and stops
    /// slow start there: IW 20 with max 12 starts at 12, and IW 10 stops
    /// growing at 12 however many ACKs arrive.
    #[test]
    fn max_cwnd_caps_the_window() {
        assert_eq!(window(r#"{"max_cwnd": 12}"#, 20.0, f64::INFINITY).cwnd, 12.0);
        let mut w = window(r#"{"max_cwnd": 12}"#, 10.0, f64::INFINITY);
        for _ in 0..50 {
            w.open(1.0);
        }
        assert_eq!(w.cwnd, 12.0);
    }
}
