//! The network: the topology builders and their links (`topology.rs`:
//! star, leaf-spine, fat-tree and an explicit graph), shortest-path routes
//! with equal-cost next-hop sets (`routes.rs`), and how a packet picks
//! among them (`ecmp.rs`: per-flow salted hashing, per-packet spraying,
//! the MQ-ECN authors' ns-2 hash); and the completion time a sized flow
//! would have alone in it, the denominator of FCT slowdown (`ideal.rs`).

pub mod ecmp;
pub mod ideal;
pub mod routes;
pub mod topology;
