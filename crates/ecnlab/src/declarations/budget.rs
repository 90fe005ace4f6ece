//! The resource guard. Before anything is built, estimate what a run will
//! write (queue samples, goodput bins, RTT samples, pcap records) and hold
//! (flows, ports and routes), and refuse it with one line naming the keys
//! responsible when the total exceeds `run.max_output`. Outputs stream to
//! their files (`output.rs`), so a long run no longer runs out of memory,
//! but a mistyped interval or duration would still fill a disk or run for
//! days: better said in a second than found out after an hour.
//!
//! Sizes are the bytes of the rows as the engine hands them over (the
//! Parquet files compress them, often tenfold), or the bytes the state
//! takes in memory. A run without a duration lasts, by this estimate,
//! until its last flow has arrived and been sent at its host's line rate.

use crate::config::{Config, ConfigError, FlowSize, OneOrList, TopologyKind};
use crate::units::{fmt_duration, secs, Time, MAX_TIME, PS_PER_S};

/// Bytes of one row as handed over: time, port, queue, bytes, packets.
const QUEUE_ROW: f64 = 8.0 + 4.0 + 4.0 + 8.0 + 4.0;
/// A trace row: time, port, queue, event, bytes, packets.
const TRACE_ROW: f64 = 8.0 + 4.0 + 4.0 + 8.0 + 8.0 + 4.0;
/// A window row: time, flow, cwnd, ssthresh.
const CWND_ROW: f64 = 8.0 + 4.0 + 8.0 + 8.0;
/// time, service, gbps.
const GOODPUT_ROW: f64 = 8.0 + 4.0 + 8.0;
/// time, src, dst, service, rtt.
const RTT_ROW: f64 = 8.0 + 4.0 * 3.0 + 8.0;
/// A flow's state, its arrival and its row in the flows table.
const FLOW_BYTES: f64 = 600.0;

/// One thing the run writes or holds.
struct Part {
    bytes: f64,
    /// "key: what, how much" — the start of the error line.
    what: String,
    /// What to change.
    advice: &'static str,
}

/// Refuse a run whose estimated outputs and state exceed `run.max_output`.
pub fn check(cfg: &Config) -> Result<(), ConfigError> {
    let parts = estimate(cfg)?;
    let total: f64 = parts.iter().map(|p| p.bytes).sum();
    let budget = cfg.run.max_output.0;
    if total <= budget as f64 {
        return Ok(());
    }
    let worst = parts.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes)).expect("over budget, so not empty");
    let all = if worst.bytes > budget as f64 { String::new() } else { format!("; {} in all", size(total)) };
    Err(ConfigError(format!(
        "{} ({}{all}, over run.max_output = {}); {}, or raise run.max_output",
        worst.what,
        size(worst.bytes),
        size(budget as f64),
        worst.advice
    )))
}

/// How long the run will last, and what decides it (for messages).
fn horizon(cfg: &Config) -> Result<(Time, String), ConfigError> {
    let duration = cfg.run.duration.map(|d| (d.0, format!("run.duration = {}", fmt_duration(d.0))));
    let open_ended =
        cfg.flows.iter().any(|f| f.size == FlowSize::Infinite) || !cfg.ping.is_empty() || !cfg.incast.is_empty();
    let sized = cfg.flows.iter().any(|f| f.size != FlowSize::Infinite) || cfg.workload.is_some();
    if open_ended || !sized {
        return Ok(duration.expect("validated: a run that cannot end by itself has a duration"));
    }
    // Finite traffic: the last flow to arrive, sent at its host's rate.
    let t = &cfg.topology;
    let mut end = 0.0f64;
    let mut why = String::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        if let FlowSize::Bytes(b) = f.size {
            let s = secs(f.start.0) + f.count as f64 * b as f64 * 8.0 / t.host_rate(f.src) as f64;
            if s > end {
                (end, why) = (s, format!("flows[{i}]"));
            }
        }
    }
    if let Some(w) = &cfg.workload {
        let rates: Vec<u64> = (0..cfg.hosts()).map(|h| t.host_rate(h)).collect();
        let span = crate::traffic::workload::arrival_span(w, &rates, cfg.transport.mss, cfg.transport.header)
            .map_err(|m| ConfigError(format!("workload: {m}")))?;
        let s = secs(w.start.0) + span;
        if s > end {
            (end, why) = (s, format!("workload.flows = {}", w.flows));
        }
    }
    let end_ps = end * PS_PER_S as f64;
    match duration {
        Some((d, text)) if (d as f64) <= end_ps => Ok((d, text)),
        None if end_ps > MAX_TIME as f64 => Err(ConfigError(format!(
            "run.duration: missing, and {why} would keep the run going for about {}, beyond the 1000000s \
             ecnlab counts; give run.duration as a cap",
            fmt_secs(end)
        ))),
        _ => Ok((end_ps as Time, format!("about {} (the run ends with {why})", fmt_secs(end)))),
    }
}

