//! ECN* (Tuning ECN §2.2, §3.1): standard RFC 3168 ECN TCP, paired with
//! instantaneous single-threshold marking at the switch. On an ACK with
//! ECE the sender halves its window, at most once per window of data, and
//! sets CWR on its next data packet; while that window drains it does not
//! grow (as Linux's CWR state).

use super::{AckInfo, Window, MIN_CWND};

#[derive(Default)]
pub struct EcnStar {
    /// No new cut until snd_una passes this (the window of the last cut).
    pub reduce_end: u64,
    cut_once: bool,
}

impl EcnStar {
    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        let in_cwr = self.cut_once && a.una <= self.reduce_end;
        if a.ece && !in_cwr {
            w.ssthresh = (w.cwnd / 2.0).max(MIN_CWND);
            w.cwnd = w.ssthresh;
            self.reduce_end = a.snd_max;
            self.cut_once = true;
            return true;
        }
        if !in_cwr {
            w.grow(&a);
        }
        false
    }
}
