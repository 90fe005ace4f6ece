//! The host's NIC and stack batching between TCP and the wire (CEDM §II-A):
//! segmentation offload at senders (`lso`), interrupt coalescing
//! (`coalesce`) and receive offload (`gro`) at receivers, and the NIC's
//! timing noise on the wire (`jitter`). All optional; the NIC queue itself
//! is in `world/fabric.rs`, where it meets the network.

pub mod coalesce;
pub mod gro;
pub mod jitter;
pub mod lso;
