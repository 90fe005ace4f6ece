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

/// The partitioned engine's promise (issue 27): `run.threads = 1` and `2`
/// give byte-identical outputs on every corpus config it runs (the bench
/// points' leaf-spines and the figures' fabrics, cut into 3 groups of
/// leaves where they have 3: unequal groups, spines dealt unevenly), and refuse the same
/// configs with the same error. A star or dumbbell has nothing to cut and
/// runs the sequential engine at any thread count.
#[test]
fn the_partitioned_engine_gives_the_same_outputs_on_1_and_2_threads() {
    use ecnlab::config::TopologyKind;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = load_corpus(&root.join("tests/golden"), &root).expect("the corpus loads");
    let only = std::env::var("ECNLAB_GOLDEN_FILTER").unwrap_or_default();
    let mut cut = Vec::new();
    for (name, cfg) in &corpus {
        if !matches!(cfg.topology.kind, Some(TopologyKind::FatTree | TopologyKind::LeafSpine)) || !name.contains(&only)
        {
            continue;
        }
        for threads in [1, 2] {
            let mut c = cfg.clone();
            c.run.threads = threads;
            let units = c.topology.leaves.or(c.topology.k).unwrap_or(1);
            c.run.partitions = units.min(3);
            cut.push((format!("{name} threads={threads}"), c));
        }
    }
    let results = fingerprint_all(&cut, 2, &|_, _| {});
    let (mut ran, mut refused, mut wrong) = (0, 0, Vec::new());
    for (pair, r) in cut.chunks(2).zip(results.chunks(2)) {
        let name = pair[0].0.trim_end_matches(" threads=1");
        match (&r[0], &r[1]) {
            (Ok(a), Ok(b)) if a == b => ran += 1,
            (Err(a), Err(b))
                if a.contains("run.threads") && a.replace("= 1", "= 2").replace(" threads=1", " threads=2") == *b =>
            {
                refused += 1
            }
            (a, b) => wrong.push(format!("\n  {name}: threads = 1 gave {a:?},\n    threads = 2 {b:?}")),
        }
    }
    eprintln!("{ran} fabric configs ran on 1 and 2 threads alike, {refused} refused alike");
    assert!(wrong.is_empty(), "{} configs differ:{}", wrong.len(), wrong.concat());
    assert!(only.is_empty() || ran > 0 || refused > 0, "no config matches {only}");
    assert!(!only.is_empty() || ran > 80, "only {ran} corpus configs ran partitioned");
}
