//! Topology builders. A network is nodes (hosts first, then switches) and
//! unidirectional ports: an egress queue discipline plus the link leaving
//! it. Every builder only lists nodes and links; ports, shortest-path
//! routes and ECMP sets follow generically. A switch has, per destination
//! host, the set of equal-cost next-hop ports; a seeded hash of the flow
//! picks one, so a flow keeps its path and never reorders.
//! (`routes.rs` keeps the table.)

use crate::config::{Config, PortCfg, TopologyKind};
use crate::declarations::registry::build_qdisc;
use crate::network::routes::RouteTable;
use crate::switch::buffer::Buffer;
use crate::switch::marker::Marker;
use crate::switch::scheduler::{Scheduler, Sp};
use crate::switch::Qdisc;
use crate::units::Time;

/// Aligned to a cache line: a hop reads most of it, and 256 bytes so
/// placed are four lines where unaligned they would straddle five.
#[repr(align(64))]
pub struct Port {
    pub node: u32,
    pub peer: u32,
    pub delay: Time,
    pub qdisc: Qdisc,
    /// The current transmission ends here; the port is free from then on.
    pub busy_until: Time,
    /// A TxDone event is scheduled at `busy_until`.
    pub txdone_pending: bool,
    /// Departures are handled lazily, without TxDone events: when the
    /// port is next offered a packet, or when the packet on its wire lands,
    /// whichever comes first (see `World::catch_up`).
    pub lazy: bool,
    /// Owned by a switch (counts toward its shared pool), else a host NIC.
    pub switch: Option<u32>,
    /// The packets it sends are captured (`run.pcap`).
    pub capture: bool,
    /// Its enqueues and dequeues are traced (`run.trace_ports`; set it
    /// with `set_trace`).
    pub trace: bool,
    /// Offered packets take the static path (`World::enqueue`): the qdisc
    /// is plain (`Qdisc::is_plain`) and the port is not traced. One bit,
    /// so that the common case costs one test per hop.
    pub plain: bool,
}

// Four lines exactly: a field that grows it to five costs every hop (a
// DWRR field did: about 5% slower on a 5,000-flow MQ-ECN run).
const _: () = assert!(std::mem::size_of::<Port>() == 256);

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
}

pub struct Network {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub switches: Vec<SwitchState>,
    pub hosts: u32,
    /// Equal-cost next hops of every switch towards every host.
    routes: RouteTable,
}

impl Port {
    /// Trace the port's enqueues and dequeues, or stop.
    pub fn set_trace(&mut self, on: bool) {
        self.trace = on;
        self.plain = self.qdisc.is_plain() && !on;
    }

    /// Serialisation time on this port's link (the rate is the qdisc's).
    #[inline]
    pub fn tx_time(&self, bytes: u64) -> Time {
        self.qdisc.rate.tx_time(bytes)
    }
}

impl Network {
    pub fn build(cfg: &Config) -> Network {
        Network::build_until(cfg, &mut || true).expect("never asked to stop")
    }

