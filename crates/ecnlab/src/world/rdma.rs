//! RoCEv2 queue pairs in a run (`transport.cc` an RDMA transport,
//! `rdma/`): every flow is a queue pair. A packet's path:
//!
//! 1. `qp_open`: the flow starts sending at once (no handshake) at its
//!    line rate; `qp_send` puts one packet on the host's NIC per pacing
//!    slot (its size at the current rate), while the NIC holds less than
//!    `host_queue_limit` (a paused NIC fills and holds the queue pair).
//! 2. `qp_data` at the receiver: in order, delivered and ACKed (per
//!    packet or coalesced); past a hole, dropped and NACKed. A CE mark makes
//!    the receiver notify the sender: a CNP at most every
//!    `dcqcn_cnp_interval` (the paper), or a flag on the ACK (the NIC form).
//! 3. `qp_ack`, `qp_cnp` at the sender: the window moves, a NACK sends it
//!    back, and the rate control (`rdma/cc.rs`: DCQCN, HPCC, TIMELY) hears
//!    of the ACK, its RTT, its telemetry and any CNP; its timers run on
//!    `Event::Rdma`, as do pacing and the local ACK timeout.
//!
//! With a transport that reads INT (HPCC), every data packet takes a
//! telemetry stack as it is sent (`rdma/int.rs`); each switch port it
//! leaves appends a record (`int_stamp`, from the port's dequeue); the ACK
//! answering it takes the stack back to the sender.

use super::apps::UNSIZED;
use super::World;
use crate::config::Config;
use crate::engine::Event;
use crate::network::topology::Network;
use crate::packet::{Ecn, Kind, Packet};
use crate::rdma::cc::{Ack, QpEnv, RateControl};
use crate::rdma::int::{IntHop, IntSlab};
use crate::rdma::qp::{GoBack, QpReceiver, QpSender};
use crate::rdma::RdmaKeys;
use crate::units::Time;

/// What an `Event::Rdma` is about (the top three bits; a flow below).
const SEND: u32 = 0;
const TIMER: u32 = 1;
const TIMEOUT: u32 = 2;
const NOTIFY: u32 = 3;
const FIELD_BITS: u32 = 29;

fn rdma_event(what: u32, flow: u32) -> Event {
    debug_assert!(flow < 1 << FIELD_BITS);
    Event::Rdma { what: what << FIELD_BITS | flow }
}

/// Schedule `what` for `flow` at `at` unless one is due no later
/// (`due`: when the scheduled one is, 0 for none; the events are lazy).
fn arm(q: &mut crate::engine::EventQueue, due: &mut Time, at: Time, what: u32, flow: u32) {
    if *due == 0 || *due > at {
        *due = at;
        q.at(at, rdma_event(what, flow));
    }
}

/// One queue pair: both ends, the sender's rate control, its pacing and
/// the times its events are due (0: none; events are lazy and checked
/// against these).
struct Qp {
    tx: QpSender,
    rx: QpReceiver,
    cc: Box<dyn RateControl>,
    /// The host's line rate, and the last packet's send time and size (to
    /// re-time the next one when the rate changes).
    line: f64,
    last_sent: Time,
    last_size: u32,
    next_send: Time,
    send_at: Time,
    timer_at: Time,
    timeout: Time,
    timeout_at: Time,
    /// Receiver: when its last CNP left, and a mark since that waits.
    last_cnp: Time,
    cnp_due: bool,
}

pub struct Rdma {
    qps: Vec<Qp>,
    ack_bytes: u64,
    nack_gap: Time,
    go_back: GoBack,
    timeout: Time,
    /// The base window (u64::MAX: none), scaled by the rate (`var_window`).
    window: u64,
    var_window: bool,
    /// INT runs: the stacks, their bytes on every data packet and ACK, and
    /// each port's bytes sent.
    int: Option<IntSlab>,
    int_bytes: u32,
    port_tx: Vec<u64>,
    /// The notification point's gap between CNPs; 0: a flag on the ACK.
    cnp_interval: Time,
    pub(super) cnps: u64,
    pub(super) nacks: u64,
}

