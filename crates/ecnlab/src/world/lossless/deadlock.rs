//! PFC deadlocks: ports paused on each other in a cycle that makes no
//! progress, found every `pfc_deadlock_check` and reported; the pause-storm
//! watchdog trips here too.

use super::World;
use super::{pfc_event, prio_of, CHECK};
use crate::switch::pfc::PRIORITIES;
use crate::units::{secs, Time};

impl World<'_> {
    /// Every `pfc_deadlock_check` while some port is paused: ports paused
    /// since the last check, each waiting on the next, in a cycle, are a
    /// deadlock: report it and end the run. The watchdog trips here too.
    pub(in crate::world) fn deadlock_check(&mut self, now: Time) {
        let ll = self.lossless.as_deref_mut().expect("a lossless run");
        ll.check_armed = false;
        let every = ll.check_every;
        if let Some(w) = ll.watchdog {
            // Switch ports only, as deployed watchdogs run: a NIC that
            // stopped obeying its switch would break the switch's headroom.
            let ports = &self.fabric.net.ports;
            let stuck: Vec<(u32, usize)> = (0..ll.prio.len())
                .filter(|&i| ll.prio[i].paused_until != 0 && now - ll.prio[i].paused_since >= w)
                .filter(|&i| ports[i / PRIORITIES].switch.is_some())
                .map(|i| ((i / PRIORITIES) as u32, i % PRIORITIES))
                .collect();
            for (port, prio) in stuck {
                let s = &mut self.ll().prio[port as usize * PRIORITIES + prio];
                s.watchdog_trips += 1;
                s.ignore_until = now + w;
                self.unpause(port, prio, now);
            }
        }
        if let Some(cycle) = self.paused_cycle(now.saturating_sub(every)) {
            let names: Vec<String> = cycle.iter().map(|&(p, _)| self.fabric.net.port_name(p)).collect();
            let since = cycle.iter().map(|&(p, pr)| self.ll().prio[p as usize * PRIORITIES + pr].paused_since).max();
            let msg = format!(
                "deadlock: ports {} paused on each other (priority {}) since {:.6} s",
                names.join(", "),
                cycle[0].1,
                secs(since.unwrap_or(now))
            );
            self.ll().deadlock = Some((now, msg));
            self.end = now;
            self.rec.stopped = now;
            return;
        }
        let ll = self.ll();
        if ll.paused_now > 0 {
            ll.check_armed = true;
            self.q.at(now + every, pfc_event(CHECK, 0));
        }
    }

    /// A cycle of egress (port, priority)s each paused since `before` or
    /// earlier, where each holds packets of that priority that came in by
    /// the port the next one's pause stops... as (port, priority), or None.
    /// Edge (e, p) → (e2, p): e's far end is a switch whose port e2 is paused
    /// for p and holds p packets that came in over e.
    pub(in crate::world) fn paused_cycle(&self, before: Time) -> Option<Vec<(u32, usize)>> {
        let ll = self.lossless.as_ref()?;
        let net = &self.fabric.net;
        let stuck = |i: usize| ll.prio[i].paused_until != 0 && ll.prio[i].paused_since <= before;
        let n = ll.prio.len();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
        for e in (0..n).filter(|&i| stuck(i)) {
            let (port, prio) = (e / PRIORITIES, e % PRIORITIES);
            let far = net.ports[port].peer;
            let ingress = (port ^ 1) as u32;
            for (e2, p2) in net.ports.iter().enumerate().filter(|(_, p)| p.node == far && p.switch.is_some()) {
                let j = e2 * PRIORITIES + prio;
                if !stuck(j) {
                    continue;
                }
                let q = p2.qdisc.classify(prio as u8);
                let waits = p2.qdisc.queues[q].fifo.ids().any(|id| {
                    ll.ingress_of.get(id as usize) == Some(&ingress) && prio_of(self.arena.get(id).service) == prio
                });
                if waits {
                    next[e].push(j);
                }
            }
        }
        find_cycle(&next).map(|c| c.into_iter().map(|i| ((i / PRIORITIES) as u32, i % PRIORITIES)).collect())
    }
}

/// A cycle in the graph `next` (adjacency lists), as its nodes in order.
pub(in crate::world) fn find_cycle(next: &[Vec<usize>]) -> Option<Vec<usize>> {
    // 0: unseen, 1: on the path, 2: done.
    let mut state = vec![0u8; next.len()];
    let mut path: Vec<(usize, usize)> = Vec::new();
    for start in 0..next.len() {
        if state[start] != 0 || next[start].is_empty() {
            continue;
        }
        path.push((start, 0));
        state[start] = 1;
        while let Some(&mut (v, ref mut k)) = path.last_mut() {
            if let Some(&w) = next[v].get(*k) {
                *k += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        path.push((w, 0));
                    }
                    1 => {
                        let from = path.iter().position(|&(u, _)| u == w).expect("on the path");
                        return Some(path[from..].iter().map(|&(u, _)| u).collect());
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn finds_a_cycle_and_only_a_cycle() {
        assert_eq!(find_cycle(&[vec![1], vec![2], vec![]]), None);
        let c = find_cycle(&[vec![1], vec![2], vec![0], vec![0]]).unwrap();
        assert_eq!(c, vec![0, 1, 2]);
        let c = find_cycle(&[vec![], vec![2], vec![3], vec![1]]).unwrap();
        assert_eq!(c, vec![1, 2, 3]);
    }
}
