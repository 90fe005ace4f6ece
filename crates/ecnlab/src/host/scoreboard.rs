//! The sender's SACK scoreboard (RFC 6675): the ranges the receiver has
//! SACKed above snd_una, and what recovery reads from them (the highest
//! SACK, the holes, the pipe, the next hole to resend). How many blocks an
//! ACK carries is the receiver's side (`sack_blocks.rs`); after an RTO the
//! scoreboard is kept or cleared by `recovery/rto_sack.rs`, whose go-back
//! (`skip_sacked`, `flight_less_sacked`) reads it here. Data RACK marks
//! lost above the highest SACK (`recovery/rack.rs`) comes in as
//! `lost_end` (0: none), which the sender passes from its recovery state.

use super::sack_blocks::More;
use super::snd::Snd;

impl Snd {
    /// Every block of one ACK: the first, then up to two more where the
    /// receiver sends them (`sack_blocks.rs`; empty ones are (0, 0), which
    /// `ranges::insert` ignores).
    #[inline]
    pub fn add_sacks(&mut self, first: (u64, u64), more: &More) {
        for &(lo, hi) in std::iter::once(&first).chain(more) {
            self.add_sack(lo, hi);
        }
    }

    pub fn add_sack(&mut self, lo: u64, hi: u64) {
        super::ranges::insert(&mut self.sacked, lo.max(self.una), hi);
    }

    pub fn trim_sacks(&mut self) {
        let una = self.una;
        let k = self.sacked.partition_point(|r| r.1 <= una);
        self.sacked.drain(..k);
        if let Some(f) = self.sacked.first_mut() {
            f.0 = f.0.max(una);
        }
    }

    pub fn high_sack(&self) -> u64 {
        self.sacked.last().map(|r| r.1).unwrap_or(self.una)
    }

    /// Bytes of holes in [from, high_sack): lost and not yet retransmitted.
    pub fn holes_from(&self, from: u64, lost_end: u64) -> u64 {
        let high = self.lost_high(lost_end);
        if from >= high {
            return 0;
        }
        let sacked_above: u64 = self.sacked.iter().map(|&(l, h)| h.min(high).saturating_sub(l.max(from))).sum();
        (high - from) - sacked_above
    }

    /// Where the data recovery calls lost ends: the highest SACK, or above
    /// it the tail RACK has marked lost (`lost_end`).
    #[inline]
    pub fn lost_high(&self, lost_end: u64) -> u64 {
        self.high_sack().max(lost_end)
    }

    /// SACKed bytes in [lo, hi).
    pub fn sacked_in(&self, lo: u64, hi: u64) -> u64 {
        self.sacked.iter().map(|&(l, h)| h.min(hi).saturating_sub(l.max(lo))).sum()
    }

    /// Whether some byte of [lo, hi) is not SACKed (an ACK that covers it
    /// reports news).
    pub fn unsacked_in(&self, lo: u64, hi: u64) -> bool {
        hi > lo && self.sacked_in(lo, hi) < hi - lo
    }

    pub fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|r| r.1 - r.0).sum()
    }

    /// RFC 6675's pipe in recovery: the flight less what is SACKed and the
    /// holes not yet retransmitted.
    #[inline]
    pub fn pipe(&self, lost_end: u64) -> u64 {
        self.flight()
            - self.sacked_bytes().min(self.flight())
            - self.holes_from(self.rtx_next, lost_end).min(self.flight())
    }

    /// The first un-SACKed, not yet retransmitted hole below high_sack.
    pub fn next_hole(&self, lost_end: u64) -> Option<(u64, u32)> {
        let high = self.lost_high(lost_end);
        let mut at = self.rtx_next.max(self.una);
        for &(l, h) in &self.sacked {
            if at < l {
                break;
            }
            at = at.max(h);
        }
        if at >= high {
            return None;
        }
        let next_sacked = self.sacked.iter().find(|r| r.0 > at).map(|r| r.0).unwrap_or(high);
        let len = (next_sacked - at).min(self.p.mss as u64) as u32;
        Some((at, len))
    }

    // Linux's delivered count (`recovery/linux_cwnd.rs`).

    /// Before an ACK to `ack` moves snd_una: the bytes it covers that it
    /// can newly deliver, and the SACKed bytes above it. Covered bytes
    /// SACKed before were delivered then; so were bytes above snd_nxt,
    /// which after an RTO's go-back (snd_nxt back at snd_una) the receiver
    /// held from before the timeout: a scoreboard cleared at the RTO
    /// (`rto_keeps_sack` off) no longer says so, and counting them would let
    /// one ACK over a held window grow cwnd by that whole window.
    #[inline]
    pub fn delivered_before(&self, ack: u64) -> (u64, u64) {
        let reach = ack.min(self.nxt.max(self.una));
        let fresh = (reach - self.una) - self.sacked_in(self.una, reach);
        (fresh, self.sacked_in(ack, u64::MAX))
    }

    /// After the ACK's blocks are on the scoreboard: what it newly
    /// delivered, the covered bytes `delivered_before` counted plus the
    /// bytes newly SACKed above it.
    #[inline]
    pub fn newly_delivered(&self, (fresh, sacked_above): (u64, u64)) -> u64 {
        fresh + self.sacked_bytes().saturating_sub(sacked_above)
    }

    // The go-back with the scoreboard kept (`recovery/rto_sack.rs`).

    /// Going back after an RTO: move snd_nxt past a SACKed range it has
    /// reached, so the next segment is the next hole (or new data).
    pub fn skip_sacked(&mut self) {
        if self.nxt >= self.max_sent {
            return; // new data: nothing above snd_nxt is SACKed
        }
        for &(l, h) in &self.sacked {
            if l > self.nxt {
                break;
            }
            self.nxt = self.nxt.max(h);
        }
    }

    /// The flight while going back: snd_nxt - snd_una less what the
    /// receiver has SACKed in between. Only there: in the open state the
    /// flight stays snd_nxt - snd_una, as by default.
    pub fn flight_less_sacked(&self) -> u64 {
        (self.nxt - self.una).saturating_sub(self.sacked_in(self.una, self.nxt))
    }
}
