//! `make bench`: events/s, wall time, peak memory and build time for the reference
//! scenarios. Usage: ecnlab-bench [--threads N] [--parts P] [CONFIG.toml ...] (default: the
//! files in bench/). Peak memory is the process's high-water mark, so `make bench`
//! runs each scenario in a process of its own. `--threads N` sets `run.threads`
//! (0: the sequential engine), `--parts P` sets `run.partitions` (a thread-scaling curve
//! sets both to the cores); the last columns say the threads and parts it ran on.

use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let header_only = args.iter().any(|a| a == "--header-only");
    args.retain(|a| a != "--header-only");
    let threads = take_number(&mut args, "--threads", "0: the sequential engine");
    let parts = take_number(&mut args, "--parts", "0: two");
    let files = if args.is_empty() {
        vec![
            "bench/two_flows_10g.toml".to_string(),
            "bench/incast_1g.toml".to_string(),
            "bench/mqecn_leafspine.toml".to_string(),
            "bench/cedm_leafspine.toml".to_string(),
        ]
    } else {
        args
    };
    if std::env::var_os("ECNLAB_BENCH_NO_HEADER").is_none() {
        println!(
            "{:<20} {:>12} {:>9} {:>12} {:>9} {:>8} {:>11} {:>8} {:>7} {:>5}",
            "scenario", "events", "wall s", "events/s", "sim s", "flows", "peak MiB", "build s", "threads", "parts"
        );
    }
    if header_only {
        return;
    }
    for f in files {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("ecnlab-bench: {f}: {e}");
                std::process::exit(2);
            }
        };
        let mut cfg = match ecnlab::Config::from_toml(&text) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("ecnlab-bench: {f}: {e}");
                std::process::exit(2);
            }
        };
        if let Some(n) = threads {
            cfg.run.threads = n;
        }
        if let Some(n) = parts {
            cfg.run.partitions = n;
        }
        let t0 = Instant::now();
        let rep = ecnlab::run(&cfg, &mut |_, _| true).expect("bench run");
        let wall = t0.elapsed().as_secs_f64();
        let ev = rep.summary["events"].as_u64().unwrap_or(0);
        let name = std::path::Path::new(&f).file_stem().and_then(|s| s.to_str()).unwrap_or(&f).to_string();
        let sim = rep.summary["sim_seconds"].as_f64().unwrap_or(0.0);
        let flows = rep.table("flows").map(|t| t.rows()).unwrap_or(0);
        println!(
            "{:<20} {:>12} {:>9.2} {:>12.0} {:>9.4} {:>8} {:>11.1} {:>8.2} {:>7} {:>5}",
            name,
            ev,
            wall,
            ev as f64 / wall,
            sim,
            flows,
            peak_rss_mib(),
            // Building the network and the workload: the wall time before
            // the first event (the summary's wall clock counts from there).
            wall - rep.summary["wall_seconds"].as_f64().unwrap_or(0.0),
            cfg.run.threads,
            rep.summary.get("partitions").and_then(|p| p.as_u64()).unwrap_or(1)
        );
        if std::env::var_os("ECNLAB_BENCH_VERBOSE").is_some() {
            println!("{}", serde_json::to_string_pretty(&rep.summary).unwrap());
        }
    }
}

/// The process's peak resident memory (Linux VmHWM), in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// Removes `flag N` from `args` and returns N; exits with a one-line error
/// when N is not a whole number.
fn take_number(args: &mut Vec<String>, flag: &str, zero: &str) -> Option<u32> {
    let i = args.iter().position(|a| a == flag)?;
    let Some(n) = args.get(i + 1).and_then(|n| n.parse::<u32>().ok()) else {
        eprintln!("ecnlab-bench: {flag} takes a whole number ({zero})");
        std::process::exit(2);
    };
    args.drain(i..i + 2);
    Some(n)
}
