//! TCN, time-based congestion notification (Bai et al., CoNEXT 2016): mark
//! a packet at dequeue when it waited in its queue longer than T. The
//! signal needs no knowledge of the queue's drain rate, so one T serves
//! every queue under any scheduler. T = K/C for the standard threshold K
//! (the authors' ns-2 code: 84 packets at 10 Gbps, T = 100.8 µs); see
//! shared/schemes/tcn.md. The sojourn is measured to the moment the packet
//! starts to leave, its own transmission not counted; the test is strict.
//! The probabilistic (RED-on-sojourn) variant is not modelled: no source we
//! could read pins it down.

use super::{Seen, Verdict};
use crate::units::Time;

pub struct Tcn {
    /// T, ps.
    pub threshold: Time,
}

impl Tcn {
    #[inline]
    pub fn at_dequeue(&self, s: &Seen) -> Verdict {
        if s.sojourn > self.threshold {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}
