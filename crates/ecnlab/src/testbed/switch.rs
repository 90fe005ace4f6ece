//! The software switch: every port a raw socket, every egress the engine's
//! own queue discipline (built by `topology::switch_qdisc`, as a simulated
//! star builds it), released through a token bucket at the emulated rate.
//!
//! One thread, one loop: take every frame waiting at every port (classify,
//! enqueue in the output port's qdisc), then let each port send what its
//! bucket allows. Between frames it sleeps in ppoll(2) until a frame
//! arrives or the next frame's tokens are (nearly) in, and spins only
//! through the last few microseconds; with nothing queued it blocks until
//! a frame arrives.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::bucket::TokenBucket;
use super::frame;
use super::slab::{FrameSlab, FRAME_MAX};
use super::socket::PacketSocket;
use super::spec::SwitchSpec;
use super::txring::TxRing;
use crate::network::topology::switch_qdisc;
use crate::packet::{Arena, Ecn, Kind, Packet};
use crate::switch::{Qdisc, QueueCounters};
use crate::units::{secs, Time};
use crate::Config;

/// Set by SIGINT/SIGTERM: the loop ends and the report is written.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Frames read from one port before the loop moves on, so that one busy
/// port cannot starve the others' egress.
const RX_BATCH: usize = 32;

/// A frame whose tokens come within this time is waited for by spinning.
/// Short: the loop runs as a real-time task, and the kernel stops one that
/// keeps its CPU for 950 ms of a second (sched_rt_runtime_us) for the
/// other 50 ms. With 60 µs here, at 200 Mbps (a frame every 61 µs) the
/// loop spun nearly all the time and stalled for 50 ms every second: every
/// flow's 10 ms RTO fired, and the port lost 4-5% of its capacity
/// (docs/testbed.md, "How fast the switch keeps up").
const SPIN_PS: Time = 20_000_000;
/// A sleep until a frame's tokens ends this much early. This VM wakes a
/// real-time task 20 µs late at the median (docs/testbed.md): the wake-up then
/// lands about 5 µs after the tokens, which the bucket absorbs (a frame
/// may wait (bucket − frame) / rate, 38 µs at 200 Mbps, before the
/// bucket overflows and capacity is lost).
const WAKE_MARGIN_PS: Time = 15_000_000;

/// Queue samples are taken no more often than this (100 µs): the report is
/// JSON, read back at the end of a run of a few seconds.
const MIN_SAMPLE_PS: Time = 100_000_000;

/// What one port saw, beyond its qdisc's counters.
#[derive(Default, Clone, Copy)]
struct PortCounters {
    /// Frames that arrived on this port (from its host).
    rx: u64,
    /// Frames put on this port's wire (to its host) by the sender thread,
    /// and the wire bytes of those handed to it.
    tx: u64,
    tx_wire_bytes: u64,
    /// Frames not sent: the sender thread's ring was full, or the kernel
    /// would not take them (its buffers full).
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
    /// Frames on the emulated wire: sent at the bucket's time, handed to
    /// the host when their propagation delay has passed (oldest first).
    wire: VecDeque<(Time, u32)>,
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
    /// Propagation delay added at every output (see `SwitchSpec::delay_ps`).
    delay: Time,
    rate_bps: u64,
    start: Instant,
    /// `start` on CLOCK_MONOTONIC, in seconds: the clock the hosts' agents
    /// keep their times on, so the orchestrator can put the queue samples
    /// on the run's time axis.
    start_monotonic: f64,
    sample_every: Time,
    next_sample: Time,
    samples: Samples,
    report: String,
    dropped_overflow: u64,
    dropped_aqm: u64,
    tx: Option<TxRing>,
}