    /// As [`Network::build`], asking `keep_going` a few times a second
    /// whether to go on (a large fabric takes seconds); None when it said no.
    pub fn build_until(cfg: &Config, keep_going: &mut dyn FnMut() -> bool) -> Option<Network> {
        let t = &cfg.topology;
        let mut b = Builder::default();
        match t.kind.expect("resolved") {
            TopologyKind::Star => {
                let hosts = t.hosts.expect("validated");
                b.hosts(hosts);
                let sw = b.switch("switch".into());
                for h in 0..hosts {
                    b.link(h, sw, t.host_rate(h), host_delay(cfg));
                }
            }
            TopologyKind::LeafSpine => {
                let (l, s, hpl) = (t.leaves.unwrap(), t.spines.unwrap(), t.hosts_per_leaf.unwrap());
                b.hosts(l * hpl);
                let leaves: Vec<u32> = (0..l).map(|i| b.switch(format!("leaf{i}"))).collect();
                let spines: Vec<u32> = (0..s).map(|i| b.switch(format!("spine{i}"))).collect();
                for (i, &leaf) in leaves.iter().enumerate() {
                    for h in 0..hpl {
                        let host = i as u32 * hpl + h;
                        b.link(host, leaf, t.host_rate(host), host_delay(cfg));
                    }
                    for &spine in &spines {
                        b.link(leaf, spine, t.fabric_rate(), t.link_delay.unwrap().0);
                    }
                }
            }
            TopologyKind::Ring => {
                let (n, hps) = (t.switches.unwrap(), t.hosts_per_switch.unwrap());
                b.hosts(n * hps);
                let sw: Vec<u32> = (0..n).map(|i| b.switch(format!("ring{i}"))).collect();
                for (i, &s) in sw.iter().enumerate() {
                    for h in 0..hps {
                        let host = i as u32 * hps + h;
                        b.link(host, s, t.host_rate(host), host_delay(cfg));
                    }
                }
                // Switch i to switch i + 1, the last back to the first.
                for i in 0..n as usize {
                    b.link(sw[i], sw[(i + 1) % n as usize], t.fabric_rate(), t.link_delay.expect("validated").0);
                }
            }
            TopologyKind::Graph => {
                // As listed: hosts 0..hosts, then the switches; each link's
                // ports in list order (validated: `config/graph.rs`).
                b.hosts(t.hosts.expect("validated"));
                for i in 0..t.switches.expect("validated") {
                    let name = t.switch_names.as_ref().map_or_else(|| format!("switch{i}"), |n| n[i as usize].clone());
                    b.switch(name);
                }
                for l in &t.links.as_ref().expect("validated").list {
                    b.link(l.a, l.b, l.rate(), l.delay());
                }
            }
            TopologyKind::FatTree => {
                // k pods of k/2 edge and k/2 aggregation switches; (k/2)² cores.
                let k = t.k.unwrap();
                let h = k / 2;
                b.hosts(k * k * k / 4);
                let edges: Vec<u32> = (0..k * h).map(|i| b.switch(format!("edge{i}"))).collect();
                let aggs: Vec<u32> = (0..k * h).map(|i| b.switch(format!("agg{i}"))).collect();
                let cores: Vec<u32> = (0..h * h).map(|i| b.switch(format!("core{i}"))).collect();
                let (d, up) = (t.link_delay.unwrap().0, t.fabric_rate());
                for (e, &edge) in edges.iter().enumerate() {
                    for j in 0..h {
                        let host = e as u32 * h + j;
                        b.link(host, edge, t.host_rate(host), host_delay(cfg));
                    }
                    let pod = e as u32 / h;
                    for a in 0..h {
                        b.link(edge, aggs[(pod * h + a) as usize], up, d);
                    }
                }
                for (a, &agg) in aggs.iter().enumerate() {
                    let i = a as u32 % h;
                    for c in 0..h {
                        b.link(agg, cores[(i * h + c) as usize], up, d);
                    }
                }
            }
        }
        b.finish(cfg, keep_going)
    }

    /// Equal-cost egress ports of switch `sw` (its index among switches)
    /// towards host `dst`.
    #[inline]
    pub fn routes(&self, sw: u32, dst: u32) -> &[u32] {
        self.routes.get(sw, dst)
    }

    /// Switch `sw`'s next hop towards host `dst`: its one port, or the one
    /// at `pick(n)` of its `n` (see `RouteTable::next_hop`).
    #[inline]
    pub fn next_hop(&self, sw: u32, dst: u32, pick: impl FnOnce(usize) -> usize) -> u32 {
        self.routes.next_hop(sw, dst, pick)
    }

    /// The route table is the direct per-host one (a small fabric).
    pub fn routes_are_direct(&self) -> bool {
        self.routes.is_direct()
    }

