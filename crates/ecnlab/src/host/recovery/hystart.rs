//! HyStart, the slow-start exit of Linux's CUBIC (net/ipv4/tcp_cubic.c:
//! cubictcp_acked, hystart_update, bictcp_hystart_reset), opt-in by
//! `transport.hystart` with cc = "cubic" (on in the `linux` profile; other
//! congestion controls ignore it).
//!
//! Which HyStart: Linux runs the original one of Ha & Rhee ("Taming the
//! elephants: new TCP slow start", Computer Networks 2011; the file's
//! header cites their 2008 report), not RFC 9406's HyStart++. Read in
//! tcp_cubic.c (hystart_update, cubictcp_acked): it keeps the ACK-train
//! detector, which HyStart++ dropped; its delay test compares a round's
//! minimum RTT with the connection's minimum (delay_min), where HyStart++
//! compares it with the last round's minimum (the same clamp(·/8, 4 ms,
//! 16 ms) threshold and 8 samples, though); and an exit goes straight to
//! congestion avoidance (ssthresh = cwnd), with no Conservative Slow
//! Start phase and no return to slow start when the RTT falls back. Once
//! found, HyStart does not run again until an RTO resets it.
//!
//! Per ACK carrying an RTT sample (cubictcp_acked), in whole µs as the
//! kernel's clock:
//! - samples within 1 s (HZ) of the start of CUBIC's congestion-avoidance
//!   epoch are ignored ("right after fast recovery");
//! - delay_min, the connection's smallest sample, is kept;
//! - in slow start with cwnd ≥ 16 (hystart_low_window) and no exit found
//!   yet, hystart_update: a round starts when snd_una passes the snd_nxt of
//!   the last round's start (round_start = now, end_seq = snd_nxt); then
//!   - ACK train: while ACKs come within 2 ms (hystart_ack_delta_us) of the
//!     last, exit once the round has lasted more than delay_min plus
//!     hystart_ack_delay (the time 4 × 64 KB of GSO take at the pacing
//!     rate, 2·cwnd·mss/srtt in slow start, at most 1 ms), halved since
//!     nothing paces the sender (sk_pacing_status none, as under fq_codel);
//!   - delay increase: curr_rtt, the round's smallest sample so far, is
//!     compared from the round's 9th sample on (HYSTART_MIN_SAMPLES = 8
//!     taken first) with delay_min + clamp(delay_min/8, 4 ms, 16 ms); exit
//!     once above.
//! - After an RTO (TCP_CA_Loss) everything starts again, delay_min too.
//!
//! The constants are the kernel's, tuned for WAN RTTs. At data-centre
//! RTTs of tens of µs:
//! - the delay test needs 4 ms of queue above delay_min (the clamp's
//!   floor), some 3,300 packets at 10 Gbps, more than a shallow buffer
//!   holds: there it never fires before a loss;
//! - every ACK is within 2 ms of the last, so the ACK-train test reduces to
//!   "the round has lasted (delay_min + ack_delay)/2", and ack_delay, under
//!   its 1 ms cap, is 4·64 KB / (2·cwnd·mss/srtt) ≈ 90·srtt/cwnd at mss
//!   1460. A round's ACKs span about one RTT, so the train fires once
//!   srtt > srtt/2 + 45·srtt/cwnd, i.e. near cwnd = 2·64 KB/mss ≈ 90
//!   segments whatever the BDP (a lone flow at 10 and at 25 Gbps with 100
//!   µs RTTs, BDPs of 83 and 208 packets, left slow start at cwnd 102 and
//!   98).
//!
//! At WAN-like RTTs, where the ACK trains of slow start are separated by
//! idle gaps longer than 2 ms, a round (from the first ACK past the last
//! round's snd_nxt) starts in the middle of a train, and after the gap the
//! train test is idle for the rest of the round (last_ack is no longer
//! updated): the delay test then usually ends slow start, as the kernel's
//! does.

