//! RDMA over Converged Ethernet (RoCEv2): queue pairs that send a message
//! at a paced rate with no handshake, go back on a NACK, and cut their rate
//! on congestion notifications. The parts:
//!
//! - `qp.rs`: a reliable connection's two ends (go-back-N or go-back-0,
//!   ACKs per packet or coalesced, NACKs, the local ACK timeout);
//! - `cc.rs`: the seam between a queue pair and its rate control
//!   (`RateControl`), and what a transport declares (`RdmaDecl`);
//! - `dcqcn.rs`: DCQCN's rate control, in the paper's form and the NIC
//!   firmware's the HPCC simulator models (`transport.profile`);
//! - `hpcc.rs`: HPCC's window and rate from in-band telemetry, whose
//!   records `int.rs` keeps;
//! - `timely.rs`: TIMELY's rate from the RTT gradient;
//! - `dctcp.rs`: DCTCP's α and cut on a rate (the HPCC simulator's DCTCP);
//! - the run's side (pacing, the NIC, CNPs, INT at switch egress) is
//!   `world/rdma.rs`.
//!
//! `transport.cc` names an RDMA transport as it names a TCP congestion
//! control; the registry (`registry.rs`) joins `TRANSPORTS` to
//! `host::cc::CCS` (an RDMA one has `CcDecl::rdma` set), and a run with
//! one carries every flow on queue pairs. Lossless classes come from PFC (`switch.pfc`, docs/pfc.md).

pub mod cc;
pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod int;
pub mod qp;
pub mod timely;

/// Every RDMA transport (`transport.cc`) and its profiles: the registry's
/// lists (`registry.rs` joins them to the TCP ones), one line each.
pub const TRANSPORTS: &[&cc::RdmaDecl] = &[&dcqcn::DECL, &hpcc::DECL, &timely::DECL, &dctcp::DECL];
pub const PROFILES: &[&crate::host::profile::ProfileDecl] = &[&dcqcn::PAPER, &dcqcn::NIC];

/// The RDMA transport named `name`, if it is one.
pub fn transport(name: &str) -> Option<&'static cc::RdmaDecl> {
    TRANSPORTS.iter().copied().find(|d| d.cc.about.name == name)
}

use crate::config::param::section;
use crate::config::values::by_name;
use crate::config::{bad, Bytes, ConfigError, Dur, Table, TransportCfg};

by_name! {
    /// Where a NACK sends the sender back to.
    pub enum GoBackKey { N => "n", Zero => "0" }
}

section! {
    /// Every RDMA transport's keys, in `[transport]`.
    pub struct RdmaKeys {
        /// An ACK for every this many bytes received (1B: every packet, as the HPCC simulator);
        /// the message's last packet and a marked one (NIC form) are always acknowledged.
        rdma_ack_bytes: Bytes = Bytes(1), range "positive", resolved InUse;
        /// A NACK for the same missing byte at most once per this gap.
        rdma_nack_gap: Dur = Dur(500_000_000), source "HPCC simulator, rdma-hw.cc", resolved InUse;
        /// A NACK sends the sender back to the missing byte ("n": go-back-N) or to the message's
        /// start ("0": go-back-0).
        rdma_go_back: GoBackKey = GoBackKey::N, resolved InUse;
        /// The local ACK timeout: with data unacknowledged this long, the sender goes back to the
        /// oldest unacknowledged byte (the HPCC simulator has none).
        rdma_timeout: Dur = Dur(4_000_000_000), range "positive", resolved InUse;
        /// A window on the bytes in flight (the HPCC simulator's FIXED_WIN); unset: none, the rate
        /// alone paces.
        rdma_window: Option<Bytes> = None, resolved InUse;
        /// Without `rdma_window`, a window of one base RTT's bytes at the host's line rate (the
        /// HPCC simulator's BDP window; HPCC sets it).
        rdma_bdp_window: bool = false, resolved InUse;
        /// The window scales with the rate: W·R/line (the HPCC simulator's VAR_WIN; HPCC sets it).
        rdma_var_window: bool = false, resolved InUse;
        /// The base RTT (HPCC's T, the BDP window's RTT); unset, the longest among the run's
        /// flows: propagation both ways plus one data packet and one ACK serialised per hop.
        rdma_base_rtt: Option<Dur> = None, resolved InUse, default_doc "the longest of the run's paths";
        /// The service class (switch queue) of the queue pairs' ACKs, NACKs and CNPs; unset: the
        /// flow's own. With scheduler "sp" and service 0 they pass every data queue, as the HPCC
        /// simulator's ACK_HIGH_PRIO 1 sends them in priority 0.
        rdma_ack_service: Option<u32> = None, range "0 to switch.queues - 1", source "HPCC simulator, switch-node.cc (ACK_HIGH_PRIO)", resolved InUse;
    }
}

