//! Outputs: what a run reports. The tables and their columns
//! (`tables.rs`), streamed to a sink in batches (`output.rs`) and kept
//! whole in a report (`report.rs`); the collectors filled during the run
//! (`stats.rs`); and packet captures (`pcap.rs`).

pub mod output;
pub mod pcap;
pub mod report;
pub mod stats;
pub mod tables;
