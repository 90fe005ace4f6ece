//! Recipes (issue 28): each fills its paper's values where the experiment
//! leaves them out, every value stays overridable, the resolved form keeps
//! the name and shows the values, and the experiment files that spell a
//! set-up out by hand resolve as the recipe does.

use super::*;
use crate::config::Amt;
use crate::units::Amount;
use serde_json::json;
use std::path::PathBuf;

const STAR: &str = "[run]\nduration = \"10ms\"\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"25us\"\n";

fn cfg(extra: &str) -> Config {
    Config::from_toml(&format!("{STAR}{extra}")).unwrap_or_else(|e| panic!("{e}"))
}

fn err(extra: &str) -> String {
    Config::from_toml(&format!("{STAR}{extra}")).unwrap_err().0
}

fn quanta(c: &Config) -> Vec<u64> {
    c.switch.quanta()
}

/// ML-ECN §IV's switch and hosts: 8 queues, 3/3/2 classes, 4:2:1 quanta
/// of 1.5 KB, WRR, 4 levels, stages at 100 KB and 10 MB.
#[test]
fn ml_ecn_recipe_is_the_papers_set_up() {
    let c = cfg("[switch]\nrecipe = \"ml-ecn\"\nthreshold = \"65pkt\"\n");
    let s = &c.switch;
    assert_eq!((s.marking.as_str(), s.scheduler.as_str(), s.queues), ("ml-ecn", "wrr", 8));
    assert_eq!(quanta(&c), [6000, 6000, 6000, 3000, 3000, 3000, 1500, 1500]);
    assert_eq!(s.extra["small_queues"], json!([0, 1, 2]));
    assert_eq!(s.extra["medium_queues"], json!([3, 4, 5]));
    assert_eq!(s.extra["large_queues"], json!([6, 7]));
    assert_eq!(s.extra["mlecn_levels"], json!(4));
    let stages: Vec<u64> = c.host.stages.iter().map(|b| b.0).collect();
    assert_eq!(stages, [100_000, 10_000_000]);
    // ML-ECN's marking alone is refused for want of classes; the message
    // names the recipe. With the recipe given it is not offered again.
    let e = err("[host]\nstages = [\"100KB\"]\n[switch]\nqueues = 2\nmarking = \"ml-ecn\"\nthreshold = \"65pkt\"\n");
    assert!(e.starts_with("switch.marking = \"ml-ecn\": needs the queue classes"), "{e}");
    assert!(
        e.ends_with(
            "; or set switch.recipe = \"ml-ecn\" for the paper's set-up (Alanazi & Hamdaoui, ML-ECN, §III-B, §IV)"
        ),
        "{e}"
    );
    // K is the network's: the recipe leaves it to the experiment.
    let e = err("[switch]\nrecipe = \"ml-ecn\"\n");
    assert!(e.starts_with("switch.threshold: missing; marking \"ml-ecn\" needs the standard threshold K"), "{e}");
}

/// A key given wins over the recipe's; the rest still come from it. An
/// error about a value the recipe gave says so.
#[test]
fn every_recipe_value_stays_overridable() {
    let c = cfg("[switch]\nrecipe = \"ml-ecn\"\nthreshold = \"65pkt\"\nscheduler = \"dwrr\"\nmlecn_levels = 2\n[host]\nstages = [\"50KB\", \"1MB\"]\n");
    assert_eq!((c.switch.scheduler.as_str(), c.switch.extra["mlecn_levels"].clone()), ("dwrr", json!(2)));
    assert_eq!(c.host.stages.iter().map(|b| b.0).collect::<Vec<_>>(), [50_000, 1_000_000]);
    assert_eq!(quanta(&c), [6000, 6000, 6000, 3000, 3000, 3000, 1500, 1500]);
    // In JSON a null counts as left out: the recipe fills it.
    let j = json!({"run": {"duration": "1ms"},
        "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "1us"},
        "switch": {"recipe": "ml-ecn", "threshold": "65pkt", "scheduler": null}});
    assert_eq!(Config::load(&j).unwrap().switch.scheduler.as_str(), "wrr");
    // Fewer queues than the recipe's 8: its quanta no longer fit, and the
    // refusal says whose value that is.
    let e = err("[switch]\nrecipe = \"ml-ecn\"\nthreshold = \"65pkt\"\nqueues = 4\n");
    assert_eq!(
        e,
        "switch.quantum = a list of 8: needs one value per queue (4) (the value of switch.recipe = \"ml-ecn\"; give switch.quantum to set another)"
    );
}

