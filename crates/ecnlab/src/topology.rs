//! Topology builders. A network is nodes (hosts first, then switches) and
//! unidirectional ports (an egress queue discipline plus the link leaving
//! it). Each switch routes by destination host to a set of equal-cost ports
//! (one for a star; several for leaf-spine ECMP), picked by a seeded hash
//! of the flow so a flow never reorders.

use crate::config::{Config, TopologyKind};
use crate::config::{MarkingKind, PerQueue, SchedulerKind};
use crate::switch::buffer::Buffer;
use crate::switch::marker::{Marker, MqEcn, PerPool, PerPort, PerQueue as PerQueueMarker};
use crate::switch::scheduler::{wrr, Dwrr, Scheduler, Sp, SpDwrr};
use crate::switch::Qdisc;
use crate::units::{tx_time, Amount, Time};

pub struct Port {
    pub node: u32,
    pub peer: u32,
    pub rate_bps: u64,
    pub delay: Time,
    pub qdisc: Qdisc,
    pub busy: bool,
    /// Owned by a switch (counts toward its shared pool), else a host NIC.
    pub switch: Option<u32>,
}

pub enum NodeKind {
    Host { nic: u32 },
    Switch { index: u32 },
}

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
}

pub struct SwitchState {
    /// Bytes queued in all of this switch's ports (the shared pool).
    pub pool_bytes: u64,
    /// For each destination host, the equal-cost egress ports.
    pub routes: Vec<Vec<u32>>,
}

pub struct Network {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub switches: Vec<SwitchState>,
    pub hosts: u32,
}

impl Network {
    pub fn build(cfg: &Config) -> Network {
        match cfg.topology.kind {
            TopologyKind::Star => star(cfg),
        }
    }

    /// One-way delay of an otherwise empty path for a packet of `bytes`:
    /// serialisation and propagation at every hop.
    pub fn base_one_way(&self, src: u32, dst: u32, bytes: u64) -> Time {
        let mut t = 0;
        let mut node = src;
        let mut hops = 0;
        while node != dst && hops < 64 {
            let port = match self.nodes[node as usize].kind {
                NodeKind::Host { nic } => nic,
                NodeKind::Switch { index } => self.switches[index as usize].routes[dst as usize][0],
            };
            let p = &self.ports[port as usize];
            t += tx_time(bytes, p.rate_bps) + p.delay;
            node = p.peer;
            hops += 1;
        }
        t
    }
}

/// The configured switch queue discipline for a port of `rate_bps`.
pub fn switch_qdisc(cfg: &Config, rate_bps: u64) -> Qdisc {
    let s = &cfg.switch;
    let n = s.queues as usize;
    let pkt = cfg.transport.packet_bytes();
    let quanta = cfg.quanta();
    let sched = match s.scheduler {
        SchedulerKind::Sp => Scheduler::Sp(Sp),
        SchedulerKind::Wrr => Scheduler::RoundRobin(wrr(quanta.clone())),
        SchedulerKind::Dwrr => Scheduler::RoundRobin(Dwrr::new(quanta.clone(), true)),
        SchedulerKind::SpDwrr => {
            Scheduler::SpDwrr(SpDwrr { sp: s.sp_queues as usize, dwrr: Dwrr::new(quanta.clone(), true) })
        }
    };
    let k = |t: &PerQueue<crate::config::Amt>| match t {
        PerQueue::All(a) => a.0.bytes(pkt),
        PerQueue::List(_) => 0,
    };
    let marker = match (s.marking, &s.threshold) {
        (MarkingKind::None, _) | (_, None) => Marker::None,
        (MarkingKind::PerQueue, Some(PerQueue::List(l))) => {
            Marker::PerQueue(PerQueueMarker { k: l.iter().map(|a| a.0.bytes(pkt)).collect() })
        }
        (MarkingKind::PerQueue, Some(t)) => Marker::PerQueue(PerQueueMarker::standard(k(t), n)),
        (MarkingKind::PerQueueMin, Some(t)) => Marker::PerQueue(PerQueueMarker::minimum(k(t), &quanta)),
        (MarkingKind::PerPort, Some(t)) => Marker::PerPort(PerPort { k: k(t) }),
        (MarkingKind::PerPool, Some(t)) => Marker::PerPool(PerPool { k: k(t) }),
        (MarkingKind::MqEcn, Some(t)) => {
            let strict = if s.scheduler == SchedulerKind::SpDwrr { s.sp_queues as usize } else { 0 };
            let idle = s.mqecn_idle.map(|d| d.0).unwrap_or_else(|| tx_time(pkt, rate_bps));
            Marker::MqEcn(MqEcn::new(k(t), &quanta, rate_bps, strict, s.mqecn_beta, idle))
        }
    };
    let mut q = Qdisc::new(n, sched, marker, Buffer { limit: s.buffer.0 }, rate_bps);
    q.dequeue_marking = s.dequeue_marking;
    q.drop_not_ect = s.drop_not_ect;
    q
}

/// A host NIC: one FIFO with room for everything its TCP sends.
fn nic_qdisc(rate_bps: u64) -> Qdisc {
    Qdisc::new(1, Scheduler::Sp(Sp), Marker::None, Buffer { limit: Amount::Bytes(u64::MAX / 4) }, rate_bps)
}

fn star(cfg: &Config) -> Network {
    let t = &cfg.topology;
    let hosts = t.hosts.expect("validated");
    let rate_of = |h: u32| match t.link_rate.as_ref().expect("validated") {
        PerQueue::All(r) => r.0,
        PerQueue::List(l) => l[h as usize].0,
    };
    let delay = t.link_delay.expect("validated").0 + t.host_delay.map(|d| d.0).unwrap_or(0);
    let sw = hosts;
    let mut nodes: Vec<Node> =
        (0..hosts).map(|h| Node { name: format!("host{h}"), kind: NodeKind::Host { nic: h } }).collect();
    nodes.push(Node { name: "switch".into(), kind: NodeKind::Switch { index: 0 } });
    let mut ports = Vec::with_capacity(2 * hosts as usize);
    for h in 0..hosts {
        let rate = rate_of(h);
        ports.push(Port {
            node: h,
            peer: sw,
            rate_bps: rate,
            delay,
            qdisc: nic_qdisc(rate),
            busy: false,
            switch: None,
        });
    }
    let mut routes = Vec::with_capacity(hosts as usize);
    for h in 0..hosts {
        routes.push(vec![ports.len() as u32]);
        let rate = rate_of(h);
        ports.push(Port {
            node: sw,
            peer: h,
            rate_bps: rate,
            delay,
            qdisc: switch_qdisc(cfg, rate),
            busy: false,
            switch: Some(0),
        });
    }
    Network { nodes, ports, switches: vec![SwitchState { pool_bytes: 0, routes }], hosts }
}
