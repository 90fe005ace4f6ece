//! What an application tells another part: incast rounds.
//!
//! An incast round couples hosts without a packet: its receiver asks every
//! sender at once, and round 1 starts when every sender's connection is
//! open. Each is a message with a delay of its own, so the partitioned
//! engine can carry it like a packet, as a `Signal` in the sending part's
//! outbox, handed over when the window ends:
//! - a request (or a synchronised round's start) reaches its sender's part
//!   after the sender's base one-way delay, never less than the lookahead
//!   (`check` in mod.rs refuses a group where it could be less);
//! - a sender's connection opening (its SYN-ACK's arrival) reaches the
//!   receiver's part, which counts them; when the last is counted at a
//!   window's end, round 1 starts at the latest opening time, as in the
//!   sequential engine, and its requests still land at or after the next
//!   window (that opening was in the window just run, and each request
//!   takes a one-way delay of at least the lookahead).
//!
//! Every part that holds a sender or the receiver of a group runs the
//! group's synchronised round starts (each moves its `target` alike), each
//! for its own senders only; a spread round's request adds one block to
//! its sender's limit, so only the receiver's part keeps that target. The
//! receiver's part alone counts the blocks, writes the round's row and
//! starts the next.

use super::super::partition::{Notice, Signal};
use super::super::World;
use crate::engine::Event;
use crate::units::Time;

impl World<'_> {
    /// Whether host (or switch) `node` runs in this part (always, unless
    /// the run is partitioned).
    #[inline]
    pub(in crate::world) fn runs_here(&self, node: u32) -> bool {
        !self.fabric.partitioned || self.fabric.part_of[node as usize] == self.fabric.me
    }

    /// Run `ev` at `at` in the part of `node`: here, or by the outbox.
    pub(in crate::world) fn at_node(&mut self, node: u32, at: Time, ev: Event) {
        let part = if self.fabric.partitioned { self.fabric.part_of[node as usize] } else { self.fabric.me };
        self.at_part(part, at, ev);
    }

    /// Run `ev` at `at` in part `part` (this one's when not partitioned).
    pub(in crate::world) fn at_part(&mut self, part: u16, at: Time, ev: Event) {
        if !self.fabric.partitioned || part == self.fabric.me {
            self.q.at(at, ev);
        } else {
            self.fabric.signals.push(Signal { to: part, at, notice: Notice::Event(ev) });
        }
    }

    /// Tell the part of incast group `g`'s receiver that one of its
    /// connections opened now; true when that part is this one.
    pub(in crate::world) fn established_here(&mut self, g: u32) -> bool {
        let rx = self.incast_receiver(g as usize);
        if self.runs_here(rx) {
            return true;
        }
        let (to, at) = (self.fabric.part_of[rx as usize], self.q.now);
        self.fabric.signals.push(Signal { to, at, notice: Notice::Established { group: g } });
        false
    }

    /// Incast group `g`'s receiver (every flow of a group ends there).
    pub(in crate::world) fn incast_receiver(&self, g: usize) -> u32 {
        self.apps.flows[self.apps.incasts[g].flows[0] as usize].dst
    }

    /// A notice from another part, at the end of the window before
    /// `horizon`.
    pub(super) fn take_signal(&mut self, s: &Signal, horizon: Time) {
        match s.notice {
            Notice::Established { group } => self.count_established(group, s.at),
            Notice::Event(ev) => {
                assert!(s.at >= horizon, "a signal lands inside the window that sent it ({} < {horizon})", s.at);
                self.q.at(s.at, ev);
            }
        }
    }
}
