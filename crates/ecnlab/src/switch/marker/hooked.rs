//! The markers with state or hooks of their own (CEDM, RED, TCN, CoDel,
//! ML-ECN and its comparators, PIE, ...). Each judges through
//! `at_enqueue`/`at_dequeue` with the whole `Seen` (sojourn, backlogged
//! queues, the packet, a random stream), where the static schemes of
//! `Marker` need only occupancies and a threshold.
//!
//! They sit behind one pointer (`Marker::Hooked`) and are called only from
//! out-of-line code, so that the static schemes' per-packet path, which
//! every MQ-ECN run takes, matches over a handful of variants and carries
//! none of this code. `Hooked` is one enum over them all, generated from
//! the list in `marker/mod.rs` (`hooked_markers!`): static dispatch, each
//! arm the scheme's own (inlinable) method.

use super::{Seen, Sides, Verdict};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::units::Time;

/// A marking scheme with hooks of its own. Only `sides` is required; the
/// rest default to doing nothing.
pub trait HookedMarker {
    /// It wants the port's and the scheduler's events (`queue_emptied`,
    /// `port_busy`, `port_idle`, `activated`, `turn_end`, `served`): only
    /// then are they called. The dispatch tests just the schemes that do,
    /// decided at compile time; a `match` over every scheme cost CEDM's
    /// benchmark 0.5% of its instructions on the dequeue path.
    #[inline(always)]
    fn events() -> bool
    where
        Self: Sized,
    {
        false
    }

    /// Which hooks it uses, whatever `dequeue_marking` says.
    fn sides(&self) -> Sides;

    /// Decide for packet `pkt`, about to be queued.
    #[inline]
    fn at_enqueue(&mut self, _s: &Seen, _pkt: &Packet, _rng: &mut Rng) -> Verdict {
        Verdict::Pass
    }

    /// Decide for a packet about to leave (occupancy counts it); `ect`: it
    /// may be marked (an AQM drops what it cannot mark).
    #[inline]
    fn at_dequeue(&mut self, _s: &Seen, _ect: bool, _rng: &mut Rng) -> Verdict {
        Verdict::Pass
    }

    /// Queue `q` has just been emptied (its last packet taken at `now`),
    /// called before that packet's `at_dequeue`: a scheme with a dequeue
    /// hook sees the emptying there too (`occ.queue` equal to `size`).
    #[inline]
    fn queue_emptied(&mut self, _q: usize, _now: Time) {}

    /// A packet arrives at an empty port.
    #[inline]
    fn port_busy(&mut self, _now: Time) {}

    /// The port's last packet has been taken for transmission.
    #[inline]
    fn port_idle(&mut self, _now: Time) {}

    /// The scheduler's events (see `RoundObserver`).
    #[inline]
    fn activated(&mut self, _q: usize, _now: Time) {}
    #[inline]
    fn turn_end(&mut self, _q: usize, _end: Time) {}
    #[inline]
    fn served(&mut self, _q: usize, _now: Time, _emptied: bool) {}

    /// The current threshold of queue `q` in bytes (for sampling and tests).
    fn threshold(&self, _q: usize) -> Option<u64> {
        None
    }

    /// It may take back a mark it set at enqueue (CEDM), so the qdisc
    /// remembers which marks are this queue's.
    fn unmarks(&self) -> bool {
        false
    }

    /// It wants each packet's sojourn time at dequeue.
    fn needs_sojourn(&self) -> bool {
        false
    }

    /// A packet of `size` bytes alone in its queue and port passes the
    /// dequeue hook with no draw and no change of state, so an idle port may
    /// send it at once without the FIFO (`Qdisc::pass_through`). Say so only
    /// where `at_dequeue` is a pure test of the occupancy.
    fn passes_alone(&self, _size: u64) -> bool {
        false
    }
}

