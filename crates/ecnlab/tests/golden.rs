//! The golden corpus (tests/golden/): every config's outputs, fingerprinted,
//! must equal the recorded ones at this MODEL_VERSION. A change that moves
//! any output must bump `ecnlab::MODEL_VERSION` and re-record the corpus
//! (`make golden-update`); one that moves none must leave both alone.
//!
//! The corpus is the `make bench` points, every figure's `--quick` points
//! and tests/golden/small/ (see tests/golden/collect.py): about 2.5 minutes
//! on two cores.

use ecnlab::golden::{compare, fingerprint_all, load_corpus};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Every corpus config is a resolved config made at model version 1; it
/// must resolve to itself still. The resolved form is what result stores
/// key points by, so a refactor that changed it would orphan every store.
#[test]
fn the_resolved_form_is_stable() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("tests/golden");
    let corpus = load_corpus(&dir, &root).expect("the corpus loads");
    let prefix = format!("{}/", root.to_string_lossy());
    let mut moved = Vec::new();
    for (name, cfg) in &corpus {
        let text = std::fs::read_to_string(dir.join("configs").join(format!("{name}.json"))).expect("config");
        let stored: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let mut now = cfg.resolved_json();
        if let Some(list) = now.pointer_mut("/workload/distributions").and_then(|v| v.as_array_mut()) {
            for d in list.iter_mut() {
                if let Some(rel) = d.as_str().and_then(|s| s.strip_prefix(&prefix)) {
                    *d = serde_json::Value::String(rel.to_string());
                }
            }
        }
        if now != stored {
            moved.push(name.clone());
        }
    }
    assert!(moved.is_empty(), "{} configs resolve differently now: {:?}", moved.len(), &moved[..moved.len().min(20)]);
}

#[test]
fn outputs_match_the_golden_corpus_at_this_model_version() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("tests/golden");
    let corpus = load_corpus(&dir, &root).expect("the corpus loads");
    assert!(corpus.len() > 600, "the corpus has {} configs; run tests/golden/collect.py", corpus.len());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let results = fingerprint_all(&corpus, threads, &|_, _| {});
    let mut now = BTreeMap::new();
    for ((name, _), r) in corpus.iter().zip(results) {
        now.insert(name.clone(), r.unwrap_or_else(|e| panic!("{e}")));
    }
    let text = std::fs::read_to_string(dir.join("fingerprints.json")).expect("fingerprints.json");
    let recorded: serde_json::Value = serde_json::from_str(&text).expect("fingerprints.json is JSON");
    let at = recorded["model_version"].as_u64().expect("model_version");
    let moved = compare(recorded["runs"].as_object().expect("runs"), &now);
    let list = moved.iter().map(|m| format!("\n  {m}")).collect::<String>();
    let model = ecnlab::MODEL_VERSION as u64;
    assert!(
        at <= model,
        "the corpus was recorded at model version {at}, after this engine's {model}: MODEL_VERSION went back"
    );
    assert!(
        at == model,
        "MODEL_VERSION is {model} but the corpus was recorded at {at}: re-record it (`make golden-update`) \
         and commit tests/golden/fingerprints.json. What moved:{list}"
    );
    assert!(
        moved.is_empty(),
        "{} configs' outputs moved while MODEL_VERSION stayed {model}. If the change is meant to move them, \
         bump ecnlab::MODEL_VERSION (lib.rs), run `make golden-update` and say in the commit which runs \
         moved and why; if not, it is a regression:{list}",
        moved.len()
    );
}

/// One answer on any number of cores (issue 54): every fabric config of
/// the corpus (the bench points' leaf-spines and fat-trees, the figures'
/// fabrics) gives the same tables, and every summary key but the engine's
/// own (`golden::ENGINE_KEYS`), on the sequential engine and on the
/// partitioned one with 2 threads, 4 threads (a part each), and 2 threads
/// with 8 parts (or as many as the fabric has units: unequal groups, spines
/// dealt unevenly). That the thread count at a fixed cut changes nothing,
/// 1 thread included, the unit tests of `world/parallel/` show. A config the partitioned engine cannot
/// run is refused by every partitioned variant, naming `run.threads`. A
/// star or dumbbell has nothing to cut and runs the sequential engine at
/// any thread count.
#[test]
fn every_engine_gives_the_same_outputs_on_every_fabric_config() {
    use ecnlab::config::TopologyKind;
    use ecnlab::golden::outputs_fingerprint_all;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = load_corpus(&root.join("tests/golden"), &root).expect("the corpus loads");
    let only = std::env::var("ECNLAB_GOLDEN_FILTER").unwrap_or_default();
    const VARIANTS: usize = 4;
    let mut runs = Vec::new();
    for (name, cfg) in &corpus {
        if !matches!(cfg.topology.kind, Some(TopologyKind::FatTree | TopologyKind::LeafSpine)) || !name.contains(&only)
        {
            continue;
        }
        let units = cfg.topology.leaves.or(cfg.topology.k).unwrap_or(1);
        for (threads, partitions) in [(0, 0), (2, 0), (4, 0), (2, units.min(8))] {
            let mut c = cfg.clone();
            (c.run.threads, c.run.partitions) = (threads, partitions);
            runs.push((format!("{name} threads={threads} partitions={partitions}"), c));
        }
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let results = outputs_fingerprint_all(&runs, threads);
    let (mut same, mut refused, mut wrong) = (0, 0, Vec::new());
    for (group, r) in runs.chunks(VARIANTS).zip(results.chunks(VARIANTS)) {
        let seq = r[0].as_ref().unwrap_or_else(|e| panic!("{e}"));
        if r[1..].iter().all(|x| matches!(x, Err(e) if e.contains("run.threads"))) {
            refused += 1;
            continue;
        }
        for (v, x) in group[1..].iter().zip(&r[1..]) {
            match x {
                Ok(fp) if fp == seq => {}
                Ok(fp) => {
                    let keys: Vec<_> = seq.keys().filter(|k| seq.get(*k) != fp.get(*k)).collect();
                    let vals: Vec<_> = keys.iter().map(|k| format!("{k} {} against {}", seq[*k], fp[*k])).collect();
                    wrong.push(format!("\n  {}: {vals:?} differ from the sequential engine's", v.0));
                }
                Err(e) => wrong.push(format!("\n  {}: refused ({e}) where another variant ran", v.0)),
            }
        }
        same += 1;
    }
    eprintln!("{same} fabric configs gave the same outputs on every engine, {refused} refused by the partitioned one");
    assert!(wrong.is_empty(), "{} runs differ:{}", wrong.len(), wrong.concat());
    assert!(only.is_empty() || same > 0 || refused > 0, "no config matches {only}");
    assert!(!only.is_empty() || same > 80, "only {same} corpus configs ran partitioned");
}
