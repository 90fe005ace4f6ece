//! The partitioned engine's tests: every run the same as the sequential
//! engine's, whatever the threads and parts; what crosses parts; what is
//! refused.

use super::gather::{f64s, u32s};
use crate::config::Config;
use serde_json::Value;

fn fat_tree(extra: &str) -> String {
    format!(
        "[run]\nseed = 3\n{extra}\n[topology]\nkind = \"fat-tree\"\nk = 4\n\
         link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         [switch]\nbuffer = \"150KB\"\nmarking = \"per-queue\"\nthreshold = \"20pkt\"\n\
         [transport]\ncc = \"dctcp\"\n\
         [workload]\nkind = \"poisson\"\nload = 0.6\nflows = 800\ndistribution = \"web_search\"\n"
    )
}

fn summary(text: &str) -> serde_json::Map<String, Value> {
    crate::run(&Config::from_toml(text).unwrap(), &mut |_, _| true).unwrap().summary
}

/// The `[run]` lines of every engine a test compares: the sequential one,
/// then the partitioned one on 1 thread with 2 parts, on 2 and 4 threads
/// (one part each), and on 2 threads with 4 parts.
const ENGINES: [&str; 5] =
    ["", "threads = 1\npartitions = 2", "threads = 2", "threads = 4", "threads = 2\npartitions = 4"];

/// The promise: `text(run)` gives the same outputs, every table
/// and every summary key but the engine's own (`golden::ENGINE_KEYS`), on
/// every engine of `ENGINES`. Returns the sequential engine's summary.
fn same_on_every_engine(text: &dyn Fn(&str) -> String) -> serde_json::Map<String, Value> {
    let prints = |run: &str| crate::golden::outputs_fingerprint(&Config::from_toml(&text(run)).unwrap()).unwrap();
    let seq = prints(ENGINES[0]);
    for run in &ENGINES[1..] {
        let par = prints(run);
        let differ: Vec<_> = seq.keys().filter(|k| seq.get(*k) != par.get(*k)).collect();
        assert!(differ.is_empty(), "{run:?}: {differ:?} differ from the sequential engine's");
    }
    summary(&text(""))
}

/// Packets are conserved and every flow finishes, on the sequential
/// engine and, identically, on every partitioned one: 800 web-search flows
/// at load 0.6 on a k = 4 fat-tree (`World::run`: the run stops at the
/// end of its last finish's grid window on either).
#[test]
fn every_engine_gives_the_same_outputs() {
    let s = same_on_every_engine(&|run| fat_tree(run));
    let n = |k: &str| s[k].as_f64().unwrap();
    assert_eq!(n("packets_sent"), n("packets_delivered") + n("packets_dropped") + n("packets_in_flight"));
    assert_eq!(n("flows_completed"), 800.0);
    assert_eq!(s["ended_by"], "finished");
    let par = summary(&fat_tree("threads = 2\npartitions = 4"));
    assert_eq!((par["partitions"].as_u64(), par["partition_cut"].as_str()), (Some(4), Some("pods")));
}

/// An incast group on the fat-tree, its receiver in pod 0 and senders in
/// every pod (one beside it): `extra` goes in `[[incast]]`.
fn incast(run: &str, extra: &str) -> String {
    incast_to(0, "[1, 4, 5, 8, 9, 12, 13, 14]", run, extra)
}

fn incast_to(receiver: u32, senders: &str, run: &str, extra: &str) -> String {
    format!(
        "[run]\nseed = 5\nduration = \"40ms\"\n{run}\n[topology]\nkind = \"fat-tree\"\nk = 4\n\
         link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         [switch]\nbuffer = \"100KB\"\nmarking = \"per-queue\"\nthreshold = \"20pkt\"\n\
         [transport]\ncc = \"dctcp\"\nmin_rto = \"1ms\"\n\
         [[incast]]\nreceiver = {receiver}\nsenders = {senders}\nblock = \"64KB\"\nrounds = 30\n{extra}\n"
    )
}

