//! One FIFO queue of packet ids with their wire sizes kept alongside, so a
//! scheduler can look at the head without touching the packet arena.

use std::collections::VecDeque;

#[derive(Default)]
pub struct Fifo {
    pkts: VecDeque<(u32, u32)>,
    pub bytes: u64,
}

impl Fifo {
    pub fn with_capacity(n: usize) -> Self {
        Fifo { pkts: VecDeque::with_capacity(n), bytes: 0 }
    }
    #[inline]
    pub fn push(&mut self, pkt: u32, size: u32) {
        self.pkts.push_back((pkt, size));
        self.bytes += size as u64;
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(u32, u32)> {
        let p = self.pkts.pop_front()?;
        self.bytes -= p.1 as u64;
        Some(p)
    }
    #[inline]
    pub fn head_size(&self) -> Option<u32> {
        self.pkts.front().map(|p| p.1)
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.pkts.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }
}
