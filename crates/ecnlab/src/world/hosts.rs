//! The hosts: their NICs' batching (segmentation offload at senders,
//! receive interrupt coalescing and GRO at receivers) and their TCP stacks,
//! which turn arriving packets into ACKs, deliveries and new segments. The
//! settings every host shares live once here rather than per flow, to keep
//! `Flow` small (see `FlowLog`).

use super::apps::{UNFINISHED, UNSIZED};
use super::World;
use crate::config::{Config, TransportCfg};
use crate::engine::Event;
use crate::host::cc::EchoMode;
use crate::host::nic::coalesce::{Arrival, Coalescer};
use crate::host::nic::lso::{Lso, Timer, Verdict};
use crate::host::sack_blocks::{More, SackBlocks, NO_MORE};
use crate::host::stage::Stages;
use crate::host::tcp_rx::AckOut;
use crate::host::tcp_tx::TimerAction;
use crate::packet::{Ecn, Kind, Packet};
use crate::switch::classifier::StageClasses;
use crate::units::{secs, Time};

pub(super) struct Hosts {
    pub(super) hdr: u32,
    /// transport.mss, for counting GRO-merged segments' packets.
    pub(super) mss: u32,
    /// ECN codepoint of new data and of retransmissions (per the cc,
    /// `transport.ect_retransmits` and `transport.ect1`).
    pub(super) ect_new: Ecn,
    pub(super) ect_rtx: Ecn,
    /// Per flow, the two codepoints, when some `[[flows]]` entry has a
    /// congestion control or ECT(1) choice of its own; empty otherwise, so
    /// other runs never look.
    pub(super) flow_ect: Vec<(Ecn, Ecn)>,
    pub(super) delack_timeout: Time,
    /// Linux's delayed-ACK rules: a connection idle longer than this (the
    /// receiver's RTO) is in quick-ACK mode again; Time::MAX otherwise.
    pub(super) requick_after: Time,
    pub(super) host_queue_limit: u64,
    /// Senders a NIC drop unblocked, to wake (see `drop_at`).
    pub(super) woken: Vec<u32>,
    /// `[host]` batching: segmentation offload at senders, receive
    /// interrupt coalescing (and GRO) at receivers; None when off.
    pub(super) lso: Option<Lso>,
    /// Stage tagging of data packets (ML-ECN), when host.stages is set.
    pub(super) stages: Option<Stages>,
    /// ML-ECN's stage classes: the queue of each tagged packet (see
    /// `switch::classifier` for why the sender applies them).
    pub(super) classes: Option<StageClasses>,
    pub(super) rx_batching: Option<Coalescer>,
    /// Two or three SACK blocks per ACK (`transport.sack_blocks`); None
    /// for one.
    pub(super) sack_blocks: Option<SackBlocks>,
}

impl Hosts {
    /// The hosts' settings: `echo` is the congestion control's ECN echo,
    /// `flows` the number of flows and `hosts` of hosts.
    pub(super) fn new(cfg: &Config, echo: EchoMode, classes: Option<StageClasses>, flows: usize, hosts: u32) -> Hosts {
        let t = &cfg.transport;
        let (ect_new, ect_rtx) = codepoints(t, echo);
        let mut flow_ect = Vec::new();
        if cfg.flows.iter().any(|f| f.cc.is_some() || f.ect1.is_some()) {
            flow_ect = vec![(ect_new, ect_rtx); flows];
            let mut id = 0;
            for f in &cfg.flows {
                let ft = crate::declarations::registry::flow_transport(t, f);
                let own = crate::host::cc::decl(ft.cc.as_str()).expect("a checked cc").echo;
                flow_ect[id..id + f.count as usize].fill(codepoints(&ft, own));
                id += f.count as usize;
            }
        }
        Hosts {
            hdr: t.header,
            mss: t.mss,
            ect_new,
            ect_rtx,
            flow_ect,
            delack_timeout: t.delayed_ack_timeout.0,
            requick_after: crate::host::delack_linux::requick_after(t),
            host_queue_limit: t.host_queue_limit.0,
            woken: Vec::new(),
            lso: Lso::new(&cfg.host, t, flows),
            stages: (!cfg.host.stages.is_empty()).then(|| {
                let st = Stages::new(cfg.host.stages.iter().map(|b| b.0).collect(), cfg.host.stage_by);
                match &cfg.host.ect_stages {
                    Some(only) => st.ect_only(only),
                    None => st,
                }
            }),
            classes,
            rx_batching: Coalescer::new(&cfg.host, hosts),
            sack_blocks: SackBlocks::new(t),
        }
    }
}

