//! How the partitioned engine (`run.threads`, `world/parallel/`) cuts a
//! fabric into parts: every node belongs to one part, each host with the
//! switch it hangs from, so that only fabric links cross between parts and
//! the shortest of them bounds how far one part may run ahead of another.
//!
//! A fat-tree is cut by pods (a part holds whole pods: their hosts, edge
//! and aggregation switches) and a leaf-spine by groups of leaves (with
//! their hosts); the cores or spines are dealt round-robin. Other fabrics
//! (a star, a dumbbell) have nothing to cut and run as one part.
//!
//! What crosses between parts is declared here too, as the fabric keeps it
//! in its outboxes: packets on a link (`Crossing`) and the applications'
//! messages (`Signal`, see `parallel/signals.rs`).

use crate::config::{Config, ConfigError, TopologyKind};
use crate::engine::Event;
use crate::host::sack_blocks::More;
use crate::network::topology::{Network, NodeKind};
use crate::packet::Packet;
use crate::units::Time;

/// `run.partitions = 0`: as many parts as threads (outputs never depend
/// on the parts, `engine.rs`), no more than the fabric's units allow.
const AUTO: u32 = 0;

/// A port whose link stays inside its part.
pub const LOCAL: u16 = u16::MAX;

pub struct Partitioning {
    /// Parts, at least 1.
    pub parts: u32,
    /// Per node, its part.
    pub of_node: Vec<u16>,
    /// Per port: the part at the link's far end when it is not the port's
    /// own, else LOCAL.
    pub cross: Vec<u16>,
    /// The shortest delay of a link between two parts (Time::MAX with one
    /// part): a packet sent at t lands in another part at t + lookahead or
    /// later, so parts may run that far apart.
    pub lookahead: Time,
    /// How the fabric was cut, in words (the summary's `partition_cut`).
    pub cut: &'static str,
    /// The windows' grid (see `grid`).
    pub grid: Time,
}

/// The fabric's units (pods or leaves) and hosts per unit: what a cut
/// deals out; one unit for a fabric with nothing to cut.
fn units(cfg: &Config, net: &Network) -> (u32, u32) {
    let t = &cfg.topology;
    match t.kind {
        Some(TopologyKind::FatTree) => {
            let k = t.k.expect("validated");
            (k, k * k / 4)
        }
        Some(TopologyKind::LeafSpine) => (t.leaves.expect("validated"), t.hosts_per_leaf.expect("validated")),
        _ => (1, net.hosts.max(1)),
    }
}

/// The grid every window of a partitioned run lies within, a function of
/// the fabric alone: the shortest link that any cut of it could cross (a
/// pod's or leaf's link to a core or spine; with the hosts apart, a host's
/// link). Every cut's lookahead is at least that long, so windows of
/// `[k grid, (k + 1) grid)` are safe for any number of parts, and a run
/// that ends when its last sized flow finishes runs on to the end of that
/// grid window on either engine (`World::run`): where it stops then never
/// depends on how the fabric was cut. None for a fabric with nothing to
/// cut (or no delay to cut at), which stops at the last finish itself.
pub fn grid(cfg: &Config, net: &Network) -> Option<Time> {
    let (units, per_unit_hosts) = units(cfg, net);
    if units < 2 {
        return None;
    }
    let apart = hosts_links_longer(net);
    // Each node's unit; a core or spine (or with the hosts apart, every
    // switch) none.
    const NONE: u32 = u32::MAX;
    let unit = |n: u32| match net.nodes[n as usize].kind {
        NodeKind::Host { .. } => n / per_unit_hosts,
        NodeKind::Switch { .. } if apart => NONE,
        NodeKind::Switch { index } => switch_unit(cfg, index),
    };
    let shortest = net.ports.iter().filter(|p| unit(p.node) != unit(p.peer)).map(|p| p.delay).min()?;
    (shortest > 0).then_some(shortest)
}

/// The unit (pod or leaf) of switch `index`, or u32::MAX for a core or
/// spine (see `switch_part`).
fn switch_unit(cfg: &Config, index: u32) -> u32 {
    let t = &cfg.topology;
    match t.kind {
        Some(TopologyKind::FatTree) => {
            let k = t.k.expect("validated");
            let pod_switches = k * (k / 2);
            if index < 2 * pod_switches {
                (index % pod_switches) / (k / 2)
            } else {
                u32::MAX
            }
        }
        Some(TopologyKind::LeafSpine) if index < t.leaves.expect("validated") => index,
        _ => u32::MAX,
    }
}

