//! A switch's shared packet buffer, as Broadcom-style chips build it: one
//! pool per switch, a small reserve per queue, and the rest shared, each
//! queue admitted while its shared bytes stay below α times the free
//! shared buffer (the dynamic threshold of Choudhury & Hahne, "Dynamic
//! queue length thresholds for shared-memory packet switches", IEEE/ACM
//! ToN 1998). A congested queue then settles where q = α·(B − q), at
//! α/(1+α) of the shared buffer; N congested queues at α/(1+Nα) each.
//!
//! What is counted here is counters only, as a chip's MMU keeps them: a
//! queue's bytes, of which the first `reserved` are its own and the rest
//! the pool's. `buffer_accounting` picks which queue a packet is charged
//! to: its egress (port, queue) or its ingress (port, priority); PFC's
//! lossless priorities are always charged at ingress, where PAUSE acts
//! (`pfc.rs`). "hpcc" follows the HPCC simulator's MMU (see `Accounting`).
//!
//! Per-packet functions: `Charge::admits`, `Charge::add`, `Charge::remove`.
//! Tests: below (the Choudhury–Hahne fixed points), and the scenario tests
//! of `docs/shared-buffer.md`.

use crate::config::param::section;
use crate::config::values::by_name;
use crate::config::{bad, Amt, ConfigError, OneOrList, Table};
use crate::units::Amount;

by_name! {
    /// Where a switch's packets are buffered.
    pub enum BufferPolicy {
        /// Each port owns `switch.buffer` (today's model).
        Port => "port",
        /// One pool per switch with dynamic thresholds.
        Dynamic => "dynamic",
    }
}

by_name! {
    /// Which queue a packet of a lossy priority is charged to.
    pub enum Accounting {
        /// Its egress (port, queue): Broadcom's egress admission.
        Egress => "egress",
        /// Its ingress (port, priority).
        Ingress => "ingress",
        /// The HPCC simulator's MMU: every packet on both its ingress and
        /// its egress queue; lossy packets admitted on an egress pool of
        /// `hpcc_egress_share` of the buffer less headroom, lossless ones on
        /// the ingress pool with PFC.
        Hpcc => "hpcc",
    }
}

section! {
    /// The shared buffer's keys, in `[switch]` (one set for every switch).
    pub struct SharedBufferKeys {
        /// "port": each port owns `switch.buffer`; "dynamic": one pool per switch, shared by all
        /// its ports' queues under dynamic thresholds.
        buffer_policy: BufferPolicy = BufferPolicy::Port, per_port false, source "Choudhury & Hahne 1998", resolved Given;
        /// The switch's whole buffer (buffer_policy "dynamic").
        shared_buffer: Option<Amt> = None, per_port false, default_doc "switch.buffer × the switch's ports", resolved Given;
        /// Bytes reserved for each (port, queue), and for each (ingress port, priority) charged
        /// at ingress, out of the shared pool.
        buffer_reserved: Amt = Amt(Amount::Bytes(0)), per_port false, resolved Given;
        /// The dynamic threshold's α: a queue may hold α × the free shared buffer; one value or
        /// one per queue (priority). Chips use powers of two, 1/64 to 8.
        dt_alpha: OneOrList<f64> = OneOrList::All(1.0), per_port false, range "1/64 to 64", source "Choudhury & Hahne 1998", resolved Given;
        /// Which queue a lossy packet is charged to: "egress", "ingress" or "hpcc" (the HPCC
        /// simulator's MMU: both, and an egress pool of hpcc_egress_share).
        buffer_accounting: Accounting = Accounting::Egress, per_port false, resolved Given;
        /// With buffer_accounting "hpcc": the egress pool for lossy traffic, as a share of the
        /// buffer less all headroom.
        hpcc_egress_share: f64 = 0.8, per_port false, range "(0, 1]", source "HPCC simulator, switch-mmu.cc", resolved Given;
    }
}

impl SharedBufferKeys {
    /// The keys of `[switch]` (a checked config's; defaults where unreadable).
    pub fn of(extra: &serde_json::Map<String, serde_json::Value>) -> SharedBufferKeys {
        SharedBufferKeys::read(&Table::new("switch", extra.clone()), true)
            .unwrap_or_else(|_| SharedBufferKeys::read(&Table::new("switch", Default::default()), true).unwrap())
    }

    pub fn dynamic(&self) -> bool {
        self.buffer_policy == BufferPolicy::Dynamic
    }

    /// α of queue (or priority) `q`.
    pub fn alpha(&self, q: usize) -> f64 {
        match &self.dt_alpha {
            OneOrList::All(a) => *a,
            OneOrList::List(l) => l[q.min(l.len() - 1)],
        }
    }

    /// The checks of these keys; `queues` per port.
    pub fn validate(&self, queues: u32) -> Result<(), ConfigError> {
        let alphas: Vec<f64> = match &self.dt_alpha {
            OneOrList::All(a) => vec![*a],
            OneOrList::List(l) => {
                if l.len() != queues as usize && l.len() != 8 {
                    return Err(bad(
                        "switch.dt_alpha",
                        format!("a list of {}", l.len()),
                        &format!("needs one value per queue ({queues}) or per priority (8)"),
                    ));
                }
                l.clone()
            }
        };
        for (i, a) in alphas.iter().enumerate() {
            if !(*a >= 1.0 / 64.0 && *a <= 64.0) {
                let at = if alphas.len() > 1 { format!("switch.dt_alpha[{i}]") } else { "switch.dt_alpha".into() };
                return Err(bad(&at, a, "must be 1/64 to 64 (chips use powers of two, 1/64 to 8)"));
            }
        }
        if !(self.hpcc_egress_share > 0.0 && self.hpcc_egress_share <= 1.0) {
            return Err(bad("switch.hpcc_egress_share", self.hpcc_egress_share, "must be in (0, 1]"));
        }
        Ok(())
    }
}

