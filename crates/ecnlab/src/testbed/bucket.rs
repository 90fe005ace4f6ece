//! The token bucket that paces a switch port at the emulated link rate, so
//! that the queue builds in the port's qdisc rather than in the kernel
//! (MQ-ECN §4.2 puts one under its qdisc for the same reason). Tokens are
//! bytes; they accrue at the rate up to the bucket's size, and a frame may
//! leave once the bucket holds its bytes.

use crate::units::{LineRate, Time};

pub struct TokenBucket {
    rate: LineRate,
    /// Bucket size in bytes.
    cap: u64,
    /// Tokens held at `at`, in picoseconds of transmission at the rate
    /// (integer time, so that no rounding accumulates).
    held: Time,
    at: Time,
    /// Transmission time the bucket could not hold while a frame waited
    /// for it: capacity the switch failed to use (it came back too late).
    pub lost: Time,
}

impl TokenBucket {
    /// A full bucket of `cap` bytes at `rate_bps`.
    pub fn new(rate_bps: u64, cap: u64) -> TokenBucket {
        let rate = LineRate::new(rate_bps);
        TokenBucket { rate, cap, held: rate.tx_time(cap), at: 0, lost: 0 }
    }

    /// Add the tokens of the time since the last call; `waiting`: a frame
    /// has waited for them all along, so what overflows the cap is lost.
    fn refill(&mut self, now: Time, waiting: bool) {
        if now > self.at {
            let full = self.held + (now - self.at);
            let cap = self.rate.tx_time(self.cap);
            if waiting && full > cap {
                self.lost += full - cap;
            }
            self.held = full.min(cap);
            self.at = now;
        }
    }

    /// Take `bytes` at `now` if the bucket holds them; `waiting`: the frame
    /// was already waiting at the previous call.
    #[inline]
    pub fn take(&mut self, now: Time, bytes: u64, waiting: bool) -> bool {
        self.refill(now, waiting);
        let need = self.rate.tx_time(bytes);
        if self.held >= need {
            self.held -= need;
            true
        } else {
            false
        }
    }

    /// When the bucket will hold `bytes` (now, if it already does).
    pub fn ready_at(&mut self, now: Time, bytes: u64) -> Time {
        self.refill(now, false);
        now + self.rate.tx_time(bytes).saturating_sub(self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::PS_PER_S;

    /// Offered more than it can carry, a bucket passes `rate × T + cap`
    /// bytes in T: here 1 Gbps for 10 ms is 1,250,000 B, plus the 2,500 B
    /// bucket it starts with, in 1,538-byte frames (1,500 B + 38 B of
    /// Ethernet framing) — polled every 1 µs, as the switch's loop does.
    #[test]
    fn passes_the_rate_plus_one_bucket() {
        let mut b = TokenBucket::new(1_000_000_000, 2_500);
        let mut sent = 0u64;
        let end = PS_PER_S / 100;
        let mut t = 0;
        while t < end {
            while b.take(t, 1_538, true) {
                sent += 1_538;
            }
            t += 1_000_000;
        }
        let expect = 1_250_000 + 2_500;
        // Within one frame: the last one may or may not fit by the end.
        assert!(sent.abs_diff(expect) <= 1_538, "sent {sent}, expected about {expect}");
        // Polled often enough, nothing is lost.
        assert_eq!(b.lost, 0);
    }

    #[test]
    fn idle_time_saves_at_most_one_bucket() {
        let mut b = TokenBucket::new(1_000_000_000, 2_500);
        assert!(b.take(0, 1_538, false));
        assert!(!b.take(0, 1_538, false));
        // A second of idleness refills only to the cap: one frame, not two.
        assert!(b.take(PS_PER_S, 1_538, false));
        assert!(!b.take(PS_PER_S, 1_538, false));
        assert_eq!(b.lost, 0, "idle, not lost");
        // The missing 576 bytes come in 4.608 µs at 1 Gbps (8 ns a byte).
        assert_eq!(b.ready_at(PS_PER_S, 1_538), PS_PER_S + 576 * 8_000);
    }

    /// A frame that waits while the switch looks away for 100 µs at 1 Gbps:
    /// the bucket holds at most 2,500 B (20 µs of transmission), so of the
    /// 101 µs accrued since it was empty 81 µs are lost; the report counts them.
    #[test]
    fn a_late_switch_loses_what_overflows() {
        let mut b = TokenBucket::new(1_000_000_000, 2_500);
        assert!(b.take(0, 2_500, false));
        assert!(!b.take(1_000_000, 1_538, false));
        let late = 101_000_000;
        assert!(b.take(late, 1_538, true));
        assert_eq!(b.lost, late - 20_000_000);
    }
}