/// `[fabric]` and `[nic]` merge over `[switch]` after the recipe: they
/// inherit its per-port values unless they set their own; the recipe key,
/// like the queues and classes, is one for the whole network.
#[test]
fn overrides_see_the_recipes_switch() {
    let c = cfg("[switch]\nrecipe = \"ml-ecn\"\nthreshold = \"65pkt\"\n[fabric]\nquantum = \"1500B\"\n[nic]\nthreshold = \"30pkt\"\n");
    assert_eq!(c.fabric_port.quanta(), vec![1500; 8]);
    assert_eq!(quanta(&c), [6000, 6000, 6000, 3000, 3000, 3000, 1500, 1500]);
    let nic = c.nic_port.as_ref().unwrap();
    assert_eq!((nic.marking.as_str(), nic.quanta()[0], nic.k(1500)), ("ml-ecn", 6000, 45_000));
    assert_eq!(
        err("[switch]\nrecipe = \"ml-ecn\"\nthreshold = \"65pkt\"\n[fabric]\nrecipe = \"cedm\"\n"),
        "fabric.recipe: one setting for the whole network, given in [switch] only (every port has switch.recipe)"
    );
}

/// The resolved form names the recipe and shows each value; it reads back
/// to itself. Without a recipe a config is read exactly as before.
#[test]
fn resolved_form_keeps_the_name_and_shows_the_values() {
    for r in [
        "[switch]\nrecipe = \"ml-ecn\"\nthreshold = \"65pkt\"\n",
        "[switch]\nrecipe = \"cedm\"\nthreshold = \"20pkt\"\n",
        "[switch]\nrecipe = \"pfabric\"\n",
        "[switch]\nrecipe = \"fq-codel\"\n",
    ] {
        let v = cfg(r).resolved_json();
        assert!(v["switch"]["recipe"].is_string(), "{v}");
        assert_eq!(Config::from_json(&v.to_string()).unwrap().resolved_json(), v);
    }
    let v = cfg("[switch]\nrecipe = \"ml-ecn\"\nthreshold = \"65pkt\"\n").resolved_json();
    assert_eq!(v["switch"]["quantum"], json!(["6000B", "6000B", "6000B", "3000B", "3000B", "3000B", "1500B", "1500B"]));
    assert_eq!(v["host"]["stages"], json!(["100000B", "10000000B"]));
    let plain = format!("{STAR}[switch]\nqueues = 2\n");
    let value: Value = serde_json::to_value(toml::from_str::<toml::Value>(&plain).unwrap()).unwrap();
    let applied = apply(&value).unwrap();
    assert!(applied.recipe.is_none() && applied.filled.is_empty() && applied.config == value);
    assert!(cfg("[switch]\nqueues = 2\n").resolved_json()["switch"].get("recipe").is_none());
}

/// CEDM §IV-C's K2 = 5/4·K1 + C·d/4 from the experiment's K1, its slowest
/// host link and the base RTT: §V's star (10 Gbps, 100 us: C·d = 83.3
/// packets) gives K2 = 46 for K1 = 20 and 33 for K1 = 10 (the K2 of the
/// cedm-fig10 cases); its leaf-spine (81.6 us of propagation: C·d = 68)
/// gives 30 for K1 = 10, §V's own pair. w_s = 0.129.
#[test]
fn cedm_recipe_derives_k2_from_k1() {
    let k2 = |c: &Config| c.switch.extra["cedm_k2"].clone();
    let c = cfg("[switch]\nrecipe = \"cedm\"\nthreshold = \"20pkt\"\n");
    assert_eq!(
        (c.switch.marking.as_str(), k2(&c), c.switch.extra["cedm_ws"].clone()),
        ("cedm", json!("46pkt"), json!(0.129))
    );
    assert_eq!(k2(&cfg("[switch]\nrecipe = \"cedm\"\nthreshold = \"10pkt\"\n")), json!("33pkt"));
    let ls = Config::from_toml("[run]\nduration = \"1ms\"\n[topology]\npreset = \"cedm\"\n[switch]\nrecipe = \"cedm\"\nthreshold = \"10pkt\"\n").unwrap();
    assert_eq!(ls.topology.base_rtt(), 81_600_000);
    assert_eq!(k2(&ls), json!("30pkt"));
    // K1 in bytes: K2 in bytes (1.25 × 30000 + 125000 / 4).
    assert_eq!(k2(&cfg("[switch]\nrecipe = \"cedm\"\nthreshold = \"30KB\"\n")), json!("68750B"));
    // A K2 given wins; without K1 there is no K2 to derive, and the
    // threshold's own refusal says what is missing.
    assert_eq!(k2(&cfg("[switch]\nrecipe = \"cedm\"\nthreshold = \"20pkt\"\ncedm_k2 = \"25pkt\"\n")), json!("25pkt"));
    assert!(err("[switch]\nrecipe = \"cedm\"\n").starts_with("switch.threshold: missing"));
    let e = err("[switch]\nmarking = \"cedm\"\nthreshold = \"20pkt\"\n");
    assert!(e.starts_with("switch.cedm_k2: missing;") && e.contains("set switch.recipe = \"cedm\""), "{e}");
    // The rule, checked against the Amt reading K2 back.
    let k: Amt = serde_json::from_value(k2(&c)).unwrap();
    assert_eq!(k.0, Amount::Pkt(46));
}

