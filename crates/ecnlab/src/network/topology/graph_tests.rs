//! The network a `topology.kind = "graph"` builds: loops and mixed links, and
//! a graph listing a leaf-spine's links is that leaf-spine port for port and
//! route for route. (The config checks are in `config/graph_tests.rs`.)

use crate::config::Config;
use crate::network::topology::{Network, NodeKind};

fn graph(hosts: u32, switches: u32, links: &str) -> Config {
    let text = format!(
        "[run]\nduration = \"1ms\"\n[topology]\nkind = \"graph\"\nhosts = {hosts}\nswitches = {switches}\n\
         link_rate = \"100Gbps\"\nlink_delay = \"1us\"\nlinks = {links}\n"
    );
    Config::from_toml(&text).unwrap()
}

/// A cycle of switches is a valid network (routes take the shortest way
/// round), and links may each have their own rate and delay.
#[test]
fn switch_loops_and_mixed_links_are_allowed() {
    // Hosts 0-2 on switches 3, 4, 5 of a triangle; 400G, 2us fabric links.
    let cfg = graph(3, 3, "[[0, 3], [1, 4, \"25Gbps\"], [2, 5], [3, 4, \"400Gbps\", \"2us\"], [4, 5, \"400Gbps\", \"2us\"], [5, 3, \"400Gbps\", \"2us\"]]");
    let t = &cfg.topology;
    assert_eq!((t.host_rate(0), t.host_rate(1)), (100_000_000_000, 25_000_000_000));
    assert_eq!(t.fabric_rates(), vec![400_000_000_000]);
    // The longest host-to-host path is one fabric hop: 2 × (1 + 2 + 1) us.
    assert_eq!(t.base_rtt(), 8_000_000);
    let net = Network::build(&cfg);
    assert_eq!(net.ports.len(), 12);
    // host0 → host1: host0's NIC, then switch 3 straight to switch 4.
    let path: Vec<String> = net.first_path(0, 1).map(|p| format!("{}>{}", p.node, p.peer)).collect();
    assert_eq!(path, ["0>3", "3>4", "4>1"]);
    assert_eq!(net.nodes[3].name, "switch0");
}

/// The strongest check of the builder: a graph that lists a leaf-spine's
/// links in the order the leaf-spine builder makes them, with its switch
/// names, is that network: the same ports (ends, rate, delay, qdisc class)
/// and, from every switch to every host, the same ECMP set.
#[test]
fn a_graph_of_a_leaf_spine_is_that_leaf_spine() {
    let (l, s, hpl) = (3u32, 2u32, 2u32);
    let hosts = l * hpl;
    let mut links = Vec::new();
    for leaf in 0..l {
        for h in 0..hpl {
            links.push(format!("[{}, {}, \"10Gbps\", \"1us\"]", leaf * hpl + h, hosts + leaf));
        }
        for sp in 0..s {
            links.push(format!("[{}, {}, \"40Gbps\", \"1us\"]", hosts + leaf, hosts + l + sp));
        }
    }
    let names: Vec<String> =
        (0..l).map(|i| format!("\"leaf{i}\"")).chain((0..s).map(|i| format!("\"spine{i}\""))).collect();
    let common = "[run]\nduration = \"1ms\"\n[switch]\nmarking = \"red\"\nred_min = \"20KB\"\nred_max = \"60KB\"\n\
                  red_pmax = 0.1\n[fabric]\nred_min = \"80KB\"\nred_max = \"240KB\"\n";
    let g = Config::from_toml(&format!(
        "{common}[topology]\nkind = \"graph\"\nhosts = {hosts}\nswitches = {}\nlinks = [{}]\nswitch_names = [{}]\n",
        l + s,
        links.join(", "),
        names.join(", ")
    ))
    .unwrap();
    let ls = Config::from_toml(&format!(
        "{common}[topology]\nkind = \"leaf-spine\"\nleaves = {l}\nspines = {s}\nhosts_per_leaf = {hpl}\n\
         link_rate = \"10Gbps\"\nuplink_rate = \"40Gbps\"\nlink_delay = \"1us\"\n"
    ))
    .unwrap();
    assert_eq!(g.topology.base_rtt(), ls.topology.base_rtt());
    assert_eq!(g.topology.fabric_rate(), ls.topology.fabric_rate());
    let (a, b) = (Network::build(&g), Network::build(&ls));
    assert_eq!(a.ports.len(), b.ports.len());
    for (i, (p, q)) in a.ports.iter().zip(&b.ports).enumerate() {
        assert_eq!(
            (p.node, p.peer, p.delay, p.qdisc.rate.bps, p.switch),
            (q.node, q.peer, q.delay, q.qdisc.rate.bps, q.switch),
            "port {i}"
        );
        assert_eq!(a.port_name(i as u32), b.port_name(i as u32));
    }
    for sw in 0..(l + s) {
        assert!(matches!(a.nodes[(hosts + sw) as usize].kind, NodeKind::Switch { index } if index == sw));
        for d in 0..hosts {
            assert_eq!(a.routes(sw, d), b.routes(sw, d), "switch {sw} -> host {d}");
        }
    }
}
