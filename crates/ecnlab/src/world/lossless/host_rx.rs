//! Stuck receivers (`switch.pfc_stuck_hosts`): a host that stops taking
//! packets from its NIC (a hung driver, a full receive ring) while its
//! switch keeps sending. The NIC holds what lands in its receive buffer
//! and PAUSEs the switch once only its link's headroom is left; the switch
//! keeps the pause (refreshing it) and, when its own ingress queues fill,
//! pauses its upstreams in turn: the pause storm of deployed RDMA networks,
//! which a watchdog (`pfc_watchdog`) breaks by ignoring the storm's PAUSEs
//! (the stuck host's NIC then drops what it cannot hold). At
//! `pfc_stuck_until` the host takes everything held at once and RESUMEs.
//!
//! Per-packet function: `host_lands`, on every landing at a host of a
//! lossless run. Tests: `tests/scenarios/test_lossless.py` (the storm).

use super::World;
use super::{pfc_event, prio_of, UNSTICK};
use crate::switch::pfc::PRIORITIES;

impl World<'_> {
    /// Packet `pkt` lands at `host` over switch port `port` in a lossless
    /// run: taken at once, unless the host is stuck now.
    #[cold]
    #[inline(never)]
    pub(in crate::world) fn host_lands(&mut self, port: u32, host: u32, pkt: u32) {
        let now = self.q.now;
        let ll = self.ll();
        let (from, until) = (ll.stuck_from, ll.stuck_until.unwrap_or(crate::config::NO_END));
        if ll.host_xoff[host as usize] == 0 || now < from || now >= until {
            return self.host_arrive(host, pkt);
        }
        let h = self.arena.get(pkt);
        let (size, prio) = (h.size as u64, prio_of(h.service));
        let nic = port ^ 1;
        let i = nic as usize * PRIORITIES + prio;
        let ll = self.ll();
        let held: u64 = ll.ingress[i].charge.bytes;
        if held + size > ll.host_buffer {
            ll.prio[i].receiver_drops += 1;
            return self.drop_packet(pkt);
        }
        if ll.held[host as usize].is_empty() && until != crate::config::NO_END {
            self.q.at(until, pfc_event(UNSTICK, host));
        }
        let ll = self.ll();
        ll.held[host as usize].push_back(pkt);
        let g = &mut ll.ingress[i];
        g.charge.bytes += size;
        g.peak_bytes = g.peak_bytes.max(g.charge.bytes);
        if !g.xoff && g.charge.bytes >= ll.host_xoff[host as usize] {
            g.xoff = true;
            self.send_pfc(nic, prio as u8, true);
        }
    }

    /// `host` takes again what it holds, all at once, and RESUMEs.
    pub(in crate::world) fn unstick(&mut self, host: u32) {
        while let Some(pkt) = self.ll().held[host as usize].pop_front() {
            self.host_arrive(host, pkt);
        }
        let nic = self.fabric.net.host_nic(host);
        for prio in 0..PRIORITIES {
            let g = &mut self.ll().ingress[nic as usize * PRIORITIES + prio];
            g.charge.bytes = 0;
            if g.xoff {
                g.xoff = false;
                self.send_pfc(nic, prio as u8, false);
            }
        }
    }
}
