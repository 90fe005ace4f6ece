//! Host timing jitter (`host.jitter`): each frame a host's NIC sends lands
//! at the first switch a seeded, uniform [0, jitter) later than the wire
//! alone would make it, in order (a frame never lands before the host's
//! previous one).
//!
//! Why: a simulated NIC at the same rate as the bottleneck it feeds, once
//! backlogged, delivers its frames exactly as the switch port frees a
//! slot, every time; a second sender then finds the drop-tail queue full on
//! every arrival and is locked out for good (Floyd and Jacobson's phase
//! effects, 1991). Real hosts never keep that phase: DMA and PCIe fetches,
//! PHY clock-domain crossings and the switch's ingress pipeline move each
//! frame by a little. Jitter before a backlogged NIC (ns-2's `overhead_`,
//! a delay on the sender's send) would not reach the wire at all, so the
//! wobble is on the frame's landing. The mean adds jitter/2 to a host's
//! one-way delay; 0 turns it off (exact replay, as ns-2).
//!
//! The draw is a hash of the run's seed, the host and the send time (a NIC
//! sends one frame at a time, so the pair is unique): no state per packet,
//! and the per-packet path allocates nothing.

use crate::rng::hash64;
use crate::units::Time;

/// Each host's jitter and last landing (for the order).
pub struct HostJitter {
    /// Per host: (the jitter's width, its last landing). Empty: off.
    host: Vec<(Time, Time)>,
    key: u64,
}

impl HostJitter {
    /// Host `h`'s frames moved by up to `max[h]`; all zero (or no hosts):
    /// off, and the per-packet path never asks.
    pub fn new(max: Vec<Time>, seed: u64) -> HostJitter {
        let on = max.iter().any(|&m| m > 0);
        HostJitter {
            host: if on { max.into_iter().map(|m| (m, 0)).collect() } else { Vec::new() },
            key: hash64(seed, 0x7177_E400),
        }
    }

    #[inline(always)]
    pub fn on(&self) -> bool {
        !self.host.is_empty()
    }

    /// When the frame `host` began to send at `sent`, due at the switch at
    /// `landing` without jitter, lands.
    #[inline]
    pub fn landing(&mut self, host: u32, sent: Time, landing: Time) -> Time {
        // Scaled by a multiply rather than a division (uniform in [0, max)).
        let h = hash64(self.key, sent ^ (host as u64).rotate_right(20));
        let (max, last) = &mut self.host[host as usize];
        let draw = ((h as u128 * *max as u128) >> 64) as Time;
        *last = (*last).max(landing + draw);
        *last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landings_spread_uniformly_and_keep_order() {
        // 100,000 frames 1.2 us apart (10 Gbps, 1500 B) with 100 ns of
        // jitter: the mean delay is jitter/2 = 50 ns (uniform), every
        // delay is in [0, 100 ns), and order holds since frames are wider
        // than the jitter.
        let mut j = HostJitter::new(vec![100_000; 2], 7);
        let (mut sum, mut prev) = (0u64, 0);
        for i in 0..100_000u64 {
            let sent = i * 1_200_000;
            let base = sent + 1_200_000 + 1_000_000;
            let at = j.landing(1, sent, base);
            assert!(at >= base && at < base + 100_000);
            assert!(at >= prev);
            prev = at;
            sum += at - base;
        }
        let mean = sum as f64 / 100_000.0;
        // Standard error of the mean: 100 ns/sqrt(12)/sqrt(1e5) = 0.09 ns.
        assert!((mean - 50_000.0).abs() < 500.0, "mean {mean}");
    }

    #[test]
    fn a_short_frame_never_lands_before_the_one_ahead_of_it() {
        // A 1500 B frame then a 64 B ACK right behind it, with a jitter
        // wider than the ACK (51 ps at 10 Gbps): the ACK lands no earlier.
        let mut j = HostJitter::new(vec![1_000_000], 3);
        let mut worst = 0i64;
        for i in 0..10_000u64 {
            let sent = i * 10_000_000;
            let data = j.landing(0, sent, sent + 1_200_000);
            let ack = j.landing(0, sent + 1_200_000, sent + 1_200_000 + 51_200);
            assert!(ack >= data);
            worst = worst.max(data as i64 - (sent + 1_251_200) as i64);
        }
        assert!(worst > 0, "the case the order guards against never came up");
    }

    #[test]
    fn seeds_and_hosts_draw_differently() {
        let draws = |seed, host| {
            let mut j = HostJitter::new(vec![1_000_000; 2], seed);
            (0..8u64).map(|i| j.landing(host, i * 10_000_000, i * 10_000_000) % 10_000_000).collect::<Vec<_>>()
        };
        assert_eq!(draws(1, 0), draws(1, 0));
        assert_ne!(draws(1, 0), draws(2, 0));
        assert_ne!(draws(1, 0), draws(1, 1));
    }
}
