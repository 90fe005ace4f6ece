//! PFC frames: a PAUSE or RESUME queued ahead of a port's data, its time
//! on the wire, its effect at the far end after the link's delay and the
//! upstream's response, pauses expiring and refreshed (`Event::Pfc`).

use super::World;
use super::{pfc_event, Frame, CHECK, EFFECT, EXPIRE, FIELD_BITS, REFRESH, UNSTICK};
use crate::switch::pfc::{self, PRIORITIES};
use crate::units::Time;

impl World<'_> {
    /// Queue a PAUSE (`pause`) or RESUME for priority `prio` on `port`,
    /// back to its peer; it goes out as soon as the frame on the wire has.
    pub(in crate::world) fn send_pfc(&mut self, port: u32, prio: u8, pause: bool) {
        let now = self.q.now;
        let ll = self.ll();
        let quanta = if pause { ll.quanta } else { 0 };
        let s = &mut ll.prio[port as usize * PRIORITIES + prio as usize];
        if pause {
            s.pause_sent += 1;
        } else {
            s.resume_sent += 1;
            s.refresh_at = 0;
        }
        ll.waiting[port as usize].push_back(Frame { prio, quanta });
        if pause && !self.ll().hpcc() {
            // Keep the pause from running out while XOFF holds: refresh at
            // half its time. (The HPCC simulator's pauses never expire.)
            let rate = self.fabric.net.ports[port as usize ^ 1].qdisc.rate.bps;
            let at = now + (pfc::pause_time(quanta as u32, rate) / 2).max(1);
            let s = &mut self.ll().prio[port as usize * PRIORITIES + prio as usize];
            if s.refresh_at == 0 {
                s.refresh_at = at;
                self.q.at(at, pfc_event(REFRESH, port * PRIORITIES as u32 + prio as u32));
            }
        }
        let p = &mut self.fabric.net.ports[port as usize];
        if p.txdone_pending {
            return;
        }
        if now >= p.busy_until {
            self.start_tx_lossless(port, now);
        } else {
            p.txdone_pending = true;
            self.q.tx_done(port, p.busy_until);
        }
    }

    /// Put PFC frame `f` on `port`'s wire at `now`.
    pub(super) fn transmit_pfc(&mut self, port: u32, now: Time, f: Frame) {
        let p = &mut self.fabric.net.ports[port as usize];
        let ser = p.tx_time(pfc::FRAME_BYTES);
        p.busy_until = now + ser;
        // The next frame or packet goes after this one.
        p.txdone_pending = true;
        self.q.tx_done(port, now + ser);
        let response = p.tx_time(self.lossless.as_ref().map_or(0, |l| l.response_bytes));
        let effect = now + ser + p.delay + response;
        let capture = p.capture;
        self.ll().flight[port as usize].push_back((effect, f));
        self.q.at(effect, pfc_event(EFFECT, port));
        if capture {
            let c = self.rec.captures.iter_mut().find(|c| c.port == port).expect("a captured port has a capture");
            c.record_pfc(now, f.prio, f.quanta, &mut self.rec.out);
        }
    }

    /// An `Event::Pfc`. Cold and out of line: the run loop's dispatch
    /// stays as small as it was (inlined, it cost every run's loop).
    #[cold]
    #[inline(never)]
    pub(in crate::world) fn pfc_event(&mut self, field: u32) {
        let (what, x) = (field >> FIELD_BITS, field & ((1 << FIELD_BITS) - 1));
        let now = self.q.now;
        match what {
            EFFECT => {
                let (_, f) = self.ll().flight[x as usize].pop_front().expect("a frame in flight");
                self.pfc_takes_effect(x ^ 1, f, now);
            }
            EXPIRE => {
                for prio in 0..PRIORITIES {
                    let s = self.ll().prio[x as usize * PRIORITIES + prio];
                    if s.paused_until != 0 && s.paused_until <= now {
                        self.unpause(x, prio, now);
                    }
                }
            }
            REFRESH => {
                let (port, prio) = (x / PRIORITIES as u32, (x % PRIORITIES as u32) as usize);
                let ll = self.ll();
                let i = port as usize * PRIORITIES + prio;
                if ll.prio[i].refresh_at != now {
                    return;
                }
                ll.prio[i].refresh_at = 0;
                if ll.ingress[i].xoff {
                    self.send_pfc(port, prio as u8, true);
                }
            }
            UNSTICK => self.unstick(x),
            _ => self.deadlock_check(now),
        }
    }

    /// Frame `f` reaches egress `port` (the sender's peer) and acts.
    fn pfc_takes_effect(&mut self, port: u32, f: Frame, now: Time) {
        let rate = self.fabric.net.ports[port as usize].qdisc.rate.bps;
        let ll = self.lossless.as_deref_mut().expect("a lossless run");
        let hpcc = ll.hpcc();
        let s = &mut ll.prio[port as usize * PRIORITIES + f.prio as usize];
        if f.quanta == 0 {
            s.resume_received += 1;
            if s.paused_until != 0 {
                self.unpause(port, f.prio as usize, now);
            }
            return;
        }
        s.pause_received += 1;
        if s.ignore_until > now {
            return; // The watchdog holds this priority open.
        }
        let first = s.paused_until == 0;
        if hpcc {
            s.paused_until = crate::config::NO_END;
        } else {
            let until = now + pfc::pause_time(f.quanta as u32, rate);
            s.paused_until = until;
            self.q.at(until, pfc_event(EXPIRE, port));
        }
        if !first {
            return;
        }
        s.paused_since = now;
        ll.paused_now += 1;
        if !ll.check_armed {
            ll.check_armed = true;
            self.q.at(now + ll.check_every, pfc_event(CHECK, 0));
        }
        let qd = &mut self.fabric.net.ports[port as usize].qdisc;
        let q = qd.classify(f.prio);
        qd.pause_queue(q, now);
    }

    /// Egress (`port`, `prio`) may send again (a RESUME, or its pause ran
    /// out, or the watchdog): its queue resumes unless another priority
    /// that shares it is still paused.
    pub(in crate::world) fn unpause(&mut self, port: u32, prio: usize, now: Time) {
        let ll = self.ll();
        let s = &mut ll.prio[port as usize * PRIORITIES + prio];
        s.paused_total += now - s.paused_since;
        s.paused_until = 0;
        ll.paused_now -= 1;
        let p = &self.fabric.net.ports[port as usize];
        let q = p.qdisc.classify(prio as u8);
        let ll = self.lossless.as_ref().expect("a lossless run");
        let shared = (0..PRIORITIES).any(|o| {
            o != prio && ll.prio[port as usize * PRIORITIES + o].paused_until != 0 && p.qdisc.classify(o as u8) == q
        });
        if shared {
            return;
        }
        let p = &mut self.fabric.net.ports[port as usize];
        p.qdisc.resume_queue(q, now);
        if !p.txdone_pending && now >= p.busy_until && p.qdisc.packets > 0 {
            self.start_tx_lossless(port, now);
        }
    }
}