use super::mechanism::{Mechanism, MechanismDecl, Shared};
use crate::config::param::section;
use crate::config::TransportCfg;
use crate::host::snd::Snd;
use crate::units::Time;

section! {
    /// The key of CUBIC's HyStart, in `[transport]`.
    pub struct HystartParams {
        /// HyStart (Linux's CUBIC, Ha & Rhee's original, not RFC 9406's HyStart++): from cwnd 16,
        /// slow start ends (ssthresh = cwnd) when a round's train of ACKs (each within 2 ms of the
        /// last) outlasts half of the minimum RTT plus a GSO cushion of at most 1 ms, or the
        /// round's smallest RTT from its 9th sample on exceeds the minimum by clamp(min RTT/8, 4 ms,
        /// 16 ms); the kernel's constants. Only cc = "cubic"; others ignore it. The `linux`
        /// profile turns it on.
        hystart: bool = false, resolved Given, source "Linux tcp_cubic.c hystart_update; Ha & Rhee, Computer Networks 2011";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[HystartParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "hystart",
            "CUBIC's HyStart (with cc = \"cubic\"): slow start ended on a long ACK train or a rising RTT, before the buffer overflows",
            "Linux tcp_cubic.c hystart_update; Ha & Rhee, Computer Networks 2011",
        )
    },
};

impl HystartParams {
    pub fn of(t: &crate::config::TransportCfg) -> HystartParams {
        t.scheme_keys(HystartParams::read).expect("a checked config")
    }
}

/// HyStart runs: CUBIC with `hystart`.
pub fn active(t: &crate::config::TransportCfg) -> bool {
    t.cc.as_str() == "cubic" && HystartParams::of(t).hystart
}

/// hystart_low_window: no exit below this cwnd (segments).
pub const LOW_WINDOW: f64 = 16.0;
/// hystart_ack_delta_us: ACKs closer than this form a train.
const ACK_DELTA_US: u64 = 2000;
/// HYSTART_MIN_SAMPLES: RTT samples of a round before the delay test.
const MIN_SAMPLES: u8 = 8;
/// HYSTART_DELAY_MIN, HYSTART_DELAY_MAX: the delay threshold's clamp.
const DELAY_MIN_US: u64 = 4000;
const DELAY_MAX_US: u64 = 16_000;
/// GSO_LEGACY_MAX_SIZE, the socket's sk_gso_max_size by default.
const GSO_MAX_BYTES: u64 = 65_536;
const PS_PER_US: u64 = 1_000_000;

/// Which test ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    AckTrain,
    Delay,
}

/// A connection's HyStart state (struct bictcp's HyStart fields), in µs.
#[derive(Clone, Debug, Default)]
pub struct Hystart {
    pub found: Option<Exit>,
    /// The smallest RTT sample (0: none yet).
    pub delay_min: u64,
    round_start: u64,
    last_ack: u64,
    end_seq: u64,
    /// The round's smallest sample so far (reset to u64::MAX each round).
    curr_rtt: u64,
    sample_cnt: u8,
}

/// One ACK as HyStart sees it.
#[derive(Clone, Copy, Debug)]
pub struct HyAck {
    pub now: Time,
    pub rtt: Time,
    pub una: u64,
    pub nxt: u64,
    pub cwnd: f64,
    pub ssthresh: f64,
    pub srtt: Time,
    pub mss: u32,
    /// Start of CUBIC's congestion-avoidance epoch, if one is running.
    pub epoch_start: Option<Time>,
}

impl Hystart {
    /// An RTO: back to the start (bictcp_reset, bictcp_hystart_reset).
    pub fn reset(&mut self, now: Time, nxt: u64) {
        *self = Hystart::default();
        self.new_round(now / PS_PER_US, nxt);
    }

    fn new_round(&mut self, now_us: u64, nxt: u64) {
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = nxt;
        self.curr_rtt = u64::MAX;
        self.sample_cnt = 0;
    }

