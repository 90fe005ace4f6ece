//! The sender's SACK scoreboard (RFC 6675): the ranges the receiver has
//! SACKed above snd_una, and what recovery reads from them (the highest
//! SACK, the holes, the pipe, the next hole to resend). How many blocks an
//! ACK carries is the receiver's side (`sack_blocks.rs`); after an RTO the
//! scoreboard is kept or cleared by `rto_sack.rs`.

use super::sack_blocks::More;
use super::tcp_tx::TcpSender;

impl TcpSender {
    /// Every block of one ACK: the first, then up to two more where the
    /// receiver sends them (`sack_blocks.rs`; empty ones are (0, 0), which
    /// `ranges::insert` ignores).
    #[inline]
    pub(super) fn add_sacks(&mut self, first: (u64, u64), more: &More) {
        for &(lo, hi) in std::iter::once(&first).chain(more) {
            self.add_sack(lo, hi);
        }
    }

    pub(super) fn add_sack(&mut self, lo: u64, hi: u64) {
        super::ranges::insert(&mut self.sacked, lo.max(self.una), hi);
    }

    pub(super) fn trim_sacks(&mut self) {
        let una = self.una;
        let k = self.sacked.partition_point(|r| r.1 <= una);
        self.sacked.drain(..k);
        if let Some(f) = self.sacked.first_mut() {
            f.0 = f.0.max(una);
        }
    }

    pub(super) fn high_sack(&self) -> u64 {
        self.sacked.last().map(|r| r.1).unwrap_or(self.una)
    }

    /// Bytes of holes in [from, high_sack): lost and not yet retransmitted.
    pub(super) fn holes_from(&self, from: u64) -> u64 {
        let high = self.lost_high();
        if from >= high {
            return 0;
        }
        let sacked_above: u64 = self.sacked.iter().map(|&(l, h)| h.min(high).saturating_sub(l.max(from))).sum();
        (high - from) - sacked_above
    }

    /// Where the data recovery calls lost ends: the highest SACK, or above
    /// it the tail RACK has marked lost (`rack.rs`).
    #[inline]
    pub(super) fn lost_high(&self) -> u64 {
        let high = self.high_sack();
        match self.lx.as_deref() {
            Some(lx) => high.max(lx.rack.lost_end),
            None => high,
        }
    }

    /// SACKed bytes in [lo, hi).
    pub(super) fn sacked_in(&self, lo: u64, hi: u64) -> u64 {
        self.sacked.iter().map(|&(l, h)| h.min(hi).saturating_sub(l.max(lo))).sum()
    }

    pub(super) fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|r| r.1 - r.0).sum()
    }

    /// RFC 6675's pipe in recovery: the flight less what is SACKed and the
    /// holes not yet retransmitted.
    #[inline]
    pub(super) fn pipe(&self) -> u64 {
        self.flight() - self.sacked_bytes().min(self.flight()) - self.holes_from(self.rtx_next).min(self.flight())
    }

    /// The first un-SACKed, not yet retransmitted hole below high_sack.
    pub(super) fn next_hole(&self) -> Option<(u64, u32)> {
        let high = self.lost_high();
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
}