/// pFabric: its port on every switch port and NIC, a 36 KB buffer, its
/// transport and the Table II profile (max cwnd: 24 packets less one).
#[test]
fn pfabric_recipe_is_the_whole_design() {
    let c = cfg("[switch]\nrecipe = \"pfabric\"\n");
    assert_eq!((c.switch.qdisc.as_str(), c.switch.buffer.0), ("pfabric", Amount::Bytes(36_864)));
    assert_eq!(c.nic_port.as_ref().map(|p| p.qdisc.as_str()), Some("pfabric"));
    assert_eq!(c.fabric_port.qdisc.as_str(), "pfabric");
    let t = &c.transport;
    assert_eq!((t.cc.as_str(), t.profile.as_ref().map(|p| p.as_str())), ("pfabric", Some("pfabric")));
    assert_eq!((t.min_rto.0, t.init_cwnd, t.max_cwnd), (45_000_000, 12, Some(23)));
    // pFabric's port under another transport: the refusal names the recipe.
    let e = err("[switch]\nqdisc = \"pfabric\"\n");
    assert!(e.contains("stamps none (use transport.cc = \"pfabric\"); or set switch.recipe = \"pfabric\""), "{e}");
}

/// FQ-CoDel in the DCN: on the ToR-server links both ways, the fabric's
/// ports composed; 1024 buckets; CoDel at 5 us and 100 us.
#[test]
fn fq_codel_recipe_scales_codel_to_the_dcn() {
    let c = cfg("[switch]\nrecipe = \"fq-codel\"\n");
    let s = &c.switch;
    assert_eq!(s.qdisc.as_str(), "fq-codel");
    assert_eq!((s.extra["codel_target"].clone(), s.extra["codel_interval"].clone()), (json!("5us"), json!("100us")));
    assert_eq!(s.extra["fq_flows"], json!(1024));
    assert_eq!(c.fabric_port.qdisc.as_str(), "composed");
    assert_eq!(c.nic_port.as_ref().map(|p| p.qdisc.as_str()), Some("fq-codel"));
    // A [nic] given keeps its own discipline.
    let c = cfg("[switch]\nrecipe = \"fq-codel\"\n[nic]\nqdisc = \"composed\"\n");
    assert_eq!(c.nic_port.as_ref().map(|p| p.qdisc.as_str()), Some("composed"));
}

fn experiments() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

/// A base file with overrides ("switch.marking" = value) set, resolved,
/// without the recipe's name.
fn resolved_with(base: &str, sets: &[(&str, Value)]) -> Value {
    let text = std::fs::read_to_string(experiments().join(base)).unwrap();
    let mut v = serde_json::to_value(toml::from_str::<toml::Value>(&text).unwrap()).unwrap();
    for (key, value) in sets {
        let (sec, k) = key.split_once('.').unwrap();
        let top = v.as_object_mut().unwrap();
        let table = top.entry(sec).or_insert_with(|| json!({}));
        table.as_object_mut().unwrap().insert(k.to_string(), value.clone());
    }
    let mut r = Config::load(&v).unwrap_or_else(|e| panic!("{base}: {e}")).resolved_json();
    r["switch"].as_object_mut().unwrap().remove("recipe");
    r
}