    /// An ACK with an RTT sample (cubictcp_acked): the exit found by it,
    /// if any; the caller then sets ssthresh = cwnd.
    pub fn on_ack(&mut self, a: &HyAck) -> Option<Exit> {
        let delay = crate::host::cc::cubic_linux::note_delay(&mut self.delay_min, a.now, a.epoch_start, a.rtt)?;
        let cwnd = a.cwnd.floor(); // Linux's snd_cwnd, whole segments
        if self.found.is_some() || cwnd >= a.ssthresh || cwnd < LOW_WINDOW {
            return None;
        }
        self.found = self.update(a, delay, cwnd);
        self.found
    }

    /// hystart_update: a new round when snd_una has passed end_seq, then
    /// both tests.
    fn update(&mut self, a: &HyAck, delay: u64, cwnd: f64) -> Option<Exit> {
        let now = a.now / PS_PER_US;
        if a.una > self.end_seq {
            self.new_round(now, a.nxt);
        }
        let mut found = None;
        if now - self.last_ack <= ACK_DELTA_US {
            self.last_ack = now;
            // Halved: nothing paces ecnlab's senders (SK_PACING_NONE).
            let threshold = (self.delay_min + ack_delay(a, cwnd)) >> 1;
            if now - self.round_start > threshold {
                found = Some(Exit::AckTrain);
            }
        }
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt > self.delay_min + (self.delay_min >> 3).clamp(DELAY_MIN_US, DELAY_MAX_US) {
            found = found.or(Some(Exit::Delay));
        }
        found
    }
}

/// hystart_ack_delay: the time (µs) four GSO packets of 64 KB take at the
/// pacing rate Linux keeps for every socket (tcp_update_pacing_rate:
/// mss·cwnd/srtt scaled by 200% while cwnd < ssthresh/2, else 120%), at
/// most 1 ms; none before an RTT is known.
fn ack_delay(a: &HyAck, cwnd: f64) -> u64 {
    let srtt_us = a.srtt / PS_PER_US;
    if srtt_us == 0 {
        return 0;
    }
    let ratio = if cwnd < a.ssthresh / 2.0 { 200 } else { 120 };
    let rate = a.mss as u64 * cwnd as u64 * ratio * 10_000 / srtt_us; // bytes/s
    (GSO_MAX_BYTES * 4 * 1_000_000 / rate.max(1)).min(1000)
}

impl Hystart {
    /// An ACK that advanced snd_una with an RTT sample `rtt`, before the
    /// congestion control grows the window (Linux calls pkts_acked from
    /// tcp_clean_rtx_queue, before cong_avoid): an exit ends slow start.
    pub fn sender_ack(&mut self, s: &mut Snd, now: Time, rtt: Time) {
        let a = HyAck {
            now,
            rtt,
            una: s.una,
            nxt: s.nxt,
            cwnd: s.w.cwnd,
            ssthresh: s.w.ssthresh,
            srtt: s.srtt as Time,
            mss: s.p.mss,
            epoch_start: s.cc.cubic_epoch_start(),
        };
        if self.on_ack(&a).is_some() {
            s.w.ssthresh = s.w.cwnd;
        }
    }
}

