//! One service queue of a port: its FIFO and the counters every packet
//! updates, together in one cache line, so that an enqueue or a dequeue
//! touches that line and one end of the ring. (At 144 hosts the ports'
//! state outgrows the L2 cache, and four separate arrays per queue cost a
//! miss each.) Rare counters (drops) live apart in the qdisc, and the
//! number of packets enqueued is derived from the others.

use super::fifo::Fifo;

#[repr(C, align(64))]
#[derive(Default)]
pub struct Queue {
    pub fifo: Fifo,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// Most bytes ever queued here.
    pub max_bytes: u64,
    /// Packets marked CE here.
    pub marked: u64,
}
