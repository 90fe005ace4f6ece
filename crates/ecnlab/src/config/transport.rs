//! `[transport]`: the TCP every host runs. The keys here are every
//! congestion control's; a congestion control's own keys (DCTCP's g) and
//! its profile's are declared in its file (`host/cc/`, `host/profile.rs`)
//! and kept in `extra` until the registry checks them.

use super::error::{bad, fmt_t, ConfigError};
use super::param::section;
use super::values::{Bytes, CaKind, Dur, Name};
use crate::units::{self, Time};

section! {
    /// `[transport]`.
    pub struct TransportCfg with extra {
        /// The congestion control (see `ecnlab keys cc`).
        cc: Name = Name::new("dctcp");
        /// A tuning profile: fills every key of its table left out here (see `ecnlab keys
        /// profile`). The resolved config keeps the name and shows every value it applied.
        profile: Option<Name> = None;
        /// Initial congestion window, in segments.
        init_cwnd: u32 = 10, range "1 or more";
        /// Smallest RTO.
        min_rto: Dur = Dur(5_000_000_000), range "positive";
        /// RTO before any RTT sample (SYN, first data).
        init_rto: Option<Dur> = None, default_doc "min_rto", range "positive";
        /// Largest RTO.
        max_rto: Dur = Dur(60 * units::PS_PER_S), range "min_rto or more";
        /// Clock granularity G (ns-2 tcpTick_): the RTO is srtt + max(G, 4·rttvar), rounded up to
        /// a whole number of ticks (RFC 6298 §2). Unset: no clock, timers in exact time.
        clock_granularity: Option<Dur> = None, range "positive", source "RFC 6298 §2";
        /// Receive window in packets (ns-2 window_): the flight never exceeds this many full
        /// segments. Unset: unlimited.
        rx_window: Option<u32> = None, range "1 or more";
        /// Largest cwnd in segments (ns-2 maxcwnd_): growth stops there. Unset: unlimited.
        max_cwnd: Option<u32> = None, range "1 or more";
        /// Congestion avoidance: "standard" or "basic" (ns-2 windowOption_).
        ca: CaKind = CaKind::Standard;
        /// Payload bytes per full segment.
        mss: u32 = 1460, range "64 to 65000";
        /// Header bytes added to every packet (ns-2 counts 40).
        header: u32 = 40, range "0 to 1000";
        /// ACK every n-th data packet; 1 = every packet (the papers' default).
        delayed_ack: u32 = 1, range "1 to 64";
        /// Longest an ACK may be held back.
        delayed_ack_timeout: Dur = Dur(1_000_000_000);
        /// Count what is unacknowledged in bytes, as ns-2's FullTcp does: the ACK goes once
        /// delayed_ack full segments' worth has arrived, so a shorter segment (a flow's tail)
        /// waits for more data or the timer. Off: every delayed_ack-th packet, whatever its size.
        delayed_ack_bytes: bool = false;
        /// Collapse cwnd to the initial window after an idle RTO (RFC 5681 §4.1).
        slow_start_restart: bool = false, source "RFC 5681 §4.1";
        /// Send retransmissions as ECT, as Tuning ECN §6 recommends for data centers (and ns-2
        /// does); false follows RFC 3168 (Not-ECT).
        ect_retransmits: bool = true, source "Tuning ECN §6";
        /// ECN-capable packets carry ECT(1), the L4S identifier of a scalable sender (DCTCP,
        /// Prague), instead of ECT(0); a DualPI2 port queues them in its L queue.
        ect1: bool = false, resolved Given, source "RFC 9331 §4";
        /// Bytes of one connection's data allowed to wait in its host's NIC queue before it
        /// pauses (Linux TCP small queues, whose floor is two packets); a NIC drops nothing unless
        /// `[nic]` gives it a discipline that does. Raise it to model deeper host queues.
        host_queue_limit: Bytes = Bytes(3_000), range "positive";
    }
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg::from_json("transport", serde_json::json!({})).expect("every key has a default")
    }
}

impl TransportCfg {
    /// A scheme's own `[transport]` keys (its `section!`'s `read`), taken
    /// from the ones this section keeps for schemes (`extra`).
    pub fn scheme_keys<P>(
        &self,
        read: fn(&super::param::Table, bool) -> Result<P, ConfigError>,
    ) -> Result<P, ConfigError> {
        read(&super::param::Table::new("transport", self.extra.clone()), true)
    }

    pub fn packet_bytes(&self) -> u64 {
        (self.mss + self.header) as u64
    }

    pub fn init_rto(&self) -> Time {
        self.init_rto.map(|d| d.0).unwrap_or(self.min_rto.0)
    }

    /// The checks of the keys declared here.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.init_cwnd == 0 {
            return Err(bad("transport.init_cwnd", 0, "must be at least 1 segment"));
        }
        if !(64..=65_000).contains(&self.mss) {
            return Err(bad("transport.mss", self.mss, "must be 64 to 65000 bytes"));
        }
        if self.host_queue_limit.0 == 0 {
            return Err(bad("transport.host_queue_limit", "0B", "must be positive"));
        }
        if self.header > 1000 {
            return Err(bad("transport.header", self.header, "must be at most 1000 bytes"));
        }
        if self.min_rto.0 == 0 {
            return Err(bad("transport.min_rto", "0s", "must be positive"));
        }
        if self.max_rto.0 < self.min_rto.0 {
            return Err(bad("transport.max_rto", fmt_t(self.max_rto.0), "must not be below transport.min_rto"));
        }
        if self.init_rto() == 0 {
            return Err(bad("transport.init_rto", "0s", "must be positive"));
        }
        if let Some(g) = self.clock_granularity {
            if g.0 == 0 {
                return Err(bad(
                    "transport.clock_granularity",
                    "0s",
                    "must be positive (leave it out for exact timers)",
                ));
            }
        }
        if self.rx_window == Some(0) {
            return Err(bad("transport.rx_window", 0, "must be at least 1 packet (leave it out for no limit)"));
        }
        if self.max_cwnd == Some(0) {
            return Err(bad("transport.max_cwnd", 0, "must be at least 1 segment (leave it out for no limit)"));
        }
        if !(1..=64).contains(&self.delayed_ack) {
            return Err(bad("transport.delayed_ack", self.delayed_ack, "must be 1 (ACK every packet) to 64"));
        }
        Ok(())
    }
}
