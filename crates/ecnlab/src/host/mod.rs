//! Hosts: TCP endpoints with pluggable congestion control, and the
//! applications that drive them (long-lived and sized flows, incast rounds,
//! ping probes) — the apps live in `world.rs`, where they meet the network.

pub mod cc;
pub mod ranges;
pub mod tcp_rx;
pub mod tcp_tx;
