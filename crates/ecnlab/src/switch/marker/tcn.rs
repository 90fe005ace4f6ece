//! TCN, time-based congestion notification (Bai et al., CoNEXT 2016): mark
//! a packet at dequeue when it waited in its queue longer than T. The
//! signal needs no knowledge of the queue's drain rate, so one T serves
//! every queue under any scheduler. T = K/C for the standard threshold K
//! (the authors' ns-2 code: 84 packets at 10 Gbps, T = 100.8 µs); see
//! docs/schemes/tcn.md. The sojourn is measured to the moment the packet
//! starts to leave, its own transmission not counted; the test is strict.
//! The probabilistic (RED-on-sojourn) variant is not modelled: no source we
//! could read pins it down.

use super::{HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::{bad, missing, Dur};
use crate::rng::Rng;
use crate::switch::scheme::About;
use crate::units::Time;

section! {
    /// TCN's key.
    pub struct TcnParams {
        /// The sojourn-time threshold T (K/C: 84 packets at 10 Gbps = 100.8us).
        tcn_threshold: Option<Dur> = None, range "positive", source "Bai et al., CoNEXT 2016 (TCN)",
            acts BelowBufferTime;
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[TcnParams::PARAMS],
        unused_without_value: true,
        ..About::new(
            "tcn",
            "marks at dequeue a packet that waited longer than tcn_threshold",
            "Bai et al., Enabling ECN over Generic Packet Scheduling (CoNEXT 2016)",
        )
    },
    threshold: Threshold::Unused(" (tcn takes tcn_threshold)"),
    own_sides: Some("judges at dequeue"),
    validate: |c| match c.read(TcnParams::read)?.tcn_threshold {
        None => Err(missing(&c.key("tcn_threshold"), "marking \"tcn\" needs a sojourn time, e.g. \"100.8us\"")),
        Some(d) if d.0 == 0 => Err(bad(&c.key("tcn_threshold"), "0s", "must be positive")),
        _ => Ok(()),
    },
    build: |c| Tcn { threshold: c.params(TcnParams::read).tcn_threshold.map_or(0, |d| d.0) }.into(),
};

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

impl HookedMarker for Tcn {
    fn sides(&self) -> Sides {
        Sides::Dequeue
    }
    #[inline]
    fn at_dequeue(&mut self, s: &Seen, _ect: bool, _rng: &mut Rng) -> Verdict {
        Tcn::at_dequeue(self, s)
    }
    fn needs_sojourn(&self) -> bool {
        true
    }
}
