//! TCP Reno/NewReno window growth without ECN: reacts to loss only (the
//! loss response itself is in `tcp_tx.rs`).

use super::{AckInfo, CcDecl, CongestionControl, EchoMode, Window};

pub struct Reno;

impl CongestionControl for Reno {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        w.grow(&a);
        false
    }
}

pub const DECL: CcDecl = CcDecl {
    about: crate::switch::scheme::About {
        params: &[],
        ..crate::switch::scheme::About::new(
            "reno",
            "Reno/NewReno without ECN: data is Not-ECT, the window halves on loss",
            "RFC 5681, RFC 6582",
        )
    },
    defaults: &[],
    echo: EchoMode::None,
    pfabric: false,
    rdma: false,
    validate: |_| Ok(()),
    build: |_| super::Cc::Reno(Reno),
};
