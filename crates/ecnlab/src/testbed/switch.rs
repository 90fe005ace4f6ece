//! The software switch: every port a raw socket, every egress the engine's
//! own queue discipline (built by `topology::switch_qdisc`, as a simulated
//! star builds it), released through a token bucket at the emulated rate.
//!
//! One thread, one loop: take every frame waiting at every port (classify,
//! enqueue in the output port's qdisc), then let each port send what its
//! bucket allows. While any port holds a backlog the loop spins, since at
//! 1 Gbps a frame leaves every 12 µs and a sleep would come back too late;
//! with nothing queued it blocks in poll(2) until a frame arrives.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::bucket::TokenBucket;
use super::frame;
use super::slab::{FrameSlab, FRAME_MAX};
use super::socket::PacketSocket;
use super::spec::SwitchSpec;
use crate::packet::{Arena, Ecn, Kind, Packet};
use crate::switch::{Qdisc, QueueCounters};
use crate::topology::switch_qdisc;
use crate::units::{secs, Time};
use crate::Config;

/// Set by SIGINT/SIGTERM: the loop ends and the report is written.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Frames read from one port before the loop moves on, so that one busy
/// port cannot starve the others' egress.
const RX_BATCH: usize = 32;

/// Queue samples are taken no more often than this (100 µs): the report is
/// JSON, read back at the end of a run of a few seconds.
const MIN_SAMPLE_PS: Time = 100_000_000;

/// What one port saw, beyond its qdisc's counters.
#[derive(Default, Clone, Copy)]
struct PortCounters {
    /// Frames that arrived on this port (from its host).
    rx: u64,
    /// Frames put on this port's wire (to its host), and their wire bytes.
    tx: u64,
    tx_wire_bytes: u64,
    /// Frames the kernel would not take on send (its buffers full).
    tx_refused: u64,
    /// Frames that arrived here and went nowhere: not IPv4 (ARP, IPv6), to
    /// an address no port serves, or larger than FRAME_MAX.
    not_forwarded: u64,
    oversize: u64,
    /// Time this port's output held a backlog, and when the current stretch began.
    busy_ps: Time,
    busy_since: Option<Time>,
}

struct Port {
    sock: PacketSocket,
    host: u32,
    ip: [u8; 4],
    qdisc: Qdisc,
    bucket: TokenBucket,
    /// A frame taken from the qdisc that waits for its bucket's tokens.
    staged: Option<u32>,
    c: PortCounters,
}

/// Queue-length samples, columnar as the simulator's `queues` table.
#[derive(Default)]
struct Samples {
    time: Vec<f64>,
    port: Vec<u32>,
    queue: Vec<u32>,
    bytes: Vec<u64>,
    packets: Vec<u32>,
}

pub struct Switch {
    ports: Vec<Port>,
    arena: Arena,
    slab: FrameSlab,
    wire_overhead: u64,
    rate_bps: u64,
    start: Instant,
    sample_every: Time,
    next_sample: Time,
    samples: Samples,
    report: String,
    dropped_overflow: u64,
    dropped_aqm: u64,
}

impl Switch {
    /// Build the ports of `spec`, opening their sockets in the current
    /// network namespace.
    pub fn new(spec: SwitchSpec) -> Result<Switch, String> {
        let cfg = Config::from_json(&spec.config.to_string()).map_err(|e| format!("the experiment's config: {e}"))?;
        let mut ports = Vec::new();
        for p in &spec.ports {
            let sock = PacketSocket::open(&p.ifname).map_err(|e| e.to_string())?;
            let mut qdisc = switch_qdisc(&cfg, &cfg.switch, spec.rate_bps);
            qdisc.seed(crate::rng::Rng::stream(cfg.run.seed, 0x7E57_BED0 ^ p.host as u64));
            ports.push(Port {
                sock,
                host: p.host,
                ip: p.ip,
                qdisc,
                bucket: TokenBucket::new(spec.rate_bps, spec.bucket_bytes),
                staged: None,
                c: PortCounters::default(),
            });
        }
        let sample_every = match spec.sample_interval_ps {
            0 => 0,
            s => s.max(MIN_SAMPLE_PS),
        };
        Ok(Switch {
            ports,
            arena: Arena::default(),
            slab: FrameSlab::default(),
            wire_overhead: spec.wire_overhead,
            rate_bps: spec.rate_bps,
            start: Instant::now(),
            sample_every,
            next_sample: 0,
            samples: Samples::default(),
            report: spec.report,
            dropped_overflow: 0,
            dropped_aqm: 0,
        })
    }

    #[inline]
    fn now(&self) -> Time {
        self.start.elapsed().as_nanos() as Time * 1_000
    }

