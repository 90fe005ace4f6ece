//! A few strict-priority queues (0..sp) above a DWRR group (sp..n), the
//! layout of MQ-ECN §3.4: control traffic first, services share the rest.

use super::super::queue::Queue;
use super::super::RoundObserver;
use super::Dwrr;
use crate::units::{LineRate, Time};

pub struct SpDwrr {
    pub sp: usize,
    pub dwrr: Dwrr,
}

impl SpDwrr {
    #[inline]
    pub fn activate<O: RoundObserver>(&mut self, q: usize, now: Time, obs: &mut O) {
        if q >= self.sp {
            self.dwrr.activate(q, now, obs);
        }
    }

    #[inline]
    pub fn select<O: RoundObserver>(
        &mut self,
        now: Time,
        queues: &[Queue],
        nonempty: u64,
        rate: LineRate,
        obs: &mut O,
    ) -> usize {
        let first = nonempty.trailing_zeros() as usize;
        if first < self.sp {
            first
        } else {
            self.dwrr.select(now, queues, rate, obs)
        }
    }
}
