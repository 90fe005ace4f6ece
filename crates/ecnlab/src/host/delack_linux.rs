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
        /// Linux's delayed ACKs: quick ACKs for the first 16 segments and after a fresh CE mark,
        /// then an ACK once more than one full segment is unacknowledged, the rest on the timer
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

/// Quick ACKs at a connection's start (TCP_MAX_QUICKACKS).
pub const QUICK_ACKS: u8 = 16;

/// Quick ACKs after a CE mark starts an ECE echo (tcp_ecn_check_ce).
pub const QUICK_ACKS_ON_CE: u8 = 2;