/// Declares the hooked markers: `Variant(module::Type)` per line loads the
/// scheme's file (`<module>.rs`), adds the variant to `Hooked` with its
/// dispatch, and puts `module::DECL` on the list of marking schemes after
/// `$plain` (the static-threshold ones, whose variants are `Marker`'s own).
macro_rules! hooked_markers {
    (
        plain: [$($plain:path),* $(,)?],
        hooked: [$($(#[$meta:meta])* $variant:ident($module:ident :: $ty:ident)),* $(,)?] $(,)?
    ) => {
        $(pub mod $module; pub use $module::$ty;)*

        /// Every marking scheme, static ones first: the registry's list.
        pub const MARKINGS: &[&crate::switch::marker::MarkingDecl] = &[$(&$plain,)* $(&$module::DECL),*];

        pub enum Hooked {
            $($(#[$meta])* $variant($ty)),*
        }

        $(impl From<$ty> for Hooked {
            fn from(m: $ty) -> Hooked {
                Hooked::$variant(m)
            }
        })*

        $(impl From<$ty> for Marker {
            fn from(m: $ty) -> Marker {
                Marker::Hooked(Box::new(Hooked::$variant(m)))
            }
        })*

        impl Hooked {
            /// The scheme itself, to reach what is not on the per-packet path.
            pub fn scheme(&self) -> &dyn HookedMarker {
                match self { $(Hooked::$variant(m) => m),* }
            }

            pub fn sides(&self) -> Sides {
                self.scheme().sides()
            }

            #[inline]
            pub fn at_enqueue(&mut self, s: &Seen, pkt: &crate::packet::Packet, rng: &mut crate::rng::Rng) -> Verdict {
                match self { $(Hooked::$variant(m) => HookedMarker::at_enqueue(m, s, pkt, rng)),* }
            }

            #[inline]
            pub fn at_dequeue(&mut self, s: &Seen, ect: bool, rng: &mut crate::rng::Rng) -> Verdict {
                match self { $(Hooked::$variant(m) => HookedMarker::at_dequeue(m, s, ect, rng)),* }
            }

            #[inline(always)]
            pub fn queue_emptied(&mut self, q: usize, now: crate::units::Time) {
                $(if <$ty as HookedMarker>::events() { if let Hooked::$variant(m) = self { return HookedMarker::queue_emptied(m, q, now); } })*
            }

            #[inline(always)]
            pub fn port_busy(&mut self, now: crate::units::Time) {
                $(if <$ty as HookedMarker>::events() { if let Hooked::$variant(m) = self { return HookedMarker::port_busy(m, now); } })*
            }

            #[inline(always)]
            pub fn port_idle(&mut self, now: crate::units::Time) {
                $(if <$ty as HookedMarker>::events() { if let Hooked::$variant(m) = self { return HookedMarker::port_idle(m, now); } })*
            }

            pub fn threshold(&self, q: usize) -> Option<u64> {
                self.scheme().threshold(q)
            }

            #[inline]
            pub fn passes_alone(&self, size: u64) -> bool {
                match self { $(Hooked::$variant(m) => HookedMarker::passes_alone(m, size)),* }
            }
        }

        impl crate::switch::RoundObserver for Hooked {
            #[inline(always)]
            fn activated(&mut self, q: usize, now: crate::units::Time) {
                $(if <$ty as HookedMarker>::events() { if let Hooked::$variant(m) = self { return HookedMarker::activated(m, q, now); } })*
            }
            #[inline(always)]
            fn turn_end(&mut self, q: usize, end: crate::units::Time) {
                $(if <$ty as HookedMarker>::events() { if let Hooked::$variant(m) = self { return HookedMarker::turn_end(m, q, end); } })*
            }
            #[inline(always)]
            fn served(&mut self, q: usize, now: crate::units::Time, emptied: bool) {
                $(if <$ty as HookedMarker>::events() { if let Hooked::$variant(m) = self { return HookedMarker::served(m, q, now, emptied); } })*
            }
        }
    };
}
pub(crate) use hooked_markers;
