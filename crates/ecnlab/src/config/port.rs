//! A port's configuration: `[switch]` for every switch port, and `[fabric]`
//! (switch-to-switch ports) and `[nic]` (host NICs) as overrides of it:
//! tables of the same keys, where an override gives only what differs.
//! The keys here are every port's; a discipline's, a scheduler's and a
//! marking scheme's own keys are declared in their files and kept in
//! `extra` until the registry checks them (`registry.rs`).

use super::error::{bad, ConfigError};
use super::param::section;
use super::values::{Amt, BufAmt, Bytes, Name, OneOrList};
use crate::units::Amount;

section! {
    /// A port (`[switch]`, or `[fabric]`/`[nic]` merged over it).
    pub struct PortCfg with extra {
        /// The discipline: "composed" (queues, a scheduler, a marking scheme and a buffer), or a
        /// whole one of its own (see `ecnlab keys qdisc`).
        qdisc: Name = Name::new("composed"), resolved Given;
        /// Per-port buffer shared first-come-first-serve by its queues: bytes ("300KB", "200pkt")
        /// or a count of packets of any size ("200 packets"). Whole disciplines take it as their
        /// own limit (FQ-CoDel's memory_limit, pFabric's buffer).
        buffer: BufAmt = BufAmt(Amount::Bytes(300_000)), range "positive";
        /// Queues per port; services map to queues one to one.
        queues: u32 = 1, range "1 to 64", per_port false;
        /// Which backlogged queue sends next (see `ecnlab keys scheduler`).
        scheduler: Name = Name::new("dwrr");
        /// Bytes a queue may send per round (WRR, DWRR), or its weight (WFQ): one value or one
        /// per queue.
        quantum: OneOrList<Bytes> = OneOrList::All(Bytes(1500)), range "positive";
        /// The composed discipline's marking scheme (see `ecnlab keys marking`).
        marking: Name = Name::new("none");
        /// The standard threshold K, or with per-queue marking a list, one per queue.
        threshold: Option<OneOrList<Amt>> = None, acts BelowBuffer;
        /// Judge the static-threshold schemes at dequeue instead of enqueue.
        dequeue_marking: bool = false, source "Tuning ECN §4.2";
        /// Drop a Not-ECT packet whenever an ECT one would be marked.
        drop_not_ect: bool = false, source "Tuning ECN §6";
        /// A paper's whole set-up for a scheme, by name (see `ecnlab keys recipe`): it fills every
        /// key it names that the experiment leaves out, in [switch] and in [host], [transport],
        /// [fabric] or [nic] where the paper's set-up reaches; each stays overridable. One for
        /// the whole network.
        recipe: Option<Name> = None, resolved Given, per_port false;
    }
}

impl Default for PortCfg {
    fn default() -> Self {
        PortCfg::from_json("switch", serde_json::json!({})).expect("every key has a default")
    }
}

impl PortCfg {
    /// Quantum of every queue, in bytes.
    pub fn quanta(&self) -> Vec<u64> {
        let n = self.queues as usize;
        match &self.quantum {
            OneOrList::All(b) => vec![b.0; n],
            OneOrList::List(l) => l.iter().map(|b| b.0).collect(),
        }
    }

    /// The single threshold K in bytes (0 when unset or a list).
    pub fn k(&self, pkt: u64) -> u64 {
        match &self.threshold {
            Some(OneOrList::All(a)) => a.0.bytes(pkt),
            _ => 0,
        }
    }

    /// The checks of the keys every port has (section `sec`).
    pub fn validate_common(&self, sec: &str) -> Result<(), ConfigError> {
        if !(1..=64).contains(&self.queues) {
            return Err(bad(&format!("{sec}.queues"), self.queues, "must be 1 to 64"));
        }
        Ok(())
    }

    /// The checks of the composed discipline's own keys.
    pub fn validate_composed(&self, sec: &str) -> Result<(), ConfigError> {
        let n = self.queues as usize;
        if let OneOrList::List(q) = &self.quantum {
            if q.len() != n {
                return Err(bad(
                    &format!("{sec}.quantum"),
                    format!("a list of {}", q.len()),
                    &format!("needs one value per queue ({n})"),
                ));
            }
        }
        for (i, q) in self.quanta().iter().enumerate() {
            if *q == 0 {
                return Err(bad(&format!("{sec}.quantum[{i}]"), "0B", "must be positive"));
            }
        }
        Ok(())
    }

    /// The buffer's check.
    pub fn validate_buffer(&self, sec: &str) -> Result<(), ConfigError> {
        if self.buffer.0.bytes(1) == 0 {
            return Err(bad(&format!("{sec}.buffer"), self.buffer.0, "must be positive"));
        }
        Ok(())
    }
}
