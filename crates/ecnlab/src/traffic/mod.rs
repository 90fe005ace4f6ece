//! Traffic: what the hosts send. The papers' flow-size CDFs (`dist.rs`),
//! Poisson arrivals scaled to a load and the services' mapping
//! (`workload.rs`), and the replay of the authors' ns-2 generators
//! (`ns2_arrivals.rs`).

pub mod dist;
pub mod ns2_arrivals;
pub mod workload;
