//! Incast rounds (Tuning ECN §2.1): a receiver asks each of its senders for
//! a block over a connection opened in advance; the next round starts when
//! every block has arrived.
//!
//! A request takes its sender's base one-way delay to arrive. By default
//! every request leaves at the round's start, so all senders start in the
//! same instant (a perfectly synchronised barrier). Two options spread the
//! start, as a real receiver and real hosts do: `request_gap`, the time
//! between consecutive requests of the receiver's send loop, and
//! `response_jitter`, a seeded random delay (uniform in [0, jitter)) before
//! each sender answers (its stack and scheduling latency).

use crate::rng::Rng;
use crate::units::Time;

pub struct Incast {
    /// The group's flows, one per sender, in request order.
    pub flows: Vec<u32>,
    pub block: u64,
    pub rounds: u32,
    pub round: u32,
    /// Bytes each flow must have delivered by the end of this round.
    pub target: u64,
    /// Flows whose block of this round has arrived.
    pub done: u32,
    /// Connections open so far (round 1 starts when all are), and when
    /// the latest opened.
    pub established: u32,
    pub last_established: Time,
    pub round_start: Time,
    /// The longest base one-way delay to a sender: when a synchronised
    /// round's requests have all arrived.
    pub req_delay: Time,
    /// Each sender's base one-way delay from the receiver.
    one_way: Vec<Time>,
    /// The partitioned engine's parts that hold a sender or the receiver,
    /// each of which runs the group's synchronised round starts; empty on
    /// the sequential engine.
    pub parts: Vec<u16>,
    gap: Time,
    jitter: Time,
    rng: Rng,
}

impl Incast {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flows: Vec<u32>,
        one_way: Vec<Time>,
        block: u64,
        rounds: u32,
        gap: Time,
        jitter: Time,
        rng: Rng,
    ) -> Incast {
        let req_delay = one_way.iter().copied().max().unwrap_or(0);
        Incast {
            flows,
            block,
            rounds,
            round: 0,
            target: 0,
            done: 0,
            established: 0,
            last_established: 0,
            round_start: 0,
            req_delay,
            one_way,
            parts: Vec::new(),
            gap,
            jitter,
            rng,
        }
    }

    /// Whether requests leave or are answered at different times (then each
    /// sender gets its own request event).
    pub fn spread(&self) -> bool {
        self.gap > 0 || self.jitter > 0
    }

    /// Each sender's base one-way delay from the receiver, in request
    /// order.
    pub fn one_way(&self) -> &[Time] {
        &self.one_way
    }

    /// A new round begins: the block every flow must deliver next.
    pub fn begin_round(&mut self) -> u64 {
        self.round += 1;
        self.target += self.block;
        self.done = 0;
        self.target
    }

    /// When each sender starts answering this round, after its start:
    /// (flow, delay). Draws one jitter per sender per round.
    pub fn request_delays(&mut self) -> Vec<(u32, Time)> {
        let mut out = Vec::with_capacity(self.flows.len());
        for (k, (&f, &d)) in self.flows.iter().zip(&self.one_way).enumerate() {
            let jitter = if self.jitter > 0 { (self.rng.uniform() * self.jitter as f64) as Time } else { 0 };
            out.push((f, k as Time * self.gap + d + jitter));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_leave_one_gap_apart_plus_jitter() {
        let mut g = Incast::new(vec![10, 11, 12], vec![50, 50, 70], 64_000, 3, 5, 0, Rng::new(1));
        assert_eq!(g.request_delays(), vec![(10, 50), (11, 55), (12, 80)]);
        assert_eq!(g.req_delay, 70);
        assert_eq!((g.begin_round(), g.begin_round(), g.round), (64_000, 128_000, 2));
        // Jitter: uniform in [0, 1000), a new draw each round, the same for a seed.
        let mut a = Incast::new(vec![1, 2], vec![0, 0], 1, 9, 0, 1000, Rng::new(7));
        let mut b = Incast::new(vec![1, 2], vec![0, 0], 1, 9, 0, 1000, Rng::new(7));
        let (r1, r2) = (a.request_delays(), a.request_delays());
        assert_eq!(r1, b.request_delays());
        assert_ne!(r1, r2);
        assert!(r1.iter().chain(&r2).all(|&(_, d)| d < 1000));
        assert!(a.spread() && !Incast::new(vec![], vec![], 1, 1, 0, 0, Rng::new(1)).spread());
    }
}
