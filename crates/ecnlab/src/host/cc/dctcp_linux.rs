//! DCTCP as Linux runs it (net/ipv4/tcp_dctcp.c, tcp_dctcp.h), opt-in by
//! `transport.dctcp_linux` with cc = "dctcp" (on in the `linux` profile;
//! other congestion controls ignore it). ecnlab's DCTCP (`dctcp.rs`)
//! already keeps α per window of data, cuts at most once per window and
//! holds the window while the cut drains (Linux's CWR state), and its
//! receiver echoes CE exactly with the paper's delayed-ACK state machine.
//! What Linux does otherwise, each piece applied where this key is read:
//!
//! - α is a fixed-point number of 1/1024 (DCTCP_MAX_ALPHA), starting at
//!   `dctcp_alpha_init` (dctcp_alpha_on_init, 1024/1024), and g = 2^−k
//!   (dctcp_shift_g = 4). dctcp_update_alpha first takes
//!   min_not_zero(α, α >> k) off α, so an α below 2^k/1024 drops to 0 in
//!   one step, then adds (marked << (10 − k)) / acked, truncated, capped at
//!   1024 (`update_alpha`).
//! - The window α is measured over ends when snd_una reaches snd_nxt as
//!   it was at the last update (`!before(snd_una, next_seq)`); the first
//!   ends at the first ACK, since next_seq starts at the snd_nxt of the
//!   established connection. Current kernels call dctcp_update_alpha
//!   (tcp_in_ack_event) after tcp_clean_rtx_queue, so the ACK that ends a
//!   window counts in it.
//! - The ECN cut is dctcp_ssthresh on Linux's whole-segment cwnd:
//!   ssthresh = max(cwnd − (cwnd·α >> 11), 2) (`ecn_ssthresh`).
//! - A loss halves the window whatever α: dctcp_state (entering Recovery)
//!   and dctcp_cwnd_event (CA_EVENT_LOSS, the RTO) both call
//!   dctcp_react_to_loss, ssthresh = max(cwnd >> 1, 2), overriding
//!   dctcp_ssthresh, even when recovery starts inside an ECN cut's CWR
//!   state (`loss_ssthresh`).
//! - The receiver (tcp_dctcp.h dctcp_ece_ack_update): when the CE state
//!   changes, an ACK held by the delayed-ACK timer goes first with the old
//!   state, as in the paper, and then the packet that changed it is ACKed
//!   at once (ICSK_ACK_NOW), where the paper's machine would let it wait
//!   for the next delayed-ACK count (`tcp_rx.rs`, `EchoMode::ExactAckNow`).
//! - Retransmissions are ECT like new data: tcp_ecn_send clears ECT on a
//!   retransmission only for congestion controls that do not need ECN
//!   (`world/hosts.rs`), whatever `ect_retransmits`.
//!
//! α counts bytes (ecnlab's ACKs carry bytes) where Linux counts
//! delivered packets: the same ratio for full segments. Linux also counts
//! SACKed segments as delivered when the SACK arrives; ecnlab counts them
//! when snd_una passes them, which differs only around losses.

use crate::config::param::section;

section! {
    /// The key of DCTCP as Linux runs it, in `[transport]`.
    pub struct DctcpLinuxParams {
        /// DCTCP as Linux's tcp_dctcp.c: α in 1/1024 steps with its truncations, the first window
        /// ending at the first ACK, the ECN cut on whole segments, a loss halving cwnd whatever α,
        /// the packet that changes the CE state ACKed at once, retransmissions ECT. Needs dctcp_g a
        /// power of two (1/2^k, k ≤ 10); other congestion controls ignore it. The `linux` profile
        /// turns it on.
        dctcp_linux: bool = false, resolved Given, source "Linux tcp_dctcp.c, tcp_dctcp.h";
    }
}

impl DctcpLinuxParams {
    pub fn of(t: &crate::config::TransportCfg) -> DctcpLinuxParams {
        t.scheme_keys(DctcpLinuxParams::read).expect("a checked config")
    }
}

/// DCTCP runs Linux's way: cc = "dctcp" with `dctcp_linux`.
pub fn active(t: &crate::config::TransportCfg) -> bool {
    t.cc.as_str() == "dctcp" && DctcpLinuxParams::of(t).dctcp_linux
}

/// α = 1 in Linux's fixed point (DCTCP_MAX_ALPHA).
pub const MAX_ALPHA: u32 = 1024;

/// k with g = 2^−k, if g is one of the gains Linux allows
/// (dctcp_shift_g_set: 0 to 10).
pub fn shift_of(g: f64) -> Option<u32> {
    (0..=10).find(|&k| g == 1.0 / (1u32 << k) as f64)
}

/// α (in 1/1024) after a window in which `acked` bytes were acknowledged,
/// `marked` of them by ACKs with ECE (dctcp_update_alpha).
pub fn update_alpha(alpha: u32, acked: u64, marked: u64, shift: u32) -> u32 {
    // min_not_zero: α >> k when that is not zero, else α itself.
    let decay = if alpha >> shift == 0 { alpha } else { alpha >> shift };
    let mut a = alpha - decay;
    if marked > 0 {
        let f = (marked << (10 - shift)) / acked.max(1);
        a = (a as u64 + f).min(MAX_ALPHA as u64) as u32;
    }
    a
}

