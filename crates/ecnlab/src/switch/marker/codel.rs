//! CoDel as the AQM of a composed queue (`marking = "codel"`): one CoDel
//! state per service queue, judged at dequeue on the sojourn the qdisc
//! measures from its enqueue stamps (see `switch/codel.rs` for the rules).
//! The "more than one MTU queued" test counts the packet's own queue, as
//! RFC 8289 does for its single queue. A drop makes the qdisc take the
//! next packet at once (its dequeue loop), which is the RFC's drop loop
//! spread over the queue's packets as the scheduler picks them.

use super::{HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::rng::Rng;
use crate::switch::codel::{self, Codel, CodelParams, CodelState, Judged};
use crate::switch::scheme::About;

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[CodelParams::PARAMS],
        ..About::new(
            "codel",
            "CoDel on each queue's sojourn time: marks (or drops) once it stays above target for an interval",
            "RFC 8289",
        )
    },
    threshold: Threshold::Unused(" (codel takes codel_target and codel_interval)"),
    own_sides: Some("judges at dequeue"),
    validate: codel::validate,
    build: |c| CodelAqm::new(codel::build(c), c.port.queues as usize).into(),
};

pub struct CodelAqm {
    pub params: Codel,
    queues: Vec<CodelState>,
}

impl CodelAqm {
    pub fn new(params: Codel, nq: usize) -> Self {
        CodelAqm { params, queues: vec![CodelState::default(); nq] }
    }

    /// The verdict for a packet leaving queue `s.q`; `ect`: it may be
    /// marked instead of dropped.
    #[inline]
    pub fn at_dequeue(&mut self, s: &Seen, ect: bool) -> Verdict {
        let after = s.occ.queue - s.size as u64;
        match self.queues[s.q].judge(&self.params, s.now, s.sojourn, after, ect) {
            Judged::Send => Verdict::Pass,
            Judged::Mark => Verdict::Mark,
            Judged::Drop => Verdict::Drop,
        }
    }

    /// Queue `q`'s state (tests).
    pub fn state(&self, q: usize) -> &CodelState {
        &self.queues[q]
    }
}

impl HookedMarker for CodelAqm {
    fn sides(&self) -> Sides {
        Sides::Dequeue
    }
    #[inline]
    fn at_dequeue(&mut self, s: &Seen, ect: bool, _rng: &mut Rng) -> Verdict {
        CodelAqm::at_dequeue(self, s, ect)
    }
    fn needs_sojourn(&self) -> bool {
        true
    }
}