    /// The ports a packet from `src` to `dst` leaves by when every switch
    /// takes its first equal-cost port (at most 64).
    pub fn first_path(&self, src: u32, dst: u32) -> impl Iterator<Item = &Port> + '_ {
        let mut node = src;
        std::iter::from_fn(move || {
            if node == dst {
                return None;
            }
            let port = match self.nodes[node as usize].kind {
                NodeKind::Host { nic } => nic,
                NodeKind::Switch { index } => self.routes(index, dst)[0],
            };
            let p = &self.ports[port as usize];
            node = p.peer;
            Some(p)
        })
        .take(64)
    }

    /// One-way delay of an otherwise empty path for a packet of `bytes`:
    /// serialisation and propagation at every hop (first ECMP choice).
    pub fn base_one_way(&self, src: u32, dst: u32, bytes: u64) -> Time {
        self.first_path(src, dst).map(|p| p.tx_time(bytes) + p.delay).sum()
    }

    pub fn port_name(&self, p: u32) -> String {
        let p = &self.ports[p as usize];
        format!("{}:{}", self.nodes[p.node as usize].name, self.nodes[p.peer as usize].name)
    }

    pub fn is_host(&self, node: u32) -> bool {
        node < self.hosts
    }

    /// Host `host`'s NIC port. Hosts are nodes 0..hosts and each has exactly
    /// one link (`finish` checks both), so a switch here is a caller's bug.
    pub fn host_nic(&self, host: u32) -> u32 {
        match self.nodes[host as usize].kind {
            NodeKind::Host { nic } => nic,
            NodeKind::Switch { .. } => unreachable!("node {host} is a switch, not a host"),
        }
    }
}

fn host_delay(cfg: &Config) -> Time {
    let t = &cfg.topology;
    t.link_delay.expect("validated").0 + t.host_delay.map(|d| d.0).unwrap_or(0)
}

/// Nodes and bidirectional links; `finish` turns them into ports and routes.
#[derive(Default)]
struct Builder {
    hosts: u32,
    names: Vec<String>,
    /// (a, b, rate, delay)
    links: Vec<(u32, u32, u64, Time)>,
}

impl Builder {
    fn hosts(&mut self, n: u32) {
        self.hosts = n;
        self.names.extend((0..n).map(|h| format!("host{h}")));
    }

    fn switch(&mut self, name: String) -> u32 {
        self.names.push(name);
        (self.names.len() - 1) as u32
    }

    fn link(&mut self, a: u32, b: u32, rate: u64, delay: Time) {
        self.links.push((a, b, rate, delay));
    }

    fn finish(self, cfg: &Config, keep_going: &mut dyn FnMut() -> bool) -> Option<Network> {
        let n = self.names.len();
        let hosts = self.hosts;
        let env = cfg.port_env();
        let mut nodes: Vec<Node> = self
            .names
            .into_iter()
            .enumerate()
            .map(|(i, name)| {
                let kind = if (i as u32) < hosts {
                    NodeKind::Host { nic: u32::MAX }
                } else {
                    NodeKind::Switch { index: i as u32 - hosts }
                };
                Node { name, kind }
            })
            .collect();
        let mut ports = Vec::with_capacity(2 * self.links.len());
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(a, b, rate, delay) in &self.links {
            for (from, to) in [(a, b), (b, a)] {
                let id = ports.len() as u32;
                let qdisc = if from < hosts {
                    match &cfg.nic_port {
                        Some(p) => build_qdisc(p, env, rate),
                        None => nic_qdisc(rate),
                    }
                } else if to < hosts {
                    build_qdisc(&cfg.switch, env, rate)
                } else {
                    build_qdisc(&cfg.fabric_port, env, rate)
                };
                let switch = if from < hosts { None } else { Some(from - hosts) };
                let mut qdisc = qdisc;
                qdisc.seed(crate::rng::Rng::stream(cfg.run.seed, AQM_STREAM ^ id as u64));
                let plain = qdisc.is_plain();
                ports.push(Port {
                    node: from,
                    peer: to,
                    delay,
                    qdisc,
                    busy_until: 0,
                    txdone_pending: false,
                    lazy: false,
                    switch,
                    capture: false,
                    trace: false,
                    plain,
                });
                out[from as usize].push(id);
                if let NodeKind::Host { nic } = &mut nodes[from as usize].kind {
                    assert!(*nic == u32::MAX, "a host has one link");
                    *nic = id;
                }
            }
        }
        let switches = n as u32 - hosts;
        let nics: Vec<u32> = nodes[..hosts as usize]
            .iter()
            .enumerate()
            .map(|(h, node)| match node.kind {
                NodeKind::Host { nic } if nic != u32::MAX => nic,
                _ => panic!("host{h} has no link"),
            })
            .collect();
        let peers: Vec<u32> = ports.iter().map(|p| p.peer).collect();
        let routes = RouteTable::build(&peers, &out, &nics, keep_going)?;
        Some(Network {
            nodes,
            ports,
            switches: (0..switches).map(|_| SwitchState { pool_bytes: 0 }).collect(),
            hosts,
            routes,
        })
    }
}

