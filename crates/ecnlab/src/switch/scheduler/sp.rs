//! Strict priority: queue 0 is the highest; a lower queue sends only when
//! every higher one is empty.

pub struct Sp;

impl Sp {
    #[inline]
    pub fn select(&self, nonempty: u64) -> usize {
        debug_assert!(nonempty != 0);
        nonempty.trailing_zeros() as usize
    }
}

pub const DECL: super::SchedulerDecl = super::SchedulerDecl {
    about: crate::switch::scheme::About::new(
        "sp",
        "strict priority: the lowest-numbered backlogged queue always sends",
        "",
    ),
    estimate: crate::switch::scheme::Estimate::None,
    strict: |_| 0,
    validate: crate::switch::scheme::no_checks,
    build: |_| super::Scheduler::Sp(Sp),
};
