//! Hosts: TCP endpoints with pluggable congestion control, and the
//! applications that drive them (long-lived and sized flows, incast rounds,
//! ping probes) — most apps live in `world.rs`, where they meet the network;
//! incast keeps its round state in `incast`.

pub mod cc;
pub mod incast;
pub mod ranges;
pub mod tcp_rx;
pub mod tcp_tx;