/// The experiment files that spell a paper's set-up out by hand resolve
/// exactly as the recipe does (the recipe's name aside): ML-ECN's case of
/// mlecn-fig4 (DWRR, as that sweep's other half), CEDM's of cedm-fig10 and
/// cedm-fig11, FQ-CoDel's and pFabric's of fqcodel-fig3.
#[test]
fn the_experiment_files_set_ups_are_the_recipes() {
    let quantum = json!(["6000B", "6000B", "6000B", "3000B", "3000B", "3000B", "1500B", "1500B"]);
    let by_hand = resolved_with(
        "mlecn-fig4/base.toml",
        &[
            ("switch.marking", json!("ml-ecn")),
            ("switch.quantum", quantum),
            ("switch.small_queues", json!([0, 1, 2])),
            ("switch.medium_queues", json!([3, 4, 5])),
            ("switch.large_queues", json!([6, 7])),
        ],
    );
    // The base gives the comparators' marking and quantum: the ML-ECN case
    // leaves them to the recipe (null: left out).
    let recipe = resolved_with(
        "mlecn-fig4/base.toml",
        &[("switch.recipe", json!("ml-ecn")), ("switch.marking", Value::Null), ("switch.quantum", Value::Null)],
    );
    assert_eq!(by_hand, recipe);

    let by_hand = resolved_with(
        "cedm-fig10/base.toml",
        &[("switch.marking", json!("cedm")), ("switch.threshold", json!("20pkt")), ("switch.cedm_k2", json!("46pkt"))],
    );
    let recipe = resolved_with(
        "cedm-fig10/base.toml",
        &[("switch.recipe", json!("cedm")), ("switch.marking", Value::Null), ("switch.threshold", json!("20pkt"))],
    );
    assert_eq!(by_hand, recipe);
    let by_hand = resolved_with(
        "cedm-fig11/base.toml",
        &[
            ("switch.marking", json!("cedm")),
            ("switch.threshold", json!("10pkt")),
            ("switch.cedm_k2", json!("30pkt")),
            ("switch.cedm_ws", json!(0.129)),
        ],
    );
    let recipe = resolved_with(
        "cedm-fig11/base.toml",
        &[("switch.recipe", json!("cedm")), ("switch.marking", Value::Null), ("switch.threshold", json!("10pkt"))],
    );
    assert_eq!(by_hand, recipe);

    let by_hand = resolved_with(
        "fqcodel-fig3/base.toml",
        &[
            ("switch.qdisc", json!("fq-codel")),
            ("switch.fq_flows", json!(1024)),
            ("switch.codel_target", json!("5us")),
            ("switch.codel_interval", json!("100us")),
            ("fabric.qdisc", json!("composed")),
            ("nic.qdisc", json!("fq-codel")),
        ],
    );
    assert_eq!(by_hand, resolved_with("fqcodel-fig3/base.toml", &[("switch.recipe", json!("fq-codel"))]));
    let by_hand = resolved_with(
        "fqcodel-fig3/base.toml",
        &[
            ("transport.cc", json!("pfabric")),
            ("switch.qdisc", json!("pfabric")),
            ("switch.buffer", json!("36864B")),
            ("nic.qdisc", json!("pfabric")),
        ],
    );
    // fqcodel-fig3's base gives the other schemes' buffer and TCP (Reno,
    // with the profile): the pFabric case leaves them to the recipe.
    let recipe = resolved_with(
        "fqcodel-fig3/base.toml",
        &[("switch.recipe", json!("pfabric")), ("switch.buffer", Value::Null), ("transport.cc", Value::Null)],
    );
    assert_eq!(by_hand, recipe);
}

/// Every recipe's fixed values are JSON, and each key it fills is one the
/// config declares (in its section, or a scheme's key of [switch] or
/// [transport]).
#[test]
fn every_recipe_fills_declared_keys() {
    let groups = crate::declarations::keys::groups();
    for r in RECIPES {
        for f in r.fills {
            if let RecipeValue::Json(text) = f.value {
                serde_json::from_str::<Value>(text).unwrap_or_else(|e| panic!("{}: {}: {e}", r.about.name, f.key));
            }
            let (sec, key) = f.key.split_once('.').unwrap();
            let sec = if sec == "fabric" || sec == "nic" { "switch" } else { sec };
            let declared = groups.iter().any(|g| {
                let table = if g.kind == "section" { g.name } else { crate::declarations::keys::section_of(g.kind) };
                table == sec && g.params.iter().any(|p| p.key == key)
            });
            assert!(declared, "{}: {} is no declared key", r.about.name, f.key);
            assert!(!f.source.is_empty(), "{}: {} has no source", r.about.name, f.key);
        }
    }
}
