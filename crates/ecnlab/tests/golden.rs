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