impl Partitioning {
    /// The parts of `net`, as `cfg` asks (`run.partitions`, by default
    /// one per thread).
    pub fn new(cfg: &Config, net: &Network) -> Result<Partitioning, ConfigError> {
        let t = &cfg.topology;
        let asked = cfg.run.partitions;
        let (units, per_unit_hosts) = units(cfg, net);
        let apart = units > 1 && hosts_links_longer(net);
        // With the hosts apart, part 0 holds the switches.
        let most = units + apart as u32;
        let parts = match asked {
            AUTO => most.min(cfg.run.threads.max(1)),
            p if p > most => {
                return Err(ConfigError(format!(
                    "run.partitions = {p}: more parts than this fabric has {} ({most}); allowed: 0 (auto) or 1 to \
                     {most}",
                    if t.kind == Some(TopologyKind::FatTree) { "pods" } else { "leaves" }
                )))
            }
            p => p,
        };
        let hosts_apart = parts > 1 && apart;
        // Unit u (a pod or a leaf) goes to part u * parts / units: parts of
        // whole, neighbouring units, as even as the division allows. With
        // the hosts apart, the switches are part 0 and the units' hosts
        // share the others.
        let (first, shared) = if hosts_apart { (1, parts - 1) } else { (0, parts) };
        let part_of_unit = |u: u32| (first + u as u64 * shared as u64 / units as u64) as u16;
        let mut of_node = vec![0u16; net.nodes.len()];
        let h = net.hosts;
        for (i, n) in net.nodes.iter().enumerate() {
            of_node[i] = match n.kind {
                NodeKind::Host { .. } => part_of_unit(i as u32 / per_unit_hosts),
                NodeKind::Switch { .. } if hosts_apart => 0,
                NodeKind::Switch { index } => switch_part(cfg, index, parts, &part_of_unit),
            };
        }
        debug_assert!(net.nodes.iter().take(h as usize).all(|n| matches!(n.kind, NodeKind::Host { .. })));
        let mut cross = vec![LOCAL; net.ports.len()];
        let mut lookahead = Time::MAX;
        for (i, p) in net.ports.iter().enumerate() {
            let (a, b) = (of_node[p.node as usize], of_node[p.peer as usize]);
            if a != b {
                cross[i] = b;
                lookahead = lookahead.min(p.delay);
            }
        }
        if lookahead == 0 {
            return Err(ConfigError(
                "run.threads: the links between parts have no delay (topology.link_delay = 0s), so no part could \
                 run ahead of another; allowed: a positive link_delay, or run.threads = 0"
                    .into(),
            ));
        }
        let cut = match (hosts_apart, t.kind) {
            (true, _) => "hosts apart from switches",
            (false, Some(TopologyKind::FatTree)) => "pods",
            _ => "leaves",
        };
        let grid = grid(cfg, net).unwrap_or(Time::MAX);
        debug_assert!(parts == 1 || grid <= lookahead, "a cut crosses a link shorter than the grid");
        Ok(Partitioning { parts, of_node, cross, lookahead, cut, grid })
    }
}

/// Whether the hosts' links are at least `HOSTS_APART` times as long as
/// the shortest link between switches: then the cut goes between the hosts
/// and their switches, where a window is that much longer (the papers'
/// leaf-spines: 20.2 µs host links, 0.2 µs between leaves and spines).
fn hosts_links_longer(net: &Network) -> bool {
    let is_host = |n: u32| matches!(net.nodes[n as usize].kind, NodeKind::Host { .. });
    let (mut hosts, mut fabric) = (Time::MAX, Time::MAX);
    for p in &net.ports {
        let d = if is_host(p.node) || is_host(p.peer) { &mut hosts } else { &mut fabric };
        *d = (*d).min(p.delay);
    }
    fabric != Time::MAX && hosts != Time::MAX && hosts >= fabric.saturating_mul(HOSTS_APART)
}

/// See `hosts_links_longer`: a window that many times longer pays for the
/// hosts' traffic all crossing parts (every packet twice).
const HOSTS_APART: Time = 8;

/// The part of switch `index` (its index among switches, in the order the
/// topology builds them: fat-tree edges, aggregations, cores; leaf-spine
/// leaves, spines).
fn switch_part(cfg: &Config, index: u32, parts: u32, part_of_unit: &dyn Fn(u32) -> u16) -> u16 {
    let t = &cfg.topology;
    match t.kind {
        Some(TopologyKind::FatTree) => {
            let k = t.k.expect("validated");
            let h = k / 2;
            let pod_switches = k * h; // edges, then as many aggregations
            if index < 2 * pod_switches {
                part_of_unit((index % pod_switches) / h)
            } else {
                ((index - 2 * pod_switches) % parts) as u16
            }
        }
        Some(TopologyKind::LeafSpine) => {
            let leaves = t.leaves.expect("validated");
            if index < leaves {
                part_of_unit(index)
            } else {
                ((index - leaves) % parts) as u16
            }
        }
        _ => 0,
    }
}

// ---------- what crosses between parts ----------

