//! CoDel, controlled delay (RFC 8289): the state machine of one queue,
//! judged packet by packet as packets leave it. Used per flow queue by
//! FQ-CoDel (`fq_codel.rs`) and per service queue by the composed qdisc's
//! `marking = "codel"` (`marker/codel.rs`).
//!
//! The RFC's dequeue drops a packet, takes the next and judges again in a
//! loop; here each popped packet gets one verdict and the caller pops the
//! next after a `Drop`. The two are the same machine: what the RFC does to
//! the packet it takes after a drop (schedule the next drop, or leave the
//! dropping state; send unjudged the packet after the drop that entered the
//! dropping state) is remembered in `after` and done when that packet is
//! judged.
//!
//! Rules chosen, with their sources:
//! - "ok to drop": sojourn ≥ target without a break for at least one
//!   interval, and more than one MTU left queued after the packet (RFC 8289
//!   §5.4's `bytes() <= MAXPACKET`). Which backlog counts is the caller's:
//!   the queue's own for a composed queue (the RFC's), the whole port's for
//!   FQ-CoDel (Linux's fq_codel passes the qdisc's backlog).
//! - Control law: next drop `interval/√count` after the previous one, in
//!   exact floating point (Linux uses a Newton step on 1/√count).
//! - Re-entering the dropping state: count resumes at `count − lastcount`
//!   when that exceeds 1 and the last scheduled drop is less than 16
//!   intervals old (RFC 8289 §5.5 and Linux); else count = 1.
//! - ECN (Linux's `ecn` option, on by default in fq_codel): an ECT or CE
//!   packet due to be dropped is marked CE and sent instead; in the
//!   dropping state a mark ends the round of drops (Linux codel_impl.h).

use crate::config::param::section;
use crate::config::{bad, fmt_dur, ConfigError, Dur};
use crate::switch::scheme::PortCtx;
use crate::units::Time;

/// CoDel's defaults (RFC 8289 §4.2-4.3; Linux sch_fq_codel.c).
pub const CODEL_TARGET: Time = 5_000_000_000;
pub const CODEL_INTERVAL: Time = 100_000_000_000;

section! {
    /// CoDel's keys, for marking "codel" and qdisc "fq-codel".
    pub struct CodelParams {
        /// Acceptable standing sojourn (the FQ-CoDel DCN paper: 5us).
        codel_target: Option<Dur> = None, resolved Given, default_doc "5ms", range "positive, below codel_interval",
            source "RFC 8289 §4.2; FQ-CoDel in the DCN §IV", acts BelowBufferTime;
        /// How long the sojourn must stay above target before the first drop (the DCN paper: 100us).
        codel_interval: Option<Dur> = None, resolved Given, default_doc "100ms", range "positive",
            source "RFC 8289 §4.3; FQ-CoDel in the DCN §IV", acts WithinRun;
        /// Mark ECT packets instead of dropping them (Linux fq_codel's ecn, on by default).
        codel_ecn: Option<bool> = None, resolved Given, default_doc "true", source "Linux sch_fq_codel.c";
    }
}

/// The checks of CoDel's keys where CoDel runs.
pub fn validate(c: &PortCtx) -> Result<(), ConfigError> {
    let p = c.read(CodelParams::read)?;
    let target = p.codel_target.map_or(CODEL_TARGET, |d| d.0);
    let interval = p.codel_interval.map_or(CODEL_INTERVAL, |d| d.0);
    if p.codel_target.is_some_and(|d| d.0 == 0) {
        return Err(bad(&c.key("codel_target"), "0s", "must be positive"));
    }
    if p.codel_interval.is_some_and(|d| d.0 == 0) {
        return Err(bad(&c.key("codel_interval"), "0s", "must be positive"));
    }
    if target >= interval {
        return Err(bad(
            &c.key("codel_target"),
            fmt_dur(target),
            &format!(
                "must be below codel_interval ({}): CoDel drops only after the sojourn has stayed above target for an interval",
                fmt_dur(interval)
            ),
        ));
    }
    Ok(())
}

/// A port's CoDel settings from its keys; a full packet is the MTU.
pub fn build(c: &PortCtx) -> Codel {
    let p = c.params(CodelParams::read);
    Codel {
        target: p.codel_target.map_or(CODEL_TARGET, |d| d.0),
        interval: p.codel_interval.map_or(CODEL_INTERVAL, |d| d.0),
        mtu: c.pkt,
        ecn: p.codel_ecn.unwrap_or(true),
    }
}

