//! TCP receiver: cumulative ACK plus one SACK block (the range holding the
//! segment just received, as RFC 2018's first block), out-of-order data
//! kept, delayed ACKs (every n-th packet, or n segments' worth of bytes as
//! ns-2's FullTcp counts, with a timer), and the ECN echo
//! its congestion control asks for (RFC 3168 latch, or DCTCP's exact echo
//! with the delayed-ACK state machine of the DCTCP paper §3.1). Linux's
//! delayed-ACK rules (`delack_linux.rs`) replace the every-n-th count.

use super::cc::EchoMode;

/// An ACK to send back.
#[derive(Clone, Copy, Debug)]
pub struct AckOut {
    pub ack: u64,
    pub sack: (u64, u64),
    pub ece: bool,
}

// When in-order data is acknowledged (`TcpReceiver::rule`): every
// `ack_at`-th packet; once `ack_at` bytes are unacknowledged (ns-2
// FullTcp); or from LINUX up, Linux's rules (`delack_linux.rs`): `ack_at`
// bytes, one MSS and one byte, and `rule − LINUX` quick ACKs left. The
// count shares the byte so that `Flow` keeps its size, and the test of it
// sits where the default receiver, which ACKs every packet, never looks.
const PACKETS: u8 = 0;
const BYTES: u8 = 1;
const LINUX: u8 = 2;

#[derive(Clone)]
pub struct TcpReceiver {
    pub rcv_nxt: u64,
    /// Out-of-order ranges above rcv_nxt, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    mode: EchoMode,
    /// `pending` at which the ACK goes at once.
    ack_at: u32,
    /// PACKETS, BYTES, or LINUX plus the quick ACKs left.
    rule: u8,
    /// Data packets (or bytes) received and not yet acknowledged.
    pub pending: u32,
    /// DCTCP: CE bit of the last data packet.
    ce_state: bool,
    /// RFC 3168: echo ECE until CWR arrives.
    ece_latch: bool,
    pub ce_received: u32,
}

/// What one data packet did at the receiver.
pub struct RxOutcome {
    /// In-order bytes newly handed to the application.
    pub delivered: u64,
    /// An ACK sent before this packet's own (DCTCP's CE-change ACK).
    pub early_ack: Option<AckOut>,
    /// This packet's ACK, if sent now (else the delayed-ACK timer covers it).
    pub ack: Option<AckOut>,
}

