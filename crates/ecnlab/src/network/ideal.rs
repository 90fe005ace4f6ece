//! The ideal FCT of a sized flow: its completion time alone in an empty
//! network, the denominator of FCT slowdown (pFabric, Homa, HPCC).
//!
//! It is measured as `fct` is: from the flow's start (`flows.start`: when
//! the application opened it, before its SYN) to `run.fct_end` (its last
//! byte at the receiver, or that byte's ACK back at the sender). The flow is
//! replayed alone on its path with the run's own TCP, so the ideal holds
//! exactly what a lone flow pays and nothing else:
//!
//! - the handshake: SYN out and SYN-ACK back (header-only packets), unless
//!   the flow starts on an open `per-pair` connection (a lone flow always
//!   finds its pair's first connection open, so none there);
//! - the window: the sender's own code (`TcpSender`) from a fresh
//!   connection, so slow start from `init_cwnd` with its growth rule
//!   (pFabric's per-ACK step and its 12-packet BDP window included),
//!   `max_cwnd` and `rx_window`; no loss and no ECN mark, so it never cuts;
//! - the receiver's own ACK rule (`TcpReceiver`): every `delayed_ack`
//!   packets or bytes, the rest after `delayed_ack_timeout`;
//! - every packet (data `mss` + `header`, ACKs `header`) serialised at each
//!   link's rate, store-and-forward, behind the flow's own earlier packets
//!   on that link (the host NIC first), then the link's propagation delay.
//!   Data and ACKs go opposite ways, so they never share a port. The NIC
//!   queue's limit (`host_queue_limit`) holds the sender back as in the
//!   engine: it never idles the NIC, but it bounds the flight, and with it
//!   how far the window grows.
//!
//! A lone flow in the engine takes exactly this long (`tests/ideal.rs`
//! checks it to the picosecond on every topology), so its slowdown is 1.
//! Left out: host batching (`[host]` LSO deferral, interrupt coalescing,
//! GRO), which delays a lone flow too, so with it on a lone flow's slowdown
//! is above 1; timeouts, which a lone flow meets only when its RTT exceeds
//! its RTO; and a reused `per-pair` connection's window, which may start
//! above `init_cwnd`, so such a flow's slowdown can fall below 1. The path
//! is the first equal-cost choice at each switch: every topology here gives
//! all of a pair's equal-cost paths the same rates and delays.
//!
//! It runs when the flows table is written, never on the run's path. Flows
//! of one path share one replay (`Replay::fcts`), so a workload costs about
//! one replay of its largest flow per path, not one per flow.

use crate::config::TransportCfg;
use crate::host::tcp_rx::{AckOut, TcpReceiver};
use crate::host::tcp_tx::{TcpParams, TcpSender};
use crate::network::topology::Network;
use crate::units::{LineRate, Time};
use std::collections::VecDeque;
use std::sync::Arc;

/// One link of a path: its rate and propagation delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub rate: LineRate,
    pub delay: Time,
}

impl Hop {
    pub fn new(bps: u64, delay: Time) -> Hop {
        Hop { rate: LineRate::new(bps), delay }
    }
}

/// How a flow runs: its transport, the run's shared TCP constants (which a
/// `[[flows]]` entry with its own cc shares too), whether it starts with a
/// handshake and whether it ends at the sender (`run.fct_end = "sender"`).
pub struct Lone<'a> {
    pub transport: &'a TransportCfg,
    pub params: &'a Arc<TcpParams>,
    pub handshake: bool,
    pub at_sender: bool,
}

/// What is on its way: the links' state, packets in flight, the
/// receiver's timer and the sender's NIC queue.
#[derive(Clone, Default)]
struct Wire {
    /// Per link, when it has sent the flow's last packet so far.
    fwd_free: Vec<Time>,
    rev_free: Vec<Time>,
    /// Data: arrival at the receiver, sequence, payload, when it was sent.
    data: VecDeque<(Time, u64, u32, Time)>,
    /// ACKs: arrival at the sender, the ACK, the timestamp it echoes.
    acks: VecDeque<(Time, AckOut, Time)>,
    /// The delayed-ACK timer: as the engine's, set by the first packet left
    /// unacknowledged while none is set, and never cancelled.
    delack: Option<Time>,
    /// The send time of the first data still unacknowledged (the engine's
    /// `last_data_ts`), which a held-back ACK echoes.
    held_ts: Time,
    /// Data in the NIC's queue, not yet on its link (TCP small queues):
    /// when it starts, its bytes.
    nic: VecDeque<(Time, u64)>,
    nic_bytes: u64,
}

/// Replays flows alone on one path; its buffers are kept from one flow to
/// the next.
#[derive(Default)]
pub struct Replay {
    fwd: Vec<Hop>,
    rev: Vec<Hop>,
    wire: Wire,
    /// A copy of `wire` for a flow ended at the sender (`acked_at`).
    fork: Wire,
}