impl Switch {
    /// Build the ports of `spec`, opening their sockets in the current
    /// network namespace.
    pub fn new(spec: SwitchSpec) -> Result<Switch, String> {
        let cfg = Config::from_json(&spec.config.to_string()).map_err(|e| format!("the experiment's config: {e}"))?;
        let mut ports = Vec::new();
        for p in &spec.ports {
            let sock = PacketSocket::open(&p.ifname, true).map_err(|e| e.to_string())?;
            let mut qdisc = switch_qdisc(&cfg, &cfg.switch, spec.rate_bps);
            qdisc.seed(crate::rng::Rng::stream(cfg.run.seed, 0x7E57_BED0 ^ p.host as u64));
            ports.push(Port {
                sock,
                host: p.host,
                ip: p.ip,
                qdisc,
                bucket: TokenBucket::new(spec.rate_bps, spec.bucket_bytes),
                staged: None,
                wire: VecDeque::with_capacity(1024),
                c: PortCounters::default(),
            });
        }
        let senders = spec
            .ports
            .iter()
            .map(|p| PacketSocket::open(&p.ifname, false))
            .collect::<io::Result<Vec<_>>>()
            .map_err(|e| e.to_string())?;
        let sample_every = match spec.sample_interval_ps {
            0 => 0,
            s => s.max(MIN_SAMPLE_PS),
        };
        Ok(Switch {
            ports,
            arena: Arena::default(),
            slab: FrameSlab::default(),
            wire_overhead: spec.wire_overhead,
            delay: spec.delay_ps,
            rate_bps: spec.rate_bps,
            start: Instant::now(),
            start_monotonic: 0.0,
            sample_every,
            next_sample: 0,
            samples: Samples::default(),
            report: spec.report,
            dropped_overflow: 0,
            dropped_aqm: 0,
            tx: Some(TxRing::start(senders)),
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
        self.start_monotonic = monotonic_seconds();
        while !STOP.load(Ordering::Relaxed) {
            let mut got = 0;
            let mut next = None;
            for i in 0..self.ports.len() {
                for _ in 0..RX_BATCH {
                    let Some(len) = self.ports[i].sock.recv(&mut buf)? else { break };
                    got += 1;
                    let now = self.now();
                    self.ingress(i, &buf[..len.min(FRAME_MAX)], len, now);
                    // Serve the outputs between frames: a bucket holds only
                    // 20 µs of sending at 1 Gbps, less than a batch takes.
                    next = self.egress_all(now)?;
                }
            }
            let now = self.now();
            if got == 0 || next.is_some() {
                next = self.egress_all(now)?;
            }
            if self.sample_every > 0 && now >= self.next_sample {
                self.sample(now);
            }
            if got > 0 {
                continue;
            }
            // Nothing came: sleep until a frame does, or until the first
            // waiting frame's tokens are in (less a margin for the wake-up),
            // or 1 ms with nothing queued (to look at STOP, take samples).
            // Shorter waits are spun. Sleeping rather than spinning keeps the
            // loop under the kernel's real-time throttling (see SPIN_PS).
            let timeout_ps = match next {
                None => 1_000_000_000,
                Some(t) if t > now + SPIN_PS => t - now - WAKE_MARGIN_PS,
                Some(_) => continue,
            };
            let ts = libc::timespec {
                tv_sec: (timeout_ps / 1_000_000_000_000) as libc::time_t,
                tv_nsec: ((timeout_ps % 1_000_000_000_000) / 1_000) as libc::c_long,
            };
            // SAFETY: `fds` is a valid array of its length; `ts` outlives the call.
            unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
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
                    crate::switch::whole::DropReason::Overflow => self.dropped_overflow += 1,
                    crate::switch::whole::DropReason::Aqm => self.dropped_aqm += 1,
                }
                self.arena.free(id);
            }
        }
        let port = &mut self.ports[o];
        if port.c.busy_since.is_none() && port.qdisc.packets > 0 {
            port.c.busy_since = Some(now);
        }
    }

