//! Large segment offload (LSO/TSO) at a TCP sender, after CEDM §II-A.
//!
//! With LSO the sender does not hand the NIC one packet per ACK: it waits
//! ("defers") until the window allows a large segment, then hands over up
//! to `lso_max` bytes at once, which the NIC cuts into MSS packets that
//! leave back to back at line rate. When to stop waiting follows Linux's
//! `tcp_tso_should_defer` as CEDM Table I lists it; a send goes now when
//!
//! 1. the window allows at least β (`lso_fraction`) of cwnd;
//! 2. it allows a full segment (`lso_max`);
//! 3. (and 5.) it allows all the data the application has handed over
//!    (the last, short segment of a flow, which would wait for data that
//!    never comes);
//! 4. the sender is not in the open state: in loss recovery each packet is
//!    sent at once, one per segment, as without LSO; in the CWR state after
//!    an ECN cut, what the window allows is sent at once as one segment
//!    (Linux: any state but TCP_CA_Open "sends now"). `lso_defer_in_cwr`
//!    keeps deferring in CWR instead, to see what that condition is worth;
//! 6. the deferral has lasted `lso_defer_limit` (2 ticks in Linux).
//!
//! A burst is thus about min(lso_max, β·cwnd) (CEDM §II-A). Linux checks
//! cond. 6 only when it next tries to send (an ACK); here a timer also
//! ends a deferral on time when no ACK comes. One timer event per flow
//! is pending at most, and stale ones are recognised by their time, as
//! for the RTO.
//!
//! Counts are in packets: Linux's allowance, (cwnd − in flight)·MSS, is a
//! whole number of MSS too.

use crate::config::{HostCfg, TransportCfg};
use crate::units::Time;

/// No deferral under way.
const NONE: Time = Time::MAX;

/// What the window and the application allow a sender now (see
/// `TcpSender::allowance`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Allowance {
    /// The sender is in the open state (no loss recovery).
    pub open: bool,
    /// In the CWR state: an ECN cut's reduced window is draining.
    pub cwr: bool,
    /// Full packets of new data the window allows.
    pub room: u64,
    /// The window, in packets.
    pub cwnd: f64,
    /// Packets of data handed over by the application and not yet sent.
    pub rest: u64,
}

/// What the sender does now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Hand the NIC one segment of this many packets.
    Send(u32),
    /// Nothing the window allows, or nothing to send.
    Idle,
    /// Wait for a larger allowance; start a timer event at this time, if
    /// given (none is pending for the flow).
    Defer(Option<Time>),
}

/// What a timer event found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Not this flow's pending event, or its deferral is over.
    Stale,
    /// The deferral began later: wait again, until this time.
    Again(Time),
    /// The deferral has lasted its limit: try to send.
    Due,
}

pub struct Lso {
    /// Most packets in one segment: (lso_max − header) / MSS.
    max_packets: u64,
    fraction: f64,
    defer_limit: Time,
    defer_in_cwr: bool,
    /// Per flow: when its current deferral began (NONE: none) and the time
    /// of its pending timer event (0: none).
    since: Vec<Time>,
    timer: Vec<Time>,
}

impl Lso {
    /// The sender side of `[host]` for `flows` connections, if LSO is on.
    pub fn new(h: &HostCfg, t: &TransportCfg, flows: usize) -> Option<Lso> {
        if !h.lso {
            return None;
        }
        Some(Lso {
            max_packets: segment_packets(h.lso_max.0, t),
            fraction: h.lso_fraction,
            defer_limit: h.lso_defer_limit.0,
            defer_in_cwr: h.lso_defer_in_cwr,
            since: vec![NONE; flows],
            timer: vec![0; flows],
        })
    }

    /// Most packets one segment holds.
    pub fn max_packets(&self) -> u64 {
        self.max_packets
    }

    /// Decide for `flow` at `now`, given what it is allowed.
    pub fn decide(&mut self, flow: u32, now: Time, a: Allowance) -> Verdict {
        let f = flow as usize;
        let Allowance { open, cwr, room, cwnd, rest } = a;
        if !open {
            self.since[f] = NONE;
            return Verdict::Send(1);
        }
        if room == 0 || rest == 0 {
            return Verdict::Idle;
        }
        let send = (cwr && !self.defer_in_cwr) // cond. 4, CWR
            || rest <= room // cond. 3/5
            || room >= self.max_packets // cond. 2
            || room as f64 >= self.fraction * cwnd // cond. 1
            || (self.since[f] != NONE && now - self.since[f] >= self.defer_limit); // cond. 6
        if send {
            self.since[f] = NONE;
            return Verdict::Send(room.min(self.max_packets).min(rest) as u32);
        }
        if self.since[f] == NONE {
            self.since[f] = now;
        }
        if self.timer[f] != 0 {
            return Verdict::Defer(None);
        }
        let at = self.since[f] + self.defer_limit;
        self.timer[f] = at;
        Verdict::Defer(Some(at))
    }

    /// The flow's timer event fired at `now`.
    pub fn timer_fired(&mut self, flow: u32, now: Time) -> Timer {
        let f = flow as usize;
        if self.timer[f] != now {
            return Timer::Stale;
        }
        self.timer[f] = 0;
        if self.since[f] == NONE {
            return Timer::Stale;
        }
        let due = self.since[f] + self.defer_limit;
        if now < due {
            self.timer[f] = due;
            return Timer::Again(due);
        }
        Timer::Due
    }
}

