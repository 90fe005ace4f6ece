//! `run.trace_cwnd` (issue 55): the windows of the flows it names, a row
//! at a flow's first send and at each change, in every engine alike, and
//! no table at all when it names none.

use crate::config::Config;
use crate::outputs::report::{Column, Report};

/// Two DCTCP flows into host 2 of a 10 Gbps star marking above 20 packets
/// (K below the 2 × 10-segment initial burst plus what slow start adds,
/// so the first marks come within the first RTTs), 2 ms.
fn run(extra: &str) -> Result<Report, String> {
    let text = format!(
        "[run]\nduration = \"2ms\"\n{extra}\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\n\
         link_delay = \"5us\"\n[switch]\nmarking = \"per-queue\"\nthreshold = \"20pkt\"\n[transport]\ncc = \"dctcp\"\n\
         [[flows]]\nsrc = 0\ndst = 2\n[[flows]]\nsrc = 1\ndst = 2\n"
    );
    let cfg = Config::from_toml(&text).map_err(|e| e.0)?;
    crate::run(&cfg, &mut |_, _| true).map_err(|e| e.to_string())
}

/// (time, flow, cwnd, ssthresh) of every row.
fn rows(r: &Report) -> Vec<(f64, u32, f64, f64)> {
    let t = r.table("cwnd").expect("a cwnd table");
    let (Some(Column::F64(time)), Some(Column::U32(flow)), Some(Column::F64(cwnd)), Some(Column::F64(ss))) =
        (t.column("time"), t.column("flow"), t.column("cwnd"), t.column("ssthresh"))
    else {
        panic!("the cwnd table's columns");
    };
    (0..time.len()).map(|i| (time[i], flow[i], cwnd[i], ss[i])).collect()
}

#[test]
fn a_traced_window_is_written_at_each_change() {
    let r = run("trace_cwnd = [1]").unwrap();
    let rows = rows(&r);
    assert!(rows.len() > 10, "{} rows", rows.len());
    // Only flow 1, in time order, each row a change from the one before.
    assert!(rows.iter().all(|x| x.1 == 1));
    assert!(rows.windows(2).all(|w| w[0].0 <= w[1].0 && (w[0].2, w[0].3) != (w[1].2, w[1].3)));
    // The first row is the window its first data leave with: transport.init_cwnd
    // = 10 segments, ssthresh not yet set (its initial value, above any cwnd).
    let (t0, _, c0, s0) = rows[0];
    assert!(t0 > 0.0 && c0 == 10.0 && s0 > 1e6, "{:?}", rows[0]);
    // Slow start grows it; the first ECE cuts it (DCTCP: cwnd × (1 − α/2))
    // and sets ssthresh to the new window, below where it stood.
    let cut = rows.windows(2).position(|w| w[1].2 < w[0].2).expect("a cut after the marks");
    assert!(rows[..=cut].windows(2).all(|w| w[1].2 > w[0].2), "slow start only grows it");
    assert!(rows[cut + 1].3 < rows[cut].2, "{:?} -> {:?}", rows[cut], rows[cut + 1]);
    assert!(r.summary["ce_marks"].as_u64().unwrap() > 0);
}

/// Off, nothing is written (no table, so every other run's outputs are
/// what they were), and the run is the same run: tracing reads the
/// window, it never changes it.
#[test]
fn untraced_runs_write_no_table_and_tracing_changes_nothing_else() {
    let off = run("").unwrap();
    let on = run("trace_cwnd = [0, 1]").unwrap();
    assert!(off.table("cwnd").is_none());
    assert!(rows(&on).iter().any(|x| x.1 == 0));
    for k in ["events", "packets_sent", "ce_marks", "packets_dropped"] {
        assert_eq!(off.summary[k], on.summary[k], "{k}");
    }
}

#[test]
fn bad_flow_ids_get_one_line() {
    let e = run("trace_cwnd = [2]").err().unwrap();
    assert_eq!(e, "run.trace_cwnd[0] = 2: no such flow; flows are 0..1");
    let e = run("trace_cwnd = [1, 1]").err().unwrap();
    assert_eq!(e, "run.trace_cwnd[1] = 1: listed twice; each flow is traced once");
}

/// The partitioned engine: each flow's rows come from its sender's part,
/// merged by time, then flow; the same for 1 and 2 threads (its outputs
/// never depend on the thread count), with rows for both flows, whose
/// senders sit in different parts.
#[test]
fn the_partitioned_engine_merges_the_parts_windows() {
    let leaf_spine = |threads: u32| {
        let text = format!(
            "[run]\nduration = \"2ms\"\nthreads = {threads}\ntrace_cwnd = [0, 1]\n[topology]\nkind = \"leaf-spine\"\n\
             leaves = 2\nspines = 2\nhosts_per_leaf = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"5us\"\n[switch]\n\
             marking = \"per-queue\"\nthreshold = \"20pkt\"\n[transport]\ncc = \"dctcp\"\n\
             [[flows]]\nsrc = 0\ndst = 3\n[[flows]]\nsrc = 2\ndst = 1\n"
        );
        crate::run(&Config::from_toml(&text).unwrap(), &mut |_, _| true).ok().unwrap()
    };
    let (one, two) = (rows(&leaf_spine(1)), rows(&leaf_spine(2)));
    assert_eq!(one, two);
    assert!(one.iter().any(|x| x.1 == 0) && one.iter().any(|x| x.1 == 1));
    assert!(one.windows(2).all(|w| (w[0].0, w[0].1) <= (w[1].0, w[1].1)), "by time, then flow");
}
