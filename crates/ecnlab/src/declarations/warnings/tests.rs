//! Warnings for settings that cannot act (issue 55): from the keys'
//! declarations, on each kind of port at its rates, and in the summary.

use super::of;
use crate::config::Config;

/// Issue 55's network: a 4 → 1 star at 10 Gbps, 25 us links (a 100 us
/// base RTT), the default 300 KB buffer, 50 ms of four long flows. The
/// buffer holds 300,000 × 8 / 10^10 s = 240 us of queueing.
fn star(switch: &str) -> String {
    let flows: String = (0..4).map(|s| format!("[[flows]]\nsrc = {s}\ndst = 4\n")).collect();
    format!(
        "[run]\nduration = \"50ms\"\n[topology]\nkind = \"star\"\nhosts = 5\nlink_rate = \"10Gbps\"\n\
         link_delay = \"25us\"\n[switch]\n{switch}\n[transport]\ncc = \"dctcp\"\n{flows}"
    )
}

fn warnings(text: &str) -> Vec<String> {
    of(&Config::from_toml(text).unwrap_or_else(|e| panic!("{e}")))
}

/// The one warning that names `key` (panics unless exactly one does).
fn about(w: &[String], key: &str) -> String {
    let hits: Vec<&String> = w.iter().filter(|l| l.starts_with(&format!("{key} ="))).collect();
    assert_eq!(hits.len(), 1, "one warning for {key} in {w:#?}");
    hits[0].clone()
}

/// RFC 8033's 15 ms target is above the 240 us the buffer holds, and its
/// 150 ms burst allowance outlasts the 50 ms run; T_UPDATE (15 ms) fits.
#[test]
fn pie_defaults_on_a_data_centre_port_warn_naming_the_keys() {
    let w = warnings(&star("marking = \"pie\""));
    assert_eq!(w.len(), 2, "{w:#?}");
    let target = about(&w, "switch.pie_target");
    assert!(target.starts_with("switch.pie_target = 15ms: not below the queueing delay"), "{target}");
    assert!(target.contains("switch.buffer = 300000B") && target.contains("(240us at 10Gbps)"), "{target}");
    assert!(target.contains("marking \"pie\" never acts"), "{target}");
    assert!(target.contains("switch.recipe = \"pie\""), "{target}");
    let burst = about(&w, "switch.pie_max_burst");
    assert!(burst.contains("not shorter than the run (run.duration = 50ms)"), "{burst}");
}

/// RFC 9332's 15 ms Classic target and its 800 us L4S ramp both lie
/// beyond the 240 us buffer; its 15 ms T_UPDATE fits the run.
#[test]
fn dualpi2_defaults_on_a_data_centre_port_warn_naming_the_keys() {
    let w = warnings(&star("qdisc = \"dualpi2\""));
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(about(&w, "switch.dualpi2_target").contains("qdisc \"dualpi2\" never acts"));
    assert!(about(&w, "switch.dualpi2_min_th").starts_with("switch.dualpi2_min_th = 800us:"));
}

/// The RFCs' own setting (bench/pie_star.toml: 1 Gbps, 20 MB, so 160 ms of
/// buffer, and 60 s) and a data-centre setting below the buffer warn of
/// nothing.
#[test]
fn settings_that_fit_the_network_warn_of_nothing() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench");
    for f in ["pie_star.toml", "dualpi2_star.toml"] {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        assert_eq!(warnings(&text), Vec::<String>::new(), "{f}");
    }
    let dc = "marking = \"pie\"\npie_target = \"20us\"\npie_max_burst = \"1ms\"";
    assert_eq!(warnings(&star(dc)), Vec::<String>::new());
    // 239 us is below the 240 us the buffer holds; 240 us is not.
    assert!(warnings(&star("marking = \"tcn\"\ntcn_threshold = \"239us\"")).is_empty());
    assert_eq!(warnings(&star("marking = \"tcn\"\ntcn_threshold = \"240us\"")).len(), 1);
}

