//! ECN* (Tuning ECN §2.2, §3.1): standard RFC 3168 ECN TCP, paired with
//! instantaneous single-threshold marking at the switch. On an ACK with
//! ECE the sender halves its window, at most once per window of data, and
//! sets CWR on its next data packet; while that window drains it does not
//! grow (as Linux's CWR state).

use super::{AckInfo, CcDecl, CongestionControl, EchoMode, OncePerWindow, Window, MIN_CWND};

pub const DECL: CcDecl = CcDecl {
    about: crate::switch::scheme::About {
        params: &[],
        ..crate::switch::scheme::About::new(
            "ecn-star",
            "RFC 3168 ECN TCP: halves its window on ECE, at most once per window, and sets CWR",
            "Tuning ECN §2.2, §3.1; RFC 3168 §6.1.2",
        )
    },
    defaults: &[],
    echo: EchoMode::Latched,
    pfabric: false,
    rdma: false,
    validate: |_| Ok(()),
    build: |_| super::Cc::EcnStar(EcnStar::default()),
};

#[derive(Default)]
pub struct EcnStar {
    pub window: OncePerWindow,
}

impl CongestionControl for EcnStar {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        self.window.on_ack(w, &a, |w| {
            w.ssthresh = (w.cwnd / 2.0).max(MIN_CWND);
            w.cwnd = w.ssthresh;
        })
    }
    fn in_cwr(&self, una: u64) -> bool {
        self.window.draining(una)
    }
    fn on_loss(&mut self, snd_max: u64) {
        self.window.loss(snd_max)
    }
}
