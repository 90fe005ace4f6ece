//! The partitioned engine's tests: thread counts, parts against the
//! sequential engine, what crosses parts, and what is refused.

use super::gather::{f64s, u32s};
use crate::config::Config;
use crate::outputs::report::Column;
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

fn fingerprint(text: &str) -> serde_json::Map<String, Value> {
    crate::golden::fingerprint(&Config::from_toml(text).unwrap()).unwrap()
}

fn summary(text: &str) -> serde_json::Map<String, Value> {
    crate::run(&Config::from_toml(text).unwrap(), &mut |_, _| true).unwrap().summary
}

/// The promise: the same outputs for every thread count, one
/// included (every table's digest and every summary number but the
/// wall clock's).
#[test]
fn every_thread_count_gives_the_same_outputs() {
    for parts in [2, 3, 4] {
        let one = fingerprint(&fat_tree(&format!("threads = 1\npartitions = {parts}")));
        for n in [2, 3, 4] {
            let other = fingerprint(&fat_tree(&format!("threads = {n}\npartitions = {parts}")));
            assert_eq!(one, other, "{parts} parts, threads = {n}");
        }
    }
}

/// Packets are conserved across the parts: every packet sent was
/// delivered, dropped or is still in the network, and every flow
/// finished; and the run is the same model as the sequential engine's:
/// its totals within a few per cent (the engines differ only in the
/// order of same-picosecond events, which reshuffles a run as a seed
/// does not quite: here 800 web-search flows at load 0.6).
#[test]
fn parts_conserve_packets_and_match_the_sequential_engine() {
    let par = summary(&fat_tree("threads = 2"));
    let seq = summary(&fat_tree(""));
    let n = |m: &serde_json::Map<String, Value>, k: &str| m[k].as_f64().unwrap();
    assert_eq!(par["partitions"], 2);
    assert_eq!(
        n(&par, "packets_sent"),
        n(&par, "packets_delivered") + n(&par, "packets_dropped") + n(&par, "packets_in_flight")
    );
    assert_eq!(n(&par, "flows_completed"), 800.0);
    assert_eq!(par["ended_by"], "finished");
    // Same flows, same sizes: delivered packets within 3% (measured:
    // equal), marks within 5% (measured: 205,519 against 205,136). Its
    // events are ~9% more: a port on a link between parts runs each
    // departure as an event of its own (see `enter_part`).
    for (key, tol) in [("packets_delivered", 0.03), ("ce_marks", 0.05)] {
        let r = n(&par, key) / n(&seq, key);
        eprintln!("{key}: {} / {}", n(&par, key), n(&seq, key));
        assert!((1.0 - tol..1.0 + tol).contains(&r), "{key}: partitioned / sequential = {r}");
    }
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
/// counting connections and blocks, the senders' parts starting rounds.
/// 1, 2 and 3 threads give the same outputs; every round completes;
/// packets are conserved; and the rounds are the sequential engine's:
/// round 1 starts at the same picosecond (the last SYN-ACK's arrival,
/// 12.67 us), and so does every round after (measured: all 30 rounds'
/// starts and finishes identical, 14.38 ms of rounds synchronised and
/// 14.61 ms spread, on 2 and 4 parts; only a same-picosecond tie between
/// parts could move one, see the module's doc).
#[test]
fn incast_rounds_cross_parts_as_messages() {
    for extra in ["", "request_gap = \"3us\"\nresponse_jitter = \"20us\"\n"] {
        let (seq, _) = rounds(&incast("", extra));
        assert_eq!(seq.len(), 30);
        for parts in [2, 4] {
            let one = fingerprint(&incast(&format!("threads = 1\npartitions = {parts}"), extra));
            for n in [2, 3] {
                let other = fingerprint(&incast(&format!("threads = {n}\npartitions = {parts}"), extra));
                assert_eq!(one, other, "{extra:?}, {parts} parts, threads = {n}");
            }
            let (par, sum) = rounds(&incast(&format!("threads = 2\npartitions = {parts}"), extra));
            let n = |k: &str| sum[k].as_f64().unwrap();
            assert_eq!(n("partitions"), parts as f64);
            assert_eq!(n("packets_sent"), n("packets_delivered") + n("packets_dropped") + n("packets_in_flight"));
            assert_eq!(n("incast_rounds_completed"), 30.0);
            assert_eq!(par, seq, "{extra:?}, {parts} parts: the rounds' (start, finish)");
        }
    }
}

/// The rounds' rows come from the receiver's part wherever it is: here
/// in pod 3 (the last part), and with the hosts apart from the switches
/// (host links 11 us against 1 us, so every host is outside part 0), as
/// many rows as rounds. With senders beside each other in pods 0-3, ties
/// between parts reorder some arrivals: the 30 rounds end 0.85% and 0.35%
/// earlier than on the sequential engine on 2 and 4 parts (13.36 and
/// 13.43 ms against 13.48 ms), at the same picosecond with hosts apart.
#[test]
fn incast_rows_come_from_the_receivers_part() {
    let senders = "[0, 1, 4, 5, 8, 9, 12, 13]";
    let long = |t: String| t.replace("link_delay = \"1us\"\n", "link_delay = \"1us\"\nhost_delay = \"10us\"\n");
    for (cut, hosts_apart) in [("partitions = 2", false), ("partitions = 4", false), ("partitions = 3", true)] {
        let text = |run: &str| {
            let t = incast_to(15, senders, run, "");
            if hosts_apart {
                long(t)
            } else {
                t
            }
        };
        let (seq, _) = rounds(&text(""));
        assert_eq!(seq.len(), 30);
        let (par, sum) = rounds(&text(&format!("threads = 2\n{cut}")));
        assert_eq!(sum["incast_rounds_completed"], 30, "{cut}");
        assert_eq!(sum["lookahead_seconds"], if hosts_apart { 11e-6 } else { 1e-6 }, "{cut}");
        assert_eq!(par.len(), 30);
        assert_eq!(par[0].0, seq[0].0, "{cut}: round 1 starts when the last connection opens");
        // Rounds end within a few per cent of the sequential engine's
        // (same-picosecond ties between parts order arrivals otherwise).
        let end = |v: &[(u64, u64)]| v[29].1 as f64;
        assert!((end(&par) / end(&seq) - 1.0).abs() < 0.03, "{cut}: {} against {}", end(&par), end(&seq));
    }
}

/// Serial chains run in their sender's part (a flow's end starts the next
/// on the same host), among 200 web-search flows: 1 and 2 threads alike;
/// every flow completes; and in both engines each flow of the fixed chain
/// starts 50 us (its pause) plus its predecessor's last ACK's way back
/// (~6 us) after that predecessor's last byte arrived (measured: 56.2-57.8
/// us; Tuning ECN §5.2's serial flows). The exponential chain draws its
/// pauses from its part's own stream, so its starts differ from the
/// sequential engine's (measured: from the second flow on).
#[test]
fn serial_chains_run_in_their_senders_parts() {
    let chains = "[[flows]]\nsrc = 0\ndst = 12\nsize = \"200KB\"\ncount = 6\nserial = true\nserial_gap = \"50us\"\n\
                  [[flows]]\nsrc = 9\ndst = 2\nsize = \"100KB\"\ncount = 8\nserial = true\nserial_gap = \"30us\"\n\
                  serial_gap_kind = \"exponential\"\n";
    let text = |run: &str| {
        fat_tree(run).replace("flows = 800", "flows = 200").replace("[topology]", &format!("{chains}[topology]"))
    };
    let one = fingerprint(&text("threads = 1\npartitions = 2"));
    assert_eq!(one, fingerprint(&text("threads = 2\npartitions = 2")));
    let chained = |run: &str| {
        let r = crate::run(&Config::from_toml(&text(run)).unwrap(), &mut |_, _| true).unwrap();
        assert_eq!(r.summary["flows_completed"], 214, "{run}");
        let t = r.table("flows").expect("a flows table");
        let (start, fct) = (f64s(t, "start"), f64s(t, "fct"));
        // After each flow of a chain: when the next starts, from its last byte.
        let after = |from: usize, to: usize| (from..to).map(|i| start[i + 1] - start[i] - fct[i]).collect::<Vec<_>>();
        (after(0, 5), after(6, 13), start[6..14].to_vec())
    };
    let (par, seq) = (chained("threads = 2\npartitions = 2"), chained(""));
    for gap in par.0.iter().chain(&seq.0) {
        assert!((50e-6..60e-6).contains(gap), "fixed chain: the next flow {gap} s after the last byte");
    }
    assert!(par.1.iter().chain(&seq.1).all(|&g| g > 0.0), "exponential chain: {:?} {:?}", par.1, seq.1);
    assert_eq!(par.2[0], seq.2[0]);
    assert_ne!(par.2[1], seq.2[1], "the part's own stream of pauses");
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
/// the same trace rows and capture bytes at 1 and 2 threads, and as
/// many traced events and captured packets as the sequential engine
/// records, within a few per cent (measured: the same, 18,580 traced
/// events and 3,810, 6,459 and 86 packets captured: in 5 ms no
/// same-picosecond tie between parts touched these ports).
#[test]
fn traces_and_captures_come_from_their_ports_parts() {
    // Ports of two pods (parts 0 and 1 of 2) and a core's.
    let ports = "[\"edge0:host0\", \"edge2:host4\", \"core0:agg0\"]";
    let run = format!("duration = \"5ms\"\npcap = {ports}\ntrace_ports = {ports}\ntrace_from = \"1ms\"");
    let report = |extra: &str| {
        crate::run(&Config::from_toml(&fat_tree(&format!("{extra}\n{run}"))).unwrap(), &mut |_, _| true).unwrap()
    };
    let (one, two, seq) = (report("threads = 1"), report("threads = 2"), report(""));
    let trace = |r: &crate::outputs::report::Report| {
        let t = r.table("trace").expect("a trace table");
        let Some(Column::I64(c)) = t.column("event") else { panic!("trace.event is a column of i64") };
        let (a, b) = (f64s(t, "time"), u32s(t, "port"));
        (0..a.len()).map(|i| (a[i].to_bits(), b[i], c[i])).collect::<Vec<_>>()
    };
    assert_eq!(trace(&one), trace(&two));
    assert_eq!(one.captures, two.captures);
    assert_eq!(one.summary["pcap_packets"], two.summary["pcap_packets"]);
    let names: Vec<&String> = one.captures.iter().map(|c| &c.0).collect();
    assert_eq!(names, seq.captures.iter().map(|c| &c.0).collect::<Vec<_>>());
    let (tp, ts) = (trace(&one).len() as f64, trace(&seq).len() as f64);
    assert!(ts > 1000.0 && (tp / ts - 1.0).abs() < 0.05, "traced events partitioned {tp}, sequential {ts}");
    for (name, _) in &seq.captures {
        let (p, s) =
            (one.summary["pcap_packets"][name].as_f64().unwrap(), seq.summary["pcap_packets"][name].as_f64().unwrap());
        assert!(s > 50.0 && (p / s - 1.0).abs() < 0.05, "{name}: captured {p} partitioned, {s} sequential");
    }
}

/// Pings (each stream's rows recorded in its sender's part): the same
/// rows at 1 and 2 threads, as many round trips as the sequential
/// engine's, at the same send times, their mean within a few per cent
/// (measured: 20.96 µs against 20.97 µs).
#[test]
fn pings_cross_parts_and_their_rows_are_merged() {
    let pings = "duration = \"20ms\"\n[[ping]]\nsrc = 0\ndst = 15\ninterval = \"100us\"\n\
                 [[ping]]\nsrc = 12\ndst = 1\ninterval = \"70us\"\nstart = \"5us\"\n\
                 [[ping]]\nsrc = 2\ndst = 3\ninterval = \"100us\"\n";
    let rows = |threads: &str| {
        let text = fat_tree(threads).replace("[topology]", &format!("{pings}[topology]"));
        let r = crate::run(&Config::from_toml(&text).unwrap(), &mut |_, _| true).unwrap();
        let t = r.table("rtt").expect("an rtt table");
        let (a, b, c) = (f64s(t, "time"), u32s(t, "src"), f64s(t, "rtt"));
        (0..a.len()).map(|i| (a[i].to_bits(), b[i], c[i])).collect::<Vec<_>>()
    };
    let (one, two, seq) = (rows("threads = 1\npartitions = 4"), rows("threads = 2\npartitions = 4"), rows(""));
    assert_eq!(one, two);
    // 200 + 286 + 200 probes sent in 20 ms; those still out at the end
    // have no row.
    assert!(seq.len() > 650 && seq.len() <= 686, "{}", seq.len());
    let sent = |v: &[(u64, u32, f64)]| {
        let mut k: Vec<(u64, u32)> = v.iter().map(|r| (r.0, r.1)).collect();
        k.sort();
        k
    };
    assert_eq!(sent(&one), sent(&seq));
    let mean = |v: &[(u64, u32, f64)]| v.iter().map(|r| r.2).sum::<f64>() / v.len() as f64;
    let (p, s) = (mean(&one), mean(&seq));
    assert!((p / s - 1.0).abs() < 0.05, "mean RTT partitioned {p}, sequential {s}");
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
/// live in each sender's part: the same outputs on 1, 2 and 3 threads,
/// packets conserved, every flow done, and the same model as the
/// sequential engine (each part numbers its own connections, so flows
/// take other, equally random, ECMP paths: totals within a few per
/// cent). `check_path_keys` runs in each.
#[test]
fn per_pair_connections_run_in_their_senders_parts() {
    let text = |run: &str| fat_tree(run).replace("flows = 800", "flows = 800\nconnections = \"per-pair\"");
    let one = fingerprint(&text("threads = 1\npartitions = 3"));
    for n in [2, 3] {
        assert_eq!(one, fingerprint(&text(&format!("threads = {n}\npartitions = 3"))), "threads = {n}");
    }
    let par = summary(&text("threads = 2"));
    let seq = summary(&text(""));
    let n = |m: &serde_json::Map<String, Value>, k: &str| m[k].as_f64().unwrap();
    assert_eq!(
        n(&par, "packets_sent"),
        n(&par, "packets_delivered") + n(&par, "packets_in_flight") + n(&par, "packets_dropped")
    );
    assert_eq!(n(&par, "flows_completed"), 800.0);
    for (key, tol) in [("packets_delivered", 0.03), ("connections_opened", 0.1), ("ce_marks", 0.1)] {
        let r = n(&par, key) / n(&seq, key);
        eprintln!("{key}: {} / {}", n(&par, key), n(&seq, key));
        assert!((1.0 - tol..1.0 + tol).contains(&r), "{key}: partitioned / sequential = {r}");
    }
}

/// Three SACK blocks across parts (the linux profile; an aggressive
/// CoDel drops ACKs too): the blocks cross with their ACKs (the slab
/// check above runs in each run; about 3,600 ACKs with blocks cross
/// parts in each, when written), and 1 and 2 threads give the same
/// outputs.
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
    let one = fingerprint(&text("threads = 1"));
    assert_eq!(one, fingerprint(&text("threads = 2")));
    let s = summary(&text("threads = 2"));
    assert!(s["packets_dropped"].as_u64().unwrap() > 1000, "{}", s["packets_dropped"]);
}

/// (time, port, queue, packets) of every queue sample of a run.
fn samples(text: &str) -> Vec<(u64, u32, u32, u32)> {
    let r = crate::run(&Config::from_toml(text).unwrap(), &mut |_, _| true).unwrap();
    let t = r.table("queues").expect("a queues table");
    let (a, b, c, d) = (f64s(t, "time"), u32s(t, "port"), u32s(t, "queue"), u32s(t, "packets"));
    (0..a.len()).map(|i| (a[i].to_bits(), b[i], c[i], d[i])).collect()
}

/// Queue samples: each part samples its own ports, and the rows come
/// out in the sequential engine's order (time, then port, then queue):
/// the same rows at 1 and 2 threads, the same (time, port, queue) keys
/// as the sequential engine's, and occupancies close to its (the runs
/// differ only in same-picosecond ties between parts; measured: a mean
/// of 2.00 packets against 2.02).
#[test]
fn every_part_samples_its_own_ports_in_the_sequential_order() {
    let run = "sample_ports = \"all\"\nsample_interval = \"50us\"\nduration = \"20ms\"";
    let one = samples(&fat_tree(&format!("threads = 1\npartitions = 3\n{run}")));
    let two = samples(&fat_tree(&format!("threads = 2\npartitions = 3\n{run}")));
    let seq = samples(&fat_tree(run));
    assert_eq!(one, two);
    // 20 switches of 4 ports, one queue each, every 50 us from 0 to 20 ms.
    assert_eq!(seq.len(), 80 * 401);
    let keys = |v: &[(u64, u32, u32, u32)]| v.iter().map(|r| (r.0, r.1, r.2)).collect::<Vec<_>>();
    assert_eq!(keys(&one), keys(&seq));
    let mean = |v: &[(u64, u32, u32, u32)]| v.iter().map(|r| r.3 as f64).sum::<f64>() / v.len() as f64;
    let (p, s) = (mean(&one), mean(&seq));
    assert!(s > 1.0, "queues too short to compare: {s}");
    assert!((p / s - 1.0).abs() < 0.1, "mean queue partitioned {p}, sequential {s}");
}