impl RdmaKeys {
    pub fn of(t: &TransportCfg) -> RdmaKeys {
        RdmaKeys::read(&Table::new("transport", t.extra.clone()), true).expect("checked keys read")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rdma_ack_bytes.0 == 0 {
            return Err(bad("transport.rdma_ack_bytes", "0B", "must be positive (1B: every packet)"));
        }
        if self.rdma_timeout.0 == 0 {
            return Err(bad("transport.rdma_timeout", "0s", "must be positive"));
        }
        if self.rdma_base_rtt.is_some_and(|d| d.0 == 0) {
            return Err(bad("transport.rdma_base_rtt", "0s", "must be positive (leave it out for the paths' longest)"));
        }
        if self.rdma_window.is_some_and(|w| w.0 == 0) {
            return Err(bad("transport.rdma_window", "0B", "must be positive (leave it out for none)"));
        }
        Ok(())
    }

    pub fn go_back(&self) -> qp::GoBack {
        match self.rdma_go_back {
            GoBackKey::N => qp::GoBack::N,
            GoBackKey::Zero => qp::GoBack::Zero,
        }
    }
}

/// The checks of an experiment whose transport is an RDMA one: what runs
/// only on TCP is refused with one line naming it.
pub fn validate_network(cfg: &crate::config::Config) -> Result<(), ConfigError> {
    let Some(cc) = transport(cfg.transport.cc.as_str()) else {
        return Ok(());
    };
    let name = cc.cc.about.name;
    let refuse = |key: &str, value: &str, why: &str| {
        Err(ConfigError(format!("{key} = {value}: {why}, not with transport.cc = \"{name}\" (RDMA queue pairs)")))
    };
    if !cfg.incast.is_empty() {
        return refuse("[[incast]]", "a group", "incast rounds run on TCP connections");
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        if f.serial {
            return refuse(&format!("flows[{i}].serial"), "true", "serial flows open TCP connections one by one");
        }
        if f.rate.is_some() {
            return refuse(&format!("flows[{i}].rate"), "a rate", "rate-limited applications write into TCP");
        }
        if f.cc.is_some() {
            return refuse(&format!("flows[{i}].cc"), "a transport", "one transport carries every flow");
        }
    }
    if let Some(w) = &cfg.workload {
        if w.connections != crate::config::Connections::PerFlow {
            return refuse("workload.connections", "persistent", "queue pairs have no handshake to save");
        }
    }
    if cfg.host.lso {
        return refuse("host.lso", "true", "segmentation offload batches TCP segments");
    }
    if cfg.run.threads > 0 {
        return refuse("run.threads", &cfg.run.threads.to_string(), "queue pairs run on the sequential engine");
    }
    if let Some(s) = RdmaKeys::of(&cfg.transport).rdma_ack_service {
        if s >= cfg.switch.queues {
            return Err(bad(
                "transport.rdma_ack_service",
                s,
                &format!(
                    "must be a switch queue, 0 to {} (switch.queues = {})",
                    cfg.switch.queues - 1,
                    cfg.switch.queues
                ),
            ));
        }
    }
    Ok(())
}
