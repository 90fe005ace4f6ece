//! Whole queue disciplines: designs with their own classification,
//! scheduling, AQM and buffer, which the composed qdisc's four parts do not
//! fit (DESIGN.md: "implement the same discipline interface directly").
//! A port's `Qdisc` holds one, behind its cold pointer, and hands it every
//! enqueue and dequeue after one branch (see `Qdisc::enqueue`).

use super::fq_codel::FqCodel;
use super::pfabric::PFabric;
use super::qdisc::DropReason;
use crate::packet::{Arena, Packet};
use crate::units::Time;

pub enum Whole {
    FqCodel(FqCodel),
    PFabric(PFabric),
}

/// What a whole discipline counts beyond packets sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// CE marks set (CoDel with ECN).
    pub marked: u64,
    /// Queued packets dropped to make room (FQ-CoDel's fattest-flow batch,
    /// pFabric's lowest priority): overflow drops.
    pub evicted: u64,
    /// Drops by the AQM (CoDel) at dequeue.
    pub aqm: u64,
}

impl Whole {
    /// Offer packet `id` (`p`) at `now`; queued packets it pushes out go to
    /// `drops`. Err: the arrival is refused.
    pub fn enqueue(
        &mut self,
        now: Time,
        id: u32,
        p: &Packet,
        drops: &mut Vec<u32>,
        tally: &mut Tally,
    ) -> Result<(), DropReason> {
        match self {
            Whole::FqCodel(f) => {
                f.enqueue(now, id, p, drops, tally);
                Ok(())
            }
            Whole::PFabric(f) => f.enqueue(id, p, drops, tally),
        }
    }

    /// The next packet to send, with its size on the wire; packets dropped
    /// on the way go to `drops`.
    pub fn dequeue(
        &mut self,
        now: Time,
        arena: &mut Arena,
        drops: &mut Vec<u32>,
        tally: &mut Tally,
    ) -> Option<(u32, u32)> {
        match self {
            Whole::FqCodel(f) => f.dequeue(now, arena, drops, tally),
            Whole::PFabric(f) => f.dequeue(),
        }
    }

    /// (bytes, packets) queued.
    pub fn occupancy(&self) -> (u64, u64) {
        match self {
            Whole::FqCodel(f) => (f.bytes, f.packets),
            Whole::PFabric(f) => (f.bytes, f.packets),
        }
    }

    /// The port's own random draw, for disciplines that hash flows.
    pub fn seed(&mut self, seed: u64) {
        if let Whole::FqCodel(f) = self {
            f.seed(seed)
        }
    }
}
