//! ECN* (Tuning ECN §2.2, §3.1): standard RFC 3168 ECN TCP, paired with
//! instantaneous single-threshold marking at the switch. On an ACK with
//! ECE the sender halves its window, at most once per window of data, and
//! sets CWR on its next data packet; while that window drains it does not
//! grow (as Linux's CWR state).

use super::{AckInfo, OncePerWindow, Window, MIN_CWND};

#[derive(Default)]
pub struct EcnStar {
    pub window: OncePerWindow,
}

impl EcnStar {
    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        self.window.on_ack(w, &a, |w| {
            w.ssthresh = (w.cwnd / 2.0).max(MIN_CWND);
            w.cwnd = w.ssthresh;
        })
    }
}