/// The links from `src` to `dst`, into `out` (the first equal-cost port
/// at each switch).
pub fn path(net: &Network, src: u32, dst: u32, out: &mut Vec<Hop>) {
    out.clear();
    out.extend(net.first_path(src, dst).map(|p| Hop { rate: p.qdisc.rate, delay: p.delay }));
}

/// A packet of `bytes` entering the first of `hops` at `at`, behind the
/// flow's earlier packets: when it lands at the far end.
fn cross(hops: &[Hop], free: &mut [Time], bytes: u64, at: Time) -> Time {
    let mut t = at;
    for (h, f) in hops.iter().zip(free.iter_mut()) {
        *f = t.max(*f) + h.rate.tx_time(bytes);
        t = *f + h.delay;
    }
    t
}

impl Wire {
    fn reset(&mut self, fwd: usize, rev: usize) {
        self.fwd_free.clear();
        self.fwd_free.resize(fwd, 0);
        self.rev_free.clear();
        self.rev_free.resize(rev, 0);
        self.data.clear();
        self.acks.clear();
        self.delack = None;
        self.held_ts = 0;
        self.nic.clear();
        self.nic_bytes = 0;
    }

    fn next_data(&self) -> Time {
        self.data.front().map_or(Time::MAX, |d| d.0)
    }

    fn next_ack(&self) -> Time {
        self.acks.front().map_or(Time::MAX, |a| a.0)
    }

    /// The delayed-ACK timer is due now and no data packet lands at the
    /// same time: in the engine, a packet's arrival goes before a timer of
    /// the same picosecond (`engine.rs`, `tie`: events of one time run by
    /// kind, arrivals first).
    fn timer_first(&self, now: Time) -> bool {
        self.delack == Some(now) && self.next_data() != now
    }

    /// The first data packet on its way reaches the receiver at `now`.
    fn deliver(&mut self, rx: &mut TcpReceiver, rev: &[Hop], t: &TransportCfg, now: Time) {
        let (_, seq, len, ts) = self.data.pop_front().expect("a data arrival");
        if rx.pending == 0 {
            self.held_ts = ts;
        }
        let out = rx.on_data(seq, len, t.mss, false, false);
        let hdr = t.header as u64;
        if let Some(a) = out.early_ack {
            self.ack(rev, a, hdr, now, ts);
        }
        match out.ack {
            Some(a) => self.ack(rev, a, hdr, now, ts),
            None if self.delack.is_none() => self.delack = Some(now + t.delayed_ack_timeout.0),
            None => {}
        }
    }

    /// The delayed-ACK timer fires at `now`.
    fn timer(&mut self, rx: &mut TcpReceiver, rev: &[Hop], hdr: u64, now: Time) {
        self.delack = None;
        if let Some(a) = rx.flush() {
            self.ack(rev, a, hdr, now, self.held_ts);
        }
    }

    fn ack(&mut self, rev: &[Hop], a: AckOut, hdr: u64, now: Time, ts: Time) {
        let at = cross(rev, &mut self.rev_free, hdr, now);
        self.acks.push_back((at, a, ts));
    }
}

impl Replay {
    /// The path of the flows replayed next: data over `fwd`, ACKs over `rev`.
    pub fn set_hops(&mut self, fwd: &[Hop], rev: &[Hop]) {
        self.fwd.clear();
        self.fwd.extend_from_slice(fwd);
        self.rev.clear();
        self.rev.extend_from_slice(rev);
    }

    /// The ideal FCT of one flow of `size` bytes on the current path; None
    /// if it cannot finish (nothing left to happen before its end).
    pub fn fct(&mut self, lone: &Lone, size: u64) -> Option<Time> {
        let mut out = [None];
        self.fcts(lone, &mut [(size, 0)], &mut out);
        out[0]
    }

