//! ML-ECN's classifier (Alg. 1): a packet's stage tag picks a flow class —
//! small, medium or large — and within the class its flow id picks one of
//! the class's queues (flow id mod the class's queue count), so a flow
//! stays in one queue while its stage does not change.
//!
//! The map is a pure function of (stage, flow) and every switch has the
//! same one (`[switch]`; `[fabric]` cannot change queues or classes), so
//! the sender applies it once per packet and writes the queue into the
//! packet's service, which each switch's qdisc reads as always. The queue
//! every hop picks is the one a per-hop classifier would pick; what it
//! saves is a test on every hop of every run (0.8% of the MQ-ECN
//! benchmark's instructions, measured with cachegrind).

/// ML-ECN's three flow (and queue) classes, by bytes sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowClass {
    Small,
    Medium,
    Large,
}

/// Stages are 0 (untagged) to 63 (DSCP's six bits).
pub const STAGES: usize = 64;

#[derive(Clone, Debug)]
pub struct StageClasses {
    /// The class of each stage; untagged packets (stage 0: ACKs, SYNs)
    /// count as small.
    class_of: [FlowClass; STAGES],
    /// The queues of each class, in the order they are given.
    queues: [Box<[u8]>; 3],
}

impl StageClasses {
    /// `queues[c]` and `stages[c]` for c = small, medium, large; stages not
    /// listed are small. Config validation has checked that no queue or
    /// stage is in two classes and every class has a queue.
    pub fn new(queues: [Vec<u8>; 3], stages: [Vec<u8>; 3]) -> Self {
        let mut class_of = [FlowClass::Small; STAGES];
        for (c, list) in [FlowClass::Small, FlowClass::Medium, FlowClass::Large].into_iter().zip(&stages) {
            for &s in list {
                class_of[s as usize] = c;
            }
        }
        let [s, m, l] = queues;
        StageClasses { class_of, queues: [s.into(), m.into(), l.into()] }
    }

    #[inline]
    pub fn class(&self, stage: u8) -> FlowClass {
        self.class_of[stage as usize & (STAGES - 1)]
    }

    /// Alg. 1: the queue of a packet of `flow` tagged `stage`.
    #[inline]
    pub fn queue(&self, stage: u8, flow: u32) -> usize {
        let qs = &self.queues[self.class(stage) as usize];
        qs[flow as usize % qs.len()] as usize
    }

    /// The class queue `q` serves (small for a queue in no class).
    pub fn class_of_queue(&self, q: usize) -> FlowClass {
        [FlowClass::Medium, FlowClass::Large]
            .into_iter()
            .find(|&c| self.queues[c as usize].contains(&(q as u8)))
            .unwrap_or(FlowClass::Small)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Alg. 1 with 3 small, 3 medium and 2 large queues (the 8-queue ports
    /// of ML-ECN §IV): stage → class, then flow id mod the class's count.
    #[test]
    fn stage_picks_class_and_flow_picks_queue() {
        let c = StageClasses::new([vec![0, 1, 2], vec![3, 4, 5], vec![6, 7]], [vec![1], vec![2], vec![3]]);
        assert_eq!(c.queue(1, 7), 1); // 7 mod 3 = 1 → the second small queue
        assert_eq!(c.queue(2, 7), 4);
        assert_eq!(c.queue(3, 7), 7); // 7 mod 2 = 1
        assert_eq!(c.queue(0, 5), 2); // untagged: small
        assert_eq!(c.class(3), FlowClass::Large);
        assert_eq!(c.class_of_queue(5), FlowClass::Medium);
        assert_eq!(c.class_of_queue(0), FlowClass::Small);
    }
}
