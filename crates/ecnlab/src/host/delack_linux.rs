//! Linux's delayed-ACK rules (net/ipv4/tcp_input.c __tcp_ack_snd_check,
//! tcp_event_data_recv, tcp_ecn_check_ce; tcp_output.c
//! tcp_dec_quickack_mode), opt-in by `transport.linux_delayed_ack`:
//!
//! - Quick ACKs at the start: the first data packets are each ACKed at
//!   once, up to 16 ACKs (TCP_MAX_QUICKACKS), so slow start is not slowed
//!   by a receiver that holds ACKs while the sender's window is small.
//!   Linux bounds the count by the receive window over two segments too;
//!   ecnlab's receive window is unlimited by default, so 16 applies.
//! - Then an ACK once more than one full-sized segment is unacknowledged
//!   (rcv_nxt − rcv_wup > rcv_mss): every second full segment, at once
//!   for a GRO-merged one; a shorter segment waits.
//! - A short segment in order is ACKed at once: Linux marks it pushed
//!   (tcp_measure_rcv_mss) and ACKs when the application's read drains
//!   the queue (tcp_cleanup_rbuf), which ecnlab's applications always do
//!   at once; so a message's last segment does not wait for the timer.
//!   Linux skips this for a connection in interactive ("pingpong") mode,
//!   one that sends data right after receiving; ecnlab's connections
//!   carry data one way, so none is.
//! - Data after the connection was idle longer than the receiver's RTO
//!   starts quick ACKs again (tcp_event_data_recv: the gap since the last
//!   data exceeds icsk_rto). The receiver's RTO is taken as `min_rto`
//!   (the `linux` profile: 200 ms, TCP_RTO_MIN), which is what a
//!   receiver's own estimate comes to on a data-centre RTT.
//! - Out-of-order data, and data that fills a hole, is ACKed at once (as
//!   ecnlab always does).
//! - A CE mark arriving while no ECE is being echoed (RFC 3168) gives two
//!   quick ACKs, so a sender with a small window hears it soon.
//! - What is held waits for the delayed-ACK timer, `delayed_ack_timeout`
//!   (the `linux` profile: 40 ms, TCP_ATO_MIN; Linux's ato then adapts to
//!   the arrival pattern, which is not modelled).
//!
//! The rules replace `delayed_ack` and `delayed_ack_bytes`; the receiver
//! (`tcp_rx.rs`) applies them.

use crate::config::param::section;

section! {
    /// The key of Linux's delayed-ACK rules in `[transport]`.
    pub struct LinuxDelackParams {
        /// Linux's delayed ACKs: quick ACKs for the first 16 segments, after a fresh CE mark and
        /// after an idle spell longer than min_rto; a short segment at once (the application reads
        /// it); then an ACK once more than one full segment is unacknowledged, the rest on the timer
        /// (delayed_ack_timeout); replaces delayed_ack and delayed_ack_bytes. The `linux` profile
        /// turns it on.
        linux_delayed_ack: bool = false, resolved Given, source "Linux tcp_input.c __tcp_ack_snd_check";
    }
}

impl LinuxDelackParams {
    pub fn of(t: &crate::config::TransportCfg) -> LinuxDelackParams {
        t.scheme_keys(LinuxDelackParams::read).expect("a checked config")
    }
}

/// The idle spell after which Linux's rules start quick ACKs again (the
/// receiver's RTO; see the module's doc), or Time::MAX without them.
pub fn requick_after(t: &crate::config::TransportCfg) -> crate::units::Time {
    if !LinuxDelackParams::of(t).linux_delayed_ack {
        return crate::units::Time::MAX;
    }
    t.min_rto.0
}

/// Quick ACKs at a connection's start (TCP_MAX_QUICKACKS).
pub const QUICK_ACKS: u8 = 16;

/// Quick ACKs after a CE mark starts an ECE echo (tcp_ecn_check_ce).
pub const QUICK_ACKS_ON_CE: u8 = 2;
