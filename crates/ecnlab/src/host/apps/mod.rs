//! Application state kept beside the hosts: incast rounds (`incast`), the
//! write pace of rate-limited applications (`paced`) and the per-pair pool
//! of persistent connections (`persistent`). The applications' event
//! handlers are in `world/apps.rs`, where they meet the network.

pub mod incast;
pub mod paced;
pub mod persistent;