impl Rdma {
    /// The queue pairs of `cfg`'s flows, or None for a TCP run; an INT
    /// transport's switch ports take the path that stamps departures.
    pub(super) fn new(cfg: &Config, net: &mut Network, flows: &mut [super::Flow]) -> Option<Rdma> {
        let decl = crate::rdma::transport(cfg.transport.cc.as_str())?;
        let keys = RdmaKeys::of(&cfg.transport);
        if let Some(s) = keys.rdma_ack_service {
            flows.iter_mut().for_each(|f| f.ctrl_service = s as u8);
        }
        let flows = &*flows;
        let line_of = |h: u32| cfg.topology.host_rate(h);
        // The BDP window and INT's rounding are the fastest host's: the
        // HPCC simulator's one setting for every queue pair.
        let fastest = flows.iter().map(|f| line_of(f.src)).max().unwrap_or(0);
        let telemetry = decl.telemetry.map(|t| t(&cfg.transport, fastest));
        let int_bytes = telemetry.map_or(0, |t| t.bytes);
        let base_rtt = keys.rdma_base_rtt.map_or_else(|| longest_rtt(cfg, net, flows, int_bytes), |d| d.0);
        let factory = (decl.factory)(&cfg.transport);
        let qps = flows
            .iter()
            .map(|f| {
                let line = line_of(f.src);
                Qp {
                    tx: QpSender::new(if f.size == UNSIZED { u64::MAX } else { f.size }),
                    rx: QpReceiver::default(),
                    cc: factory(&QpEnv { line, base_rtt }),
                    line: line as f64,
                    last_sent: 0,
                    last_size: 0,
                    next_send: 0,
                    send_at: 0,
                    timer_at: 0,
                    timeout: 0,
                    timeout_at: 0,
                    last_cnp: 0,
                    cnp_due: false,
                }
            })
            .collect();
        let bdp = (fastest as f64 * base_rtt as f64 * 1e-12 / 8.0) as u64;
        let window = keys.rdma_window.map(|w| w.0).or(keys.rdma_bdp_window.then_some(bdp.max(1))).unwrap_or(u64::MAX);
        let int = telemetry.map(|t| {
            for p in net.ports.iter_mut().filter(|p| p.switch.is_some()) {
                p.qdisc.set_telemetry();
            }
            IntSlab::new(t.multi)
        });
        Some(Rdma {
            qps,
            ack_bytes: keys.rdma_ack_bytes.0,
            nack_gap: keys.rdma_nack_gap.0,
            go_back: keys.go_back(),
            timeout: keys.rdma_timeout.0,
            window,
            var_window: keys.rdma_var_window,
            int,
            int_bytes,
            port_tx: vec![0; net.ports.len()],
            cnp_interval: decl.notifies.map_or(0, |n| n(&cfg.transport)),
            cnps: 0,
            nacks: 0,
        })
    }
}

/// The longest base RTT among the flows' paths: propagation both ways, one
/// data packet serialised on each hop out and one ACK on each hop back (as
/// the HPCC simulator's BASE_RTT is worked out).
fn longest_rtt(cfg: &Config, net: &Network, flows: &[super::Flow], int_bytes: u32) -> Time {
    let hdr = cfg.transport.header as u64 + int_bytes as u64;
    let data = cfg.transport.mss as u64 + hdr;
    let mut seen = std::collections::HashSet::new();
    let (mut fwd, mut rev) = (Vec::new(), Vec::new());
    let mut longest = 0;
    for f in flows {
        if !seen.insert((f.src, f.dst)) {
            continue;
        }
        crate::network::ideal::path(net, f.src, f.dst, &mut fwd);
        crate::network::ideal::path(net, f.dst, f.src, &mut rev);
        let out: Time = fwd.iter().map(|h| h.delay + h.rate.tx_time(data)).sum();
        let back: Time = rev.iter().map(|h| h.delay + h.rate.tx_time(hdr)).sum();
        longest = longest.max(out + back);
    }
    longest.max(1)
}

