//! The seam between a queue pair and its rate control: what the run tells
//! a sender's algorithm (packets sent, ACKs with their RTT and telemetry,
//! CNPs, its timers) and what it asks (the rate to pace at, the window).
//! Each RDMA transport is one file implementing `RateControl` plus one
//! line in `super::TRANSPORTS`.

use super::int::IntStack;
use crate::config::TransportCfg;
use crate::units::Time;

/// An ACK (or NACK) as the sender's rate control sees it.
pub struct Ack<'a> {
    pub now: Time,
    /// Every byte below this is acknowledged.
    pub ack: u64,
    /// The sender's next byte.
    pub snd_nxt: u64,
    /// Now less the send time the ACK echoes.
    pub rtt: Time,
    /// It carries a congestion flag (its packet was CE-marked).
    pub ce: bool,
    /// The telemetry of the packet it answers (INT runs).
    pub int: Option<&'a IntStack>,
}

/// What a queue pair's rate control needs to know of its place.
#[derive(Clone, Copy, Debug)]
pub struct QpEnv {
    /// The host's link, bits per second.
    pub line: u64,
    /// The base RTT (`rdma_base_rtt` or the longest of the run's paths).
    pub base_rtt: Time,
}

/// A sender's rate control. Only `rate` and `cuts` are required.
pub trait RateControl: Send {
    /// The rate to pace the next packet at, bits per second.
    fn rate(&self) -> f64;
    /// Rate cuts so far (the summary's `rdma_rate_cuts`).
    fn cuts(&self) -> u32;
    /// `bytes` more were sent.
    fn on_sent(&mut self, _bytes: u64) {}
    /// A congestion notification (a CNP, or an ACK flagged with one).
    fn on_cnp(&mut self, _now: Time) {}
    /// An ACK. True when the rate changed and the next packet should be
    /// re-timed at it (HPCC's ChangeRate); false also when it need not be.
    fn on_ack(&mut self, _a: &Ack) -> bool {
        false
    }
    /// When its timer fires next (0: none), and running it.
    fn next_timer(&self) -> Time {
        0
    }
    fn on_timer(&mut self, _now: Time) {}
    /// The window, from the base window `w`: `var` scales it by rate/line.
    fn window(&self, w: u64, var: bool, line: f64) -> u64 {
        if var && w != u64::MAX {
            ((w as f64 * self.rate() / line) as u64).max(1)
        } else {
            w
        }
    }
}

/// Builds each queue pair's rate control from the run's keys (read once).
pub type Factory = Box<dyn Fn(&QpEnv) -> Box<dyn RateControl>>;

/// What an RDMA transport declares: its `transport.cc` entry (name, keys,
/// checks), how its senders are built, and what else it needs of the run.
pub struct RdmaDecl {
    pub cc: crate::host::cc::CcDecl,
    pub factory: fn(&TransportCfg) -> Factory,
    /// Switches append INT records to its data packets (`int.rs`): how
    /// many bytes they take and how they are rounded, for a host on a link
    /// of the given rate.
    pub telemetry: Option<fn(&TransportCfg, u64) -> Telemetry>,
    /// Its receivers send CNPs at most once per this interval (DCQCN's
    /// notification point); without, or at 0, a mark rides back on the ACK
    /// as a flag, as in the HPCC simulator, and no CNP packet is sent.
    pub notifies: Option<fn(&TransportCfg) -> Time>,
}

/// What INT costs on the wire and how finely it reports.
#[derive(Clone, Copy, Debug)]
pub struct Telemetry {
    /// Bytes of the INT stack on every data packet and ACK.
    pub bytes: u32,
    /// The HPCC simulator's INT_MULTI rounding (0: exact).
    pub multi: u32,
}

/// The `transport.cc` entry of an RDMA transport: what every one shares
/// (no TCP echo, not pFabric, a TCP placeholder it never runs) around its
/// own name, keys, defaults and checks.
pub const fn queue_pair_cc(
    about: crate::switch::scheme::About,
    defaults: &'static [(&'static str, crate::host::cc::Fill)],
    validate: fn(&TransportCfg) -> Result<(), crate::config::ConfigError>,
) -> crate::host::cc::CcDecl {
    crate::host::cc::CcDecl {
        about,
        defaults,
        echo: crate::host::cc::EchoMode::None,
        pfabric: false,
        rdma: true,
        validate,
        build: |_| crate::host::cc::Cc::Reno(crate::host::cc::Reno),
    }
}

/// The HPCC simulator's window for its HPCC and DCTCP runs: one base RTT's
/// bytes at line rate, scaled by the rate (HAS_WIN and VAR_WIN).
pub const BDP_WINDOW: &[(&str, crate::host::cc::Fill)] = &[
    ("rdma_bdp_window", crate::host::cc::Fill::Json("true")),
    ("rdma_var_window", crate::host::cc::Fill::Json("true")),
];