/// A threshold at or above the buffer (200 pkt × 1,500 B = the 300 KB) is
/// never reached; one per queue is checked queue by queue. Per-pool marking
/// judges the switch's whole pool, which one port's buffer does not bound.
#[test]
fn a_threshold_above_the_buffer_warns_but_not_for_the_pool() {
    let w = warnings(&star("marking = \"per-queue\"\nthreshold = \"200pkt\""));
    assert!(about(&w, "switch.threshold").contains("not below switch.buffer = 300000B"), "{w:?}");
    assert!(warnings(&star("marking = \"per-queue\"\nthreshold = \"199pkt\"")).is_empty());
    let list = "marking = \"per-queue\"\nqueues = 2\nthreshold = [\"65pkt\", \"400KB\"]";
    let w = warnings(&star(list));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("switch.threshold[1] = 400000B: not below"), "{w:?}");
    assert!(warnings(&star("marking = \"per-pool\"\nthreshold = \"400KB\"")).is_empty());
    // RED's ramp starts at red_min: above the buffer, it never starts.
    let red = "marking = \"red\"\nred_min = \"400KB\"\nred_max = \"500KB\"\nred_pmax = 0.1";
    assert!(about(&warnings(&star(red)), "switch.red_min").contains("marking \"red\" never acts"));
}

/// A default stated in words is checked too: CoDel's 5 ms (RFC 8289) in
/// FQ-CoDel, whose limit is the port's 300 KB; the FQ-CoDel in the DCN
/// recipe's 5 us fits.
#[test]
fn a_default_given_in_words_is_checked() {
    let w = warnings(&star("qdisc = \"fq-codel\""));
    assert!(about(&w, "switch.codel_target").starts_with("switch.codel_target = 5ms:"), "{w:?}");
    assert!(warnings(&star("recipe = \"fq-codel\"")).is_empty());
}

/// Leaf-spine with 40 Gbps uplinks: the fabric's ports inherit [switch]'s
/// TCN threshold, 100 us, which fits 240 us at 10 Gbps but not the 60 us
/// the buffer holds at 40 Gbps. The warning names the key where it is set;
/// [fabric] setting its own clears it.
#[test]
fn each_kind_of_port_is_checked_at_its_own_rate() {
    let net = "[run]\nduration = \"10ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\n\
               hosts_per_leaf = 2\nlink_rate = \"10Gbps\"\nuplink_rate = \"40Gbps\"\nlink_delay = \"5us\"\n\
               [switch]\nmarking = \"tcn\"\ntcn_threshold = \"100us\"\n[[flows]]\nsrc = 0\ndst = 3\n";
    let w = warnings(net);
    let line = about(&w, "switch.tcn_threshold");
    assert!(line.contains("on the ports in the fabric (60us at 40Gbps)"), "{line}");
    assert!(warnings(&format!("{net}[fabric]\ntcn_threshold = \"50us\"\n")).is_empty());
    let w = warnings(&format!("{net}[fabric]\ntcn_threshold = \"70us\"\n"));
    assert!(about(&w, "fabric.tcn_threshold").contains("60us at 40Gbps"), "{w:?}");
}

/// The run's summary carries them (and a run without any has no
/// `warnings` key, so its summary is what it always was).
#[test]
fn the_summary_carries_the_warnings() {
    let run = |text: &str| crate::run(&Config::from_toml(text).unwrap(), &mut |_, _| true).unwrap().summary;
    let s = run(&star("marking = \"pie\""));
    let w: Vec<String> = serde_json::from_value(s["warnings"].clone()).unwrap();
    assert_eq!(w, warnings(&star("marking = \"pie\"")));
    assert!(!run(&star("marking = \"pie\"\npie_target = \"20us\"\npie_max_burst = \"1ms\"")).contains_key("warnings"));
}
