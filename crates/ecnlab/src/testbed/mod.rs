//! `ecnlab testbed`'s switch: the engine's queue disciplines forwarding real
//! frames between network namespaces (MQ-ECN §4.2's server-emulated switch,
//! with veth pairs for NICs). The orchestration and the hosts' traffic are
//! Python (`python/ecnlab/testbed`); this is the per-frame part.

pub mod bucket;
pub mod frame;
pub mod slab;
pub mod socket;
pub mod spec;
pub mod switch;
pub mod txring;