/// Switch ports (host-facing, fabric), switches, and switches with hosts
/// (the route table's columns) of the topology.
fn shape(cfg: &Config) -> (f64, f64, f64, f64) {
    let t = &cfg.topology;
    let hosts = cfg.hosts() as f64;
    match t.kind.expect("resolved") {
        TopologyKind::Star => (hosts, 0.0, 1.0, 1.0),
        TopologyKind::LeafSpine => {
            let (l, s) = (t.leaves.unwrap_or(0) as f64, t.spines.unwrap_or(0) as f64);
            (hosts, 2.0 * l * s, l + s, l)
        }
        TopologyKind::FatTree => {
            let k = t.k.unwrap_or(0) as f64;
            (hosts, hosts * 4.0, 1.25 * k * k, k * k / 2.0)
        }
        TopologyKind::Ring => {
            let n = t.switches.unwrap_or(0) as f64;
            (hosts, 2.0 * n, n, n)
        }
        TopologyKind::Graph => {
            let h = t.hosts.unwrap_or(0);
            let links = t.links.as_ref().map_or(&[][..], |l| &l.list[..]);
            let fabric = links.iter().filter(|l| l.a >= h && l.b >= h).count() as f64;
            let mut edge: Vec<u32> = links.iter().filter(|l| l.a < h || l.b < h).map(|l| l.a.max(l.b)).collect();
            edge.sort_unstable();
            edge.dedup();
            (hosts, 2.0 * fabric, t.switches.unwrap_or(0) as f64, edge.len() as f64)
        }
    }
}