/// A packet on a link between two parts, in the sending part's outbox
/// until the window ends.
pub struct Crossing {
    /// The part it lands in.
    pub to: u16,
    /// The port that sent it, and when it lands at the far end.
    pub port: u32,
    pub lands: Time,
    pub pkt: Packet,
    /// Its egress at the switch it lands on, if resolved early.
    pub hop: u32,
    /// An ACK's further SACK blocks (`host/sack_blocks.rs`), which live
    /// beside the sending part's packets, not in them.
    pub more: More,
    /// With per-pair connections, its flow's ECMP key (its connection's
    /// id), which only the sender's part assigns (`host/apps/persistent.rs`).
    pub key: u32,
}

/// What crosses to another part.
#[derive(Clone, Copy, Debug)]
pub enum Notice {
    /// One of incast group `group`'s connections opened at its sender.
    Established { group: u32 },
    /// An event to run there.
    Event(Event),
}

/// A notice in the sending part's outbox until the window ends.
#[derive(Clone, Copy, Debug)]
pub struct Signal {
    pub to: u16,
    pub at: Time,
    pub notice: Notice,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(topo: &str, partitions: u32) -> Result<Partitioning, ConfigError> {
        let cfg = Config::from_toml(&format!(
            "[run]\nduration = \"1ms\"\nthreads = 1\npartitions = {partitions}\n[topology]\n{topo}\n\
             link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n"
        ))
        .unwrap();
        Partitioning::new(&cfg, &Network::build(&cfg))
    }

    /// A fat-tree's parts are whole pods: every host with its edge switch,
    /// every edge with its pod's aggregations; only aggregation-core links
    /// cross, so the lookahead is the fabric's link delay.
    #[test]
    fn fat_tree_parts_are_whole_pods() {
        // By default one part per thread (these run on one).
        assert_eq!(parts_of("kind = \"fat-tree\"\nk = 8", 0).unwrap().parts, 1);
        let p = parts_of("kind = \"fat-tree\"\nk = 8", 8).unwrap();
        assert_eq!(p.parts, 8);
        assert_eq!((p.lookahead, p.grid), (1_000_000, 1_000_000));
        let cfg = Config::from_toml(
            "[run]\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 8\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n",
        )
        .unwrap();
        let net = Network::build(&cfg);
        for (i, port) in net.ports.iter().enumerate() {
            let (a, b) = (&net.nodes[port.node as usize].name, &net.nodes[port.peer as usize].name);
            let crosses = p.cross[i] != LOCAL;
            let core_link = a.starts_with("core") || b.starts_with("core");
            assert!(!crosses || core_link, "{a}:{b} crosses parts");
        }
        // 16 cores dealt over 8 parts: 2 each; 128 hosts: 16 a part.
        for part in 0..8u16 {
            let hosts = p.of_node[..128].iter().filter(|&&x| x == part).count();
            assert_eq!(hosts, 16);
        }
        assert!(p.cross.iter().any(|&c| c != LOCAL));
    }

    #[test]
    fn leaf_spine_groups_leaves_and_refuses_too_many_parts() {
        let p = parts_of("kind = \"leaf-spine\"\nleaves = 9\nspines = 4\nhosts_per_leaf = 16", 3).unwrap();
        assert_eq!(p.parts, 3);
        // Leaves 0-2 (hosts 0-47) in part 0, 3-5 in part 1, 6-8 in part 2.
        assert_eq!((p.of_node[0], p.of_node[47], p.of_node[48], p.of_node[143]), (0, 0, 1, 2));
        let e = parts_of("kind = \"leaf-spine\"\nleaves = 9\nspines = 4\nhosts_per_leaf = 16", 10).err().unwrap();
        assert!(e.0.contains("run.partitions = 10") && e.0.contains("1 to 9"), "{}", e.0);
    }

    #[test]
    fn a_star_is_one_part() {
        let p = parts_of("kind = \"star\"\nhosts = 4", 0).unwrap();
        assert_eq!((p.parts, p.lookahead), (1, Time::MAX));
    }

    /// The papers' leaf-spines (0.2 µs between switches, 20.2 µs to the
    /// hosts) are cut between the hosts and their leaves: windows of
    /// 20.2 µs, not 0.2 µs.
    #[test]
    fn long_host_links_put_the_hosts_apart() {
        let cfg = Config::from_toml(
            "[run]\nduration = \"1ms\"\nthreads = 1\npartitions = 3\n[topology]\npreset = \"mqecn\"\n",
        )
        .unwrap();
        let p = Partitioning::new(&cfg, &Network::build(&cfg)).unwrap();
        assert_eq!(p.cut, "hosts apart from switches");
        assert_eq!((p.lookahead, p.grid), (20_200_000, 20_200_000));
        // 144 hosts: leaves 0-5's in part 1, 6-11's in part 2; switches in 0.
        assert_eq!((p.of_node[0], p.of_node[71], p.of_node[72], p.of_node[143]), (1, 1, 2, 2));
        assert!(p.of_node[144..].iter().all(|&x| x == 0));
    }
}
