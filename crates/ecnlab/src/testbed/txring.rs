//! Hands frames that have left a port's qdisc (at the bucket's time) to a
//! second thread that writes them to the sockets, like a NIC's transmit
//! ring. A send to a veth runs the receiving host's TCP in the caller
//! (7 µs on average here, sometimes over 50): done in the pacing loop it
//! made the loop miss its buckets' times (docs/testbed.md).
//!
//! One producer (the loop), one consumer (the sender thread): a ring of
//! fixed frame slots with a head and a tail index; nothing allocates.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use super::slab::FRAME_MAX;
use super::socket::PacketSocket;

/// Frames the ring holds: at 1 Gbps, 1,024 full frames are 12.6 ms of
/// sending, far more than the sender thread ever falls behind.
const SLOTS: usize = 1024;

struct Slot {
    port: u32,
    len: u32,
    bytes: [u8; FRAME_MAX],
}

struct Ring {
    slots: Box<[UnsafeCell<Slot>]>,
    /// Slots written (by the producer) and sent (by the consumer), counted
    /// from the start; slot i lives at i % SLOTS.
    tail: AtomicU64,
    head: AtomicU64,
    stop: AtomicBool,
}

// SAFETY: a slot is written only by the producer while it is outside
// [head, tail), and read only by the consumer while inside; the indices'
// release/acquire pairs order those accesses.
unsafe impl Sync for Ring {}

/// What the sender thread did, per port.
#[derive(Clone, Default)]
pub struct SentCounts {
    pub sent: Vec<u64>,
    /// Frames the kernel refused (its buffers full).
    pub refused: Vec<u64>,
    pub send_seconds: f64,
}

pub struct TxRing {
    ring: Arc<Ring>,
    thread: Option<JoinHandle<std::io::Result<SentCounts>>>,
    /// Frames not taken because the ring was full.
    pub full: u64,
}

impl TxRing {
    /// Start the sender thread for `sockets` (indexed by port).
    pub fn start(sockets: Vec<PacketSocket>) -> TxRing {
        let slots = (0..SLOTS)
            .map(|_| UnsafeCell::new(Slot { port: 0, len: 0, bytes: [0; FRAME_MAX] }))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        let ring =
            Arc::new(Ring { slots, tail: AtomicU64::new(0), head: AtomicU64::new(0), stop: AtomicBool::new(false) });
        let r = ring.clone();
        let thread = thread::spawn(move || sender(&r, &sockets));
        TxRing { ring, thread: Some(thread), full: 0 }
    }

    /// Queue `frame` for port `port`; false (and counted) if the ring is full.
    #[inline]
    pub fn push(&mut self, port: usize, frame: &[u8]) -> bool {
        let tail = self.ring.tail.load(Ordering::Relaxed);
        if tail - self.ring.head.load(Ordering::Acquire) >= SLOTS as u64 {
            self.full += 1;
            return false;
        }
        // SAFETY: slot `tail` is outside [head, tail): the consumer is not
        // reading it, and only this producer writes.
        let slot = unsafe { &mut *self.ring.slots[tail as usize % SLOTS].get() };
        slot.port = port as u32;
        slot.len = frame.len() as u32;
        slot.bytes[..frame.len()].copy_from_slice(frame);
        self.ring.tail.store(tail + 1, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
        true
    }

    /// Send what is queued, stop the thread and return its counts.
    pub fn finish(mut self) -> std::io::Result<SentCounts> {
        self.ring.stop.store(true, Ordering::Release);
        let t = self.thread.take().expect("started");
        t.thread().unpark();
        t.join().map_err(|_| std::io::Error::other("the sender thread panicked"))?
    }
}

fn sender(ring: &Ring, sockets: &[PacketSocket]) -> std::io::Result<SentCounts> {
    let mut c = SentCounts { sent: vec![0; sockets.len()], refused: vec![0; sockets.len()], send_seconds: 0.0 };
    let mut busy = std::time::Duration::ZERO;
    loop {
        let tail = ring.tail.load(Ordering::Acquire);
        let mut head = ring.head.load(Ordering::Relaxed);
        if head == tail {
            if ring.stop.load(Ordering::Acquire) && ring.tail.load(Ordering::Acquire) == head {
                c.send_seconds = busy.as_secs_f64();
                return Ok(c);
            }
            thread::park_timeout(std::time::Duration::from_millis(1));
            continue;
        }
        let t0 = std::time::Instant::now();
        while head < tail {
            // SAFETY: slot `head` is inside [head, tail): the producer has
            // finished writing it and will not touch it until head passes.
            let slot = unsafe { &*ring.slots[head as usize % SLOTS].get() };
            let p = slot.port as usize;
            if sockets[p].send(&slot.bytes[..slot.len as usize])? {
                c.sent[p] += 1;
            } else {
                c.refused[p] += 1;
            }
            head += 1;
            ring.head.store(head, Ordering::Release);
        }
        busy += t0.elapsed();
    }
}