    /// The ideal FCTs of flows that share the current path and `lone`:
    /// `flows` holds (size, slot), and each one's ideal goes to
    /// `out[slot]`. A flow's first n − 1 packets leave as those of any
    /// longer flow do (the sender's choices before its last packet do not
    /// depend on the flow's size), so one replay of the largest serves
    /// them all: each flow ends off it when its last packet is due, its
    /// cost the few packets then in flight rather than its whole length.
    pub fn fcts(&mut self, lone: &Lone, flows: &mut [(u64, usize)], out: &mut [Option<Time>]) {
        flows.sort_unstable();
        let t = lone.transport;
        let (hdr, mss) = (t.header as u64, t.mss as u64);
        let skip = flows.partition_point(|f| f.0 == 0);
        let flows = &flows[skip..];
        let (Some(&(largest, _)), Some(decl)) = (flows.last(), crate::host::cc::decl(t.cc.as_str())) else {
            return;
        };
        let mut rx = TcpReceiver::new(decl.echo, t.delayed_ack);
        if t.delayed_ack_bytes {
            rx = rx.counting_bytes(t.mss);
        }
        let mut tx = TcpSender::with_params(t, lone.params);
        tx.limit = largest.div_ceil(mss) * mss;
        self.wire.reset(self.fwd.len(), self.rev.len());
        let mut now = 0;
        if lone.handshake {
            tx.open(0);
            let syn = cross(&self.fwd, &mut self.wire.fwd_free, hdr, 0);
            now = cross(&self.rev, &mut self.wire.rev_free, hdr, syn);
            tx.on_synack(now, 0);
        } else {
            tx.open_established(0);
        }
        if self.fwd.is_empty() {
            return;
        }
        let mut next = 0;
        let mut wake = self.send(&mut tx, &rx, lone, flows, &mut next, out, now);
        while next < flows.len() {
            let data = self.wire.next_data();
            let ack = self.wire.next_ack();
            let timer = self.wire.delack.unwrap_or(Time::MAX);
            let woken = wake.unwrap_or(Time::MAX);
            let now = data.min(ack).min(timer).min(woken);
            if now == Time::MAX {
                return;
            }
            if self.wire.timer_first(now) {
                self.wire.timer(&mut rx, &self.rev, hdr, now);
            } else if data == now {
                self.wire.deliver(&mut rx, &self.rev, t, now);
            } else if ack == now {
                let (_, a, ts) = self.wire.acks.pop_front().expect("an ACK arrival");
                tx.on_ack(now, a.ack, a.sack, a.ece, ts);
                wake = self.send(&mut tx, &rx, lone, flows, &mut next, out, now);
            } else {
                wake = self.send(&mut tx, &rx, lone, flows, &mut next, out, now);
            }
        }
    }

