//! Receive interrupt coalescing (CEDM §II-A a): a host's NIC does not
//! interrupt for every frame. Arrivals wait until `interrupt_coalescing`
//! after the first one not yet handled, or until `interrupt_frames` wait,
//! and are then handled together, so the ACKs for a batch leave together.
//! It applies to every frame a host receives: data, ACKs and probes.
//!
//! A frame counts as delivered when it reaches the host (it has left the
//! network); it waits here as a copy. Each host has at most one pending
//! interrupt event, recognised by its time.

use crate::config::HostCfg;
use crate::packet::Packet;
use crate::units::Time;

struct HostRx {
    /// Frames waiting for the interrupt, in arrival order.
    pending: Vec<Packet>,
    /// When the pending interrupt fires.
    fire_at: Time,
}

pub struct Coalescer {
    delay: Time,
    /// Frames that fire the interrupt at once (u32::MAX: no limit).
    frames: u32,
    /// Largest GRO segment in bytes, when GRO is on.
    gro_max: Option<u64>,
    hosts: Vec<HostRx>,
    /// Buffers that batches are handed out in and come back to, so that
    /// handling a batch allocates nothing once they have grown.
    spare: Vec<Packet>,
    merged: Vec<Packet>,
}

/// What an arrival asks of the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Schedule the interrupt at this time.
    Schedule(Time),
    /// An interrupt is already pending.
    Wait,
    /// Enough frames wait: handle the batch now.
    HandleNow,
}

impl Coalescer {
    /// The receive side of `[host]` for `hosts` hosts, if coalescing is on.
    pub fn new(h: &HostCfg, hosts: u32) -> Option<Coalescer> {
        if !h.coalescing() {
            return None;
        }
        let frames = if h.interrupt_frames == 0 { u32::MAX } else { h.interrupt_frames };
        // Room for a batch up front: 64 frames is 77 µs at 10 Gbps.
        let room = frames.min(64) as usize;
        Some(Coalescer {
            delay: h.interrupt_coalescing.0,
            frames,
            gro_max: h.gro.then_some(h.gro_max.0),
            spare: Vec::with_capacity(room),
            merged: Vec::with_capacity(room),
            hosts: (0..hosts).map(|_| HostRx { pending: Vec::with_capacity(room), fire_at: 0 }).collect(),
        })
    }

    /// Frame `p` reaches `host` at `now`.
    pub fn arrive(&mut self, host: u32, p: Packet, now: Time) -> Arrival {
        let h = &mut self.hosts[host as usize];
        h.pending.push(p);
        if h.pending.len() as u32 >= self.frames {
            return Arrival::HandleNow;
        }
        if h.pending.len() == 1 {
            h.fire_at = now + self.delay;
            return Arrival::Schedule(h.fire_at);
        }
        Arrival::Wait
    }

    /// Whether the interrupt event of `host` at `now` is the pending one
    /// (not one whose batch a frame count already handled).
    pub fn due(&self, host: u32, now: Time) -> bool {
        let h = &self.hosts[host as usize];
        h.fire_at == now && !h.pending.is_empty()
    }

    /// The waiting frames of `host`, to handle now in this order: merged
    /// by GRO when it is on. Give the buffer back with [`Coalescer::done`].
    pub fn take(&mut self, host: u32) -> Vec<Packet> {
        let h = &mut self.hosts[host as usize];
        let mut batch = std::mem::take(&mut self.spare);
        batch.clear();
        std::mem::swap(&mut h.pending, &mut batch);
        h.fire_at = 0;
        match self.gro_max {
            Some(max) => {
                let mut out = std::mem::take(&mut self.merged);
                super::gro::merge(&batch, max, &mut out);
                self.merged = batch;
                out
            }
            None => batch,
        }
    }

    /// A batch from [`Coalescer::take`] has been handled.
    pub fn done(&mut self, batch: Vec<Packet>) {
        self.spare = batch;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn coalescer(extra: &str) -> Coalescer {
        let h: HostCfg = serde_json::from_str(&format!("{{\"interrupt_coalescing\": \"20us\"{extra}}}")).unwrap();
        Coalescer::new(&h, 2).unwrap()
    }

    /// The first frame sets the interrupt 20 µs later; later ones join it.
    /// With interrupt_frames = 3 the third frame fires it at once.
    #[test]
    fn batches_by_delay_or_frames() {
        let us = 1_000_000;
        let p = Packet::new(Kind::Data, 0, 1, 0, 0, 1500);
        let mut c = coalescer("");
        assert_eq!(c.arrive(1, p, 5 * us), Arrival::Schedule(25 * us));
        assert_eq!(c.arrive(1, p, 6 * us), Arrival::Wait);
        assert!(c.due(1, 25 * us) && !c.due(1, 24 * us) && !c.due(0, 25 * us));
        let batch = c.take(1);
        assert_eq!(batch.len(), 2);
        c.done(batch);
        assert!(!c.due(1, 25 * us));
        let mut c = coalescer(", \"interrupt_frames\": 3");
        assert_eq!(c.arrive(0, p, 0), Arrival::Schedule(20 * us));
        assert_eq!(c.arrive(0, p, us), Arrival::Wait);
        assert_eq!(c.arrive(0, p, 2 * us), Arrival::HandleNow);
        let batch = c.take(0);
        assert_eq!(batch.len(), 3);
        c.done(batch);
        // The interrupt set for the handled batch is stale when it fires.
        assert_eq!(c.arrive(0, p, 10 * us), Arrival::Schedule(30 * us));
        assert!(!c.due(0, 20 * us) && c.due(0, 30 * us));
    }
}
