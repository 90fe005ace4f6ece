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

    /// A strict queue always sends at once; a DWRR one as `Dwrr` says.
    #[inline]
    pub fn sends_first_turn(&self, q: usize, size: u64) -> bool {
        q < self.sp || self.dwrr.sends_first_turn(q, size)
    }

    #[inline]
    pub fn serve_first_turn<O: RoundObserver>(&mut self, q: usize, size: u64, now: Time, rate: LineRate, obs: &mut O) {
        if q >= self.sp {
            self.dwrr.serve_first_turn(q, size, now, rate, obs);
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