    /// The sender at `now`: everything its window and its NIC queue's limit
    /// allow, ending the flows whose last packet is the next to go. Returns
    /// when the NIC next takes a packet, if the sender waits for that.
    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        tx: &mut TcpSender,
        rx: &TcpReceiver,
        lone: &Lone,
        flows: &[(u64, usize)],
        next: &mut usize,
        out: &mut [Option<Time>],
        now: Time,
    ) -> Option<Time> {
        let t = lone.transport;
        let (hdr, mss) = (t.header as u64, t.mss as u64);
        // Data the NIC has started sending has left its queue.
        while let Some(&(_, bytes)) = self.wire.nic.front().filter(|n| n.0 <= now) {
            self.wire.nic.pop_front();
            self.wire.nic_bytes -= bytes;
        }
        loop {
            if self.wire.nic_bytes >= t.host_queue_limit.0 {
                return self.wire.nic.front().map(|n| n.0);
            }
            let seg = tx.next_segment(now)?;
            let k = seg.seq / mss;
            while let Some(&(size, slot)) = flows.get(*next).filter(|f| (f.0 - 1) / mss <= k) {
                let last = size - k * mss;
                out[slot] = if lone.at_sender {
                    self.acked_at(rx, t, size, last, now)
                } else {
                    Some(self.tail(last + hdr, now))
                };
                *next += 1;
            }
            if *next == flows.len() {
                return None;
            }
            let bytes = seg.len as u64 + hdr;
            let start = self.wire.fwd_free.first().map_or(now, |&f| f.max(now));
            let at = cross(&self.fwd, &mut self.wire.fwd_free, bytes, now);
            self.wire.data.push_back((at, seg.seq, seg.len, now));
            if start > now {
                self.wire.nic.push_back((start, bytes));
                self.wire.nic_bytes += bytes;
            }
        }
    }

    /// When a last packet of `bytes` sent at `now` lands.
    fn tail(&self, bytes: u64, now: Time) -> Time {
        let mut t = now;
        for (h, &f) in self.fwd.iter().zip(&self.wire.fwd_free) {
            t = t.max(f) + h.rate.tx_time(bytes) + h.delay;
        }
        t
    }

    /// A flow of `size` bytes sends its last packet (`last` payload bytes)
    /// at `now`: when the ACK of its last byte reaches the sender.
    fn acked_at(&mut self, rx: &TcpReceiver, t: &TransportCfg, size: u64, last: u64, now: Time) -> Option<Time> {
        let hdr = t.header as u64;
        self.fork.clone_from(&self.wire);
        let mut rx = rx.clone();
        let at = cross(&self.fwd, &mut self.fork.fwd_free, last + hdr, now);
        self.fork.data.push_back((at, size - last, last as u32, now));
        loop {
            let data = self.fork.next_data();
            let ack = self.fork.next_ack();
            let timer = self.fork.delack.unwrap_or(Time::MAX);
            let now = data.min(ack).min(timer);
            if now == Time::MAX {
                return None;
            }
            if self.fork.timer_first(now) {
                self.fork.timer(&mut rx, &self.rev, hdr, now);
            } else if data == now {
                self.fork.deliver(&mut rx, &self.rev, t, now);
            } else if self.fork.acks.pop_front().is_some_and(|a| a.1.ack >= size) {
                return Some(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000_000;
    const NS: Time = 1_000;

    fn transport(json: &str) -> TransportCfg {
        serde_json::from_str(json).unwrap()
    }

    /// A star's path: the host's NIC and the switch's port, 10 Gbps, 1 us each.
    fn star_fct(json: &str, size: u64, handshake: bool, at_sender: bool) -> Time {
        let t = transport(json);
        let params = TcpParams::new(&t);
        let hops = [Hop::new(10_000_000_000, US), Hop::new(10_000_000_000, US)];
        let mut r = Replay::default();
        r.set_hops(&hops, &hops);
        r.fct(&Lone { transport: &t, params: &params, handshake, at_sender }, size).unwrap()
    }

    /// Hand-worked at 10 Gbps (0.8 ns a byte) over two 1 us links, header
    /// 40 B: a header-only packet takes 32 ns a link, so a SYN lands after
    /// 2 × 1.032 = 2.064 us and the SYN-ACK is back at 4.128 us. One
    /// 1000-byte segment (1040 B, 832 ns a link) then lands after
    /// 2 × 1.832 = 3.664 us: 7.792 us. Without a handshake, 3.664 us.
    #[test]
    fn one_packet_is_the_handshake_and_one_way() {
        assert_eq!(star_fct("{}", 1000, true, false), 7_792 * NS);
        assert_eq!(star_fct("{}", 1000, false, false), 3_664 * NS);
        // Ended at the sender: plus the ACK's way back, 2.064 us.
        assert_eq!(star_fct("{}", 1000, true, true), (7_792 + 2_064) * NS);
    }

    /// 10 KB with IW 10: one window of six full packets (1500 B, 1.2 us a
    /// link) and a 1240-byte tail (1280 B, 1.024 us). Full packet k leaves
    /// the switch at (k + 2)·1.2 + 1 us, the fifth (k = 5) at 9.4 us; the
    /// tail leaves the NIC at 7.2 + 1.024, reaches the switch at 9.224,
    /// waits to 9.4 and lands at 9.4 + 1.024 + 1 = 11.424 us. Plus the
    /// handshake: 15.552 us.
    #[test]
    fn one_window_is_a_pipeline() {
        assert_eq!(star_fct("{}", 10_000, true, false), 15_552 * NS);
    }

    /// Slow start from IW 2, six full packets, one ACK per packet (40 B:
    /// 1.032 us a link). From the handshake's end:
    /// - packets 0 and 1 land at 4.4 and 5.6 us; their ACKs are back at
    ///   6.464 and 7.664 us;
    /// - ACK 0 (cwnd 3, one in flight) sends packets 2 and 3: the NIC
    ///   sends them over [6.464, 7.664] and [7.664, 8.864]; 3 lands at 12.064;
    /// - ACK 1 (cwnd 4) sends 4 and 5 behind them: NIC [8.864, 10.064] and
    ///   [10.064, 11.264], switch [11.064, 12.264] and [12.264, 13.464],
    ///   so the last byte lands at 14.464 us.
    ///
    /// With the 4.128 us handshake: 18.592 us.
    #[test]
    fn slow_start_rounds_follow_the_acks() {
        assert_eq!(star_fct(r#"{"init_cwnd": 2}"#, 6 * 1460, true, false), 18_592 * NS);
        // IW 6 sends all six at once: 4.128 + (6 + 1)·1.2 + 2 = 14.528 us.
        assert_eq!(star_fct(r#"{"init_cwnd": 6}"#, 6 * 1460, true, false), 14_528 * NS);
    }

    /// ACK every second packet: a lone odd packet waits for the delayed-ACK
    /// timer. IW 1, two packets: packet 0 lands at 4.4 us and is held;
    /// the timer (1 ms) sends its ACK, back 2.064 us later, which opens
    /// cwnd to 2 and sends packet 1: it lands 4.4 us after that.
    #[test]
    fn a_held_ack_waits_for_its_timer() {
        let json = r#"{"init_cwnd": 1, "delayed_ack": 2, "delayed_ack_timeout": "1ms"}"#;
        let want = 4_128 + 4_400 + 1_000_000 + 2_064 + 4_400;
        assert_eq!(star_fct(json, 2 * 1460, true, false), want * NS);
    }
}