/// Each round: (start, finish) in picoseconds, from the incast table.
fn rounds(text: &str) -> (Vec<(u64, u64)>, serde_json::Map<String, Value>) {
    let r = crate::run(&Config::from_toml(text).unwrap(), &mut |_, _| true).unwrap();
    let t = r.table("incast").expect("an incast table");
    let (a, b) = (f64s(t, "start"), f64s(t, "finish"));
    let ps = |x: f64| (x * 1e12).round() as u64;
    ((0..a.len()).map(|i| (ps(a[i]), ps(b[i]))).collect(), r.summary)
}

/// Incast rounds across parts (`signals.rs`): synchronised and spread
/// (a request gap and seeded response jitter), the receiver's part
/// counting connections and blocks, the senders' parts starting rounds:
/// the same outputs on every engine, all 30 rounds complete and packets
/// conserved.
#[test]
fn incast_rounds_cross_parts_as_messages() {
    for extra in ["", "request_gap = \"3us\"\nresponse_jitter = \"20us\"\n"] {
        let sum = same_on_every_engine(&|run| incast(run, extra));
        let n = |k: &str| sum[k].as_f64().unwrap();
        assert_eq!(n("packets_sent"), n("packets_delivered") + n("packets_dropped") + n("packets_in_flight"));
        assert_eq!(n("incast_rounds_completed"), 30.0);
        let (seq, _) = rounds(&incast("", extra));
        assert_eq!(seq.len(), 30);
    }
}

/// The rounds' rows come from the receiver's part wherever it is: here
/// in pod 3 (the last part), senders beside each other in every pod, and
/// with the hosts apart from the switches (host links 11 us against 1 us,
/// so every host is outside part 0): the same outputs on every engine.
/// (Before one tie order served both engines, same-picosecond ties between
/// parts moved these 30 rounds' end by 0.35-0.85%.)
#[test]
fn incast_rows_come_from_the_receivers_part() {
    let senders = "[0, 1, 4, 5, 8, 9, 12, 13]";
    let long = |t: String| t.replace("link_delay = \"1us\"\n", "link_delay = \"1us\"\nhost_delay = \"10us\"\n");
    for hosts_apart in [false, true] {
        let text = |run: &str| {
            let t = incast_to(15, senders, run, "");
            if hosts_apart {
                long(t)
            } else {
                t
            }
        };
        let sum = same_on_every_engine(&text);
        assert_eq!(sum["incast_rounds_completed"], 30);
        let par = summary(&text("threads = 2"));
        assert_eq!(par["lookahead_seconds"], if hosts_apart { 11e-6 } else { 1e-6 });
    }
}

/// Serial chains run in their sender's part (a flow's end starts the next
/// on the same host), among 200 web-search flows: the same outputs on
/// every engine (an exponential pause is drawn from the finished flow's
/// own stream), every flow completes, and each flow of the fixed chain
/// starts 50 us (its pause) plus its predecessor's last ACK's way back
/// (~6 us) after that predecessor's last byte arrived (measured: 56.2-57.8
/// us; Tuning ECN §5.2's serial flows).
#[test]
fn serial_chains_run_in_their_senders_parts() {
    let chains = "[[flows]]\nsrc = 0\ndst = 12\nsize = \"200KB\"\ncount = 6\nserial = true\nserial_gap = \"50us\"\n\
                  [[flows]]\nsrc = 9\ndst = 2\nsize = \"100KB\"\ncount = 8\nserial = true\nserial_gap = \"30us\"\n\
                  serial_gap_kind = \"exponential\"\n";
    let text = |run: &str| {
        fat_tree(run).replace("flows = 800", "flows = 200").replace("[topology]", &format!("{chains}[topology]"))
    };
    let sum = same_on_every_engine(&text);
    assert_eq!(sum["flows_completed"], 214);
    let r = crate::run(&Config::from_toml(&text("")).unwrap(), &mut |_, _| true).unwrap();
    let t = r.table("flows").expect("a flows table");
    let (start, fct) = (f64s(t, "start"), f64s(t, "fct"));
    // After each flow of a chain: when the next starts, from its last byte.
    let after = |from: usize, to: usize| (from..to).map(|i| start[i + 1] - start[i] - fct[i]).collect::<Vec<_>>();
    for gap in after(0, 5) {
        assert!((50e-6..60e-6).contains(&gap), "fixed chain: the next flow {gap} s after the last byte");
    }
    let exp = after(6, 13);
    assert!(exp.iter().all(|&g| g > 0.0), "exponential chain: {exp:?}");
    assert!(exp.windows(2).any(|w| (w[0] - w[1]).abs() > 1e-6), "exponential pauses all alike: {exp:?}");
}

