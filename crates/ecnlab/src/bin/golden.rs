//! `ecnlab-golden`: fingerprint the golden corpus (`tests/golden/`).
//!
//!   ecnlab-golden check [--filter TEXT] [--jobs N] [DIR]   compare with DIR/fingerprints.json
//!   ecnlab-golden write [--filter TEXT] [--jobs N] [DIR]   record them (at this MODEL_VERSION)
//!
//! Run from the repository root (workload CSV paths in the corpus are
//! relative to it). `write` with a filter updates only those entries.

use ecnlab::golden::{compare, fingerprint_all, load_corpus};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fail(msg: &str) -> ! {
    eprintln!("ecnlab-golden: {msg}");
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    if mode != "check" && mode != "write" {
        fail("usage: ecnlab-golden check|write [--filter TEXT] [--jobs N] [DIR]");
    }
    let (mut filter, mut jobs, mut dir) = (String::new(), 0usize, PathBuf::from("tests/golden"));
    while let Some(a) = args.next() {
        match a.as_str() {
            "--filter" => filter = args.next().unwrap_or_else(|| fail("--filter needs a value")),
            "--jobs" => {
                jobs = args.next().and_then(|j| j.parse().ok()).unwrap_or_else(|| fail("--jobs needs a number"))
            }
            _ => dir = PathBuf::from(a),
        }
    }
    if jobs == 0 {
        jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    }
    let root = std::env::current_dir().unwrap_or_else(|e| fail(&e.to_string()));
    let mut corpus = load_corpus(&dir, &root).unwrap_or_else(|e| fail(&e));
    corpus.retain(|(n, _)| n.contains(&filter));
    let t0 = std::time::Instant::now();
    let results = fingerprint_all(&corpus, jobs, &|name, s| eprintln!("{s:8.2}s  {name}"));
    let mut now = BTreeMap::new();
    for ((name, _), r) in corpus.iter().zip(results) {
        now.insert(name.clone(), r.unwrap_or_else(|e| fail(&e)));
    }
    eprintln!("{} configs in {:.1}s on {jobs} threads", now.len(), t0.elapsed().as_secs_f64());
    let path = dir.join("fingerprints.json");
    let recorded: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({"model_version": 0, "runs": {}}));
    let runs = recorded["runs"].as_object().cloned().unwrap_or_default();
    if mode == "check" {
        let mut scoped = runs.clone();
        scoped.retain(|k, _| k.contains(&filter));
        let moved = compare(&scoped, &now);
        println!("recorded at model version {}; the engine is at {}", recorded["model_version"], ecnlab::MODEL_VERSION);
        for m in &moved {
            println!("moved: {m}");
        }
        std::process::exit(if moved.is_empty() { 0 } else { 1 });
    }
    let mut merged: Map<String, Value> = if filter.is_empty() { Map::new() } else { runs };
    for (k, v) in now {
        merged.insert(k, Value::Object(v));
    }
    let doc = json!({"model_version": ecnlab::MODEL_VERSION, "runs": merged});
    let text = serde_json::to_string_pretty(&doc).expect("serialises") + "\n";
    std::fs::write(&path, text).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    println!("wrote {}", path.display());
}