impl TcpReceiver {
    pub fn new(mode: EchoMode, ack_every: u32) -> Self {
        TcpReceiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            mode,
            ack_at: ack_every,
            rule: PACKETS,
            pending: 0,
            ce_state: false,
            ece_latch: false,
            ce_received: 0,
        }
    }

    /// Count unacknowledged bytes instead (ns-2 FullTcp's need_send): the
    /// ACK goes once `ack_every` segments of `mss` bytes are unacknowledged,
    /// so a shorter segment waits for more data or the delayed-ACK timer.
    pub fn counting_bytes(mut self, mss: u32) -> Self {
        self.rule = BYTES;
        self.ack_at = self.ack_at.saturating_mul(mss);
        self
    }

    /// Linux's delayed-ACK rules (`delack_linux.rs`): quick ACKs first,
    /// then an ACK once more than one segment of `mss` bytes waits.
    pub fn linux_rules(mut self, mss: u32) -> Self {
        self.rule = LINUX + super::delack_linux::QUICK_ACKS;
        self.ack_at = mss + 1;
        self
    }

    /// The receiver `t` asks for: Linux's rules, ns-2's byte counting, or
    /// every `delayed_ack`-th packet.
    pub fn for_transport(echo: EchoMode, t: &crate::config::TransportCfg, linux: bool) -> Self {
        let echo =
            if echo == EchoMode::Exact && super::cc::dctcp_linux::active(t) { EchoMode::ExactAckNow } else { echo };
        let r = TcpReceiver::new(echo, t.delayed_ack);
        if linux {
            r.linux_rules(t.mss)
        } else if t.delayed_ack_bytes {
            r.counting_bytes(t.mss)
        } else {
            r
        }
    }

    /// In Linux's quick-ACK mode: spend a quick ACK, true. Tested only
    /// when no other rule sends the ACK, so the default receiver (every
    /// packet ACKed) never reaches it; an ACK that goes anyway (out of
    /// order, a merged burst) spends none, where Linux's spends one.
    #[inline]
    fn quick_ack(&mut self) -> bool {
        let quick = self.rule > LINUX;
        if quick {
            self.rule -= 1;
        }
        quick
    }

    fn ece(&self) -> bool {
        match self.mode {
            EchoMode::None => false,
            EchoMode::Latched => self.ece_latch,
            EchoMode::Exact | EchoMode::ExactAckNow => self.ce_state,
        }
    }

    /// What is held out of order above rcv_nxt, sorted and disjoint.
    pub fn ooo(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Whether every byte of [seq, end) has already arrived: a copy of
    /// it now is one the sender need not have sent.
    #[inline]
    pub fn holds(&self, seq: u64, end: u64) -> bool {
        end <= self.rcv_nxt || self.ooo.iter().any(|r| r.0 <= seq && end <= r.1)
    }

    fn sack_for(&self, seq: u64) -> (u64, u64) {
        self.ooo.iter().find(|r| r.0 <= seq && seq < r.1).copied().unwrap_or((0, 0))
    }

    /// `mss`: a merged (GRO) segment of n·mss counts as n packets toward
    /// `ack_every`, as Linux ACKs once over a full segment's worth arrived.
    pub fn on_data(&mut self, seq: u64, len: u32, mss: u32, ce: bool, cwr: bool) -> RxOutcome {
        if ce {
            self.ce_received += 1;
        }
        let mut early_ack = None;
        // Linux's DCTCP ACKs the packet that changed the CE state at once.
        let mut ack_now = false;
        match self.mode {
            EchoMode::Exact | EchoMode::ExactAckNow => {
                if ce != self.ce_state {
                    if self.pending > 0 {
                        early_ack = Some(AckOut { ack: self.rcv_nxt, sack: (0, 0), ece: self.ce_state });
                        self.pending = 0;
                        self.quick_ack();
                    }
                    ack_now = self.mode == EchoMode::ExactAckNow;
                }
                self.ce_state = ce;
            }
            EchoMode::Latched => {
                if cwr {
                    self.ece_latch = false;
                }
                if ce {
                    if !self.ece_latch {
                        self.enter_quick_acks(super::delack_linux::QUICK_ACKS_ON_CE);
                    }
                    self.ece_latch = true;
                }
            }
            EchoMode::None => {}
        }
        let end = seq + len as u64;
        let before = self.rcv_nxt;
        let mut in_order = false;
        if seq <= self.rcv_nxt && end > self.rcv_nxt {
            self.rcv_nxt = end;
            in_order = true;
            // Pull in buffered ranges the new data now reaches.
            let k = self.ooo.partition_point(|r| r.0 <= self.rcv_nxt);
            for r in self.ooo.drain(..k) {
                self.rcv_nxt = self.rcv_nxt.max(r.1);
            }
        } else if seq > self.rcv_nxt {
            super::ranges::insert(&mut self.ooo, seq, end);
        }
        // One per packet, a GRO-merged segment counting its packets; or
        // its bytes.
        self.pending += if self.rule != PACKETS {
            len
        } else if len > mss {
            len.div_ceil(mss)
        } else {
            1
        };
        // Out-of-order, duplicate, or hole-filling data is ACKed at once;
        // so is everything in Linux's quick-ACK mode, and under Linux's
        // rules a short segment the application reads at once.
        let now = !in_order
            || ack_now
            || !self.ooo.is_empty()
            || self.rcv_nxt - before > len as u64
            || self.pending >= self.ack_at
            || self.rule >= LINUX && len < mss
            || self.quick_ack();
        let ack = if now {
            self.pending = 0;
            Some(AckOut { ack: self.rcv_nxt, sack: self.sack_for(seq), ece: self.ece() })
        } else {
            None
        };
        RxOutcome { delivered: self.rcv_nxt - before, early_ack, ack }
    }

    /// Linux's rules: data arrives after the connection was idle longer
    /// than the receiver's RTO, so it is in quick-ACK mode again
    /// (`delack_linux.rs`).
    pub fn idle_restart(&mut self) {
        self.enter_quick_acks(super::delack_linux::QUICK_ACKS);
    }

    /// Under Linux's rules, at least `n` quick ACKs from now (Linux
    /// tcp_enter_quickack_mode); other receivers have no such mode.
    fn enter_quick_acks(&mut self, n: u8) {
        if self.rule >= LINUX {
            self.rule = self.rule.max(LINUX + n);
        }
    }

    /// The delayed-ACK timer fired.
    pub fn flush(&mut self) -> Option<AckOut> {
        if self.pending == 0 {
            return None;
        }
        self.pending = 0;
        self.quick_ack();
        Some(AckOut { ack: self.rcv_nxt, sack: (0, 0), ece: self.ece() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DCTCP receiver with ACK-every-2: a CE change flushes the pending
    /// ACK carrying the old CE state (DCTCP paper §3.1, Fig. 10).
    #[test]
    fn dctcp_state_machine_acks_on_ce_change() {
        let mut r = TcpReceiver::new(EchoMode::Exact, 2);
        assert!(r.on_data(0, 1000, 1460, false, false).ack.is_none());
        let o = r.on_data(1000, 1000, 1460, true, false);
        let early = o.early_ack.expect("CE change must flush the pending ACK");
        assert_eq!((early.ack, early.ece), (1000, false));
        assert!(o.ack.is_none());
        let o = r.on_data(2000, 1000, 1460, true, false);
        assert_eq!(o.ack.map(|a| (a.ack, a.ece)), Some((3000, true)));
    }

    /// Linux's DCTCP receiver (tcp_dctcp.h dctcp_ece_ack_update) under
    /// Linux's delayed ACKs, past its quick ACKs: the held ACK goes first
    /// with the old state, as in the paper, and the CE packet's own ACK
    /// goes at once (ICSK_ACK_NOW) where the paper's machine holds it.
    /// With nothing held, the change alone ACKs at once. A packet that
    /// keeps the state waits as usual.
    #[test]
    fn linux_dctcp_acks_the_ce_change_at_once() {
        for (mode, acked_at_once) in [(EchoMode::Exact, false), (EchoMode::ExactAckNow, true)] {
            let mut r = TcpReceiver::new(mode, 1).linux_rules(1000);
            r.rule = LINUX; // quick ACKs spent
            assert!(r.on_data(0, 1000, 1000, false, false).ack.is_none());
            let o = r.on_data(1000, 1000, 1000, true, false);
            assert_eq!(o.early_ack.map(|a| (a.ack, a.ece)), Some((1000, false)));
            assert_eq!(o.ack.map(|a| (a.ack, a.ece)), acked_at_once.then_some((2000, true)), "{mode:?}");
            let mut r = TcpReceiver::new(mode, 1).linux_rules(1000);
            r.rule = LINUX;
            let o = r.on_data(0, 1000, 1000, true, false);
            assert!(o.early_ack.is_none());
            assert_eq!(o.ack.is_some(), acked_at_once, "{mode:?}");
            let o = r.on_data(1000, 1000, 1000, true, false);
            assert_eq!(o.ack.is_some(), !acked_at_once, "{mode:?}");
        }
    }

    /// RFC 3168: ECE is echoed on every ACK until a CWR-marked packet.
    #[test]
    fn rfc3168_latch_until_cwr() {
        let mut r = TcpReceiver::new(EchoMode::Latched, 1);
        assert!(r.on_data(0, 1000, 1460, true, false).ack.unwrap().ece);
        assert!(r.on_data(1000, 1000, 1460, false, false).ack.unwrap().ece);
        assert!(!r.on_data(2000, 1000, 1460, false, true).ack.unwrap().ece);
    }

    /// Out-of-order data is buffered and SACKed; the hole's arrival
    /// delivers everything at once.
    #[test]
    fn reassembly_and_sack() {
        let mut r = TcpReceiver::new(EchoMode::None, 1);
        r.on_data(0, 100, 1460, false, false);
        let o = r.on_data(200, 100, 1460, false, false);
        assert_eq!(o.delivered, 0);
        assert_eq!(o.ack.unwrap().sack, (200, 300));
        let o = r.on_data(100, 100, 1460, false, false);
        assert_eq!((o.delivered, r.rcv_nxt), (200, 300));
    }

    /// With delayed ACKs (every 2nd packet), a GRO-merged segment of 17
    /// packets is ACKed at once, as Linux ACKs once over one full segment
    /// has arrived; a lone packet still waits.
    #[test]
    fn merged_segment_counts_its_packets_toward_delayed_ack() {
        let mut r = TcpReceiver::new(EchoMode::Exact, 2);
        assert!(r.on_data(0, 1460, 1460, false, false).ack.is_none());
        assert!(r.on_data(1460, 1460, 1460, false, false).ack.is_some());
        assert!(r.on_data(2920, 17 * 1460, 1460, false, false).ack.is_some());
    }

    /// Counting bytes with one segment per ACK (ns-2 FullTcp, segsperack_
    /// 1): a full segment is acknowledged at once, a 500-byte tail waits
    /// for the timer, and a second short segment completing 1460 bytes
    /// releases the ACK (rcv_nxt − last ACK ≥ 1 MSS).
    #[test]
    fn byte_counting_holds_short_segments() {
        let mut r = TcpReceiver::new(EchoMode::None, 1).counting_bytes(1460);
        assert!(r.on_data(0, 1460, 1460, false, false).ack.is_some());
        assert!(r.on_data(1460, 500, 1460, false, false).ack.is_none());
        assert_eq!(r.pending, 500);
        assert!(r.on_data(1960, 960, 1460, false, false).ack.is_some());
        assert!(r.on_data(2920, 1, 1460, false, false).ack.is_none());
        assert_eq!(r.flush().map(|a| a.ack), Some(2921));
        // Counting packets, the same 500-byte segment is acknowledged at once.
        let mut r = TcpReceiver::new(EchoMode::None, 1);
        assert!(r.on_data(0, 500, 1460, false, false).ack.is_some());
    }

    /// Linux's quick ACKs (`delack_linux.rs`): the first 16 in-order
    /// segments are each ACKed at once (TCP_MAX_QUICKACKS); after that a
    /// lone full segment waits (rcv_nxt − rcv_wup = 1 MSS is not more than
    /// one MSS) and the second releases the ACK.
    #[test]
    fn linux_quick_acks_then_every_second_full_segment() {
        let mss = 1460;
        let mut r = TcpReceiver::new(EchoMode::None, 1).linux_rules(1460);
        for k in 0..16u64 {
            assert!(r.on_data(k * 1460, mss, mss, false, false).ack.is_some(), "segment {k}");
        }
        assert!(r.on_data(16 * 1460, mss, mss, false, false).ack.is_none());
        assert_eq!(r.on_data(17 * 1460, mss, mss, false, false).ack.map(|a| a.ack), Some(18 * 1460));
        assert!(r.on_data(18 * 1460, mss, mss, false, false).ack.is_none());
        // The timer's ACK covers the held segment.
        assert_eq!(r.flush().map(|a| a.ack), Some(19 * 1460));
        // A full segment and a short one: 1960 > 1460 bytes waiting, ACK.
        assert!(r.on_data(19 * 1460, mss, mss, false, false).ack.is_none());
        assert!(r.on_data(20 * 1460, 500, mss, false, false).ack.is_some());
        // A GRO-merged segment of 3 packets is ACKed at once.
        assert!(r.on_data(20 * 1460 + 500, 3 * mss, mss, false, false).ack.is_some());
    }

    /// A short segment in order is ACKed at once under Linux's rules, the
    /// application reading it at once (tcp_cleanup_rbuf with the segment
    /// marked ICSK_ACK_PUSHED: the read drained the queue): a message's
    /// last segment does not wait 40 ms for the timer. A full one still
    /// waits for a second.
    #[test]
    fn linux_acks_a_short_segment_at_once() {
        let mss = 1460;
        let mut r = TcpReceiver::new(EchoMode::None, 1).linux_rules(mss);
        r.rule = LINUX; // the quick ACKs spent
        assert!(r.on_data(0, mss, mss, false, false).ack.is_none());
        assert_eq!(r.on_data(1460, 700, mss, false, false).ack.map(|a| a.ack), Some(2160));
        assert!(r.on_data(2160, 200, mss, false, false).ack.is_some(), "a short segment alone");
        assert!(r.on_data(2360, mss, mss, false, false).ack.is_none());
        // Counting bytes as ns-2 does, a short segment alone waits.
        let mut r = TcpReceiver::new(EchoMode::None, 2).counting_bytes(mss);
        assert!(r.on_data(0, 500, mss, false, false).ack.is_none());
    }

    /// After an idle spell longer than the receiver's RTO the next data
    /// is in quick-ACK mode again, 16 ACKs at once (Linux
    /// tcp_event_data_recv: tcp_incr_quickack when the gap since the last
    /// data exceeds icsk_rto); the default receiver is unaffected.
    #[test]
    fn linux_quick_acks_again_after_idle() {
        let mss = 1460;
        let mut r = TcpReceiver::new(EchoMode::None, 1).linux_rules(mss);
        r.rule = LINUX;
        assert!(r.on_data(0, mss, mss, false, false).ack.is_none());
        r.flush();
        r.idle_restart();
        for k in 1..17u64 {
            assert!(r.on_data(k * 1460, mss, mss, false, false).ack.is_some(), "segment {k}");
        }
        assert!(r.on_data(17 * 1460, mss, mss, false, false).ack.is_none());
        let mut plain = TcpReceiver::new(EchoMode::None, 2);
        plain.idle_restart();
        assert_eq!(plain.rule, PACKETS);
    }

    /// Linux ACKs out-of-order data at once, after the quick ACKs too, and
    /// the segment filling the hole.
    #[test]
    fn linux_acks_out_of_order_data_at_once() {
        let mss = 1460;
        let mut r = TcpReceiver::new(EchoMode::None, 1).linux_rules(1460);
        for k in 0..16u64 {
            r.on_data(k * 1460, mss, mss, false, false);
        }
        assert!(r.on_data(17 * 1460, mss, mss, false, false).ack.is_some(), "above a hole");
        let a = r.on_data(16 * 1460, mss, mss, false, false).ack.expect("hole filled");
        assert_eq!(a.ack, 18 * 1460);
    }

    /// A CE mark that starts an RFC 3168 echo earns two quick ACKs
    /// (Linux tcp_ecn_check_ce: tcp_enter_quickack_mode(sk, 2)); a further
    /// CE while ECE is latched earns none.
    #[test]
    fn linux_quick_acks_after_a_fresh_ce() {
        let mss = 1460;
        let mut r = TcpReceiver::new(EchoMode::Latched, 1).linux_rules(1460);
        let mut seq = 0;
        let mut send = |r: &mut TcpReceiver, ce: bool| {
            let o = r.on_data(seq, mss, mss, ce, false);
            seq += mss as u64;
            o.ack.is_some()
        };
        for _ in 0..16 {
            assert!(send(&mut r, false));
        }
        assert!(!send(&mut r, false));
        assert!(send(&mut r, false));
        // CE: this ACK and the next go at once.
        assert!(send(&mut r, true));
        assert!(send(&mut r, true));
        assert!(!send(&mut r, true));
    }
}
