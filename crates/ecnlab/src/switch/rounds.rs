//! What a scheduler tells the marker about its service, for the schemes
//! whose thresholds follow it (MQ-ECN's round time, its weight sum under
//! WFQ, RED scaled by either): declared apart from both, as the schedulers
//! call it and the markers implement it.

use crate::units::Time;

/// What a scheduler tells the marker about service (MQ-ECN needs it): a
/// round-robin scheduler its rounds, WFQ each packet it picks.
pub trait RoundObserver {
    /// Queue `q` became backlogged and joined the round at `now`.
    fn activated(&mut self, q: usize, now: Time);
    /// Queue `q` finished its turn; its service in this round ends at `end`.
    fn turn_end(&mut self, q: usize, end: Time);
    /// WFQ picked queue `q`'s head packet at `now`; `emptied`: it was the
    /// queue's last. (Round-robin schedulers do not call it.)
    #[inline]
    fn served(&mut self, _q: usize, _now: Time, _emptied: bool) {}
}