/// A port's CoDel settings, shared by its queues.
#[derive(Clone, Copy, Debug)]
pub struct Codel {
    /// Acceptable standing sojourn, ps.
    pub target: Time,
    /// Window a sojourn must stay above target before the first drop, ps.
    pub interval: Time,
    /// One full packet on the wire, bytes: a backlog of at most this never
    /// drops.
    pub mtu: u64,
    /// Mark ECT packets instead of dropping them.
    pub ecn: bool,
}

/// What CoDel does with one departing packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    Send,
    /// Send it with CE set (it is ECT).
    Mark,
    /// Drop it; the caller pops the next packet and judges that one.
    Drop,
}

/// What the RFC's loop still owes the next packet after a drop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum After {
    #[default]
    Nothing,
    /// A drop in the dropping state: if the next packet is ok to drop, the
    /// next drop is scheduled; if not, the dropping state ends.
    Schedule,
    /// The drop that entered the dropping state: the next packet leaves
    /// whatever it is (only its sojourn is looked at).
    Send,
}

/// One queue's CoDel state (RFC 8289 §5.3).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelState {
    /// When the sojourn will have been above target for an interval; 0:
    /// it is not above target.
    first_above: Time,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
    after: After,
}

impl Codel {
    /// `t + interval/√count`, the control law (RFC 8289 §5.5).
    #[inline]
    pub fn control_law(&self, t: Time, count: u32) -> Time {
        t + (self.interval as f64 / (count.max(1) as f64).sqrt()) as Time
    }
}

impl CodelState {
    /// RFC 8289's `dodequeue` test for the packet just taken: true once the
    /// sojourn has stayed at or above target for an interval.
    #[inline]
    fn ok_to_drop(&mut self, c: &Codel, now: Time, sojourn: Time, backlog_after: u64) -> bool {
        if sojourn < c.target || backlog_after <= c.mtu {
            self.first_above = 0;
            return false;
        }
        if self.first_above == 0 {
            self.first_above = now + c.interval;
            return false;
        }
        now >= self.first_above
    }

    /// Judge the packet just taken from this queue at `now`: it waited
    /// `sojourn`, `backlog_after` bytes stay queued behind it (as the
    /// caller counts them), `ect`: it may be marked instead of dropped.
    pub fn judge(&mut self, c: &Codel, now: Time, sojourn: Time, backlog_after: u64, ect: bool) -> Judged {
        let ok = self.ok_to_drop(c, now, sojourn, backlog_after);
        match std::mem::take(&mut self.after) {
            After::Send => return Judged::Send,
            After::Schedule if ok => self.drop_next = c.control_law(self.drop_next, self.count),
            After::Schedule => {
                self.dropping = false;
                return Judged::Send;
            }
            After::Nothing => {}
        }
        if self.dropping {
            if !ok {
                self.dropping = false;
                return Judged::Send;
            }
            if now < self.drop_next {
                return Judged::Send;
            }
            self.count += 1;
            if c.ecn && ect {
                self.drop_next = c.control_law(self.drop_next, self.count);
                return Judged::Mark;
            }
            self.after = After::Schedule;
            return Judged::Drop;
        }
        if !ok {
            return Judged::Send;
        }
        // Enter the dropping state with this packet.
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        self.count = if delta > 1 && now.wrapping_sub(self.drop_next) < 16 * c.interval { delta } else { 1 };
        self.lastcount = self.count;
        self.drop_next = c.control_law(now, self.count);
        if c.ecn && ect {
            Judged::Mark
        } else {
            self.after = After::Send;
            Judged::Drop
        }
    }

    /// The queue had no packet to give: a dequeue found it empty, or
    /// (`after_drop`) a drop emptied it. Either ends the dropping state;
    /// the second also forgets the time above target (Linux's
    /// codel_should_drop of no packet; the first leaves it, as Linux's
    /// codel_dequeue does). Composed queues never need it: their MTU test
    /// counts the queue itself, so a queue's last packet is never dropped.
    pub fn found_empty(&mut self, after_drop: bool) {
        if after_drop {
            self.first_above = 0;
        }
        self.dropping = false;
        self.after = After::Nothing;
    }

    /// In the dropping state (for tests and reports).
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// Drops (or marks) of the current or last dropping state.
    pub fn count(&self) -> u32 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000_000;
    /// A packet time of 1500 B at 10 Gbps: 1.2 µs.
    const PKT_TIME: Time = 1_200_000;

    fn params(ecn: bool) -> Codel {
        Codel { target: 5 * US, interval: 100 * US, mtu: 1500, ecn }
    }