/// ssthresh of an ECN cut from cwnd `cwnd` segments, Linux's whole
/// segments (snd_cwnd), with α in 1/1024 (dctcp_ssthresh).
pub fn ecn_ssthresh(cwnd: f64, alpha: u32) -> f64 {
    let c = cwnd as u64;
    (c - ((c * alpha as u64) >> 11)).max(2) as f64
}

/// ssthresh after a loss: half of Linux's whole-segment cwnd
/// (dctcp_react_to_loss).
pub fn loss_ssthresh(cwnd: f64) -> f64 {
    ((cwnd as u64) >> 1).max(2) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// dctcp_update_alpha's arithmetic, from α = 1024 (dctcp_alpha_on_init)
    /// with g = 1/16: a window with a quarter of its bytes marked gives
    /// 1024 − 64 + (25 << 6)/100 = 960 + 16 = 976; an unmarked one 976 −
    /// 61 = 915 (976 >> 4 = 61, truncated); all marked 915 − 57 + 64 =
    /// 922. Below 16/1024 the decay is α itself: 15 → 0 in one unmarked
    /// window, where (1 − g)·α would leave 14.06. A window of one marked
    /// byte in three adds (1 << 6)/3 = 21.
    #[test]
    fn alpha_steps_in_1024ths_with_the_kernels_truncations() {
        let mut a = MAX_ALPHA;
        a = update_alpha(a, 100, 25, 4);
        assert_eq!(a, 976);
        a = update_alpha(a, 100, 0, 4);
        assert_eq!(a, 915);
        a = update_alpha(a, 100, 100, 4);
        assert_eq!(a, 922);
        assert_eq!(update_alpha(15, 100, 0, 4), 0);
        assert_eq!(update_alpha(16, 100, 0, 4), 15);
        assert_eq!(update_alpha(0, 3, 1, 4), 21);
        // Never above 1024: all marked from 1024 stays there.
        assert_eq!(update_alpha(MAX_ALPHA, 10, 10, 4), MAX_ALPHA);
        assert_eq!(shift_of(1.0 / 16.0), Some(4));
        assert_eq!(shift_of(0.1), None);
    }

    /// dctcp_ssthresh on whole segments: cwnd 40.7 is Linux's 40; α = 1
    /// halves it (40·1024 >> 11 = 20); α = 100/1024 takes 40·100 >> 11 = 1
    /// off. A loss halves 41.9 (Linux's 41) to 20 whatever α.
    #[test]
    fn cuts_on_whole_segments() {
        assert_eq!(ecn_ssthresh(40.7, 1024), 20.0);
        assert_eq!(ecn_ssthresh(40.7, 100), 39.0);
        assert_eq!(ecn_ssthresh(3.0, 1024), 2.0);
        assert_eq!(loss_ssthresh(41.9), 20.0);
        assert_eq!(loss_ssthresh(3.0), 2.0);
    }

    /// Loss recovery starting inside an ECN cut's CWR state (PRR pacing
    /// it): ecnlab's DCTCP carries on with the cut's ssthresh, as Linux
    /// does for Reno; Linux's DCTCP resets it to half the current cwnd
    /// (dctcp_state → dctcp_react_to_loss). α starts at 0.25, 20 segments
    /// out, the first ACK has ECE. Linux: α's first window ends there,
    /// fully marked, 256 − 16 + 64 = 304, and the cut sets ssthresh 20 −
    /// (20·304 >> 11) = 18; ecnlab's: no update yet, 20·(1 − 0.125) = 17.5.
    /// PRR keeps cwnd near 20 meanwhile. Segment 1 is lost; SACKs of 2, 3,
    /// 4 start recovery: Linux's ssthresh becomes ⌊cwnd⌋ >> 1.
    #[test]
    fn recovery_inside_cwr_halves_the_current_window() {
        use crate::config::TransportCfg;
        use crate::host::tcp_tx::TcpSender;
        const MSS: u64 = 1460;
        for linux in [false, true] {
            let json = format!(
                r#"{{"cc": "dctcp", "prr": "linux", "init_cwnd": 20, "dctcp_alpha_init": 0.25, "dctcp_linux": {linux}}}"#
            );
            let t: TransportCfg = serde_json::from_str(&json).unwrap();
            let mut s = TcpSender::new(&t);
            s.limit = u64::MAX;
            s.open(0);
            s.on_synack(1000, 0);
            while s.next_segment(1000).is_some() {}
            s.on_ack(2000, MSS, (0, 0), true, 1000);
            let cut = if linux { 18.0 } else { 17.5 };
            assert_eq!(s.w.ssthresh, cut);
            while s.next_segment(2000).is_some() {}
            let mut cwnd = 0.0;
            for k in 2..=4 {
                cwnd = s.w.cwnd;
                s.on_ack(2000, MSS, (k * MSS, (k + 1) * MSS), false, 1000);
            }
            assert!(s.in_recovery);
            let want = if linux { (cwnd.floor() / 2.0).floor() } else { cut };
            assert!(cwnd > 15.0, "{cwnd}");
            assert_eq!(s.w.ssthresh, want, "dctcp_linux {linux}: cwnd {cwnd}");
        }
    }
}
