//! The ideal FCT against the engine itself: a flow alone in the network
//! must take exactly its ideal (slowdown 1), on every topology and with the
//! transport settings the replay follows (`ecnlab::network::ideal`). The replay runs
//! the engine's own TCP, so agreement to the picosecond is expected; the
//! tolerance only absorbs the division of two integers. The ideal leaves
//! out the hosts' timing jitter (`host.jitter`), so these runs turn it off:
//! an exact replay; the last test bounds what the jitter adds.

use ecnlab::{Column, Config};

/// Per flow of `toml`'s run: (size, fct, ideal_fct, slowdown).
fn flows(toml: &str) -> Vec<(i64, f64, f64, f64)> {
    let mut cfg = Config::from_toml(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    cfg.host.jitter = ecnlab::config::values::TimeOrPkts::Time(0);
    flows_of(&cfg)
}

fn flows_of(cfg: &Config) -> Vec<(i64, f64, f64, f64)> {
    let rep = ecnlab::run(cfg, &mut |_, _| true).expect("the run");
    let t = rep.table("flows").expect("a flows table");
    let f64s = |name: &str| match t.column(name) {
        Some(Column::F64(v)) => v.clone(),
        _ => panic!("no f64 column {name}"),
    };
    let size = match t.column("size") {
        Some(Column::I64(v)) => v.clone(),
        _ => panic!("no size"),
    };
    let (fct, ideal, slowdown) = (f64s("fct"), f64s("ideal_fct"), f64s("slowdown"));
    (0..t.rows()).map(|i| (size[i], fct[i], ideal[i], slowdown[i])).collect()
}

/// One flow of `size` bytes from `src` to `dst`, alone, on `net` with
/// `extra` sections (a first line of `[run]` keys goes to `[run]`).
fn lone(net: &str, extra: &str, src: u32, dst: u32, size: u64) -> (f64, f64, f64) {
    let (run, extra) = if extra.starts_with('[') { ("", extra) } else { extra.split_once('\n').unwrap_or((extra, "")) };
    let toml =
        format!("[run]\nseed = 1\n{run}\n{net}\n{extra}\n[[flows]]\nsrc = {src}\ndst = {dst}\nsize = \"{size}B\"\n");
    let rows = flows(&toml);
    assert_eq!(rows.len(), 1);
    let (_, fct, ideal, slowdown) = rows[0];
    assert!(fct.is_finite(), "unfinished: {toml}");
    (fct, ideal, slowdown)
}

const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"25us\"";
const LEAF_SPINE: &str = "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n\
     link_rate = \"10Gbps\"\nuplink_rate = \"40Gbps\"\nlink_delay = \"2us\"\nhost_delay = \"1us\"";
const FAT_TREE: &str = "[topology]\nkind = \"fat-tree\"\nk = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"";
const SIZES: [u64; 6] = [1, 1460, 1461, 10_000, 100_000, 1_000_000];

fn assert_ideal(what: &str, net: &str, extra: &str, src: u32, dst: u32) {
    for size in SIZES {
        let (fct, ideal, slowdown) = lone(net, extra, src, dst, size);
        assert!((slowdown - 1.0).abs() < 1e-12, "{what}, {size} B: fct {fct} s, ideal {ideal} s");
    }
}

#[test]
fn a_lone_flow_meets_its_ideal_on_every_topology() {
    assert_ideal("star", STAR, "", 0, 2);
    assert_ideal("leaf-spine, across leaves", LEAF_SPINE, "", 0, 3);
    assert_ideal("leaf-spine, one leaf", LEAF_SPINE, "", 0, 1);
    assert_ideal("fat-tree, across pods", FAT_TREE, "", 0, 15);
}

/// The transport's settings the ideal follows: its own initial window and
/// growth, delayed ACKs (by packets, and by bytes with the timer holding a
/// short tail), window caps, FCT ended at the sender.
#[test]
fn a_lone_flow_meets_its_ideal_with_every_transport() {
    for extra in [
        "[transport]\ncc = \"reno\"\ninit_cwnd = 2",
        "[transport]\ncc = \"dctcp\"\ndelayed_ack = 2\ndelayed_ack_timeout = \"50us\"",
        "[transport]\ncc = \"reno\"\ndelayed_ack = 2\ndelayed_ack_bytes = true\ndelayed_ack_timeout = \"40us\"",
        "[transport]\ncc = \"ecn-star\"\nrx_window = 6\nmax_cwnd = 4",
        "fct_end = \"sender\"",
        "fct_end = \"sender\"\n[transport]\ncc = \"reno\"\ndelayed_ack = 2",
    ] {
        assert_ideal(extra, LEAF_SPINE, extra, 0, 3);
    }
}

/// pFabric's transport (IW 12, per-ACK growth, byte-counted delayed ACKs)
/// behind pFabric's switches, in the fabric its 45 us RTO was set for (a
/// 25-microsecond star's RTT exceeds it: timeouts even alone).
#[test]
fn a_lone_pfabric_flow_meets_its_ideal() {
    let net = "[topology]\npreset = \"fqcodel\"";
    let extra =
        "[switch]\nqdisc = \"pfabric\"\nbuffer = \"36KB\"\n[transport]\ncc = \"pfabric\"\nprofile = \"pfabric\"";
    assert_ideal("pfabric", net, extra, 0, 31);
}

/// Unequal rates: a slow receiver's link (1 Gbps) behind a fast sender's
/// (10 Gbps), where the flow queues behind its own packets at the switch.
/// Reno (no ECN) and a buffer that holds its whole window: nothing is lost.
#[test]
fn a_lone_flow_behind_a_slower_link_meets_its_ideal() {
    let net =
        "[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = [\"10Gbps\", \"10Gbps\", \"1Gbps\"]\nlink_delay = \"5us\"";
    assert_ideal("10 to 1 Gbps", net, "[switch]\nbuffer = \"4MB\"\n[transport]\ncc = \"reno\"", 0, 2);
}

/// A lone workload flow on a `per-pair` connection finds it open: no
/// handshake in its FCT nor in its ideal. With a connection per flow the
/// ideal is one handshake longer: SYN and SYN-ACK, each two 10 Gbps links
/// of 25 us with 40 B (32 ns) on each: 4 × 25.032 us = 100.128 us.
#[test]
fn a_per_pair_connection_starts_without_a_handshake() {
    let run = |conns: &str| {
        let toml = format!(
            "[run]\nseed = 4\n{STAR}\n[workload]\nkind = \"poisson\"\nload = 0.1\nflows = 1\n\
             distribution = \"web_search\"\nconnections = \"{conns}\"\n"
        );
        let rows = flows(&toml);
        assert_eq!(rows.len(), 1);
        let (size, fct, ideal, slowdown) = rows[0];
        assert!(size > 0 && (slowdown - 1.0).abs() < 1e-12, "{conns}: {size} B, fct {fct}, ideal {ideal}");
        ideal
    };
    let handshake = run("per-flow") - run("per-pair");
    assert!((handshake - 100.128e-6).abs() < 1e-12, "{handshake}");
}

/// Flows of one path share one replay (of the largest): lone flows of many
/// sizes, one after another far apart in time, each meet their ideal, with
/// delayed ACKs whose timer holds a tail, ended at either side.
#[test]
fn flows_that_share_a_replay_each_meet_their_ideal() {
    let sizes = [1, 700, 1460, 1461, 2920, 4381, 10_000, 14_600, 64_123, 100_000, 333_333, 1_000_000];
    for end in ["receiver", "sender"] {
        let mut toml = format!(
            "[run]\nseed = 1\nfct_end = \"{end}\"\n{LEAF_SPINE}\n[transport]\ncc = \"reno\"\ninit_cwnd = 3\n\
             delayed_ack = 2\ndelayed_ack_timeout = \"30us\"\n"
        );
        for (i, size) in sizes.iter().enumerate() {
            toml += &format!("[[flows]]\nsrc = 0\ndst = 3\nsize = \"{size}B\"\nstart = \"{}ms\"\n", 10 * i);
        }
        let rows = flows(&toml);
        assert_eq!(rows.len(), sizes.len());
        for (size, fct, ideal, slowdown) in rows {
            assert!((slowdown - 1.0).abs() < 1e-12, "{end}, {size} B: fct {fct}, ideal {ideal}");
        }
    }
}

/// With the hosts' jitter on (its default, 100 ns), a lone one-packet flow
/// on the star takes longer than its ideal by at most one jitter per frame
/// on its critical path (SYN, SYN-ACK, data: each lands at most `jitter`
/// late, and order only ever holds a frame back to its predecessor's
/// landing, itself at most `jitter` late), and by a different amount per
/// seed.
#[test]
fn the_hosts_jitter_adds_at_most_one_jitter_per_frame() {
    let mut extra = std::collections::BTreeSet::new();
    for seed in 1..=20 {
        let toml = format!("[run]\nseed = {seed}\n{STAR}\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"1460B\"\n");
        let cfg = Config::from_toml(&toml).unwrap();
        let jitter = 100_000; // ps
        assert_eq!(cfg.host.jitter.at(1500, 10_000_000_000), jitter, "the documented default");
        let (_, fct, ideal, _) = flows_of(&cfg)[0];
        let late = fct - ideal;
        assert!(late > 0.0 && late <= 3.0 * jitter as f64 * 1e-12 + 1e-15, "seed {seed}: {late} s late");
        extra.insert((late * 1e12).round() as i64);
    }
    assert!(extra.len() >= 15, "seeds should draw different jitters: {extra:?}");
}
