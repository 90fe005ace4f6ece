//! ECN markers: given the instantaneous occupancy (including the packet
//! being judged), say whether the marking condition holds. The qdisc asks at
//! enqueue, or at dequeue when dequeue marking is on (Tuning ECN §4.2), and
//! marks CE on ECT packets (or drops Not-ECT ones if so configured).
//!
//! Every test is "occupancy > threshold" with the packet counted; that is
//! the same as Tuning ECN's "queue seen on arrival ≥ h" for whole packets.

mod mq_ecn;
mod per_pool;
mod per_port;
mod per_queue;

pub use mq_ecn::MqEcn;
pub use per_pool::PerPool;
pub use per_port::PerPort;
pub use per_queue::PerQueue;

use super::RoundObserver;
use crate::units::Time;

/// Occupancy seen by a marking decision, in bytes, packet included.
#[derive(Clone, Copy, Debug)]
pub struct Occupancy {
    pub queue: u64,
    pub port: u64,
    pub pool: u64,
}

pub enum Marker {
    None,
    PerQueue(PerQueue),
    PerPort(PerPort),
    PerPool(PerPool),
    MqEcn(MqEcn),
}

impl Marker {
    #[inline]
    pub fn exceeds(&self, q: usize, occ: Occupancy) -> bool {
        match self {
            Marker::None => false,
            Marker::PerQueue(m) => m.exceeds(q, occ),
            Marker::PerPort(m) => m.exceeds(occ),
            Marker::PerPool(m) => m.exceeds(occ),
            Marker::MqEcn(m) => m.exceeds(q, occ),
        }
    }

    /// A packet arrives at an empty port.
    #[inline]
    pub fn port_busy(&mut self, now: Time) {
        if let Marker::MqEcn(m) = self {
            m.port_busy(now)
        }
    }

    /// The port's last packet has been taken for transmission.
    #[inline]
    pub fn port_idle(&mut self, now: Time) {
        if let Marker::MqEcn(m) = self {
            m.port_idle(now)
        }
    }

    /// The current threshold of queue `q` in bytes (for sampling and tests).
    pub fn threshold(&self, q: usize) -> Option<u64> {
        match self {
            Marker::None => None,
            Marker::PerQueue(m) => Some(m.k[q]),
            Marker::PerPort(m) => Some(m.k),
            Marker::PerPool(m) => Some(m.k),
            Marker::MqEcn(m) => Some(m.threshold(q)),
        }
    }
}

impl RoundObserver for Marker {
    #[inline]
    fn activated(&mut self, q: usize, now: Time) {
        if let Marker::MqEcn(m) = self {
            m.activated(q, now)
        }
    }
    #[inline]
    fn turn_end(&mut self, q: usize, end: Time) {
        if let Marker::MqEcn(m) = self {
            m.turn_end(q, end)
        }
    }
}