    /// A queue held above target: a standing backlog of 40 packets drains
    /// one packet per 1.2 µs and is refilled at the same rate, so every
    /// packet waits 48 µs (≥ target 5 µs). RFC 8289 §5.4-5.5: the first
    /// drop comes one interval (100 µs) after the sojourn first exceeded
    /// target, i.e. at the first packet taken at or after 100 µs; the k-th
    /// drop is due `interval/√k` after the (k−1)-th (drop_next advances
    /// from itself, not from when the drop happened), and happens at the
    /// first packet taken at or after that instant, so within one packet
    /// time of it. Checked for 30 drops, with ECN marking and with drops.
    #[test]
    fn drops_follow_interval_over_sqrt_count() {
        for ecn in [true, false] {
            let c = params(ecn);
            let mut s = CodelState::default();
            let mut events = Vec::new();
            let mut now = 0;
            while events.len() < 30 {
                now += PKT_TIME;
                // A drop takes no wire time: the next packet is judged at once.
                loop {
                    match s.judge(&c, now, 48 * US, 39 * 1500, true) {
                        Judged::Send => break,
                        Judged::Mark => {
                            assert!(ecn);
                            events.push(now);
                            break;
                        }
                        Judged::Drop => {
                            assert!(!ecn);
                            events.push(now);
                        }
                    }
                }
            }
            // The first: the sojourn was first seen above target at 1.2 µs,
            // so the drop is at the first packet time ≥ 101.2 µs.
            assert_eq!(events[0], 85 * PKT_TIME, "ecn {ecn}");
            // events[k] is drop k+1, due interval/√k after drop k was due.
            let mut next = events[0] as f64;
            for (k, &t) in events.iter().enumerate().skip(1) {
                next += (100 * US) as f64 / (k as f64).sqrt();
                let t = t as f64;
                assert!(t >= next - 1.0 && t < next + PKT_TIME as f64, "ecn {ecn}, drop {}: at {t}, due {next}", k + 1);
            }
            assert!(s.dropping() && s.count() == 30);
        }
    }

    /// Below target CoDel never acts, however long the queue: 10,000
    /// packets of a 200-packet backlog that waited 4.99 µs (target 5 µs).
    /// Above target, a backlog of one MTU or less never drops either (RFC
    /// 8289 §5.4's MAXPACKET rule).
    #[test]
    fn never_acts_below_target_or_with_one_packet_queued() {
        let c = params(false);
        let mut s = CodelState::default();
        for i in 1..=10_000u64 {
            assert_eq!(s.judge(&c, i * PKT_TIME, 4_990_000, 200 * 1500, true), Judged::Send);
        }
        for i in 1..=10_000u64 {
            assert_eq!(s.judge(&c, (10_000 + i) * PKT_TIME, 500 * US, 1500, true), Judged::Send);
        }
        assert!(!s.dropping());
    }

    /// Re-entering soon after leaving resumes the drop rate (RFC 8289
    /// §5.5): after 10 drops (count 10, lastcount 1), a sojourn below
    /// target ends the dropping state; back above target within 16
    /// intervals, the first drop of the new state sets count = 10 − 1 = 9,
    /// so the next is due interval/√9 = 33.3 µs later (and count is 10
    /// after it). Far later (2 ms > 16 intervals) count starts again at 1:
    /// the next drop a whole interval later.
    #[test]
    fn count_carries_over_when_dropping_resumes_soon() {
        let c = params(false);
        let run_until_drops = |s: &mut CodelState, start: Time, n: usize| -> Vec<Time> {
            let (mut now, mut drops) = (start, Vec::new());
            while drops.len() < n {
                now += PKT_TIME;
                while s.judge(&c, now, 48 * US, 39 * 1500, false) == Judged::Drop {
                    drops.push(now);
                }
            }
            drops
        };
        for (gap, want) in [(200 * US, 9), (2_000 * US, 1)] {
            let mut s = CodelState::default();
            let first = run_until_drops(&mut s, 0, 10);
            assert_eq!(s.count(), 10);
            let left = *first.last().unwrap() + PKT_TIME;
            assert_eq!(s.judge(&c, left, US, 39 * 1500, false), Judged::Send);
            assert!(!s.dropping());
            let again = run_until_drops(&mut s, left + gap, 2);
            assert_eq!(s.count(), want + 1, "gap {gap}");
            let spacing = (again[1] - again[0]) as f64;
            let law = (100 * US) as f64 / (want as f64).sqrt();
            assert!((spacing - law).abs() <= PKT_TIME as f64, "gap {gap}: {spacing} vs {law}");
        }
    }
}
