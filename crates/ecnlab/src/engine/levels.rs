//! The event queue's levels beyond its wheel: events 64 or more buckets
//! (67 µs) ahead. Time above the wheel is counted in spans of 64 buckets
//! (2^26 ps = 67.1 µs), and the levels are aligned digits of the span
//! number: level 0 holds 64 spans (4.3 ms), level 1 64 of 4.3 ms (275 ms),
//! level 2 64 of 275 ms (17.6 s), level 3 64 of 17.6 s (1126 s); a heap
//! holds the rare events beyond. An event sits in the lowest level whose
//! window (the spans sharing every higher digit with the current span)
//! holds it, so it moves down at most once per level on its way to the
//! wheel: O(1) per event, where a heap of every far event cost O(log n)
//! cache-missing steps for each of the millions of timers and slow-link
//! arrivals of a sparse run.
//!
//! Order. Every bucket lists its entries so that those of one time are in
//! insertion order. A level's window changes only when the current span
//! moves into it (`enter`), and at that moment the bucket above that covers
//! the new window is spread into the level's buckets (all empty, as every
//! earlier window has been served), top level first; only afterwards can
//! an event be pushed straight into that window. So a bucket holds its
//! cascaded entries, which were all queued before the move, ahead of its
//! direct ones, which came after: insertion order per time holds by
//! induction from the heap (ordered by time and insertion number) down.

use super::{Entry, FAN, FAN_BITS, SLOT_BITS};
use crate::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A span is 64 wheel buckets of 64 slots: 2^26 ps.
const SPAN_SHIFT: u32 = SLOT_BITS + 2 * FAN_BITS;
/// Levels of 64 buckets above the wheel, before the heap.
const LEVELS: usize = 4;

/// 64 buckets, each in insertion order per time.
struct Ring {
    buckets: Vec<Vec<Entry>>,
    /// Bit b set when `buckets[b]` holds an entry.
    occupied: u64,
}

impl Ring {
    fn new() -> Self {
        Ring { buckets: vec![Vec::new(); FAN], occupied: 0 }
    }

    /// Appends an entry to the bucket of its digit at `shift`.
    #[inline]
    fn put(&mut self, e: Entry, shift: u32) {
        let b = (e.0 >> shift) as usize & (FAN - 1);
        self.buckets[b].push(e);
        self.occupied |= 1 << b;
    }
}

pub(super) struct Levels {
    /// Level i's bucket of an entry is its time's digit at `shift(i)`.
    rings: [Ring; LEVELS],
    /// Beyond the top level: (time, insertion number, code).
    far: BinaryHeap<Reverse<(Time, u64, u64)>>,
    far_seq: u64,
    /// The span whose buckets the wheel holds (the wheel's bucket >> 6).
    pub span: u64,
}

/// The time bits that pick level `i`'s bucket.
#[inline]
fn shift(i: usize) -> u32 {
    SPAN_SHIFT + FAN_BITS * i as u32
}

impl Levels {
    pub fn new() -> Self {
        Levels { rings: std::array::from_fn(|_| Ring::new()), far: BinaryHeap::new(), far_seq: 0, span: 0 }
    }

    /// Queues an entry of a later span than the current one.
    pub fn push(&mut self, time: Time, code: u64) {
        let differ = (time >> SPAN_SHIFT) ^ self.span;
        debug_assert!(time >> SPAN_SHIFT > self.span, "a level event within the wheel's span");
        // The highest digit in which the spans differ picks the level.
        let level = ((63 - differ.leading_zeros()) / FAN_BITS) as usize;
        if level < LEVELS {
            self.rings[level].put((time, code), shift(level));
        } else {
            self.far.push(Reverse((time, self.far_seq, code)));
            self.far_seq += 1;
        }
    }

    /// A span at or before that of every queued entry, or None when
    /// nothing is queued: the first span of the lowest occupied level's
    /// first occupied bucket (exact at level 0 and for the heap).
    pub fn first_span(&self) -> Option<u64> {
        for (i, r) in self.rings.iter().enumerate() {
            if r.occupied != 0 {
                // Level i holds the current window's later digits only, so
                // its first occupied bucket is the earliest queued.
                let digits = FAN_BITS * i as u32;
                let window = (self.span >> digits) & !(FAN as u64 - 1);
                return Some((window | r.occupied.trailing_zeros() as u64) << digits);
            }
        }
        self.far.peek().map(|Reverse((t, _, _))| t >> SPAN_SHIFT)
    }

    /// Makes `to` the current span (later than the current one, at or
    /// before `first_span`), cascading every level whose window changes,
    /// top down, and returns the entries of span `to`, in order, for the
    /// wheel. Hand the emptied vector back with `recycle`.
    pub fn enter(&mut self, to: u64) -> Vec<Entry> {
        let from = self.span;
        debug_assert!(to > from);
        for i in (0..LEVELS).rev() {
            let above = FAN_BITS * (i as u32 + 1);
            if to >> above == from >> above {
                continue;
            }
            // Level i moves to a new window: everything queued lies at or
            // after `to`, so the old window is spent and level i is empty.
            debug_assert_eq!(self.rings[i].occupied, 0, "level {i} left behind an entry");
            if i + 1 == LEVELS {
                while let Some(&Reverse((t, _, code))) = self.far.peek() {
                    if t >> SPAN_SHIFT >> above != to >> above {
                        break;
                    }
                    self.far.pop();
                    self.rings[i].put((t, code), shift(i));
                }
            } else {
                let b = (to >> above) as usize & (FAN - 1);
                let (lower, upper) = self.rings.split_at_mut(i + 1);
                let src = &mut upper[0];
                src.occupied &= !(1 << b);
                // Taken, not cleared: a bucket above level 0 is reused only
                // once a revolution (275 ms or more), and its room would
                // otherwise stay held for it all that time.
                for &e in &std::mem::take(&mut src.buckets[b]) {
                    lower[i].put(e, shift(i));
                }
            }
        }
        self.span = to;
        let b = to as usize & (FAN - 1);
        self.rings[0].occupied &= !(1 << b);
        std::mem::take(&mut self.rings[0].buckets[b])
    }

    /// Gives back the vector `enter` returned, emptied, to keep its room.
    pub fn recycle(&mut self, mut v: Vec<Entry>) {
        v.clear();
        let b = self.span as usize & (FAN - 1);
        if self.rings[0].buckets[b].is_empty() {
            self.rings[0].buckets[b] = v;
        }
    }

    /// Entries queued here (for tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.rings.iter().flat_map(|r| &r.buckets).map(Vec::len).sum::<usize>() + self.far.len()
    }

    /// Entries in the heap beyond the top level (for tests).
    #[cfg(test)]
    pub fn in_heap(&self) -> usize {
        self.far.len()
    }
}