/// One switch's shared pool: its size (the buffer less every reserve and
/// headroom) and the bytes of it in use.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pool {
    pub size: u64,
    pub used: u64,
    pub peak: u64,
}

impl Pool {
    /// Free shared bytes.
    #[inline]
    pub fn free(&self) -> u64 {
        self.size.saturating_sub(self.used)
    }
}

/// What a queue's counter holds and may take: its bytes, of which the
/// first `reserved` are its own.
#[derive(Clone, Copy, Debug, Default)]
pub struct Charge {
    pub bytes: u64,
}

impl Charge {
    /// The pool's part of `bytes` for a queue with reserve `reserved`.
    #[inline]
    fn shared(bytes: u64, reserved: u64) -> u64 {
        bytes.saturating_sub(reserved)
    }

    /// The queue's bytes in the pool.
    #[inline]
    pub fn in_pool(&self, reserved: u64) -> u64 {
        Charge::shared(self.bytes, reserved)
    }

    /// May the queue take `size` more bytes? Within its reserve always;
    /// beyond it while its shared bytes are below `limit` (α × the free
    /// pool for a dynamic threshold, or a static one) and the pool has room.
    #[inline]
    pub fn admits(&self, size: u64, reserved: u64, limit: u64, pool: &Pool) -> bool {
        let after = self.bytes + size;
        if after <= reserved {
            return true;
        }
        let grow = Charge::shared(after, reserved) - self.in_pool(reserved);
        self.in_pool(reserved) < limit && pool.used + grow <= pool.size
    }

    /// Take `size` bytes (admitted), charging the pool its part.
    #[inline]
    pub fn add(&mut self, size: u64, reserved: u64, pool: &mut Pool) {
        let before = self.in_pool(reserved);
        self.bytes += size;
        pool.used += self.in_pool(reserved) - before;
        pool.peak = pool.peak.max(pool.used);
    }

    /// Give back `size` bytes.
    #[inline]
    pub fn remove(&mut self, size: u64, reserved: u64, pool: &mut Pool) {
        let before = self.in_pool(reserved);
        self.bytes -= size;
        pool.used -= before - self.in_pool(reserved);
    }
}

/// The dynamic threshold: α × the free pool, in bytes.
#[inline]
pub fn dynamic_limit(alpha: f64, pool: &Pool) -> u64 {
    (alpha * pool.free() as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N queues fed faster than they drain, each taking packets while the
    /// dynamic threshold lets it: where each settles, as a share of the pool.
    fn settle(n: usize, alpha: f64, pool_bytes: u64) -> Vec<f64> {
        let mut pool = Pool { size: pool_bytes, ..Pool::default() };
        let mut q = vec![Charge::default(); n];
        // Offer 1,000-byte packets round robin until no queue takes one.
        loop {
            let mut took = false;
            for c in q.iter_mut() {
                if c.admits(1000, 0, dynamic_limit(alpha, &pool), &pool) {
                    c.add(1000, 0, &mut pool);
                    took = true;
                }
            }
            if !took {
                break;
            }
        }
        q.iter().map(|c| c.bytes as f64 / pool_bytes as f64).collect()
    }

    /// Choudhury & Hahne 1998 (§III): one congested queue holds
    /// α/(1+α) of the buffer, N hold α/(1+Nα) each. Within a packet
    /// (1,000 B of 10 MB).
    #[test]
    fn congested_queues_settle_at_the_dynamic_thresholds_fixed_points() {
        for (n, alpha) in [(1, 1.0), (1, 0.5), (1, 2.0), (1, 8.0), (2, 1.0), (4, 1.0), (8, 0.25), (16, 2.0)] {
            let want = alpha / (1.0 + n as f64 * alpha);
            for share in settle(n, alpha, 10_000_000) {
                assert!((share - want).abs() < 2e-4, "N = {n}, α = {alpha}: {share:.5} against {want:.5}");
            }
        }
    }

    /// A reserve is the queue's own: taken with the pool full, and not
    /// charged to it.
    #[test]
    fn the_reserve_admits_with_the_pool_full_and_is_not_charged() {
        let mut pool = Pool { size: 10_000, used: 10_000, peak: 10_000 };
        let mut c = Charge::default();
        assert!(c.admits(1500, 3000, 0, &pool));
        c.add(1500, 3000, &mut pool);
        c.add(1500, 3000, &mut pool);
        assert_eq!(pool.used, 10_000);
        assert!(!c.admits(1, 3000, u64::MAX, &pool), "beyond the reserve the full pool refuses");
        pool.used = 0;
        c.add(1000, 3000, &mut pool);
        assert_eq!(pool.used, 1000);
        c.remove(2000, 3000, &mut pool);
        assert_eq!((c.bytes, pool.used), (2000, 0));
    }
}