fn estimate(cfg: &Config) -> Result<Vec<Part>, ConfigError> {
    let (t_end, over) = horizon(cfg)?;
    let r = &cfg.run;
    let queues = cfg.switch.queues as f64;
    let (host_ports, fabric_ports, switches, leaves) = shape(cfg);
    let switch_ports = host_ports + fabric_ports;
    let hosts = cfg.hosts() as f64;
    let mut parts = Vec::new();

    let sampled = match &r.sample_ports {
        OneOrList::All(s) if s == "all" => switch_ports,
        OneOrList::All(s) if s == "auto" && switch_ports <= 64.0 => switch_ports,
        OneOrList::All(s) if s == "hosts" => host_ports,
        OneOrList::All(_) => 0.0,
        OneOrList::List(l) => l.len() as f64,
    };
    if sampled > 0.0 {
        let samples = (t_end / r.sample_interval.0) as f64 + 1.0;
        parts.push(Part {
            bytes: samples * sampled * queues * QUEUE_ROW,
            what: format!(
                "run.sample_interval: {} over {over} samples {} times on {} ports of {} queues",
                fmt_duration(r.sample_interval.0),
                count(samples),
                count(sampled),
                count(queues)
            ),
            advice: "use a coarser run.sample_interval, a shorter run or fewer run.sample_ports",
        });
    }

    let traced = match &r.trace_ports {
        OneOrList::All(_) => 1.0,
        OneOrList::List(l) => l.len() as f64,
    };
    if traced > 0.0 {
        // Two rows (in, out) per packet: the fastest port's line rate of
        // full packets and as many small ones (ACKs) besides, as for pcap.
        let t = &cfg.topology;
        let rate = (0..cfg.hosts()).map(|h| t.host_rate(h)).max().unwrap_or(0).max(t.fabric_rate());
        let from = r.trace_from.map(|d| d.0).unwrap_or(r.warmup.0);
        let to = r.trace_to.map(|d| d.0).unwrap_or(t_end).min(t_end);
        let packets = secs(to.saturating_sub(from)) * rate as f64 / (8.0 * cfg.transport.packet_bytes() as f64);
        parts.push(Part {
            bytes: 2.0 * 2.0 * packets * traced * TRACE_ROW,
            what: format!(
                "run.trace_ports: {} ports traced over {}",
                count(traced),
                fmt_secs(secs(to.saturating_sub(from)))
            ),
            advice: "trace a shorter window (run.trace_from, run.trace_to) or fewer ports",
        });
    }

    let windows = r.trace_cwnd.len() as f64;
    if windows > 0.0 {
        // At most a row per ACK: one a full packet at the fastest host
        // link's rate, over the trace window.
        let t = &cfg.topology;
        let rate = (0..cfg.hosts()).map(|h| t.host_rate(h)).max().unwrap_or(0);
        let from = r.trace_from.map(|d| d.0).unwrap_or(r.warmup.0);
        let to = r.trace_to.map(|d| d.0).unwrap_or(t_end).min(t_end);
        let acks = secs(to.saturating_sub(from)) * rate as f64 / (8.0 * cfg.transport.packet_bytes() as f64);
        parts.push(Part {
            bytes: acks * windows * CWND_ROW,
            what: format!(
                "run.trace_cwnd: {} flows' windows over {}",
                count(windows),
                fmt_secs(secs(to.saturating_sub(from)))
            ),
            advice: "trace a shorter window (run.trace_from, run.trace_to) or fewer flows",
        });
    }

    let mut services: Vec<u32> = cfg.flows.iter().map(|f| f.service).collect();
    services.extend(cfg.incast.iter().map(|c| c.service));
    services.extend(cfg.workload.iter().flat_map(|w| 0..w.services));
    services.sort_unstable();
    services.dedup();
    let bins = t_end.div_ceil(r.goodput_interval.0) as f64;
    parts.push(Part {
        bytes: bins * services.len() as f64 * GOODPUT_ROW,
        what: format!(
            "run.goodput_interval: {} over {over} makes {} bins for {} services",
            fmt_duration(r.goodput_interval.0),
            count(bins),
            services.len()
        ),
        advice: "use a coarser run.goodput_interval or a shorter run",
    });

    for (i, p) in cfg.ping.iter().enumerate() {
        let probes = (t_end.saturating_sub(p.start.0) / p.interval.0) as f64;
        parts.push(Part {
            bytes: probes * RTT_ROW,
            what: format!(
                "ping[{i}].interval: {} over {over} sends {} probes",
                fmt_duration(p.interval.0),
                count(probes)
            ),
            advice: "use a longer ping interval",
        });
    }

    // Flows, named by their largest source.
    let mut flows = 0.0;
    let mut biggest = (0.0, String::new());
    let mut add = |n: f64, key: String| {
        flows += n;
        if n > biggest.0 {
            biggest = (n, key);
        }
    };
    for (i, f) in cfg.flows.iter().enumerate() {
        add(f.count as f64, format!("flows[{i}].count = {}", f.count));
    }
    for (i, c) in cfg.incast.iter().enumerate() {
        let n = cfg.incast_senders(c).len();
        add(n as f64, format!("incast[{i}].senders = {n}"));
    }
    if let Some(w) = &cfg.workload {
        // The extra one-packet and rate-limited flows count too.
        let rates: Vec<u64> = (0..cfg.hosts()).map(|h| cfg.topology.host_rate(h)).collect();
        let n = crate::traffic::workload::flow_count(w, &rates, cfg.transport.mss, cfg.transport.header)
            .map_err(|m| ConfigError(format!("workload: {m}")))?;
        let key = if n > w.flows as f64 {
            format!("workload.flows = {} with its extra one-packet and rate-limited flows", w.flows)
        } else {
            format!("workload.flows = {}", w.flows)
        };
        add(n, key);
    }
    if flows > 0.0 {
        parts.push(Part {
            bytes: flows * FLOW_BYTES,
            what: format!("{}: {} flows in all hold their state and records", biggest.1, count(flows)),
            advice: "use fewer flows",
        });
    }

    // Ports (each with its queues) and the route table of switches × leaves.
    let ports = switch_ports + hosts;
    let port_bytes = 256.0 + 96.0 * queues;
    parts.push(Part {
        bytes: ports * port_bytes + switches * leaves * 8.0,
        what: format!(
            "topology: {} hosts and {} switches hold {} ports and a route table of {} entries",
            count(hosts),
            count(switches),
            count(ports),
            count(switches * leaves)
        ),
        advice: "use a smaller topology",
    });

    // A captured port sends at most its line rate of full packets, and as
    // many small ones (ACKs) besides.
    let names: Vec<&String> = match &r.pcap {
        OneOrList::All(s) => vec![s],
        OneOrList::List(l) => l.iter().collect(),
    };
    let t = &cfg.topology;
    let fastest = (0..cfg.hosts()).map(|h| t.host_rate(h)).max().unwrap_or(0).max(t.fabric_rate());
    let pkt = cfg.transport.packet_bytes() as f64;
    for (i, name) in names.iter().enumerate() {
        let packets = 2.0 * fastest as f64 * secs(t_end) / (8.0 * pkt);
        parts.push(Part {
            bytes: packets * crate::outputs::pcap::RECORD_BYTES as f64,
            what: format!(
                "run.pcap[{i}] = {name:?}: up to {} packets at {} over {over}",
                count(packets),
                crate::units::fmt_rate(fastest)
            ),
            advice: "capture fewer ports or a shorter run",
        });
    }
    Ok(parts)
}