/// The codepoints of a sender's new data and retransmissions: ECT(0), or
/// ECT(1) with `ect1`, from a congestion control that uses ECN (its
/// retransmissions too with `ect_retransmits`, or as Linux's DCTCP,
/// `dctcp_linux.rs`); Not-ECT otherwise.
fn codepoints(t: &TransportCfg, echo: EchoMode) -> (Ecn, Ecn) {
    let ect = if echo == EchoMode::None {
        Ecn::NotEct
    } else if t.ect1 {
        Ecn::Ect1
    } else {
        Ecn::Ect
    };
    let rtx_ect = t.ect_retransmits || crate::host::cc::dctcp_linux::active(t);
    (ect, if rtx_ect { ect } else { Ecn::NotEct })
}

// ---------------- hosts ----------------

impl World<'_> {
    pub(super) fn host_arrive(&mut self, host: u32, id: u32) {
        let p = *self.arena.get(id);
        self.arena.free(id);
        self.rec.delivered += 1;
        debug_assert_eq!(p.dst, host);
        if self.hosts.rx_batching.is_some() {
            return self.batch_arrival(host, p);
        }
        self.host_handle(host, p);
    }

    /// Packet `p` joins `host`'s receive batch (interrupt coalescing).
    #[cold]
    #[inline(never)]
    fn batch_arrival(&mut self, host: u32, p: Packet) {
        let Some(c) = &mut self.hosts.rx_batching else { return };
        match c.arrive(host, p, self.q.now) {
            Arrival::Schedule(t) => self.q.at(t, Event::RxInterrupt { host }),
            Arrival::Wait => {}
            Arrival::HandleNow => self.rx_interrupt(host),
        }
    }

    /// An RxInterrupt event: the interrupt, unless it is a stale one.
    #[cold]
    #[inline(never)]
    pub(super) fn rx_interrupt_due(&mut self, host: u32) {
        if self.hosts.rx_batching.as_ref().is_some_and(|c| c.due(host, self.q.now)) {
            self.rx_interrupt(host);
        }
    }

    /// The receive interrupt of `host`: handle its waiting frames (merged
    /// by GRO if on) now, so their ACKs leave together.
    fn rx_interrupt(&mut self, host: u32) {
        let Some(c) = &mut self.hosts.rx_batching else { return };
        let batch = c.take(host);
        for p in &batch {
            self.host_handle(host, *p);
        }
        if let Some(c) = &mut self.hosts.rx_batching {
            c.done(batch);
        }
    }

    /// The host's stack takes packet `p`.
    #[inline(always)]
    fn host_handle(&mut self, host: u32, p: Packet) {
        let now = self.q.now;
        match p.kind {
            Kind::Syn => {
                let mut r = Packet::new(Kind::SynAck, host, p.src, p.flow, p.service, self.hosts.hdr);
                r.ts = p.ts;
                self.host_send(r);
            }
            Kind::SynAck => {
                let f = &mut self.apps.flows[p.flow as usize];
                if f.tx.state != crate::host::snd::TxState::SynSent {
                    return;
                }
                f.tx.on_synack(now, p.ts);
                if let Some(g) = f.incast_group() {
                    self.incast_established(g);
                }
                self.try_send(p.flow);
            }
            Kind::Data if self.rdma.is_some() => self.qp_data(p),
            Kind::Data => self.data_arrive(p),
            Kind::Ack if self.rdma.is_some() => self.qp_ack(p, false),
            Kind::Nack => self.qp_ack(p, true),
            Kind::Cnp => self.qp_cnp(p),
            Kind::Ack => {
                let more = p.sack_slot().map_or(NO_MORE, |slot| self.take_sacks(slot));
                let f = &mut self.apps.flows[p.flow as usize];
                let progressed = f.tx.on_ack_blocks(now, p.seq, (p.sack_lo, p.sack_hi), &more, p.ece, p.ts);
                if progressed && !self.apps.serial_next.is_empty() {
                    self.serial_done(p.flow);
                }
                if progressed && (self.apps.fct_at_sender || self.apps.conns.is_some()) {
                    self.all_acked(p.flow);
                }
                self.try_send(p.flow);
            }
            Kind::PingReq => {
                let mut r = Packet::new(Kind::PingRep, host, p.src, p.flow, p.service, p.size);
                r.ts = p.ts;
                // The reply echoes the request's sequence number (RFC 792).
                r.seq = p.seq;
                self.host_send(r);
            }
            Kind::PingRep => {
                if p.ts >= self.warmup {
                    self.rec.stats.rtt.push(secs(p.ts), p.dst, p.src, p.service as u32, secs(now - p.ts));
                }
            }
        }
    }

    /// Always inlined: `host_handle` has two callers since receive batching
    /// (issue 10), which left this a call of its own on the hot path (MQ-ECN
    /// benchmark, 10,000-flow copy: 2.2% of wall time, paired runs).
    #[inline(always)]
    fn data_arrive(&mut self, p: Packet) {
        let now = self.q.now;
        let fid = p.flow;
        let f = &mut self.apps.flows[fid as usize];
        let end = p.seq + p.payload as u64;
        if !p.rtx && p.seq < f.rx_high {
            self.apps.logs[fid as usize].reordered += 1;
        }
        if p.seq < f.rx_high && f.rx.holds(p.seq, end) {
            self.apps.logs[fid as usize].spurious += 1;
        }
        f.rx_high = f.rx_high.max(end);
        let before = f.rx.rcv_nxt;
        if f.rx.pending == 0 {
            if p.ts.saturating_sub(f.last_data_ts) > self.hosts.requick_after {
                // Linux's rules: idle longer than the receiver's RTO (the
                // senders' timestamps measure the gap; `delack_linux.rs`).
                f.rx.idle_restart();
            }
            // A held-back ACK echoes the earliest unacknowledged timestamp
            // (RFC 7323 §4.3), so delayed ACKs do not shrink RTT samples.
            f.last_data_ts = p.ts;
        }
        let out = f.rx.on_data(p.seq, p.payload, self.hosts.mss, p.ecn == Ecn::Ce, p.cwr);
        let service = f.service as usize;
        if let Some(a) = out.early_ack {
            // It acknowledges what came before this segment: its blocks
            // too (Linux checks CE before queueing the segment).
            self.send_ack(fid, a, p.ts);
        }
        if p.seq > before {
            if let Some(sb) = &mut self.hosts.sack_blocks {
                sb.note(fid, p.seq, self.apps.flows[fid as usize].rx.ooo());
            }
        }
        if out.delivered > 0 {
            self.rec.stats.goodput.deliver(service, now, out.delivered, &mut self.rec.out);
            if now >= self.warmup {
                self.rec.goodput_after_warmup[service] += out.delivered;
            }
            self.check_done(fid, before);
        }
        match out.ack {
            Some(a) => self.send_ack(fid, a, p.ts),
            None => {
                let f = &mut self.apps.flows[fid as usize];
                if f.delack_event == 0 {
                    f.delack_event = now + self.hosts.delack_timeout;
                    self.q.at(f.delack_event, Event::DelAck { flow: fid });
                }
            }
        }
    }

    pub(super) fn check_done(&mut self, fid: u32, before: u64) {
        let now = self.q.now;
        let f = &mut self.apps.flows[fid as usize];
        let got = f.rx.rcv_nxt;
        if f.size != UNSIZED && f.finish == UNFINISHED && !self.apps.fct_at_sender && got >= f.size {
            f.finish = now;
            self.apps.unfinished -= 1;
        }
        if let Some(g) = f.incast_group() {
            let inc = &mut self.apps.incasts[g as usize];
            if before < inc.target && got >= inc.target {
                inc.done += 1;
                if inc.done == inc.flows.len() as u32 {
                    let dt = secs(now - inc.round_start);
                    let bits = (inc.block * inc.flows.len() as u64 * 8) as f64;
                    self.rec.stats.incast_round(inc.round, inc.round_start, now, bits / dt / 1e9);
                    if inc.round < inc.rounds {
                        self.start_round(g);
                    } else {
                        for &fl in &inc.flows {
                            self.apps.flows[fl as usize].finish = now;
                        }
                    }
                }
            }
        }
    }

    pub(super) fn send_ack(&mut self, fid: u32, a: AckOut, ts: Time) {
        let f = &self.apps.flows[fid as usize];
        let mut p = Packet::new(Kind::Ack, f.dst, f.src, fid, f.ctrl_service, self.hosts.hdr);
        p.seq = a.ack;
        (p.sack_lo, p.sack_hi) = a.sack;
        if let Some(sb) = &mut self.hosts.sack_blocks {
            let (first, more) = sb.blocks(fid, f.rx.ooo());
            (p.sack_lo, p.sack_hi) = first;
            if more != NO_MORE {
                p.payload = sb.put(more);
            }
        }
        p.ece = a.ece;
        p.ts = ts;
        self.host_send(p);
    }

    /// The further SACK blocks of an ACK that arrived or left this part.
    #[cold]
    #[inline(never)]
    pub(super) fn take_sacks(&mut self, slot: u32) -> More {
        self.sack_slab().take(slot)
    }

    /// Where ACKs' further SACK blocks are kept: only asked for by a
    /// packet that has some (`Packet::sack_slot`), which only a run with
    /// `sack_blocks` > 1 sends.
    pub(super) fn sack_slab(&mut self) -> &mut SackBlocks {
        self.hosts.sack_blocks.as_mut().expect("blocks only with sack_blocks")
    }

    pub(super) fn try_send(&mut self, fid: u32) {
        if self.rdma.is_some() {
            return self.qp_send(fid);
        }
        if self.hosts.lso.is_some() {
            self.try_send_lso(fid);
        } else {
            loop {
                let f = &mut self.apps.flows[fid as usize];
                if f.nic_bytes >= self.hosts.host_queue_limit {
                    f.nic_blocked = true;
                    break;
                }
                if !self.send_packet(fid) {
                    break;
                }
            }
            self.sync_rto(fid);
        }
        // Every change of a window ends here (an ACK's, a timer's, the
        // restart after idle as a segment leaves), so a traced window is
        // read here; untraced, one length is tested.
        if !self.rec.cwnd_traced.is_empty() {
            self.trace_cwnd(fid);
        }
    }

    /// Hand the NIC the next packet the sender allows, if any.
    #[inline(always)]
    fn send_packet(&mut self, fid: u32) -> bool {
        let now = self.q.now;
        let (hdr, mut ect_new, mut ect_rtx) = (self.hosts.hdr, self.hosts.ect_new, self.hosts.ect_rtx);
        if !self.hosts.flow_ect.is_empty() {
            (ect_new, ect_rtx) = self.hosts.flow_ect[fid as usize];
        }
        let f = &mut self.apps.flows[fid as usize];
        let Some(seg) = f.tx.next_segment(now) else { return false };
        f.nic_bytes += (seg.len + hdr) as u64;
        let mut p = Packet::new(Kind::Data, f.src, f.dst, fid, f.service, seg.len + hdr);
        p.payload = seg.len;
        p.seq = seg.seq;
        p.cwr = seg.cwr;
        p.rtx = seg.retransmit;
        if f.tx.pf.on {
            // pFabric's priority: the flow's remaining bytes now.
            p.set_prio(f.tx.remaining());
        }
        p.ts = now;
        p.ecn = if seg.retransmit { ect_rtx } else { ect_new };
        if let Some(st) = &self.hosts.stages {
            p.stage = st.tag(seg.seq, f.tx.max_sent, seg.retransmit, f.size());
            if !st.ect(p.stage) {
                p.ecn = Ecn::NotEct;
            }
            if let Some(c) = &self.hosts.classes {
                p.service = c.queue(p.stage, fid) as u8;
            }
        }
        self.host_send(p);
        true
    }

    /// With LSO (`host/nic/lso.rs`): hand the NIC whole segments, or defer.
    /// The NIC queue limit (TCP small queues) is checked per segment, so
    /// it never splits one: Linux's TSQ, too, lets a whole skb through
    /// (and 2.6.38, CEDM's kernel, has no TSQ at all).
    #[inline(never)]
    fn try_send_lso(&mut self, fid: u32) {
        let now = self.q.now;
        loop {
            let f = &mut self.apps.flows[fid as usize];
            if f.nic_bytes >= self.hosts.host_queue_limit {
                f.nic_blocked = true;
                break;
            }
            let lso = self.hosts.lso.as_mut().expect("LSO is on");
            let n = match lso.decide(fid, now, f.tx.allowance()) {
                Verdict::Send(n) => n,
                Verdict::Idle => break,
                Verdict::Defer(timer) => {
                    if let Some(t) = timer {
                        self.q.at(t, Event::LsoDefer { flow: fid });
                    }
                    break;
                }
            };
            if !(0..n).all(|_| self.send_packet(fid)) {
                break;
            }
        }
        self.sync_rto(fid);
    }

    #[cold]
    #[inline(never)]
    pub(super) fn lso_timer(&mut self, fid: u32) {
        let now = self.q.now;
        match self.hosts.lso.as_mut().map(|l| l.timer_fired(fid, now)) {
            Some(Timer::Due) => self.try_send(fid),
            Some(Timer::Again(t)) => self.q.at(t, Event::LsoDefer { flow: fid }),
            _ => {}
        }
    }

    /// Keep one timer event no later than the sender's next deadline (its
    /// RTO, or with the Linux stack a tail loss probe's or RACK's reordering
    /// timer); stale events are recognised by their time and ignored.
    pub(super) fn sync_rto(&mut self, fid: u32) {
        let f = &mut self.apps.flows[fid as usize];
        let d = f.tx.timer_deadline();
        if d != 0 && (f.rto_event == 0 || f.rto_event > d) {
            f.rto_event = d;
            self.q.at(d, Event::Rto { flow: fid });
        }
    }

    pub(super) fn rto_fired(&mut self, fid: u32) {
        let now = self.q.now;
        let f = &mut self.apps.flows[fid as usize];
        if f.rto_event != now {
            return;
        }
        f.rto_event = 0;
        let d = f.tx.timer_deadline();
        if d == 0 {
            return;
        }
        if now < d {
            f.rto_event = d;
            self.q.at(d, Event::Rto { flow: fid });
            return;
        }
        match f.tx.fire_timer(now) {
            // The tail loss probe (`host/recovery/tlp.rs`): one segment
            // now, whatever the NIC queue or an LSO deferral would say.
            TimerAction::Probe => {
                self.send_packet(fid);
            }
            TimerAction::ResendSyn => self.send_syn(fid),
            // An RTO's go-back, or RACK's marks (`host/recovery/rack.rs`):
            // try_send sends what the window allows.
            TimerAction::Nothing => {}
        }
        self.try_send(fid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The linux profile sends retransmissions Not-ECT (RFC 3168 §6.1.5,
    /// as Linux's reno and cubic), except under Linux's DCTCP: tcp_ecn_send
    /// clears ECT on a retransmission only for a congestion control that
    /// does not need ECN (`dctcp_linux.rs`).
    #[test]
    fn linux_dctcp_retransmits_ect() {
        let t = |json: &str| -> TransportCfg { serde_json::from_str(json).unwrap() };
        let lx = r#""ect_retransmits": false, "dctcp_linux": true"#;
        let dctcp = t(&format!(r#"{{"cc": "dctcp", {lx}}}"#));
        assert_eq!(codepoints(&dctcp, EchoMode::Exact), (Ecn::Ect, Ecn::Ect));
        let ecn_star = t(&format!(r#"{{"cc": "ecn-star", {lx}}}"#));
        assert_eq!(codepoints(&ecn_star, EchoMode::Latched), (Ecn::Ect, Ecn::NotEct));
        let plain = t(r#"{"cc": "dctcp", "ect_retransmits": false}"#);
        assert_eq!(codepoints(&plain, EchoMode::Exact), (Ecn::Ect, Ecn::NotEct));
    }

    /// An ACK's further SACK blocks live beside it exactly as long as it
    /// does (`sack_blocks.rs`): stopped at 15 moments with packets
    /// everywhere, the slab holds one entry for each ACK still in the
    /// network with more than one block, and no other. Data and ACKs share
    /// both directions' queues under an aggressive CoDel (20 us target), so
    /// ACKs carrying blocks are dropped too (about 1,400 ACK drops in these
    /// runs, dozens of them with blocks, when written), and freed there.
    #[test]
    fn sack_blocks_live_exactly_as_long_as_their_acks() {
        let text = "[run]\nseed = 2\nduration = \"300ms\"\nsample_ports = \"none\"\n\
                    [topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"200Mbps\"\nlink_delay = \"100us\"\n\
                    [switch]\nbuffer = \"100pkt\"\nmarking = \"codel\"\ncodel_target = \"20us\"\ncodel_interval = \"500us\"\n[transport]\nprofile = \"linux\"\n\
                    [[flows]]\nsrc = 0\ndst = 1\ncount = 2\n[[flows]]\nsrc = 1\ndst = 0\ncount = 2\n\
                    [[flows]]\nsrc = 2\ndst = 1\n[[flows]]\nsrc = 2\ndst = 0\n";
        let (mut seen, mut dropped) = (0, 0);
        for ms in (20..=300).step_by(20) {
            let cfg = Config::from_toml(&text.replace("300ms", &format!("{ms}ms"))).unwrap();
            let mut sink = crate::outputs::output::Collect::default();
            let mut w = World::new(&cfg, &mut sink).unwrap();
            let _ = w.run(&mut |_, _| true);
            let live = w.arena.live_packets();
            let with_blocks = live.iter().filter(|p| p.sack_slot().is_some()).count();
            let sb = w.hosts.sack_blocks.as_ref().expect("the linux profile sends 3 blocks");
            assert_eq!(sb.kept(), with_blocks, "stopped at {ms} ms");
            seen += with_blocks;
            dropped += sb.dropped;
        }
        assert!(seen > 0, "no ACK with several blocks in flight: the test shows nothing");
        assert!(dropped > 10, "only {dropped} ACKs with blocks dropped: the drop path is not shown");
    }
}
