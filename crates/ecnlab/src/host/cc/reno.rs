//! TCP Reno/NewReno window growth without ECN: reacts to loss only (the
//! loss response itself is in `tcp_tx.rs`).

use super::{AckInfo, Window};

pub struct Reno;

impl Reno {
    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        w.grow(&a);
        false
    }
}