/// A count for a message: exact below ten million, else like "5e9" or "1.2e10".
fn count(n: f64) -> String {
    if n < 1e7 {
        return format!("{}", n.round() as u64);
    }
    let e = n.log10().floor() as i32;
    let m = (n / 10f64.powi(e) * 10.0).round() / 10.0;
    if m.fract() == 0.0 {
        format!("{m:.0}e{e}")
    } else {
        format!("{m:.1}e{e}")
    }
}

/// Seconds for a message ("0.8s", "12s", "3.1e7s").
fn fmt_secs(s: f64) -> String {
    if s >= 1e6 {
        format!("{}s", count(s))
    } else if s >= 10.0 {
        format!("{}s", s.round())
    } else {
        format!("{}s", (s * 1000.0).round() / 1000.0)
    }
}

/// Bytes with an SI unit and three significant digits ("840GB", "1.68TB").
pub fn size(b: f64) -> String {
    const UNITS: [&str; 7] = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{v:.digits$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
    format!("{text}{}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAR: &str = r#"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "25us"
[switch]
queues = 2
[[flows]]
src = 0
dst = 2
"#;

    fn err(run: &str) -> String {
        Config::from_toml(&format!("[run]\n{run}\n{STAR}")).unwrap_err().0
    }

    #[test]
    fn sizes_and_counts_read_well() {
        assert_eq!(size(840e9), "840GB");
        assert_eq!(size(1.68e12), "1.68TB");
        assert_eq!(size(12.5e6), "12.5MB");
        assert_eq!(size(10e9), "10GB");
        assert_eq!(count(5e9), "5e9");
        assert_eq!(count(1.2e10), "1.2e10");
        assert_eq!(count(600_000.0), "600000");
    }

    /// One day of 10 µs samples on the star's 3 ports of 2 queues: 8.64e9
    /// samples × 6 rows × 28 B = 1.45 TB; the line names the interval,
    /// the duration and the budget.
    #[test]
    fn fine_samples_over_a_long_run_are_refused_with_their_keys() {
        let e = err("duration = \"86400s\"\nsample_interval = \"10us\"");
        assert_eq!(
            e,
            "run.sample_interval: 10us over run.duration = 86400s samples 8.6e9 times on 3 ports of 2 queues \
             (1.45TB, over run.max_output = 10GB); use a coarser run.sample_interval, a shorter run or fewer \
             run.sample_ports, or raise run.max_output"
        );
        // The same run with coarse samplers and no per-port series fits.
        assert!(Config::from_toml(&format!(
            "[run]\nduration = \"86400s\"\nsample_ports = \"none\"\ngoodput_interval = \"1s\"\n{STAR}"
        ))
        .is_ok());
        // A larger budget lets it through.
        assert!(Config::from_toml(&format!(
            "[run]\nduration = \"86400s\"\nsample_interval = \"10us\"\nmax_output = \"2TB\"\n{STAR}"
        ))
        .is_ok());
        let e = err("duration = \"10000s\"\nsample_ports = \"none\"\ngoodput_interval = \"1ns\"");
        assert!(
            e.starts_with("run.goodput_interval: 1ns over run.duration = 10000s makes 1e13 bins for 1 services"),
            "{e}"
        );
    }

    #[test]
    fn intervals_below_a_nanosecond_are_refused_outright() {
        let e = err("duration = \"5ms\"\nsample_interval = \"1ps\"");
        assert_eq!(e, "run.sample_interval = 1ps: must be at least 1ns");
        let e = err("duration = \"5ms\"\ngoodput_interval = \"999ps\"");
        assert_eq!(e, "run.goodput_interval = 999ps: must be at least 1ns");
    }

    /// Without a duration the horizon is the workload's arrivals: 50,000
    /// web-search flows (1.67 MB mean) at load 0.6 on the mqecn preset's
    /// 144 × 10G hosts arrive over about 0.79 s, so 10 µs samples of its
    /// 144 host ports × 8 queues fit (2.5 GB) and 100 ns samples do not.
    #[test]
    fn a_run_without_duration_is_estimated_from_its_flows() {
        let cfg = |interval: &str| {
            Config::from_toml(&format!(
                "[run]\nsample_ports = \"hosts\"\nsample_interval = \"{interval}\"\n[topology]\npreset = \"mqecn\"\n\
                 [switch]\nqueues = 8\n[workload]\nkind = \"poisson\"\nload = 0.6\nflows = 50000\nservices = 8\n"
            ))
        };
        assert!(cfg("10us").is_ok());
        let e = cfg("100ns").unwrap_err().0;
        assert!(e.starts_with("run.sample_interval: 100ns over about 0.79"), "{e}");
        assert!(e.contains("s (the run ends with workload.flows = 50000) samples 79"), "{e}");
        // A flow that would outlast the clock needs a duration as a cap.
        let e = Config::from_toml(&format!(
            "[run]\n{}",
            STAR.replace("dst = 2\n", "dst = 2\nsize = \"1e18B\"\n")
                .replace("link_rate = \"10Gbps\"", "link_rate = \"1Gbps\"")
        ))
        .unwrap_err()
        .0;
        assert!(e.starts_with("run.duration: missing, and flows[0] would keep the run going for about 8e9s"), "{e}");
    }

    #[test]
    fn flows_topology_and_captures_count() {
        let e = Config::from_toml(&format!(
            "[run]\nduration = \"1ms\"\n{}",
            STAR.replace("dst = 2\n", "dst = 2\ncount = 4000000000\n")
        ))
        .unwrap_err()
        .0;
        assert!(
            e.starts_with("flows[0].count = 4000000000: 4e9 flows in all hold their state and records (2.4TB"),
            "{e}"
        );
        let e = Config::from_toml(
            "[run]\nduration = \"1ms\"\nsample_ports = \"none\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 4096\n\
             spines = 4096\nhosts_per_leaf = 256\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n",
        )
        .unwrap_err()
        .0;
        assert!(e.starts_with("topology: 1048576 hosts and 8192 switches hold"), "{e}");
        // 8 hours of a 10G port: 2 × 10e9 × 28800 / 12000 = 4.8e10 records of 70 B.
        let e =
            err("duration = \"28800s\"\nsample_ports = \"none\"\ngoodput_interval = \"1s\"\npcap = [\"switch:host2\"]");
        assert!(
            e.starts_with(
                "run.pcap[0] = \"switch:host2\": up to 4.8e10 packets at 10Gbps over run.duration = 28800s (3.36TB"
            ),
            "{e}"
        );
    }
}
