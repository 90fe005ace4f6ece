//! One FIFO queue of packet ids with their wire sizes kept alongside, so a
//! scheduler can look at the head without touching the packet arena. A ring
//! of a power-of-two size that doubles when full: after warm-up a push or a
//! pop allocates nothing, and the whole struct is half a cache line.

pub struct Fifo {
    ring: Box<[(u32, u32)]>,
    head: u32,
    len: u32,
    pub bytes: u64,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo::with_capacity(8)
    }
}

impl Fifo {
    pub fn with_capacity(n: usize) -> Self {
        Fifo { ring: vec![(0, 0); n.max(1).next_power_of_two()].into_boxed_slice(), head: 0, len: 0, bytes: 0 }
    }
    #[inline]
    pub fn push(&mut self, pkt: u32, size: u32) {
        if self.len as usize == self.ring.len() {
            self.grow();
        }
        let mask = self.ring.len() - 1;
        self.ring[(self.head + self.len) as usize & mask] = (pkt, size);
        self.len += 1;
        self.bytes += size as u64;
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(u32, u32)> {
        if self.len == 0 {
            return None;
        }
        let p = self.ring[self.head as usize];
        self.head = (self.head + 1) & (self.ring.len() - 1) as u32;
        self.len -= 1;
        self.bytes -= p.1 as u64;
        Some(p)
    }
    #[inline]
    pub fn head_size(&self) -> Option<u32> {
        (self.len > 0).then(|| self.ring[self.head as usize].1)
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The queued packets' ids, head first (for rare inspections: PFC's
    /// deadlock search).
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        let mask = self.ring.len() - 1;
        (0..self.len as usize).map(move |i| self.ring[(self.head as usize + i) & mask].0)
    }

    /// Twice the room, the queue moved to the front in order.
    #[cold]
    fn grow(&mut self) {
        let mut ring = vec![(0, 0); self.ring.len() * 2].into_boxed_slice();
        for (i, slot) in ring.iter_mut().take(self.len as usize).enumerate() {
            *slot = self.ring[(self.head as usize + i) & (self.ring.len() - 1)];
        }
        self.ring = ring;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Order, sizes and byte count survive wrapping round and growing.
    #[test]
    fn keeps_order_across_wrap_and_growth() {
        let mut f = Fifo::with_capacity(4);
        let mut expect = std::collections::VecDeque::new();
        let mut next = 0u32;
        for round in 0..200u32 {
            for _ in 0..(round % 7) {
                f.push(next, 100 + next % 13);
                expect.push_back((next, 100 + next % 13));
                next += 1;
            }
            for _ in 0..(round % 5) {
                assert_eq!(f.pop(), expect.pop_front());
            }
            assert_eq!(f.len(), expect.len());
            assert_eq!(f.head_size(), expect.front().map(|p| p.1));
            assert_eq!(f.bytes, expect.iter().map(|p| p.1 as u64).sum::<u64>());
        }
    }
}
