//! Each flow's ideal FCT (`crate::network::ideal`), for the flows table's
//! `ideal_fct` and `slowdown`: worked out once, when the table is written.

use super::apps::FlowKind;
use super::World;
use crate::config::FctEnd;
use crate::host::tcp_tx::TcpParams;
use crate::network::ideal::{path, Hop, Lone, Replay};
use crate::units::Time;
use std::collections::HashMap;

/// Flows that replay alike: their data path, ACK path, transport (0 for
/// [transport], else 1 + their `[[flows]]` entry) and handshake.
type Class = (Vec<Hop>, Vec<Hop>, usize, bool);

impl World<'_> {
    /// Per flow id, its ideal FCT; None for a flow with none: long-lived,
    /// incast (its FCT spans all its rounds, requests and gaps included) and
    /// rate-limited flows (their application's rate sets their FCT).
    pub fn ideal_fcts(&self) -> Vec<Option<Time>> {
        let cfg = self.cfg;
        // A `[[flows]]` entry with a congestion control of its own runs it;
        // every other flow runs [transport].
        let mut transports = vec![cfg.transport.clone()];
        if self.rdma.is_some() {
            // A queue pair alone sends at its line rate from the start: TCP
            // with a window no path fills replays it.
            transports[0].init_cwnd = 1 << 30;
            transports[0].cc = crate::config::Name::new("reno");
        }
        let mut own = Vec::new();
        for f in &cfg.flows {
            let mine = f.cc.is_some() || f.ect1.is_some();
            if mine {
                transports.push(crate::declarations::registry::flow_transport(&cfg.transport, f));
            }
            own.extend(std::iter::repeat_n(if mine { transports.len() - 1 } else { 0 }, f.count as usize));
        }
        // Flows of one class are replayed together (`Replay::fcts`): a
        // workload's thousands share a handful of paths.
        let mut classes: HashMap<Class, Vec<(u64, usize)>> = HashMap::new();
        for (id, f) in self.apps.flows.iter().enumerate() {
            let Some(size) = f.size().filter(|_| f.kind == FlowKind::Sized && !self.is_paced(id)) else {
                continue;
            };
            // A lone flow on a per-pair connection finds it open: no
            // handshake; nor has a queue pair one.
            let handshake = !self.apps.conns.as_ref().is_some_and(|c| c.covers(id as u32)) && self.rdma.is_none();
            let (mut fwd, mut rev) = (Vec::new(), Vec::new());
            path(&self.fabric.net, f.src, f.dst, &mut fwd);
            path(&self.fabric.net, f.dst, f.src, &mut rev);
            let key = (fwd, rev, own.get(id).copied().unwrap_or(0), handshake);
            classes.entry(key).or_default().push((size, id));
        }
        let params = TcpParams::new(&cfg.transport);
        let at_sender = cfg.run.fct_end == FctEnd::Sender;
        let mut out = vec![None; self.apps.flows.len()];
        let mut replay = Replay::default();
        for ((fwd, rev, transport, handshake), mut flows) in classes {
            replay.set_hops(&fwd, &rev);
            let lone = Lone { transport: &transports[transport], params: &params, handshake, at_sender };
            replay.fcts(&lone, &mut flows, &mut out);
        }
        out
    }
}