    /// Bytes queued in all ports: the shared pool the buffer may consult.
    fn pool(&self) -> u64 {
        self.ports.iter().map(|p| p.qdisc.bytes).sum()
    }

    /// Forward until STOP is set, then write the report.
    pub fn run(&mut self) -> io::Result<()> {
        let mut buf = vec![0u8; FRAME_MAX];
        let mut fds: Vec<libc::pollfd> =
            self.ports.iter().map(|p| libc::pollfd { fd: p.sock.fd(), events: libc::POLLIN, revents: 0 }).collect();
        self.start = Instant::now();
        while !STOP.load(Ordering::Relaxed) {
            let mut got = 0;
            for i in 0..self.ports.len() {
                for _ in 0..RX_BATCH {
                    let Some(len) = self.ports[i].sock.recv(&mut buf)? else { break };
                    got += 1;
                    let now = self.now();
                    self.ingress(i, &buf[..len.min(FRAME_MAX)], len, now);
                }
            }
            let now = self.now();
            let mut backlog = false;
            for i in 0..self.ports.len() {
                backlog |= self.egress(i, now)?;
            }
            if self.sample_every > 0 && now >= self.next_sample {
                self.sample(now);
            }
            if !backlog && got == 0 {
                // Nothing to send and nothing came: sleep until a frame does
                // (or 1 ms passes, to look at STOP and take samples).
                // SAFETY: `fds` is a valid array of its length.
                unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1) };
            }
        }
        self.write_report()
    }

    /// A frame of `len` bytes (`bytes` holds it, or its first FRAME_MAX
    /// bytes) arrived on port `i`.
    fn ingress(&mut self, i: usize, bytes: &[u8], len: usize, now: Time) {
        self.ports[i].c.rx += 1;
        let src = self.ports[i].host;
        if len > FRAME_MAX {
            self.ports[i].c.oversize += 1;
            self.ports[i].c.not_forwarded += 1;
            return;
        }
        let out = frame::ipv4(bytes).and_then(|f| self.ports.iter().position(|p| p.ip == f.dst).map(|o| (o, f)));
        let Some((o, f)) = out else {
            self.ports[i].c.not_forwarded += 1;
            return;
        };
        let mut p = Packet::new(Kind::Data, src, self.ports[o].host, 0, f.dscp, f.total_len as u32);
        p.ecn = f.ecn;
        let id = self.arena.alloc(p, 0);
        let pool = self.pool();
        match self.ports[o].qdisc.enqueue(now, id, &mut self.arena, pool) {
            Ok(()) => self.slab.put(id, bytes),
            Err(reason) => {
                match reason {
                    crate::switch::qdisc::DropReason::Overflow => self.dropped_overflow += 1,
                    crate::switch::qdisc::DropReason::Aqm => self.dropped_aqm += 1,
                }
                self.arena.free(id);
            }
        }
        let port = &mut self.ports[o];
        if port.c.busy_since.is_none() && port.qdisc.packets > 0 {
            port.c.busy_since = Some(now);
        }
    }

    /// Send what port `i`'s bucket allows at `now`; true if it still holds
    /// a backlog.
    fn egress(&mut self, i: usize, now: Time) -> io::Result<bool> {
        loop {
            if self.ports[i].staged.is_none() {
                let pool = self.pool();
                let port = &mut self.ports[i];
                port.staged = port.qdisc.dequeue(now, &mut self.arena, pool).map(|(id, _)| id);
                while let Some(id) = port.qdisc.take_dequeue_drop() {
                    self.dropped_aqm += 1;
                    self.arena.free(id);
                }
            }
            let port = &mut self.ports[i];
            let Some(id) = port.staged else {
                if let Some(since) = port.c.busy_since.take() {
                    port.c.busy_ps += now - since;
                }
                return Ok(false);
            };
            let wire = self.slab.get(id).len() as u64 + self.wire_overhead;
            if !port.bucket.take(now, wire) {
                return Ok(true);
            }
            let f = self.slab.get_mut(id);
            if self.arena.get(id).ecn == Ecn::Ce && frame::ipv4(f).is_some_and(|h| h.ecn != Ecn::Ce) {
                frame::set_ce(f);
            }
            if port.sock.send(self.slab.get(id))? {
                port.c.tx += 1;
                port.c.tx_wire_bytes += wire;
            } else {
                port.c.tx_refused += 1;
            }
            port.staged = None;
            self.arena.free(id);
        }
    }

    fn sample(&mut self, now: Time) {
        let t = secs(now);
        for (i, p) in self.ports.iter().enumerate() {
            for q in 0..p.qdisc.queues.len() {
                let (bytes, packets) = p.qdisc.queue_occupancy(q);
                let s = &mut self.samples;
                s.time.push(t);
                s.port.push(port_id(i));
                s.queue.push(q as u32);
                s.bytes.push(bytes);
                s.packets.push(packets as u32);
            }
        }
        self.next_sample = now - now % self.sample_every + self.sample_every;
    }

    fn write_report(&mut self) -> io::Result<()> {
        let now = self.now();
        let mut rows: Vec<Value> = Vec::new();
        let mut ports_json: Vec<Value> = Vec::new();
        let (mut rx, mut tx, mut refused, mut not_fwd, mut queued, mut kernel_drops) = (0, 0, 0, 0, 0, 0);
        for (i, p) in self.ports.iter_mut().enumerate() {
            if let Some(since) = p.c.busy_since.take() {
                p.c.busy_ps += now - since;
            }
            let c: Vec<QueueCounters> = (0..p.qdisc.queues.len()).map(|q| p.qdisc.counters(q)).collect();
            let mut total = QueueCounters { max_bytes: p.qdisc.max_bytes, ..Default::default() };
            for q in &c {
                total.enqueued += q.enqueued;
                total.marked += q.marked;
                total.unmarked += q.unmarked;
                total.dropped_overflow += q.dropped_overflow;
                total.dropped_aqm += q.dropped_aqm;
                total.sent_packets += q.sent_packets;
                total.sent_bytes += q.sent_bytes;
            }
            for (q, c) in std::iter::once((-1i64, total)).chain(c.into_iter().enumerate().map(|(q, c)| (q as i64, c))) {
                rows.push(json!({
                    "port": port_id(i), "node": "switch", "peer": format!("host{}", p.host), "queue": q,
                    "enqueued": c.enqueued, "marked": c.marked, "unmarked": c.unmarked,
                    "dropped_overflow": c.dropped_overflow, "dropped_aqm": c.dropped_aqm,
                    "max_bytes": c.max_bytes, "sent_packets": c.sent_packets, "sent_bytes": c.sent_bytes,
                }));
            }
            let held = p.qdisc.packets + p.staged.is_some() as u64;
            let kd = p.sock.kernel_drops().unwrap_or(0);
            let busy = secs(p.c.busy_ps);
            ports_json.push(json!({
                "port": port_id(i), "host": p.host, "ifname": p.sock.ifname,
                "frames_in": p.c.rx, "frames_out": p.c.tx, "tx_wire_bytes": p.c.tx_wire_bytes,
                "tx_refused": p.c.tx_refused, "not_forwarded": p.c.not_forwarded, "oversize": p.c.oversize,
                "queued_at_end": held, "kernel_rx_drops": kd, "busy_seconds": busy,
                "busy_utilisation": if busy > 0.0 { p.c.tx_wire_bytes as f64 * 8.0 / (busy * self.rate_bps as f64) } else { 0.0 },
            }));
            rx += p.c.rx;
            tx += p.c.tx;
            refused += p.c.tx_refused;
            not_fwd += p.c.not_forwarded;
            queued += held;
            kernel_drops += kd;
        }
        let mut summary = Map::new();
        summary.insert("seconds".into(), json!(secs(now)));
        summary.insert("rate_bps".into(), json!(self.rate_bps));
        summary.insert("frames_in".into(), json!(rx));
        summary.insert("frames_out".into(), json!(tx));
        summary.insert("dropped_overflow".into(), json!(self.dropped_overflow));
        summary.insert("dropped_aqm".into(), json!(self.dropped_aqm));
        summary.insert("not_forwarded".into(), json!(not_fwd));
        summary.insert("tx_refused".into(), json!(refused));
        summary.insert("queued_at_end".into(), json!(queued));
        summary.insert("kernel_rx_drops".into(), json!(kernel_drops));
        let accounted = tx + self.dropped_overflow + self.dropped_aqm + not_fwd + refused + queued;
        summary.insert("conserved".into(), json!(rx == accounted));
        let s = &self.samples;
        let report = json!({
            "summary": summary,
            "ports": ports_json,
            "port_rows": rows,
            "queues": {"time": s.time, "port": s.port, "queue": s.queue, "bytes": s.bytes, "packets": s.packets},
        });
        let tmp = format!("{}.tmp", self.report);
        std::fs::write(&tmp, serde_json::to_vec(&report).map_err(io::Error::other)?)?;
        std::fs::rename(&tmp, &self.report)
    }
}

/// The simulator's id of the switch port facing the `i`-th host of a star:
/// each host's link adds its NIC port, then the switch's port towards it.
fn port_id(i: usize) -> u32 {
    2 * i as u32 + 1
}
