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

use crate::config::param::section;
use crate::config::{bad, ConfigError, PortCfg, Table};

section! {
    /// ML-ECN's queue classes (Alg. 1): the queues of each class and the stages each takes.
    /// Given, packets are classified by stage tag (host.stages), not by service. One set for
    /// the whole network, in `[switch]`.
    pub struct StageClassKeys {
        /// The small class's queues.
        small_queues: Option<Vec<u32>> = None, per_port false, source "ML-ECN §III-B-2-a, Alg. 1";
        /// The medium class's queues.
        medium_queues: Option<Vec<u32>> = None, per_port false, source "ML-ECN §III-B-2-a, Alg. 1";
        /// The large class's queues.
        large_queues: Option<Vec<u32>> = None, per_port false, source "ML-ECN §III-B-2-a, Alg. 1";
        /// The stages the small class takes.
        small_stages: Option<Vec<u32>> = None, per_port false, default_doc "[1]";
        /// The stages the medium class takes.
        medium_stages: Option<Vec<u32>> = None, per_port false, default_doc "the stages between";
        /// The stages the large class takes.
        large_stages: Option<Vec<u32>> = None, per_port false, default_doc "the last stage";
    }
}

/// One class's name, queues and stages.
type ClassKeys<'a> = (&'static str, &'a Option<Vec<u32>>, &'a Option<Vec<u32>>);

impl StageClassKeys {
    /// The keys of a port.
    pub fn of(port: &PortCfg) -> StageClassKeys {
        // Unreadable keys (a config not checked yet) count as no classes.
        StageClassKeys::read(&Table::new("switch", port.extra.clone()), true).unwrap_or(StageClassKeys {
            small_queues: None,
            medium_queues: None,
            large_queues: None,
            small_stages: None,
            medium_stages: None,
            large_stages: None,
        })
    }

    /// The configured classes, by name: (key, queues, stages).
    fn class_keys(&self) -> [ClassKeys<'_>; 3] {
        [
            ("small", &self.small_queues, &self.small_stages),
            ("medium", &self.medium_queues, &self.medium_stages),
            ("large", &self.large_queues, &self.large_stages),
        ]
    }

    /// Packets are classified by stage (any class's queues are given).
    pub fn by_stage(&self) -> bool {
        self.class_keys().iter().any(|(_, q, _)| q.is_some())
    }

    /// ML-ECN's classes for hosts tagging `n` thresholds (stages 1..=n+1):
    /// the stages of each class, given or by default stage 1 small, stage
    /// n+1 large and those between medium. None without classes.
    pub fn stage_classes(&self, n: usize) -> Option<StageClasses> {
        if !self.by_stage() {
            return None;
        }
        let last = n as u32 + 1;
        let default = |c: usize| -> Vec<u32> {
            match c {
                0 => vec![1],
                1 => (2..last).collect(),
                _ => vec![last],
            }
        };
        let mut queues: [Vec<u8>; 3] = Default::default();
        let mut stages: [Vec<u8>; 3] = Default::default();
        for (c, (_, q, st)) in self.class_keys().into_iter().enumerate() {
            queues[c] = q.clone().unwrap_or_default().iter().map(|&x| x as u8).collect();
            stages[c] = st.clone().unwrap_or_else(|| default(c)).iter().map(|&x| x as u8).collect();
        }
        Some(StageClasses::new(queues, stages))
    }

    /// The classes' checks (Alg. 1): every class has queues, no queue or
    /// stage is in two classes, every stage the hosts tag (`n` thresholds)
    /// has a class. `queues`: the port's.
    pub fn validate(&self, sec: &str, queues: u32, n: usize) -> Result<(), ConfigError> {
        let key = |k: &str| format!("{sec}.{k}");
        if !self.by_stage() {
            for (name, _, st) in self.class_keys() {
                if st.is_some() {
                    return Err(ConfigError(format!(
                        "{sec}.{name}_stages: set, but no class has queues; give small_queues, medium_queues and large_queues"
                    )));
                }
            }
            return Ok(());
        }
        if n == 0 {
            return Err(ConfigError(format!(
                "{sec}.small_queues: classes choose queues by stage, but host.stages is empty (e.g. host.stages = [\"100KB\", \"10MB\"])"
            )));
        }
        let last = n as u32 + 1;
        let mut queue_owner: Vec<Option<&str>> = vec![None; queues as usize];
        let mut stage_owner: Vec<Option<&str>> = vec![None; last as usize + 1];
        let classes = self.stage_classes(n).expect("classes are given");
        for (name, q, st) in self.class_keys() {
            let qs = q.as_deref().unwrap_or_default();
            if qs.is_empty() {
                return Err(bad(
                    &key(&format!("{name}_queues")),
                    format!("{qs:?}"),
                    "every class needs at least one queue",
                ));
            }
            for &x in qs {
                let k = key(&format!("{name}_queues"));
                match queue_owner.get_mut(x as usize) {
                    None => {
                        return Err(bad(&k, x, &format!("queues are 0 to {} ({sec}.queues = {queues})", queues - 1)))
                    }
                    Some(Some(other)) => {
                        return Err(bad(
                            &k,
                            x,
                            &format!("queue {x} is already a {other} queue: a queue serves one class"),
                        ))
                    }
                    Some(slot) => *slot = Some(name),
                }
            }
            if let Some(st) = st {
                for &x in st {
                    let k = key(&format!("{name}_stages"));
                    match stage_owner.get_mut(x as usize) {
                        Some(slot) if x >= 1 => {
                            if let Some(other) = slot {
                                return Err(bad(
                                    &k,
                                    x,
                                    &format!("stage {x} is already {other}: a stage maps to one class"),
                                ));
                            }
                            *slot = Some(name);
                        }
                        _ => {
                            return Err(bad(
                                &k,
                                x,
                                &format!("stages are 1 to {last} (host.stages has {n} threshold(s))"),
                            ))
                        }
                    }
                }
            }
        }
        // Stages left to their defaults must not collide with given ones.
        for stage in 1..=last as u8 {
            let c = classes.class(stage);
            let name = ["small", "medium", "large"][c as usize];
            let given = self.class_keys()[c as usize].2.is_some();
            if !given {
                if let Some(other) = stage_owner[stage as usize].filter(|o| *o != name) {
                    return Err(ConfigError(format!(
                        "{sec}.{name}_stages: by default takes stage {stage}, which {sec}.{other}_stages also lists; give {name}_stages"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Packets of this port's network are classified by stage.
pub fn by_stage(port: &PortCfg) -> bool {
    StageClassKeys::of(port).by_stage()
}

/// ML-ECN's classes of a port's network for `n` stage thresholds.
pub fn stage_classes(port: &PortCfg, n: usize) -> Option<StageClasses> {
    StageClassKeys::of(port).stage_classes(n)
}

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
