//! A few strict-priority queues (0..sp) above a DWRR group (sp..n), the
//! layout of MQ-ECN §3.4: control traffic first, services share the rest.

use super::super::queue::Queue;
use super::super::RoundObserver;
use super::{Dwrr, SchedulerDecl};
use crate::config::bad;
use crate::config::param::section;
use crate::switch::scheme::{About, Estimate};
use crate::units::{LineRate, Time};

section! {
    /// SP+DWRR's key.
    pub struct SpDwrrParams {
        /// Strict-priority queues (0 to sp_queues - 1) above the DWRR group.
        sp_queues: u32 = 1, range "1 to queues - 1", source "MQ-ECN §3.4";
    }
}

pub const DECL: SchedulerDecl = SchedulerDecl {
    about: About {
        params: &[SpDwrrParams::PARAMS],
        unused: Some(|u| {
            format!(
                "only sp-dwrr has strict queues ({}.scheduler is \"{}\"); leave sp_queues out",
                u.sec,
                u.port.scheduler.as_str()
            )
        }),
        ..About::new("sp-dwrr", "strict priority for the first sp_queues queues, DWRR among the rest", "MQ-ECN §3.4")
    },
    estimate: Estimate::Rounds,
    strict: |c| c.params(SpDwrrParams::read).sp_queues as usize,
    validate: |c| {
        let sp = c.read(SpDwrrParams::read)?.sp_queues;
        let q = c.port.queues;
        if !(1..q).contains(&sp) {
            return Err(bad(
                &c.key("sp_queues"),
                sp,
                &format!("sp-dwrr needs 1 to {} strict queues (queues - 1)", q.saturating_sub(1).max(1)),
            ));
        }
        Ok(())
    },
    build: |c| {
        let sp = c.params(SpDwrrParams::read).sp_queues as usize;
        super::Scheduler::SpDwrr(SpDwrr { sp, dwrr: Dwrr::new(c.port.quanta(), true) })
    },
};

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
