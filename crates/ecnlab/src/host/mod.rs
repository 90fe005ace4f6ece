//! Hosts: TCP endpoints with pluggable congestion control (`cc/`), the NIC's
//! optional batching and timing noise (`nic/`), and the applications' state
//! (`apps/`: incast rounds, paced writes, persistent connections; their
//! event handlers live in `world/apps.rs`, where they meet the network).
//! The Linux stack's mechanisms (`linux` and the files it names) are opt-in.

pub mod apps;
pub mod cc;
pub mod delack_linux;
pub mod hystart;
pub mod linux;
pub mod linux_cwnd;
pub mod lost_rtx;
pub mod nic;
pub mod pfabric;
pub mod profile;
pub mod prr;
pub mod rack;
pub mod ranges;
pub mod rto_linux;
pub mod rto_rearm;
pub mod rto_sack;
pub mod sack_blocks;
pub mod scoreboard;
pub mod stage;
pub mod tcp_rx;
pub mod tcp_tx;
pub mod tlp;

use profile::ProfileDecl;

/// Every TCP profile (`transport.profile`, `profile.rs`): the registry's
/// list, one line each, the profile declared beside the code it tunes.
pub const PROFILES: &[&ProfileDecl] = &[&pfabric::PROFILE, &linux::PROFILE];