impl World<'_> {
    fn rdma(&mut self) -> &mut Rdma {
        self.rdma.as_deref_mut().expect("an RDMA run")
    }

    /// Flow `fid` opens: it sends at once.
    #[cold]
    #[inline(never)]
    pub(super) fn qp_open(&mut self, fid: u32) {
        self.apps.logs[fid as usize].opened = Some(self.q.now);
        self.qp_send(fid);
    }

    /// Send what pacing, the window and the NIC allow now; arm the next
    /// slot.
    #[inline(never)]
    pub(super) fn qp_send(&mut self, fid: u32) {
        let now = self.q.now;
        let (mss, hdr, limit) = (self.hosts.mss, self.hosts.hdr, self.hosts.host_queue_limit);
        let r = self.rdma.as_deref_mut().expect("an RDMA run");
        let qp = &mut r.qps[fid as usize];
        let window = qp.cc.window(r.window, r.var_window, qp.line);
        if !qp.tx.has_data(window) {
            return;
        }
        if now < qp.next_send {
            arm(&mut self.q, &mut qp.send_at, qp.next_send, SEND, fid);
            return;
        }
        let f = &mut self.apps.flows[fid as usize];
        if f.nic_bytes >= limit {
            f.nic_blocked = true; // The NIC's departure wakes it (`transmit`).
            return;
        }
        let rtx = qp.tx.snd_nxt < qp.tx.snd_max;
        let (seq, len) = qp.tx.take(mss);
        let size = len + hdr + r.int_bytes;
        qp.cc.on_sent(size as u64);
        (qp.last_sent, qp.last_size) = (now, size);
        qp.next_send = now + crate::units::tx_time(size as u64, qp.cc.rate() as u64);
        if qp.timeout_at == 0 {
            qp.timeout_at = now + r.timeout;
            arm(&mut self.q, &mut qp.timeout, qp.timeout_at, TIMEOUT, fid);
        }
        let more = qp.tx.has_data(window);
        let next = qp.next_send;
        let mut p = Packet::new(Kind::Data, f.src, f.dst, fid, f.service, size);
        (p.seq, p.payload, p.ecn, p.ts, p.rtx) = (seq, len, Ecn::Ect, now, rtx);
        if let Some(int) = &mut r.int {
            p.set_int_slot(int.take());
        }
        f.nic_bytes += size as u64;
        if rtx {
            f.tx.retransmits += 1;
        }
        self.arm_timer(fid);
        self.host_send(p);
        if more {
            let qp = &mut self.rdma.as_deref_mut().expect("an RDMA run").qps[fid as usize];
            arm(&mut self.q, &mut qp.send_at, next, SEND, fid);
        }
    }

    /// Schedule the rate control's next timer, if it is earlier than the
    /// one due.
    fn arm_timer(&mut self, fid: u32) {
        let qp = &mut self.rdma.as_deref_mut().expect("an RDMA run").qps[fid as usize];
        let t = qp.cc.next_timer();
        if t > 0 {
            arm(&mut self.q, &mut qp.timer_at, t, TIMER, fid);
        }
    }

    /// An `Event::Rdma`.
    #[cold]
    #[inline(never)]
    pub(super) fn rdma_event(&mut self, field: u32) {
        let (what, fid) = (field >> FIELD_BITS, field & ((1 << FIELD_BITS) - 1));
        let now = self.q.now;
        let qp = &mut self.rdma().qps[fid as usize];
        match what {
            SEND => {
                if qp.send_at != now {
                    return;
                }
                qp.send_at = 0;
                self.qp_send(fid);
            }
            TIMER => {
                if qp.timer_at != now {
                    return;
                }
                qp.timer_at = 0;
                qp.cc.on_timer(now);
                self.arm_timer(fid);
            }
            TIMEOUT => {
                if qp.timeout != now {
                    return;
                }
                qp.timeout = 0;
                if qp.timeout_at == 0 {
                    return;
                }
                if qp.timeout_at > now {
                    // Moved by ACKs since: wait again.
                    qp.timeout = qp.timeout_at;
                    let at = qp.timeout_at;
                    self.q.at(at, rdma_event(TIMEOUT, fid));
                    return;
                }
                qp.tx.on_timeout();
                qp.timeout_at = 0;
                qp.next_send = now;
                self.apps.flows[fid as usize].tx.timeouts += 1;
                self.qp_send(fid);
            }
            _ => {
                // A CNP held back by the notification point's interval.
                if !qp.cnp_due {
                    return;
                }
                qp.cnp_due = false;
                self.send_cnp(fid);
            }
        }
    }

    /// Data packet `p` at its receiver.
    #[inline(never)]
    pub(super) fn qp_data(&mut self, p: Packet) {
        let now = self.q.now;
        let fid = p.flow;
        let r = self.rdma.as_deref_mut().expect("an RDMA run");
        let (ack_bytes, nack_gap, interval) = (r.ack_bytes, r.nack_gap, r.cnp_interval);
        let qp = &mut r.qps[fid as usize];
        let before = qp.rx.expected;
        let mut out = qp.rx.on_data(p.seq, p.payload, now, ack_bytes, nack_gap);
        let marked = p.ecn == Ecn::Ce;
        let f = &mut self.apps.flows[fid as usize];
        if marked {
            f.rx.ce_received += 1;
        }
        let size = f.size;
        let last = size != UNSIZED && qp.rx.expected >= size && before < size;
        if last || (marked && interval == 0 && out.ack.is_none() && out.nack.is_none()) {
            // The last byte, or a mark the ACK must carry: acknowledge now.
            out.ack = qp.rx.flush().or(Some(qp.rx.expected));
        }
        let mut cnp_now = false;
        if marked && interval > 0 {
            if qp.last_cnp == 0 || now >= qp.last_cnp + interval {
                cnp_now = true;
            } else if !qp.cnp_due {
                qp.cnp_due = true;
                self.q.at(qp.last_cnp + interval, rdma_event(NOTIFY, fid));
            }
        }
        let flag = marked && interval == 0;
        f.rx.rcv_nxt = qp.rx.expected;
        f.rx_high = f.rx_high.max(p.seq + p.payload as u64);
        if out.delivered > 0 {
            let service = f.service as usize;
            self.rec.stats.goodput.deliver(service, now, out.delivered, &mut self.rec.out);
            if now >= self.warmup {
                self.rec.goodput_after_warmup[service] += out.delivered;
            }
            self.check_done(fid, before);
        }
        // The packet's telemetry goes back on its ACK or NACK, or is done.
        let mut slot = p.int_slot();
        if let Some(a) = out.ack {
            self.qp_reply(fid, Kind::Ack, a, flag, p.ts, std::mem::take(&mut slot));
        }
        if let Some(n) = out.nack {
            self.rdma().nacks += 1;
            self.qp_reply(fid, Kind::Nack, n, flag, p.ts, std::mem::take(&mut slot));
        }
        if slot != 0 {
            self.rdma().int.as_mut().expect("an INT run").give(slot);
        }
        if cnp_now {
            self.send_cnp(fid);
        }
    }

    /// The receiver's ACK or NACK of `seq`, flagged with a CNP (`cnp`),
    /// carrying telemetry stack `slot` (0: none).
    fn qp_reply(&mut self, fid: u32, kind: Kind, seq: u64, cnp: bool, ts: Time, slot: u64) {
        let f = &self.apps.flows[fid as usize];
        let size = self.hosts.hdr + self.rdma.as_deref().expect("an RDMA run").int_bytes;
        let mut p = Packet::new(kind, f.dst, f.src, fid, f.ctrl_service, size);
        (p.seq, p.ece, p.ts) = (seq, cnp, ts);
        p.set_int_slot(slot);
        self.host_send(p);
    }

    /// The notification point's CNP for flow `fid`, now.
    fn send_cnp(&mut self, fid: u32) {
        let now = self.q.now;
        let r = self.rdma();
        r.cnps += 1;
        r.qps[fid as usize].last_cnp = now;
        let f = &self.apps.flows[fid as usize];
        let p = Packet::new(Kind::Cnp, f.dst, f.src, fid, f.ctrl_service, self.hosts.hdr);
        self.host_send(p);
    }

    /// An ACK (or NACK, `nack`) at the sender.
    #[inline(never)]
    pub(super) fn qp_ack(&mut self, p: Packet, nack: bool) {
        let now = self.q.now;
        let fid = p.flow;
        let r = self.rdma.as_deref_mut().expect("an RDMA run");
        let (go_back, timeout) = (r.go_back, r.timeout);
        let qp = &mut r.qps[fid as usize];
        let newly = if nack {
            let before = qp.tx.snd_una;
            if qp.tx.on_nack(p.seq, go_back) {
                qp.next_send = qp.next_send.min(now);
            }
            qp.tx.snd_una - before
        } else {
            qp.tx.on_ack(p.seq)
        };
        if p.ece {
            qp.cc.on_cnp(now);
        }
        let slot = p.int_slot();
        let int = if slot != 0 { r.int.as_ref().map(|i| i.get(slot)) } else { None };
        let a = Ack { now, ack: p.seq, snd_nxt: qp.tx.snd_nxt, rtt: now - p.ts, ce: p.ece, int };
        if qp.cc.on_ack(&a) && qp.next_send > now {
            // The rate changed: the next packet leaves one packet time at
            // the new rate after the last (the HPCC simulator's ChangeRate).
            let at = qp.last_sent + crate::units::tx_time(qp.last_size as u64, qp.cc.rate() as u64);
            qp.next_send = at.max(now);
        }
        if slot != 0 {
            r.int.as_mut().expect("an INT run").give(slot);
        }
        if newly > 0 {
            qp.timeout_at = if qp.tx.in_flight() > 0 { now + timeout } else { 0 };
        }
        let done = qp.tx.done();
        let f = &mut self.apps.flows[fid as usize];
        if newly > 0 && done && self.apps.fct_at_sender && f.finish == super::apps::UNFINISHED {
            f.finish = now;
            self.apps.unfinished -= 1;
        }
        self.arm_timer(fid);
        self.qp_send(fid);
    }

    /// A CNP at the sender.
    #[inline(never)]
    pub(super) fn qp_cnp(&mut self, p: Packet) {
        let now = self.q.now;
        self.rdma().qps[p.flow as usize].cc.on_cnp(now);
        self.arm_timer(p.flow);
    }

    /// Packet `id` (`size` bytes) has just left switch port `port` at
    /// `now`: the port counts its bytes, and a data packet gets the port's
    /// record (`rdma/int.rs`). Only ports with telemetry call this.
    pub(super) fn int_stamp(&mut self, port: u32, now: Time, id: u32, size: u32) {
        let r = self.rdma.as_deref_mut().expect("an RDMA run");
        let tx = r.port_tx[port as usize];
        r.port_tx[port as usize] = tx + size as u64;
        let p = self.arena.get(id);
        if p.kind != Kind::Data || p.int_slot() == 0 {
            return;
        }
        let q = &self.fabric.net.ports[port as usize].qdisc;
        let hop = IntHop { ts: now, tx_bytes: tx, qlen: q.bytes, rate: q.rate.bps };
        r.int.as_mut().expect("an INT run").push(p.int_slot(), hop);
    }

    /// A packet the network drops gives its telemetry stack back.
    pub(super) fn int_drop(&mut self, p: &Packet) {
        let slot = p.int_slot();
        if slot != 0 && matches!(p.kind, Kind::Data | Kind::Ack | Kind::Nack) {
            if let Some(int) = self.rdma.as_deref_mut().and_then(|r| r.int.as_mut()) {
                int.give(slot);
            }
        }
    }

    /// Whether switch ports stamp INT (the run's transport reads it).
    #[inline]
    pub(super) fn telemetry(&self) -> bool {
        self.rdma.as_deref().is_some_and(|r| r.int.is_some())
    }

    /// The summary's RDMA counts.
    pub(super) fn rdma_summary(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let Some(r) = self.rdma.as_deref() else { return };
        m.insert("rdma_cnps".into(), serde_json::json!(r.cnps));
        m.insert("rdma_nacks".into(), serde_json::json!(r.nacks));
        let cuts: u64 = r.qps.iter().map(|q| q.cc.cuts() as u64).sum();
        m.insert("rdma_rate_cuts".into(), serde_json::json!(cuts));
        if let Some(int) = &r.int {
            // Stacks still held: packets in flight at the end (a leak shows
            // as a count that grows with the run's length).
            m.insert("rdma_int_stacks_held".into(), serde_json::json!(int.held()));
        }
    }
}
