//! Whole queue disciplines: designs with their own classification,
//! scheduling, AQM and buffer, which the composed qdisc's four parts do not
//! fit, so each implements the discipline interface itself
//! (docs/architecture/index.md, "Switch ports").
//! A port's `Qdisc` holds one, behind its cold pointer, and hands it every
//! enqueue and dequeue after one branch (see `Qdisc::enqueue`). `Whole` is
//! one enum over them, generated from the list in `switch/mod.rs`
//! (`whole_disciplines!`): static dispatch.

use crate::packet::{Arena, Packet};
use crate::units::Time;

/// Why a discipline, whole or composed, refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The shared port buffer was full (tail drop).
    Overflow,
    /// The AQM dropped it (RED on a Not-ECT packet, or a marking condition
    /// with drop_not_ect).
    Aqm,
}

/// A packet a whole discipline holds: its arena id, size and enqueue time
/// (for sojourn times).
#[derive(Clone, Copy)]
pub struct Held {
    pub id: u32,
    pub size: u32,
    pub at: Time,
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

/// A queue discipline that is a whole design of its own.
pub trait WholeDiscipline {
    /// Offer packet `id` (`p`) at `now`; queued packets it pushes out go to
    /// `drops`. Err: the arrival is refused.
    fn enqueue(
        &mut self,
        now: Time,
        id: u32,
        p: &Packet,
        drops: &mut Vec<u32>,
        tally: &mut Tally,
    ) -> Result<(), DropReason>;

    /// The next packet to send, with its size on the wire; packets dropped
    /// on the way go to `drops`.
    fn dequeue(&mut self, now: Time, arena: &mut Arena, drops: &mut Vec<u32>, tally: &mut Tally) -> Option<(u32, u32)>;

    /// (bytes, packets) queued.
    fn occupancy(&self) -> (u64, u64);

    /// Queues it keeps that a queue sample should show apart (the port's
    /// counters stay one row, queue 0).
    fn queues(&self) -> usize {
        1
    }

    /// (bytes, packets) in its queue `q` (< `queues()`).
    fn queue_occupancy(&self, _q: usize) -> (u64, u64) {
        self.occupancy()
    }

    /// The port's own random draw, for disciplines that hash flows.
    fn seed(&mut self, _seed: u64) {}
}

/// Declares the whole disciplines: `Variant(module::Type)` per line loads
/// the discipline's file, adds the variant to `Whole` with its dispatch,
/// and puts `module::DECL` on the list of disciplines after the composed
/// one.
macro_rules! whole_disciplines {
    ($($variant:ident($module:ident :: $ty:ident)),* $(,)?) => {
        $(pub mod $module;)*

        /// Every discipline, the composed one first: the registry's list.
        pub const QDISCS: &[&qdisc::QdiscDecl] = &[&qdisc::COMPOSED, $(&$module::DECL),*];

        pub enum Whole {
            $($variant($module::$ty)),*
        }

        impl Whole {
            #[inline]
            pub fn enqueue(
                &mut self,
                now: crate::units::Time,
                id: u32,
                p: &crate::packet::Packet,
                drops: &mut Vec<u32>,
                tally: &mut whole::Tally,
            ) -> Result<(), whole::DropReason> {
                match self { $(Whole::$variant(w) => whole::WholeDiscipline::enqueue(w, now, id, p, drops, tally)),* }
            }

            #[inline]
            pub fn dequeue(
                &mut self,
                now: crate::units::Time,
                arena: &mut crate::packet::Arena,
                drops: &mut Vec<u32>,
                tally: &mut whole::Tally,
            ) -> Option<(u32, u32)> {
                match self { $(Whole::$variant(w) => whole::WholeDiscipline::dequeue(w, now, arena, drops, tally)),* }
            }

            pub fn occupancy(&self) -> (u64, u64) {
                match self { $(Whole::$variant(w) => whole::WholeDiscipline::occupancy(w)),* }
            }

            pub fn queues(&self) -> usize {
                match self { $(Whole::$variant(w) => whole::WholeDiscipline::queues(w)),* }
            }

            pub fn queue_occupancy(&self, q: usize) -> (u64, u64) {
                match self { $(Whole::$variant(w) => whole::WholeDiscipline::queue_occupancy(w, q)),* }
            }

            pub fn seed(&mut self, seed: u64) {
                match self { $(Whole::$variant(w) => whole::WholeDiscipline::seed(w, seed)),* }
            }
        }
    };
}
pub(crate) use whole_disciplines;