impl Mechanism for Hystart {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        active(t).then_some(())
    }

    #[inline]
    fn on_rtt_ack(&mut self, _: &(), s: &mut Snd, now: Time, rtt: Time) {
        self.sender_ack(s, now, rtt);
    }

    /// Linux: TCP_CA_Loss resets it all.
    fn on_timeout(&mut self, _: &(), _: &mut Shared, s: &Snd, now: Time) {
        self.reset(now, s.una);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = PS_PER_US;
    const MSS: u64 = 1460;

    fn ack(now: Time, rtt: Time, una: u64, cwnd: f64) -> HyAck {
        HyAck {
            now,
            rtt,
            una: una * MSS,
            nxt: una * MSS + cwnd as u64 * MSS,
            cwnd,
            ssthresh: f64::INFINITY,
            srtt: rtt,
            mss: MSS as u32,
            epoch_start: None,
        }
    }

    /// The ACK train alone: 10 ms base RTT (delay_min 10,000 µs), cwnd 64
    /// (a round of 64 ACKs), every RTT sample the base, ACKs 100 µs apart.
    /// ack_delay is 4·65,536 B / (2·64·1460 B / 10 ms) = 14,027 µs, capped at 1,000 µs,
    /// so the threshold is (10,000 + 1,000)/2 = 5,500 µs: the round's
    /// first ACK starts it at t0 and the ACK at t0 + 5,600 µs (the 57th) is
    /// the first more than 5,500 µs later. The delay test never fires: no
    /// sample is above the base. With ACKs 2.1 ms apart (over
    /// hystart_ack_delta) there is no train, and nothing fires.
    #[test]
    fn ack_train_exits_once_a_round_outlasts_half_the_min_rtt() {
        let base = 10_000 * US;
        let mut h = Hystart::default();
        let t0 = 1_000_000 * US;
        let mut exit = None;
        for i in 0..100u64 {
            if let Some(e) = h.on_ack(&ack(t0 + i * 100 * US, base, 1 + i, 64.0)) {
                exit = Some((i, e));
                break;
            }
        }
        assert_eq!(exit, Some((56, Exit::AckTrain)));
        assert_eq!(h.delay_min, 10_000);

        let mut h = Hystart::default();
        for i in 0..100u64 {
            assert_eq!(h.on_ack(&ack(t0 + i * 2100 * US, base, 1 + i, 64.0)), None, "ack {i}");
        }
    }

    /// The delay test alone, ACKs 2.5 ms apart (no train): delay_min is
    /// 40 ms, so the threshold is 40 + clamp(40/8, 4, 16) = 45 ms. The
    /// first round's other samples say 44 ms (below): nothing. The second
    /// round's say 46 ms: its first 8 are only taken (HYSTART_MIN_SAMPLES),
    /// the 9th finds the round's minimum, 46 ms, above 45: exit there.
    /// Below cwnd 16 (hystart_low_window) nothing is tested at all.
    #[test]
    fn delay_test_exits_on_the_ninth_sample_of_a_round_above_the_threshold() {
        let mut h = Hystart::default();
        let mut now = 1_000_000 * US;
        assert_eq!(h.on_ack(&ack(now, 40_000 * US, 1, 20.0)), None);
        // Round 1 began at that ACK (snd_una 1, end_seq its snd_nxt, 1 +
        // 20 segments): it runs to snd_una 21.
        let mut got = Vec::new();
        for una in 2..60u64 {
            now += 2500 * US;
            let rtt = if una <= 21 { 44_000 } else { 46_000 };
            if let Some(e) = h.on_ack(&ack(now, rtt * US, una, 20.0)) {
                got.push((una, e));
                break;
            }
        }
        // Round 2 starts at snd_una 22 (past end_seq); its 9th ACK is 30.
        assert_eq!(got, [(30, Exit::Delay)]);
        assert_eq!(h.delay_min, 40_000);

        let mut h = Hystart::default();
        for una in 1..60u64 {
            assert_eq!(h.on_ack(&ack(una * 2500 * US, 80_000 * US, una, 15.0)), None);
        }
    }

    /// Samples within 1 s of the start of CUBIC's epoch do not count
    /// (cubictcp_acked: "right after fast recovery"); once found, nothing
    /// more until an RTO resets it, delay_min too.
    #[test]
    fn samples_after_recovery_are_ignored_and_an_rto_starts_again() {
        let mut h = Hystart::default();
        let mut a = ack(500_000 * US, 30 * US, 1, 20.0);
        a.epoch_start = Some(0);
        assert_eq!(h.on_ack(&a), None);
        assert_eq!(h.delay_min, 0);
        a.now = 1_000_001 * US;
        h.on_ack(&a);
        assert_eq!(h.delay_min, 30);
        h.found = Some(Exit::AckTrain);
        h.reset(2_000_000 * US, 0);
        assert_eq!((h.found, h.delay_min), (None, 0));
    }

    /// A lone CUBIC flow (IW 10) through a 5 Mbps bottleneck (T = 2.4 ms
    /// per packet) with a deep 100-packet buffer and 20 ms of propagation,
    /// each segment ACKed at once; a FIFO stands in for the switch. ACKs
    /// come T = 2.4 ms apart, over hystart_ack_delta (2 ms): no ACK train,
    /// so only the delay test can act. The arithmetic:
    /// - delay_min = R + T = 22.4 ms (the first packet, queue empty);
    ///   threshold 22.4 + clamp(22.4/8 = 2.8, 4, 16) = 26.4 ms.
    /// - IW 10 goes at once; its ACKs (1–10) each send two packets, so
    ///   from ACK 11 on the queue grows by one packet per ACK and the RTT
    ///   by T every two ACKs: ACK k ≥ 11 samples 24.0 + 2.4·⌈(k − 11)/2⌉
    ///   ms (the packet of ACK 11 left at ACK 1 and found 0.67 packets
    ///   ahead of it).
    /// - HyStart's first round starts when cwnd reaches 16, at ACK 7
    ///   (10 + 6), and ends at snd_nxt then, 22 segments: its minimum, ACK
    ///   11's 24.0 ms, is under 26.4. The second round starts at ACK 23
    ///   and samples 38.4 ms and up; at its 9th sample, ACK 31, it exits
    ///   with ssthresh = cwnd = 10 + 30 = 40.
    /// - The queue is then 39 − 9.3 (BDP) ≈ 30 packets, far from 100: no
    ///   loss. Without HyStart slow start goes on until the buffer drops a
    ///   packet, with cwnd near 100 + BDP.
    #[test]
    fn a_lone_flow_leaves_slow_start_on_the_delay_test_before_a_loss() {
        use crate::config::TransportCfg;
        use crate::host::tcp_tx::TcpSender;
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;

        const MS: Time = 1000 * US;
        let (t_pkt, prop, buffer) = (2_400 * US, 20 * MS, 100usize);
        let run = |hystart: bool| {
            let json = format!(r#"{{"cc": "cubic", "init_cwnd": 10, "hystart": {hystart}}}"#);
            let t: TransportCfg = serde_json::from_str(&json).unwrap();
            let mut s = TcpSender::new(&t);
            s.limit = u64::MAX;
            s.open(0);
            s.on_synack(prop, 0);
            // (ACK arrival, segment end, send time), earliest first.
            let mut acks = BinaryHeap::new();
            let (mut free, mut now, mut acked) = (0, prop, 0u64);
            loop {
                while let Some(g) = s.next_segment(now) {
                    let queued = acks.iter().filter(|Reverse((a, _, _))| *a - prop > now).count();
                    if queued > buffer {
                        return (s.hystart_exit(), acked, s.w.cwnd, s.w.ssthresh, true);
                    }
                    free = free.max(now) + t_pkt;
                    acks.push(Reverse((free + prop, g.seq + g.len as u64, now)));
                }
                let Reverse((at, end, sent)) = acks.pop().expect("data in flight");
                now = at;
                acked += 1;
                let cwnd = s.w.cwnd;
                s.on_ack(now, end, (0, 0), false, sent);
                if s.w.ssthresh.is_finite() {
                    return (s.hystart_exit(), acked, cwnd, s.w.ssthresh, false);
                }
            }
        };
        let (exit, ack, cwnd, ssthresh, lost) = run(true);
        assert_eq!((exit, ack, cwnd, ssthresh, lost), (Some(Exit::Delay), 31, 40.0, 40.0, false));
        let (exit, _, cwnd, _, lost) = run(false);
        assert!(exit.is_none() && lost && cwnd > 100.0, "{cwnd}");
    }
}