/// Nothing else couples parts at once; what the partitioned engine
/// refuses is an incast group whose requests could land inside the
/// window that sent them: a sender nearer the receiver than the
/// lookahead while another runs in another part. No fat-tree or
/// leaf-spine has one (a path within a part crosses two host links, one
/// across parts a link between parts), so the check is shown on a
/// lookahead stretched past every path.
#[test]
fn an_incast_sender_nearer_than_the_lookahead_is_refused_by_name() {
    let cfg = Config::from_toml(&incast("threads = 2", "")).unwrap();
    let mut collect = crate::outputs::output::Collect::default();
    let w = super::World::new_until(&cfg, &mut collect, &mut || true).unwrap().unwrap();
    let mut parts = super::Partitioning::new(&cfg, &w.fabric.net).unwrap();
    assert!(super::check(&cfg, &w, &parts).is_ok());
    parts.lookahead = 1_000_000_000; // 1 ms
    let msg = super::check(&cfg, &w, &parts).unwrap_err().to_string();
    assert!(msg.contains("incast[0]") && msg.contains("1ms") && msg.contains("run.threads = 0"), "{msg}");
}

/// Traces and captures name ports, each recorded in its port's part:
/// two edge ports and a core's of a k = 4 fat-tree for 5 ms, the same
/// trace rows and capture bytes on every engine.
#[test]
fn traces_and_captures_come_from_their_ports_parts() {
    let ports = "[\"edge0:host0\", \"edge2:host4\", \"core0:agg0\"]";
    let run = format!("duration = \"5ms\"\npcap = {ports}\ntrace_ports = {ports}\ntrace_from = \"1ms\"");
    let sum = same_on_every_engine(&|extra| fat_tree(&format!("{extra}\n{run}")));
    for name in ["edge0:host0", "edge2:host4", "core0:agg0"] {
        assert!(sum["pcap_packets"][name].as_u64().unwrap() > 50, "{name}: {}", sum["pcap_packets"]);
    }
}

/// Pings (each stream's rows recorded in its sender's part): the same
/// rows on every engine, every probe sent in 20 ms answered but those
/// still out at the end.
#[test]
fn pings_cross_parts_and_their_rows_are_merged() {
    let pings = "duration = \"20ms\"\n[[ping]]\nsrc = 0\ndst = 15\ninterval = \"100us\"\n\
                 [[ping]]\nsrc = 12\ndst = 1\ninterval = \"70us\"\nstart = \"5us\"\n\
                 [[ping]]\nsrc = 2\ndst = 3\ninterval = \"100us\"\n";
    let text = |run: &str| fat_tree(run).replace("[topology]", &format!("{pings}[topology]"));
    same_on_every_engine(&text);
    let r = crate::run(&Config::from_toml(&text("")).unwrap(), &mut |_, _| true).unwrap();
    // 200 + 286 + 200 probes sent in 20 ms; those still out have no row.
    let rows = r.table("rtt").expect("an rtt table").columns[0].1.len();
    assert!(rows > 650 && rows <= 686, "{rows}");
}

/// In every partitioned test run: each part's slab of further SACK
/// blocks holds exactly its ACKs in flight that carry some (crossings
/// move them between parts' slabs; none is pending between windows).
pub(super) fn check_sack_slabs(worlds: &[super::World]) {
    for (i, w) in worlds.iter().enumerate() {
        if let Some(sb) = &w.hosts.sack_blocks {
            let live = w.arena.live_packets();
            let acks = live.iter().filter(|p| p.sack_slot().is_some()).count();
            assert_eq!(sb.kept(), acks, "part {i}: slab entries and ACKs with blocks");
        }
    }
}