    /// `release` and `egress` on every port: the earliest time a frame
    /// waiting for tokens may leave, or one on the wire reaches its host.
    fn egress_all(&mut self, now: Time) -> io::Result<Option<Time>> {
        let mut next: Option<Time> = None;
        for i in 0..self.ports.len() {
            for t in [self.release(i, now), self.egress(i, now)?].into_iter().flatten() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        Ok(next)
    }

    /// Hand the host of port `i` the frames whose propagation delay has
    /// passed; the arrival time of the next one, if any.
    fn release(&mut self, i: usize, now: Time) -> Option<Time> {
        let port = &mut self.ports[i];
        while let Some(&(at, id)) = port.wire.front() {
            if at > now {
                return Some(at);
            }
            port.wire.pop_front();
            if !self.tx.as_mut().expect("running").push(i, self.slab.get(id)) {
                port.c.tx_refused += 1;
            }
            self.arena.free(id);
        }
        None
    }

    /// Send what port `i`'s bucket allows at `now`; when a frame is left
    /// waiting for tokens, the time they will be in.
    fn egress(&mut self, i: usize, now: Time) -> io::Result<Option<Time>> {
        let mut waiting = self.ports[i].staged.is_some();
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
                return Ok(None);
            };
            let wire = self.slab.get(id).len() as u64 + self.wire_overhead;
            if !port.bucket.take(now, wire, waiting) {
                return Ok(Some(port.bucket.ready_at(now, wire)));
            }
            waiting = false;
            let f = self.slab.get_mut(id);
            if self.arena.get(id).ecn == Ecn::Ce && frame::ipv4(f).is_some_and(|h| h.ecn != Ecn::Ce) {
                frame::set_ce(f);
            }
            port.staged = None;
            port.c.tx_wire_bytes += wire;
            if self.delay > 0 {
                port.wire.push_back((now + self.delay, id));
                continue;
            }
            if !self.tx.as_mut().expect("running").push(i, self.slab.get(id)) {
                port.c.tx_refused += 1;
            }
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
        let sent = self.tx.take().expect("running").finish()?;
        let ring_full: u64 = self.ports.iter().map(|p| p.c.tx_refused).sum();
        for (i, p) in self.ports.iter_mut().enumerate() {
            p.c.tx = sent.sent[i];
            p.c.tx_refused += sent.refused[i];
        }
        let mut rows: Vec<Value> = Vec::new();
        let mut ports_json: Vec<Value> = Vec::new();
        let (mut rx, mut tx, mut refused, mut not_fwd, mut queued, mut kernel_drops) = (0, 0, 0, 0, 0, 0);
        for (i, p) in self.ports.iter_mut().enumerate() {
            if let Some(since) = p.c.busy_since.take() {
                p.c.busy_ps += now - since;
            }
            let c: Vec<QueueCounters> = (0..p.qdisc.queues.len()).map(|q| p.qdisc.counters(q)).collect();
            let total = p.qdisc.port_counters();
            for (q, c) in std::iter::once((-1i64, total)).chain(c.into_iter().enumerate().map(|(q, c)| (q as i64, c))) {
                rows.push(json!({
                    "port": port_id(i), "node": "switch", "peer": format!("host{}", p.host), "queue": q,
                    "enqueued": c.enqueued, "marked": c.marked, "unmarked": c.unmarked,
                    "dropped_overflow": c.dropped_overflow, "dropped_aqm": c.dropped_aqm,
                    "max_bytes": c.max_bytes, "sent_packets": c.sent_packets, "sent_bytes": c.sent_bytes,
                }));
            }
            let held = p.qdisc.packets + p.staged.is_some() as u64 + p.wire.len() as u64;
            let kd = p.sock.kernel_drops().unwrap_or(0);
            let busy = secs(p.c.busy_ps);
            let lost = secs(p.bucket.lost);
            ports_json.push(json!({
                "port": port_id(i), "host": p.host, "ifname": p.sock.ifname,
                "frames_in": p.c.rx, "frames_out": p.c.tx, "tx_wire_bytes": p.c.tx_wire_bytes,
                "tx_refused": p.c.tx_refused, "not_forwarded": p.c.not_forwarded, "oversize": p.c.oversize,
                "queued_at_end": held, "kernel_rx_drops": kd, "busy_seconds": busy,
                // The share of its backlogged time the port sent at the
                // bucket's rate: 1 - (capacity lost) / (time backlogged).
                "lost_seconds": lost,
                "sustained": if busy > 0.0 { 1.0 - lost / busy } else { 1.0 },
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
        summary.insert("start_monotonic".into(), json!(self.start_monotonic));
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
        // Where the switch's CPU went: user time is the loop and the
        // qdiscs; system time the socket calls and the kernel work they
        // carry (a send to a host runs that host's TCP receive path).
        // SAFETY: getrusage fills the struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        summary.insert("cpu_user_seconds".into(), json!(tv(ru.ru_utime)));
        summary.insert("cpu_system_seconds".into(), json!(tv(ru.ru_stime)));
        summary.insert("involuntary_switches".into(), json!(ru.ru_nivcsw));
        summary.insert("sender_busy_seconds".into(), json!(sent.send_seconds));
        summary.insert("tx_ring_full".into(), json!(ring_full));
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

/// CLOCK_MONOTONIC now, in seconds (Python's `time.monotonic()`).
fn monotonic_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The simulator's id of the switch port facing the `i`-th host of a star:
/// each host's link adds its NIC port, then the switch's port towards it.
fn port_id(i: usize) -> u32 {
    2 * i as u32 + 1
}