/// Full packets in a segment of `bytes` (one header and its payload, as
/// Linux's 64 KB bounds an skb), at least one.
pub fn segment_packets(bytes: u64, t: &TransportCfg) -> u64 {
    (bytes.saturating_sub(t.header as u64) / t.mss as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1460;

    /// Open state, `room` packets allowed of a window of `cwnd`, with
    /// `rest` bytes left to send.
    fn allow(room: u64, cwnd: f64, rest: u64) -> Allowance {
        Allowance { open: true, cwr: false, room, cwnd, rest: rest.div_ceil(MSS) }
    }

    fn lso(extra: &str) -> Lso {
        let h: HostCfg = serde_json::from_str(&format!("{{\"lso\": true{extra}}}")).unwrap();
        Lso::new(&h, &TransportCfg::default(), 1).unwrap()
    }

    /// 64 KB (64,000 B) holds (64000 − 40) / 1460 = 43 full packets.
    #[test]
    fn segment_size_from_lso_max() {
        assert_eq!(lso("").max_packets(), 43);
        assert_eq!(lso(", \"lso_max\": \"65536B\"").max_packets(), 44);
        assert_eq!(lso(", \"lso_max\": \"1500B\"").max_packets(), 1);
    }

    /// Table I cond. 1: with cwnd = 60 and β = 0.333, the send waits until
    /// the window allows 0.333·60 = 19.98, i.e. 20 packets, and then sends
    /// all 20 in one segment: burst = βW (CEDM §II-A).
    #[test]
    fn defers_until_beta_of_the_window() {
        let mut l = lso("");
        let mut sent = None;
        for room in 1..=30 {
            match l.decide(0, room * 1000, allow(room, 60.0, u64::MAX)) {
                Verdict::Send(n) => {
                    sent = Some((room, n));
                    break;
                }
                Verdict::Defer(t) => assert_eq!(t.is_some(), room == 1, "one timer per deferral"),
                Verdict::Idle => panic!("idle with room {room}"),
            }
        }
        assert_eq!(sent, Some((20, 20)));
    }

    /// Cond. 2: with a large window the segment is capped at lso_max (43
    /// packets), sent as soon as that much is allowed; the rest of the
    /// allowance waits for the next decision.
    #[test]
    fn full_segment_goes_at_once() {
        let mut l = lso("");
        assert_eq!(l.decide(0, 0, allow(42, 300.0, u64::MAX)), Verdict::Defer(Some(2_000_000_000)));
        assert_eq!(l.decide(0, 1, allow(43, 300.0, u64::MAX)), Verdict::Send(43));
        assert_eq!(l.decide(0, 2, allow(200, 300.0, u64::MAX)), Verdict::Send(43));
    }

    /// Cond. 3/5: the last 5 KB of a flow (4 packets) go as soon as they
    /// fit, though 4 < β·cwnd; cond. 4: outside the open state one packet
    /// goes at once.
    #[test]
    fn last_data_and_recovery_do_not_wait() {
        let mut l = lso("");
        assert_eq!(l.decide(0, 0, allow(4, 60.0, 5000)), Verdict::Send(4));
        assert_eq!(l.decide(0, 0, allow(3, 60.0, 5000)), Verdict::Defer(Some(2_000_000_000)));
        assert_eq!(l.decide(0, 0, Allowance { open: false, ..allow(3, 60.0, 5000) }), Verdict::Send(1));
        assert_eq!(l.decide(0, 0, allow(0, 60.0, 5000)), Verdict::Idle);
    }

    /// Cond. 6: a deferral begun at 1 ms ends at 1 ms + 2 ms: the timer set
    /// then is due, and the next decision sends what is allowed.
    #[test]
    fn deferral_ends_after_the_limit() {
        let mut l = lso("");
        let ms = 1_000_000_000;
        assert_eq!(l.decide(0, ms, allow(2, 60.0, u64::MAX)), Verdict::Defer(Some(3 * ms)));
        assert_eq!(l.decide(0, 2 * ms, allow(3, 60.0, u64::MAX)), Verdict::Defer(None));
        assert_eq!(l.timer_fired(0, 2 * ms), Timer::Stale);
        assert_eq!(l.timer_fired(0, 3 * ms), Timer::Due);
        assert_eq!(l.decide(0, 3 * ms, allow(3, 60.0, u64::MAX)), Verdict::Send(3));
        // A timer left from an ended deferral finds a later one and waits on.
        assert_eq!(l.decide(0, 4 * ms, allow(1, 60.0, u64::MAX)), Verdict::Defer(Some(6 * ms)));
        assert_eq!(l.decide(0, 5 * ms, allow(30, 60.0, u64::MAX)), Verdict::Send(30));
        assert_eq!(l.decide(0, 5 * ms, allow(1, 60.0, u64::MAX)), Verdict::Defer(None));
        assert_eq!(l.timer_fired(0, 6 * ms), Timer::Again(7 * ms));
        assert_eq!(l.timer_fired(0, 7 * ms), Timer::Due);
    }

    /// Table I cond. 4 for the CWR state: after an ECN cut the sender is not
    /// in the open state, so what the window allows goes at once as one
    /// segment (Linux); with `lso_defer_in_cwr` it waits for β of cwnd.
    #[test]
    fn cwr_state_sends_at_once_unless_told_to_defer() {
        let cwr = Allowance { cwr: true, ..allow(3, 60.0, u64::MAX) };
        assert_eq!(lso("").decide(0, 0, cwr), Verdict::Send(3));
        assert!(matches!(lso(", \"lso_defer_in_cwr\": true").decide(0, 0, cwr), Verdict::Defer(_)));
    }
}
