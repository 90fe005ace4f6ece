//! What a lossless run reports: the `pfc` table, the `buffer` samples and
//! the summary's counts and warnings.

use super::PrioState;
use super::World;
use crate::switch::pfc::PRIORITIES;
use crate::units::{secs, Time};

impl World<'_> {
    /// The `pfc` table: every (port, priority) with a headroom or anything
    /// counted.
    pub(in crate::world) fn lossless_table(&mut self) {
        let now = self.rec.stopped;
        let mut rows = crate::outputs::tables::PfcRows::default();
        let ll = self.lossless.as_deref().expect("a lossless run");
        let net = &self.fabric.net;
        for (i, (s, g)) in ll.prio.iter().zip(&ll.ingress).enumerate() {
            let (port, prio) = (i / PRIORITIES, i % PRIORITIES);
            let paused = s.paused_total + if s.paused_until != 0 { now - s.paused_since } else { 0 };
            let any = s.pause_sent
                + s.pause_received
                + s.headroom_drops
                + s.threshold_drops
                + s.receiver_drops
                + g.peak_bytes
                > 0;
            if !any && g.headroom_size == 0 {
                continue;
            }
            let p = &net.ports[port];
            rows.push(
                port as u32,
                net.nodes[p.node as usize].name.clone(),
                net.nodes[p.peer as usize].name.clone(),
                prio as u32,
                s.pause_sent,
                s.resume_sent,
                s.pause_received,
                s.resume_received,
                secs(paused),
                g.headroom_size,
                g.peak_headroom,
                g.peak_bytes,
                s.headroom_drops,
                s.threshold_drops,
                s.watchdog_trips,
                s.receiver_drops,
            );
            rows.flush_full(&mut self.rec.out);
        }
        rows.flush(&mut self.rec.out);
    }

    /// A `buffer` row per switch at sample time `t` (seconds).
    pub(in crate::world) fn sample_buffers(&mut self, t: f64) {
        let ll = self.lossless.as_deref().expect("a lossless run");
        let mut rows = crate::outputs::tables::BufferRows::default();
        let mut headroom = vec![0u64; ll.pools.len()];
        for (i, g) in ll.ingress.iter().enumerate() {
            if let Some(sw) = self.fabric.net.ports[i / PRIORITIES].switch {
                headroom[sw as usize] += g.headroom;
            }
        }
        for (sw, pool) in ll.pools.iter().enumerate() {
            let name = self.fabric.net.nodes[self.fabric.net.hosts as usize + sw].name.clone();
            rows.push(t, name, pool.used, pool.size, headroom[sw]);
        }
        rows.flush(&mut self.rec.out);
    }

    /// The summary's PFC and buffer counts; the deadlock's report and a
    /// lossless drop's warning go to `warnings`.
    pub(in crate::world) fn lossless_summary(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        use serde_json::json;
        let ll = self.lossless.as_deref().expect("a lossless run");
        let now = self.rec.stopped;
        let sum = |f: fn(&PrioState) -> u64| ll.prio.iter().map(f).sum::<u64>();
        let paused: Time =
            ll.prio.iter().map(|s| s.paused_total + if s.paused_until != 0 { now - s.paused_since } else { 0 }).sum();
        let headroom_drops = sum(|s| s.headroom_drops);
        m.insert("pfc_pause_frames".into(), json!(sum(|s| s.pause_sent)));
        m.insert("pfc_resume_frames".into(), json!(sum(|s| s.resume_sent)));
        m.insert("pfc_paused_seconds".into(), json!(secs(paused)));
        m.insert("pfc_watchdog_trips".into(), json!(sum(|s| s.watchdog_trips)));
        m.insert("lossless_drops".into(), json!(headroom_drops));
        m.insert("buffer_threshold_drops".into(), json!(sum(|s| s.threshold_drops)));
        // Dropped by a stuck receiver's full NIC (`host_rx.rs`): the price
        // of a watchdog, not a broken lossless promise of the switches.
        m.insert("stuck_receiver_drops".into(), json!(sum(|s| s.receiver_drops)));
        m.insert("shared_buffer_peak_bytes".into(), json!(ll.pools.iter().map(|p| p.peak).max().unwrap_or(0)));
        m.insert("headroom_peak_bytes".into(), json!(ll.ingress.iter().map(|g| g.peak_headroom).max().unwrap_or(0)));
        let mut warn: Vec<String> = Vec::new();
        if headroom_drops > 0 {
            let worst = ll.ingress.iter().zip(&ll.prio).enumerate().max_by_key(|(_, (_, s))| s.headroom_drops);
            let (i, (g, _)) = worst.expect("some port dropped");
            warn.push(format!(
                "lossless_drops = {headroom_drops}: lossless packets dropped because a PFC headroom was full \
                 (e.g. {} priority {}: headroom {} B); switch.pfc_headroom is below what its links need \
                 (\"auto\" sizes it from the link's rate and delay)",
                self.fabric.net.port_name((i / PRIORITIES) as u32),
                i % PRIORITIES,
                g.headroom_size
            ));
        }
        if let Some((_, msg)) = &ll.deadlock {
            m.insert("deadlock".into(), json!(msg));
            warn.push(format!("the run ended early: {msg}"));
        }
        if !warn.is_empty() {
            m.insert("warnings".into(), json!(warn));
        }
    }
}