/// The purpose of the ports' random streams (RED), mixed with the port id.
const AQM_STREAM: u64 = 0xA0_0000_0000;

/// The discipline a port's config builds, for a port of `rate_bps` (the
/// testbed's switch builds its ports with it too).
pub fn switch_qdisc(cfg: &Config, port: &PortCfg, rate_bps: u64) -> Qdisc {
    build_qdisc(port, cfg.port_env(), rate_bps)
}

/// A host NIC: one FIFO with room for everything its TCP sends.
fn nic_qdisc(rate_bps: u64) -> Qdisc {
    Qdisc::new(1, Scheduler::Sp(Sp), Marker::None, Buffer::Bytes(u64::MAX / 4), rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::marker::Hooked;

    fn leaf_spine() -> Network {
        let cfg =
            Config::from_toml("[run]\nduration = \"1ms\"\n[topology]\nkind = \"leaf-spine\"\npreset = \"mqecn\"\n")
                .unwrap();
        Network::build(&cfg)
    }

    /// MQ-ECN §5.2 leaf-spine: 12 leaves × 12 hosts, 12 spines. A leaf
    /// reaches its own hosts by their link and every other host by any of
    /// its 12 uplinks; a spine reaches a host by its link to the host's leaf
    /// (the ECMP sets of shortest paths, written out from the structure).
    #[test]
    fn leaf_spine_routes_are_the_shortest_path_sets() {
        let net = leaf_spine();
        let (hosts, leaves) = (144u32, 12u32);
        let node_of = |name: &str| net.nodes.iter().position(|n| n.name == name).unwrap() as u32;
        let switch_index = |node: u32| match net.nodes[node as usize].kind {
            NodeKind::Switch { index } => index,
            NodeKind::Host { .. } => unreachable!(),
        };
        let ports_to = |node: u32, pred: &dyn Fn(&str) -> bool| -> Vec<u32> {
            let mut v: Vec<u32> = (0..net.ports.len() as u32)
                .filter(|&p| net.ports[p as usize].node == node)
                .filter(|&p| pred(&net.nodes[net.ports[p as usize].peer as usize].name))
                .collect();
            v.sort();
            v
        };
        for d in 0..hosts {
            let home = d / 12;
            for l in 0..leaves {
                let leaf = node_of(&format!("leaf{l}"));
                let want = if l == home {
                    ports_to(leaf, &|peer| peer == format!("host{d}"))
                } else {
                    ports_to(leaf, &|peer| peer.starts_with("spine"))
                };
                let mut got = net.routes(switch_index(leaf), d).to_vec();
                got.sort();
                assert_eq!(got, want, "leaf{l} -> host{d}");
                assert_eq!(want.len(), if l == home { 1 } else { 12 });
            }
            for s in 0..12 {
                let spine = node_of(&format!("spine{s}"));
                let want = ports_to(spine, &|peer| peer == format!("leaf{home}"));
                assert_eq!(net.routes(switch_index(spine), d), want.as_slice(), "spine{s} -> host{d}");
            }
        }
        // Each distinct set is stored once: per leaf its 12 host ports and
        // one uplink set of 12, per spine its 12 leaf ports — 432 entries,
        // where one copy per (switch, host) would take 20,880.
        assert_eq!(net.routes.stored_ports(), 12 * (12 + 12) + 12 * 12);
    }

    /// The per-leaf table gives every switch, towards every host, the set a
    /// breadth-first search from that host gives (shortest paths by hop
    /// count; hosts do not forward), in port order: written here the slow,
    /// obvious way on a k = 4 fat-tree and a 3 × 2 leaf-spine. In a k = 4
    /// fat-tree an edge switch reaches a host of another edge by its 2
    /// uplinks, and a core switch any host by its one port to the host's pod.
    #[test]
    fn per_leaf_routes_are_the_per_host_shortest_path_sets() {
        use std::collections::VecDeque;
        let fat = "[topology]\nkind = \"fat-tree\"\nk = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n";
        let ls = "[topology]\nkind = \"leaf-spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 2\n\
                  link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n";
        for topo in [fat, ls] {
            let cfg = Config::from_toml(&format!("[run]\nduration = \"1ms\"\n{topo}")).unwrap();
            let net = Network::build(&cfg);
            let n = net.nodes.len();
            let mut checked = 0;
            for d in 0..net.hosts {
                let mut dist = vec![u32::MAX; n];
                dist[d as usize] = 0;
                let mut queue = VecDeque::from([d]);
                while let Some(u) = queue.pop_front() {
                    if u < net.hosts && u != d {
                        continue;
                    }
                    for p in net.ports.iter().filter(|p| p.node == u) {
                        if dist[p.peer as usize] == u32::MAX {
                            dist[p.peer as usize] = dist[u as usize] + 1;
                            queue.push_back(p.peer);
                        }
                    }
                }
                for sw in 0..net.switches.len() as u32 {
                    let node = net.hosts + sw;
                    let want: Vec<u32> = (0..net.ports.len() as u32)
                        .filter(|&p| net.ports[p as usize].node == node)
                        .filter(|&p| dist[net.ports[p as usize].peer as usize] + 1 == dist[node as usize])
                        .collect();
                    assert_eq!(net.routes(sw, d), want.as_slice(), "switch {sw} -> host{d}");
                    checked += want.len();
                }
            }
            assert!(checked > 0);
        }
        // k = 4: edge0 (switch 0) reaches host 2 (edge1, same pod) by its 2 uplinks.
        let cfg = Config::from_toml(&format!("[run]\nduration = \"1ms\"\n{fat}")).unwrap();
        let net = Network::build(&cfg);
        assert_eq!(net.routes(0, 2).len(), 2);
        assert_eq!(net.routes.leaves(), 8);
    }

    /// A build told to stop returns nothing instead of a network.
    #[test]
    fn a_build_stops_when_asked() {
        let cfg = Config::from_toml(
            "[run]\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 8\n\
                                     link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n",
        )
        .unwrap();
        let mut asked = 0;
        assert!(Network::build_until(&cfg, &mut || {
            asked += 1;
            false
        })
        .is_none());
        assert_eq!(asked, 1);
    }

    /// `marking = "mq-ecn"` picks its share estimate by scheduler: the
    /// weight sum over WFQ, the round time over DWRR, in both its
    /// threshold and its probabilistic (RED) forms (MQ-ECN §3.3, §3.4).
    #[test]
    fn mq_ecn_estimate_follows_the_scheduler() {
        let build = |sched: &str, red: bool| {
            let keys =
                if red { "red_min = \"10pkt\"\nred_max = \"30pkt\"\nred_pmax = 0.1" } else { "threshold = \"65pkt\"" };
            let cfg = Config::from_toml(&format!(
                "[run]\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\n\
                 link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\nqueues = 2\nscheduler = \"{sched}\"\nmarking = \"mq-ecn\"\n{keys}\n"
            ))
            .unwrap();
            switch_qdisc(&cfg, &cfg.switch, 10_000_000_000)
        };
        let wfq = build("wfq", false);
        assert!(matches!((&wfq.sched, &wfq.marker), (Scheduler::Wfq(_), Marker::MqEcnGeneric(_))));
        assert!(matches!(build("dwrr", false).marker, Marker::MqEcn(_)));
        for (sched, generic) in [("wfq", true), ("dwrr", false)] {
            let marker = build(sched, true).marker;
            let Some(Hooked::Red(r)) = marker.hooked() else { panic!("{sched}: not RED") };
            assert_eq!(r.share_is_weight_sum(), Some(generic), "{sched}");
        }
    }

    /// The compact form (per leaf, relative runs) answers exactly as the
    /// direct per-host table does, for every switch and host of k = 4, 8
    /// and 16 fat-trees and a leaf-spine (the topology tests check the
    /// direct table against a search from each host).
    #[test]
    fn compact_and_direct_tables_agree() {
        let topos = [
            "kind = \"fat-tree\"\nk = 4",
            "kind = \"fat-tree\"\nk = 8",
            // Large enough that the network itself keeps the compact form.
            "kind = \"fat-tree\"\nk = 16",
            "kind = \"leaf-spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 2",
        ];
        for topo in topos {
            let text = format!(
                "[run]\nduration = \"1ms\"\n[topology]\n{topo}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n"
            );
            let net = Network::build(&Config::from_toml(&text).unwrap());
            let peers: Vec<u32> = net.ports.iter().map(|p| p.peer).collect();
            let mut out = vec![Vec::new(); net.nodes.len()];
            for (i, p) in net.ports.iter().enumerate() {
                out[p.node as usize].push(i as u32);
            }
            let nics: Vec<u32> = net.nodes[..net.hosts as usize]
                .iter()
                .map(|n| match n.kind {
                    NodeKind::Host { nic } => nic,
                    NodeKind::Switch { .. } => unreachable!(),
                })
                .collect();
            let compact = RouteTable::build_direct_up_to(&peers, &out, &nics, &mut || true, 0).unwrap();
            let direct = RouteTable::build_direct_up_to(&peers, &out, &nics, &mut || true, usize::MAX).unwrap();
            assert!(!compact.is_direct() && direct.is_direct());
            // Every set is a run of its switch's ports to switches (the
            // uplinks are made one after another), so the relative form.
            assert!(compact.is_relative(), "{topo}");
            // ... and every run evenly spaced within its switch's first two
            // segments, so no hop reads the list.
            assert_eq!(compact.runs_read(), 0, "{topo}");
            // Shared rows: in a fat-tree every edge switch routes all other
            // leaves up (one row), every core sends leaf l down to l's pod
            // (one row), and the aggregation switches of a pod share one
            // (k rows): k + 2. In the leaf-spine, leaves and spines: 2.
            let k = topo.strip_prefix("kind = \"fat-tree\"\nk = ").map(|k| k.parse::<usize>().unwrap());
            assert_eq!(compact.distinct_rows(), k.map_or(2, |k| k + 2), "{topo}");
            for sw in 0..net.switches.len() as u32 {
                for d in 0..net.hosts {
                    assert_eq!(compact.get(sw, d), direct.get(sw, d), "{topo}: switch {sw} -> host{d}");
                    assert_eq!(compact.get(sw, d), net.routes(sw, d));
                    // Each next hop as `route` takes it (computed where the
                    // set is evenly spaced), the choice asked only of a set
                    // of several.
                    let set = direct.get(sw, d);
                    for i in 0..set.len() {
                        let pick = |n: usize| {
                            assert!(n == set.len() && n > 1, "{topo}: switch {sw} -> host{d}: asked to pick of {n}");
                            i
                        };
                        assert_eq!(compact.next_hop(sw, d, pick), set[i], "{topo}: switch {sw} -> host{d} [{i}]");
                        assert_eq!(net.next_hop(sw, d, pick), set[i]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "topology/graph_tests.rs"]
mod graph_tests;
