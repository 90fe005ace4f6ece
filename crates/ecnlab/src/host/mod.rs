//! Hosts: TCP endpoints. The sender (`tcp_tx.rs`) works on its core
//! state (`snd.rs`, with the SACK scoreboard in `scoreboard.rs`), with
//! pluggable congestion control (`cc/`) and loss-recovery mechanisms
//! (`recovery/`, Linux's, opt-in); the receiver (`tcp_rx.rs`) with its
//! ACK rules (`delack_linux.rs`, `sack_blocks.rs`) and ML-ECN's tags
//! (`stage.rs`). Beside them: the NIC's batching and timing noise
//! (`nic/`), the applications' state (`apps/`: incast rounds, paced
//! writes, persistent connections; their event handlers live in
//! `world/apps.rs`, where they meet the network), and the TCP profiles
//! (`profile.rs`: `pfabric.rs`, `linux.rs`).

pub mod apps;
pub mod cc;
pub mod delack_linux;
pub mod linux;
pub mod nic;
pub mod pfabric;
pub mod profile;
pub mod ranges;
pub mod recovery;
pub mod sack_blocks;
pub mod scoreboard;
pub mod snd;
pub mod stage;
pub mod tcp_rx;
pub mod tcp_tx;

use profile::ProfileDecl;

/// Every TCP profile (`transport.profile`, `profile.rs`): the registry's
/// list, one line each, the profile declared beside the code it tunes.
pub const PROFILES: &[&ProfileDecl] = &[&pfabric::PROFILE, &linux::PROFILE];
