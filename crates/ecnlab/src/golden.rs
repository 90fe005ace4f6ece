//! The golden corpus's fingerprint of a run: a digest of every table (its
//! columns' names and raw values, batch by batch), of every packet capture
//! and of the summary without its wall-clock keys. Two runs with equal
//! fingerprints wrote byte-identical files (the Parquet files are written
//! from these very columns). `tests/golden/` keeps one per corpus config
//! and the model version they were made at: an output that moves without
//! a new [`crate::MODEL_VERSION`] fails `cargo test` (tests/golden.rs).

use crate::outputs::output::Sink;
use crate::outputs::report::{Column, Table};
use crate::{Config, RunError};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Summary keys that measure the machine, not the model.
pub const WALL_KEYS: [&str; 2] = ["wall_seconds", "events_per_second"];

/// Summary keys that say how the engine computed a run, not what the run
/// did: the partitioned engine runs more events for the same run (the
/// departures on links between parts, one sample and round start per
/// part) and holds others pending, and only it has parts. Every other
/// summary key and every table is the same on either engine.
pub const ENGINE_KEYS: [&str; 5] =
    ["events", "peak_pending_events", "partitions", "lookahead_seconds", "partition_cut"];

/// FNV-1a, 64 bits: a fingerprint against accidents, not adversaries.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A sink that keeps a running digest and row count per table and per
/// capture, and nothing else.
#[derive(Default)]
pub struct Fingerprinter {
    tables: BTreeMap<String, (u64, Option<Fnv>)>,
}

impl Fingerprinter {
    fn entry(&mut self, name: String) -> &mut (u64, Option<Fnv>) {
        self.tables.entry(name).or_insert((0, None))
    }
}

impl Sink for Fingerprinter {
    fn rows(&mut self, batch: Table) -> Result<(), String> {
        let rows = batch.rows() as u64;
        let e = self.entry(batch.name.to_string());
        e.0 += rows;
        let h = e.1.get_or_insert_with(Fnv::new);
        for (name, col) in &batch.columns {
            h.bytes(name.as_bytes());
            match col {
                Column::U32(v) => v.iter().for_each(|x| h.bytes(&x.to_le_bytes())),
                Column::U64(v) => v.iter().for_each(|x| h.bytes(&x.to_le_bytes())),
                Column::I64(v) => v.iter().for_each(|x| h.bytes(&x.to_le_bytes())),
                Column::F64(v) => v.iter().for_each(|x| h.bytes(&x.to_bits().to_le_bytes())),
                Column::Str(v) => v.iter().for_each(|s| {
                    h.bytes(s.as_bytes());
                    h.bytes(&[0]);
                }),
            }
        }
        Ok(())
    }

    fn capture(&mut self, port: &str, bytes: &[u8]) -> Result<(), String> {
        let e = self.entry(format!("pcap:{port}"));
        e.0 += bytes.len() as u64;
        e.1.get_or_insert_with(Fnv::new).bytes(bytes);
        Ok(())
    }
}

/// Run `cfg` and return its fingerprint: `{"summary": digest, TABLE:
/// "ROWS:digest", ...}` (a capture's entry counts bytes, not rows).
pub fn fingerprint(cfg: &Config) -> Result<Map<String, Value>, RunError> {
    fingerprint_without(cfg, &WALL_KEYS)
}

/// `fingerprint` without the engine's own keys too (`ENGINE_KEYS`): equal
/// for the sequential and the partitioned engine on any number of threads
/// and parts.
pub fn outputs_fingerprint(cfg: &Config) -> Result<Map<String, Value>, RunError> {
    fingerprint_without(cfg, &[&WALL_KEYS[..], &ENGINE_KEYS[..]].concat())
}

