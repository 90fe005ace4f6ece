//! Hosts: TCP endpoints with pluggable congestion control, and the
//! applications that drive them (long-lived and sized flows, incast rounds,
//! ping probes) — most apps live in `world/apps.rs`, where they meet the
//! network; incast keeps its round state in `incast`, rate-limited
//! applications their write pace in `paced`, persistent connections per
//! host pair their pool in `persistent`. The stack's batching (CEDM
//! §II-A) is optional: segmentation offload at senders (`lso`), interrupt
//! coalescing (`coalesce`) and receive offload (`gro`) at receivers. The
//! hosts' timing noise on the wire is `jitter`. The Linux stack's
//! mechanisms (`linux` and the files it names) are opt-in.

pub mod cc;
pub mod coalesce;
pub mod delack_linux;
pub mod gro;
pub mod hystart;
pub mod incast;
pub mod jitter;
pub mod linux;
pub mod linux_cwnd;
pub mod lost_rtx;
pub mod lso;
pub mod paced;
pub mod persistent;
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
