//! `ecnlab testbed`'s switch: the engine's queue disciplines forwarding real
//! frames between network namespaces (MQ-ECN §4.2's server-emulated switch,
//! with veth pairs for NICs). The orchestration and the hosts' traffic are
//! Python (`python/ecnlab/testbed`); this is the per-frame part. The hosts'
//! uplinks are serialised in the hosts' own kernels, by a token bucket
//! filter on each host's veth, where TCP small queues can see their queue
//! (`python/ecnlab/testbed/uplink.py`, docs/testbed-uplinks.md): frames
//! reach the switch at most at the link rate, and the switch adds the
//! uplink's propagation delay with the downlink's (`SwitchSpec::delay_ps`).

pub mod bucket;
pub mod frame;
pub mod process;
pub mod slab;
pub mod socket;
pub mod spec;
pub mod switch;
pub mod txring;