fn fingerprint_without(cfg: &Config, skip: &[&str]) -> Result<Map<String, Value>, RunError> {
    let mut sink = Fingerprinter::default();
    let mut summary = crate::run_into(cfg, &mut |_, _| true, &mut sink)?;
    for k in skip {
        summary.remove(*k);
    }
    let mut h = Fnv::new();
    h.bytes(Value::Object(summary).to_string().as_bytes());
    let mut out = Map::new();
    out.insert("summary".into(), Value::String(format!("{:016x}", h.0)));
    for (name, (rows, d)) in sink.tables {
        let d = d.map_or(0, |d| d.0);
        out.insert(name, Value::String(format!("{rows}:{d:016x}")));
    }
    Ok(out)
}

/// The corpus's configs: `DIR/configs/NAME.json`, each a resolved config,
/// by name. A workload CSV path relative to the repository (the corpus
/// keeps no absolute paths) is anchored at `root`.
pub fn load_corpus(dir: &std::path::Path, root: &std::path::Path) -> Result<Vec<(String, Config)>, String> {
    let configs = dir.join("configs");
    let mut names: Vec<_> = std::fs::read_dir(&configs)
        .map_err(|e| format!("{}: {e}", configs.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for p in names {
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mut v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        if let Some(list) = v.pointer_mut("/workload/distributions").and_then(Value::as_array_mut) {
            for d in list.iter_mut() {
                if let Some(s) = d.as_str().filter(|s| s.ends_with(".csv") && !s.starts_with('/')) {
                    *d = Value::String(root.join(s).to_string_lossy().into_owned());
                }
            }
        }
        let cfg = Config::from_json(&v.to_string()).map_err(|e| format!("{name}: {e}"))?;
        out.push((name, cfg));
    }
    Ok(out)
}

/// A config's fingerprint, or why it could not run.
pub type Outcome = Result<Map<String, Value>, String>;

/// Fingerprint every config on `threads` threads; results in corpus order.
pub fn fingerprint_all(
    corpus: &[(String, Config)],
    threads: usize,
    progress: &(dyn Fn(&str, f64) + Sync),
) -> Vec<Outcome> {
    each(corpus, threads, progress, fingerprint)
}

/// `fingerprint_all` by `outputs_fingerprint`: what must be the same on
/// every engine.
pub fn outputs_fingerprint_all(corpus: &[(String, Config)], threads: usize) -> Vec<Outcome> {
    each(corpus, threads, &|_, _| {}, outputs_fingerprint)
}

fn each(
    corpus: &[(String, Config)],
    threads: usize,
    progress: &(dyn Fn(&str, f64) + Sync),
    fingerprint: fn(&Config) -> Result<Map<String, Value>, RunError>,
) -> Vec<Outcome> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Outcome>>> = corpus.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, cfg)) = corpus.get(i) else { break };
                let t0 = std::time::Instant::now();
                let r = fingerprint(cfg).map_err(|e| format!("{name}: {e}"));
                progress(name, t0.elapsed().as_secs_f64());
                *slots[i].lock().expect("no thread panics holding it") = Some(r);
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().expect("unpoisoned").expect("every slot filled")).collect()
}

/// What moved between the recorded fingerprints and these: one line per
/// config whose fingerprint differs (naming the parts that moved), is new,
/// or is gone.
pub fn compare(recorded: &Map<String, Value>, now: &BTreeMap<String, Map<String, Value>>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, fp) in now {
        match recorded.get(name).and_then(Value::as_object) {
            None => out.push(format!("{name}: not in the corpus's fingerprints (new config)")),
            Some(old) if old != fp => {
                let mut parts: Vec<String> = fp
                    .iter()
                    .filter(|(k, v)| old.get(*k) != Some(*v))
                    .map(|(k, v)| format!("{k} {} -> {}", old.get(k).map_or("absent".into(), |o| o.to_string()), v))
                    .collect();
                parts.extend(old.keys().filter(|k| !fp.contains_key(*k)).map(|k| format!("{k} gone")));
                out.push(format!("{name}: {}", parts.join(", ")));
            }
            Some(_) => {}
        }
    }
    for name in recorded.keys().filter(|k| !now.contains_key(*k)) {
        out.push(format!("{name}: in the fingerprints but no such config"));
    }
    out
}
