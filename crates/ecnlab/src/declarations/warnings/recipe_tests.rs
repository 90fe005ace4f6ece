//! PIE's and DualPI2's recipes on issue 55's data-centre port: with the
//! RFCs' defaults they never mark (and the run warns); with the recipes
//! they mark and hold the queue near the scaled settings, far below the
//! buffer's 240 us.

use crate::config::Config;
use crate::outputs::report::{Column, Report};
use serde_json::json;

/// A 4 → 1 star at 10 Gbps, 25 us links (100 us base RTT), the default
/// 300 KB buffer (240 us at 10 Gbps), four long flows for 50 ms, the first
/// 10 ms left out of the queue's mean.
fn star(switch: &str, transport: &str) -> Config {
    let flows: String = (0..4).map(|s| format!("[[flows]]\nsrc = {s}\ndst = 4\n")).collect();
    let text = format!(
        "[run]\nduration = \"50ms\"\nwarmup = \"10ms\"\nsample_interval = \"10us\"\n[topology]\nkind = \"star\"\n\
         hosts = 5\nlink_rate = \"10Gbps\"\nlink_delay = \"25us\"\n[switch]\n{switch}\n[transport]\n{transport}\n{flows}"
    );
    Config::from_toml(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// CE marks, drops and the bottleneck's (switch → host4) mean queueing
/// delay in us after the warm-up, from the queue samples.
fn outcome(cfg: &Config) -> (u64, u64, f64) {
    let r: Report = crate::run(cfg, &mut |_, _| true).unwrap();
    let ports = r.table("ports").unwrap();
    let (Some(Column::U32(id)), Some(Column::Str(node)), Some(Column::Str(peer))) =
        (ports.column("port"), ports.column("node"), ports.column("peer"))
    else {
        panic!("the ports table's columns");
    };
    let port = (0..id.len()).find(|&i| node[i] == "switch" && peer[i] == "host4").map(|i| id[i]).unwrap();
    let q = r.table("queues").unwrap();
    let (Some(Column::F64(t)), Some(Column::U32(p)), Some(Column::U64(b))) =
        (q.column("time"), q.column("port"), q.column("bytes"))
    else {
        panic!("the queues table's columns");
    };
    let v: Vec<f64> = (0..t.len()).filter(|&i| p[i] == port && t[i] >= 0.01).map(|i| b[i] as f64).collect();
    let mean_us = v.iter().sum::<f64>() / v.len() as f64 * 8.0 / 10e9 * 1e6;
    let u = |k: &str| r.summary[k].as_u64().unwrap();
    (u("ce_marks"), u("packets_dropped"), mean_us)
}

/// At a 100 us base RTT the PIE recipe is RFC 8033's values a thousandth
/// in time (15 us target), a thousandfold in gain.
#[test]
fn the_pie_recipe_scales_rfc_8033_to_the_base_rtt() {
    let c = star("recipe = \"pie\"", "cc = \"dctcp\"");
    let x = &c.switch.extra;
    assert_eq!(c.switch.marking.as_str(), "pie");
    assert_eq!(
        (&x["pie_target"], &x["pie_tupdate"], &x["pie_max_burst"]),
        (&json!("15us"), &json!("15us"), &json!("150us"))
    );
    assert_eq!((&x["pie_alpha"], &x["pie_beta"]), (&json!(125.0), &json!(1250.0)));
}

/// RFC 9332 A.1 at RTT_max = 100 us: target and T_update 0.15·RTT_max =
/// 15 us, α = 0.1·15us/(100us)² = 150 Hz, β = 0.3/100us = 3,000 Hz; the
/// ramp from 100/7 = 14.286 us over 7.143 us.
#[test]
fn the_dualpi2_recipe_is_rfc_9332s_formulas_at_the_base_rtt() {
    let c = star("recipe = \"dualpi2\"", "cc = \"dctcp\"");
    let x = &c.switch.extra;
    assert_eq!(c.switch.qdisc.as_str(), "dualpi2");
    assert_eq!((&x["dualpi2_target"], &x["dualpi2_tupdate"]), (&json!("15us"), &json!("15us")));
    assert_eq!((&x["dualpi2_alpha"], &x["dualpi2_beta"]), (&json!(150.0), &json!(3000.0)));
    assert_eq!((&x["dualpi2_min_th"], &x["dualpi2_range"]), (&json!("14286ns"), &json!("7143ns")));
}

/// The defaults never mark (issue 55: drop-tail in all but name) and the
/// run warns. PIE's recipe marks and its PI controller holds the mean
/// delay near its 15 us target: within a factor 2 (7.5 to 30 us, an
/// eighth of the buffer at most), for DCTCP and for RFC 3168 senders.
/// (With DCTCP it also drops: the probability DCTCP needs passes
/// pie_mark_ecnth's 10%, above which RFC 8033 §5.1 drops.)
#[test]
fn pie_marks_on_a_data_centre_port_with_its_recipe() {
    let plain = star("marking = \"pie\"", "cc = \"dctcp\"");
    assert_eq!(outcome(&plain).0, 0);
    assert!(!crate::declarations::warnings::of(&plain).is_empty());
    for cc in ["dctcp", "ecn-star"] {
        let c = star("recipe = \"pie\"", &format!("cc = \"{cc}\""));
        assert!(crate::declarations::warnings::of(&c).is_empty(), "{cc}: {:?}", crate::declarations::warnings::of(&c));
        let (marks, _, mean) = outcome(&c);
        assert!(marks > 0, "{cc}: no marks");
        assert!((7.5..=30.0).contains(&mean), "{cc}: mean queueing delay {mean} us");
    }
}

/// DCTCP sending ECT(1) is L4S traffic: DualPI2's ramp marks it from
/// 14.286 us and marks every L packet that waited 21.429 us, so the mean
/// stays below 21.429 us, with marks and without a drop (the 240 us buffer
/// is never reached). The defaults mark nothing.
#[test]
fn dualpi2_marks_on_a_data_centre_port_with_its_recipe() {
    let plain = star("qdisc = \"dualpi2\"", "cc = \"dctcp\"\nect1 = true");
    assert_eq!(outcome(&plain).0, 0);
    let c = star("recipe = \"dualpi2\"", "cc = \"dctcp\"\nect1 = true");
    assert!(crate::declarations::warnings::of(&c).is_empty(), "{:?}", crate::declarations::warnings::of(&c));
    let (marks, drops, mean) = outcome(&c);
    assert!(marks > 0 && drops == 0, "marks {marks}, drops {drops}");
    assert!(mean > 0.0 && mean < 21.429, "mean queueing delay {mean} us");
}