/// Per-pair connections: every flow whose data reached its receiver's
/// part has that part hash its ACKs on the key its sender's part gave
/// it (its connection's id), not on a key of its own.
pub(super) fn check_path_keys(worlds: &[super::World], parts: &super::Partitioning) {
    let Some(c0) = &worlds[0].apps.conns else { return };
    for (f, flow) in worlds[0].apps.flows.iter().enumerate() {
        let (s, d) = (parts.of_node[flow.src as usize] as usize, parts.of_node[flow.dst as usize] as usize);
        let (tx, rx) = (&worlds[s].apps, &worlds[d].apps);
        if !c0.covers(f as u32) || rx.flows[f].rx.rcv_nxt == 0 {
            continue;
        }
        let key = |a: &super::super::apps::Apps| a.conns.as_ref().expect("every part has them").path_key(f as u32);
        assert_eq!(key(rx), key(tx), "flow {f}: receiver's part {d} and sender's part {s} hash it apart");
    }
}

/// Per-pair connections (the MQ-ECN authors' persistent connections)
/// live in each sender's part, numbered within their pair: the same
/// outputs on every engine, packets conserved, every flow done.
/// `check_path_keys` runs in each partitioned run.
#[test]
fn per_pair_connections_run_in_their_senders_parts() {
    let text = |run: &str| fat_tree(run).replace("flows = 800", "flows = 800\nconnections = \"per-pair\"");
    let s = same_on_every_engine(&text);
    let n = |k: &str| s[k].as_f64().unwrap();
    assert_eq!(n("packets_sent"), n("packets_delivered") + n("packets_in_flight") + n("packets_dropped"));
    assert_eq!(n("flows_completed"), 800.0);
    assert!(n("connections_opened") > 200.0, "{}", n("connections_opened"));
}

/// Three SACK blocks across parts (the linux profile; an aggressive
/// CoDel drops ACKs too): the blocks cross with their ACKs (the slab
/// check above runs in each partitioned run), the same outputs on every
/// engine.
#[test]
fn sack_blocks_cross_parts_with_their_acks() {
    let codel =
        "[switch]\nbuffer = \"150KB\"\nmarking = \"codel\"\ncodel_target = \"2us\"\ncodel_interval = \"50us\"\n\
                 [transport]\nprofile = \"linux\"\nmin_rto = \"5ms\"\n[workload]";
    let text = |threads: &str| {
        let t = fat_tree(&format!("{threads}\nduration = \"20ms\""));
        let a = t.find("[switch]").unwrap();
        let b = t.find("[workload]").unwrap();
        format!("{}{codel}{}", &t[..a], &t[b + "[workload]".len()..])
    };
    let s = same_on_every_engine(&text);
    assert!(s["packets_dropped"].as_u64().unwrap() > 1000, "{}", s["packets_dropped"]);
}

/// Queue samples: each part samples its own ports, and the rows come out
/// in the sequential engine's order (time, then port, then queue), the
/// same rows on every engine: 20 switches of 4 ports, one queue each,
/// every 50 us from 0 to 20 ms.
#[test]
fn every_part_samples_its_own_ports_in_the_sequential_order() {
    let run = "sample_ports = \"all\"\nsample_interval = \"50us\"\nduration = \"20ms\"";
    same_on_every_engine(&|extra| fat_tree(&format!("{extra}\n{run}")));
    let r = crate::run(&Config::from_toml(&fat_tree(run)).unwrap(), &mut |_, _| true).unwrap();
    let t = r.table("queues").expect("a queues table");
    assert_eq!(u32s(t, "port").len(), 80 * 401);
    let mean = u32s(t, "packets").iter().map(|&p| p as f64).sum::<f64>() / (80.0 * 401.0);
    assert!(mean > 1.0, "queues too short to show anything: {mean}");
}
