//! `make bench`: events/s and wall time for the reference scenarios.
//! Usage: ecnlab-bench [CONFIG.toml ...] (default: the files in bench/).

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let files = if args.is_empty() {
        vec!["bench/two_flows_10g.toml".to_string(), "bench/incast_1g.toml".to_string()]
    } else {
        args
    };
    println!("{:<28} {:>12} {:>10} {:>14} {:>10}", "scenario", "events", "wall s", "events/s", "sim s");
    for f in files {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("ecnlab-bench: {f}: {e}");
                std::process::exit(2);
            }
        };
        let cfg = match ecnlab::Config::from_toml(&text) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("ecnlab-bench: {f}: {e}");
                std::process::exit(2);
            }
        };
        let t0 = Instant::now();
        let rep = ecnlab::run(&cfg, &mut |_, _| true).expect("bench run");
        let wall = t0.elapsed().as_secs_f64();
        let ev = rep.summary["events"].as_u64().unwrap_or(0);
        let name = std::path::Path::new(&f).file_stem().and_then(|s| s.to_str()).unwrap_or(&f).to_string();
        println!(
            "{:<28} {:>12} {:>10.3} {:>14.0} {:>10}",
            name,
            ev,
            wall,
            ev as f64 / wall,
            rep.summary["sim_seconds"]
        );
        if std::env::var_os("ECNLAB_BENCH_VERBOSE").is_some() {
            println!("{}", serde_json::to_string_pretty(&rep.summary).unwrap());
        }
    }
}
