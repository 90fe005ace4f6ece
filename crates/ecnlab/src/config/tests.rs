//! The config's tests: every bad input gets one line naming the key, the
//! value and what is allowed; resolved forms are canonical; presets and
//! profiles fill what is left out.

use crate::config::error::edit_distance;
use crate::config::*;

const BASE: &str = r#"
[run]
duration = "10ms"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "25us"
"#;

fn err(extra: &str) -> String {
    Config::from_toml(&format!("{BASE}{extra}")).unwrap_err().0
}

/// ML-ECN's bad inputs (issue 11): each names the key, the value and
/// what is allowed.
#[test]
fn ml_ecn_classes_refuse_bad_input() {
    let ml =
        "[host]\nstages = [\"100KB\", \"10MB\"]\n[switch]\nqueues = 4\nmarking = \"ml-ecn\"\nthreshold = \"65pkt\"\n";
    let ok = format!("{ml}small_queues = [0, 1]\nmedium_queues = [2]\nlarge_queues = [3]\n");
    Config::from_toml(&format!("{BASE}{ok}")).unwrap();
    let e = err(&format!("{ml}small_queues = [0, 1]\nmedium_queues = [1]\nlarge_queues = [3]\n"));
    assert_eq!(e, "switch.medium_queues = 1: queue 1 is already a small queue: a queue serves one class");
    let e = err(&format!("{ml}small_queues = [0, 1]\nmedium_queues = []\nlarge_queues = [3]\n"));
    assert_eq!(e, "switch.medium_queues = []: every class needs at least one queue");
    let e = err(&format!("{ml}small_queues = [0, 1]\nlarge_queues = [3]\n"));
    assert_eq!(e, "switch.medium_queues = []: every class needs at least one queue");
    let e = err(&format!("{ok}mlecn_levels = 0\n"));
    assert_eq!(e, "switch.mlecn_levels = 0: must be at least 1 (ML-ECN §IV: 4)");
    let e = err(&format!("{ok}large_stages = [4]\n"));
    assert_eq!(e, "switch.large_stages = 4: stages are 1 to 3 (host.stages has 2 threshold(s))");
    let e = err(&format!("{ok}medium_stages = [2, 3]\n"));
    assert!(e.starts_with("switch.large_stages: by default takes stage 3"), "{e}");
    let e = err(&ok.replace("[\"100KB\", \"10MB\"]", "[\"10MB\", \"100KB\"]"));
    assert_eq!(e, "host.stages[1] = 100000B: thresholds must increase (host.stages[0] is 10000000B)");
    let e = err("[switch]\nqueues = 2\nmarking = \"ml-ecn\"\nthreshold = \"65pkt\"\n");
    assert!(e.starts_with("switch.marking = \"ml-ecn\": needs the queue classes"), "{e}");
    let e = err("[switch]\nqueues = 2\nsmall_queues = [0]\nmedium_queues = [1]\nlarge_queues = [1]\n");
    assert!(e.starts_with("switch.small_queues: classes choose queues by stage, but host.stages is empty"), "{e}");
}

#[test]
fn parses_minimal() {
    let c = Config::from_toml(BASE).unwrap();
    assert_eq!(c.end(), 10_000_000_000);
    assert_eq!(c.switch.queues, 1);
    assert_eq!(c.transport.init_rto(), c.transport.min_rto.0);
}

/// The resolved form parses back to itself, and two spellings of one
/// run (units, defaults left out or written, a preset or its values)
/// resolve alike: the sweep store's key depends on both.
#[test]
fn resolved_form_is_canonical() {
    let resolve = |t: &str| Config::from_toml(t).unwrap().resolved_json();
    let a = resolve(&format!("{BASE}[transport]\nmin_rto = \"5ms\"\n[switch]\nqueues = 2\n"));
    let b = resolve(
        "[run]\nduration = \"0.01s\"\nseed = 1\n[topology]\nkind = \"star\"\nhosts = 3\n\
             link_rate = \"10000Mbps\"\nlink_delay = \"25000ns\"\n[transport]\ninit_rto = \"5000us\"\n\
             [switch]\nqueues = 2\nquantum = [\"1500B\", \"1.5KB\"]\n",
    );
    assert_eq!(a, b);
    let again = Config::from_json(&a.to_string()).unwrap().resolved_json();
    assert_eq!(a, again);
    assert_eq!(a["run"]["duration"], "10ms");
    assert_eq!(a["topology"]["link_rate"], "10Gbps");
    // A different value is a different run.
    assert_ne!(a, resolve(&format!("{BASE}[switch]\nqueues = 2\nquantum = \"1501B\"\n")));
    // Presets expand to their values, so naming them or writing them out agree.
    let p = resolve("[run]\nduration = \"1ms\"\n[topology]\npreset = \"mqecn\"\n");
    let q = Config::from_json(&p.to_string()).unwrap().resolved_json();
    assert_eq!(p, q);
    assert_eq!(p["topology"]["leaves"], 12);
}

/// WFQ takes MQ-ECN (both forms); sp_queues belongs to sp-dwrr alone,
/// and a fabric with a scheduler of its own does not inherit the
/// switch's strict queues.
#[test]
fn wfq_combinations() {
    let ok = |extra: &str| Config::from_toml(&format!("{BASE}{extra}")).map(|_| ()).map_err(|e| e.0);
    assert_eq!(ok("[switch]\nqueues = 2\nscheduler = \"wfq\"\nmarking = \"mq-ecn\"\nthreshold = \"65pkt\"\n"), Ok(()));
    let red = "red_min = \"10pkt\"\nred_max = \"30pkt\"\nred_pmax = 0.1\n";
    assert_eq!(ok(&format!("[switch]\nqueues = 2\nscheduler = \"wfq\"\nmarking = \"mq-ecn\"\n{red}")), Ok(()));
    let sp_dwrr = "[switch]\nqueues = 3\nscheduler = \"sp-dwrr\"\nsp_queues = 2\n";
    assert_eq!(ok(&format!("{sp_dwrr}[fabric]\nscheduler = \"wfq\"\n")), Ok(()));
    assert_eq!(
        ok(&format!("{sp_dwrr}[fabric]\nscheduler = \"wfq\"\nsp_queues = 2\n")),
        Err("fabric.sp_queues = 2: only sp-dwrr has strict queues (fabric.scheduler is \"wfq\"); leave sp_queues out"
            .into())
    );
    let e = err("[switch]\nqueues = 2\nscheduler = \"sp\"\nmarking = \"mq-ecn\"\nthreshold = \"65pkt\"\n");
    assert!(e.starts_with("switch.marking = \"mq-ecn\": needs a weighted scheduler") && e.contains("wfq"), "{e}");
}

/// `[host]`: one error per bad key, naming it, the value and what is
/// allowed; the section resolves with its defaults (CEDM §II-A: 64 KB,
/// β = 1/3, 2 ticks of 1 ms) whether written or not.
#[test]
fn host_section_errors_and_defaults() {
    let e = err("[host]\nlso = true\nlso_fraction = 1.5\n");
    assert_eq!(e, "host.lso_fraction = 1.5: must be in (0, 1]: the share of cwnd one segment may take");
    let e = err("[host]\nlso_fraction = 0\n");
    assert!(e.starts_with("host.lso_fraction = 0: must be in (0, 1]"), "{e}");
    let e = err("[host]\nlso_fraction = -0.2\n");
    assert!(e.starts_with("host.lso_fraction = -0.2: must be in (0, 1]"), "{e}");
    let e = err("[host]\nlso_max = \"1000B\"\n");
    assert_eq!(e, "host.lso_max = 1000B: must hold at least one full packet (1500B: transport.mss + transport.header)");
    let e = err("[host]\ngro_max = \"1KB\"\ninterrupt_coalescing = \"20us\"\ngro = true\n");
    assert!(e.starts_with("host.gro_max = 1000B: must hold at least one full packet"), "{e}");
    let e = err("[host]\nlso_defer_limit = \"0ms\"\n");
    assert!(e.starts_with("host.lso_defer_limit = 0s: must be positive"), "{e}");
    let e = err("[host]\nlso_defer_limit = \"-1ms\"\n");
    assert!(e.starts_with("host.lso_defer_limit: \"-1ms\""), "{e}");
    let e = err("[host]\ninterrupt_coalescing = \"-20us\"\n");
    assert!(e.starts_with("host.interrupt_coalescing: \"-20us\""), "{e}");
    let e = err("[host]\ninterrupt_coalescing = 20\n");
    assert!(e.starts_with("host.interrupt_coalescing: 20: a duration needs a unit"), "{e}");
    let e = err("[host]\ninterrupt_frames = 8\n");
    assert!(e.starts_with("host.interrupt_frames = 8: needs host.interrupt_coalescing"), "{e}");
    let e = err("[host]\ninterrupt_frames = -1\ninterrupt_coalescing = \"20us\"\n");
    assert_eq!(e, "host.interrupt_frames = -1: must be a whole number, 0 or more");
    let e = err("[host]\ngro = true\n");
    assert!(e.starts_with("host.gro = true: needs host.interrupt_coalescing"), "{e}");
    let e = err("[host]\nlso = \"yes\"\n");
    assert_eq!(e, "host.lso = \"yes\": must be true or false");
    let e = err("[host]\ntso = true\n");
    assert!(e.starts_with("host.tso: unknown field `tso`;"), "{e}");
    assert!(e.contains("`lso`"), "{e}");
    let e = Config::from_toml(&format!("host = 1\n{BASE}")).unwrap_err().0;
    assert_eq!(e, "host: a number (1); expected a table, [host] with its keys");
    let a = Config::from_toml(BASE).unwrap().resolved_json();
    let h = &a["host"];
    assert_eq!(
        (h["lso"].clone(), h["lso_max"].clone(), h["lso_fraction"].clone()),
        (false.into(), "64000B".into(), 0.333.into())
    );
    assert_eq!((h["lso_defer_limit"].clone(), h["interrupt_coalescing"].clone()), ("2ms".into(), "0s".into()));
    let b =
        Config::from_toml(&format!("{BASE}[host]\nlso = false\nlso_max = \"64KB\"\ngro_max = \"64000B\"\n")).unwrap();
    assert_eq!(a, b.resolved_json());
}

#[test]
fn duration_is_optional_only_for_finite_traffic() {
    let topo = "[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"25us\"\n";
    let sized = "[[flows]]\nsrc = 0\ndst = 1\nsize = \"64KB\"\n";
    let c = Config::from_toml(&format!("[run]\nseed = 2\n{topo}{sized}")).unwrap();
    assert_eq!(c.end(), NO_END);
    let e = Config::from_toml(&format!("[run]\nseed = 2\n{topo}[[flows]]\nsrc = 0\ndst = 1\n")).unwrap_err().0;
    assert!(e.starts_with("run.duration: missing") && e.contains("flows[0] is long-lived"), "{e}");
    let e = Config::from_toml(&format!("[run]\nseed = 2\n{topo}")).unwrap_err().0;
    assert!(e.starts_with("run.duration: missing") && e.contains("nothing to wait for"), "{e}");
    let ping = "[[ping]]\nsrc = 0\ndst = 1\ninterval = \"1ms\"\n";
    let e = Config::from_toml(&format!("[run]\nseed = 2\n{topo}{sized}{ping}")).unwrap_err().0;
    assert!(e.contains("[[ping]]"), "{e}");
}

/// The comparators' keys: each refused with another scheme (naming the
/// key, its value, the marking in force and the one that uses it), and
/// range errors naming what is allowed.
#[test]
fn comparator_keys_errors() {
    let sw = |keys: &str| err(&format!("[switch]\nqueues = 2\nthreshold = \"20pkt\"\n{keys}"));
    assert_eq!(
        sw("marking = \"per-port\"\nmmecn_pmax = 0.5\n"),
        "switch.mmecn_pmax = 0.5: set, but marking \"per-port\" does not use it (only \"mm-ecn\" does)"
    );
    assert_eq!(
        sw("marking = \"a-ecn\"\ndemepro_share = \"threshold\"\n"),
        "switch.demepro_share = \"threshold\": set, but marking \"a-ecn\" does not use it (only \"deme-pro\" does)"
    );
    assert_eq!(
        sw("marking = \"pmsb\"\naecn_k_min = \"3pkt\"\n"),
        "switch.aecn_k_min = 3pkt: set, but marking \"pmsb\" does not use it (only \"a-ecn\" does)"
    );
    assert_eq!(
        sw("marking = \"mm-ecn\"\nmmecn_k_low = \"30pkt\"\n"),
        "switch.mmecn_k_low = 30pkt: must not exceed threshold (K_high = 30000B)"
    );
    assert_eq!(sw("marking = \"mm-ecn\"\nmmecn_pmax = 0\n"), "switch.mmecn_pmax = 0: must be in (0, 1]");
    let e = sw("marking = \"mm-ecn\"\nmmecn_position = \"head\"\n");
    assert!(e.starts_with("switch.mmecn_position: unknown variant `head`, expected"), "{e}");
    assert!(e.contains("front") && e.contains("tail"), "{e}");
    let e = sw("marking = \"mm-ecn\"\ndequeue_marking = true\n");
    assert!(e.starts_with("switch.dequeue_marking = true: \"mm-ecn\" decides on its own sides (mmecn_position"), "{e}");
    assert_eq!(
        sw("marking = \"a-ecn\"\naecn_epoch = 0\n"),
        "switch.aecn_epoch = 0: must be at least 1 enqueued packet (default 64)"
    );
    assert_eq!(
        sw("marking = \"a-ecn\"\naecn_up = \"0B\"\n"),
        "switch.aecn_up = 0B: must be positive (default \"1pkt\")"
    );
    assert!(
        sw("marking = \"a-ecn\"\naecn_k_min = \"21pkt\"\n").starts_with("switch.aecn_k_min = 21pkt: must be positive")
    );
    let e = sw("marking = \"pmsb\"\npmsb_share = \"busy\"\n");
    assert!(e.starts_with("switch.pmsb_share: unknown variant `busy`") && e.contains("active"), "{e}");
    let e = err("[switch]\nmarking = \"deme-pro\"\n");
    assert!(e.starts_with("switch.threshold: missing; marking \"deme-pro\" needs the standard threshold K"), "{e}");
    let e = err("[switch]\nqueues = 2\nmarking = \"pmsb\"\nthreshold = [\"20pkt\", \"20pkt\"]\n");
    assert!(e.starts_with("switch.threshold = a list: only per-queue marking"), "{e}");
    // Each scheme's own keys are accepted, the fabric inheriting them.
    for keys in [
        "marking = \"mm-ecn\"\nmmecn_k_low = \"10pkt\"\nmmecn_pmax = 0.3\nmmecn_position = \"tail\"\n",
        "marking = \"a-ecn\"\naecn_epoch = 32\naecn_up = \"2pkt\"\naecn_down = \"500B\"\naecn_k_min = \"4pkt\"\n",
        "marking = \"deme-pro\"\ndemepro_share = \"threshold\"\n",
        "marking = \"pmsb\"\npmsb_share = \"active\"\n",
    ] {
        Config::from_toml(&format!("{BASE}[switch]\nqueues = 2\nthreshold = \"20pkt\"\n{keys}[fabric]\n")).unwrap();
    }
}

#[test]
fn errors_name_key_value_and_allowed() {
    let e = err("[switch]\nscheduler = \"dwr\"\n");
    assert!(e.starts_with("switch.scheduler: unknown variant `dwr`"), "{e}");
    assert!(e.contains("sp-dwrr"), "{e}");
    let e = err("[switch]\nqueus = 2\n");
    assert!(e.contains("unknown field `queus`") && e.contains("queues"), "{e}");
    // [switch]'s long list of keys is cut to the nearest three.
    let e = err("[switch]\nbuffe = 0\n");
    assert!(e.starts_with("switch.buffe: unknown field `buffe`; of the "), "{e}");
    assert!(e.ends_with(" keys allowed here the nearest are `buffer`, `queues`, `pfc`"), "{e}");
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    let e = err("[switch]\nbuffer = \"300Kb\"\n");
    assert!(e.starts_with("switch.buffer: \"300Kb\": unknown size unit"), "{e}");
    let e = err("[switch]\nmarking = \"per-queue\"\n");
    assert!(e.starts_with("switch.threshold: missing"), "{e}");
    let e = err("[[flows]]\nsrc = 0\ndst = 3\n");
    assert!(e.starts_with("flows[0].dst = 3: no such host"), "{e}");
    let e = err("[switch]\nqueues = 2\nmarking = \"mq-ecn\"\nscheduler = \"sp\"\nthreshold = \"65pkt\"\n");
    assert_eq!(e, "switch.marking = \"mq-ecn\": needs a weighted scheduler: wrr, dwrr, sp-dwrr (round-time estimate) or wfq (weight-sum estimate)");
    let e = err("[switch]\nqueues = 2\nquantum = [\"1500B\"]\n");
    assert!(e.starts_with("switch.quantum = a list of 1"), "{e}");
    let e = err("[switch]\nqueues = 3\nscheduler = \"wfq\"\nsp_queues = 2\n");
    assert_eq!(
        e,
        "switch.sp_queues = 2: only sp-dwrr has strict queues (switch.scheduler is \"wfq\"); leave sp_queues out"
    );
    let e = err("[switch]\ndequeue_marking = true\n");
    assert_eq!(e, "switch.dequeue_marking = true: needs a marking scheme (switch.marking is \"none\")");
    // A section or entry that is not a table, and a name given as a list.
    let e = Config::from_json(r#"{"run": {"duration": "1ms"}, "topology": [{"kind": "star"}]}"#).unwrap_err().0;
    assert_eq!(e, "topology: a list; expected a table, [topology] with its keys");
    let e = Config::from_toml(&format!("flows = [\"x\"]\n{BASE}")).unwrap_err().0;
    assert_eq!(e, "flows[0]: a string \"x\"; expected a table, a [[flows]] entry with its keys");
    let e = err("[switch]\nscheduler = [\"dwrr\"]\n");
    assert_eq!(e, "switch.scheduler: invalid type: sequence, expected one of sp, wrr, dwrr, sp-dwrr, wfq");
    let e = Config::from_toml(&BASE.replace("hosts = 3", "hosts = 3\necmp = \"random\"")).unwrap_err().0;
    assert!(e.starts_with("topology.ecmp: unknown variant `random`"), "{e}");
    assert!(e.contains("per-flow") && e.contains("per-packet"), "{e}");
    let e = err("[switch]\nbuffer = \"200pkts\"\n");
    assert!(e.starts_with("switch.buffer: \"200pkts\": \"pkts\" is ambiguous"), "{e}");
    let e = err("[switch]\nmarking = \"per-port\"\nthreshold = \"65 packets\"\n");
    assert!(e.starts_with("switch.threshold: \"65 packets\": a threshold is compared with queued bytes"), "{e}");
    let e = err("[transport]\nmin_rto = 5\n");
    assert!(e.starts_with("transport.min_rto: 5: a duration needs a unit"), "{e}");
    // 64 B every 10 ns is 51.2 Gbps, over a 10 Gbps host link.
    let e = err("[[ping]]\nsrc = 0\ndst = 1\ninterval = \"10ns\"\n");
    assert_eq!(
            e,
            "ping[0].interval = 10ns: 64B every 10ns is faster than host0's 10Gbps link; its NIC queue would grow without end"
        );
}

/// Whole disciplines and CoDel (issue 12): each bad input names the
/// key, the value and what is allowed; an override that changes the
/// discipline does not inherit the other discipline's keys.
#[test]
fn whole_disciplines_refuse_bad_input() {
    let fq = "[switch]\nqdisc = \"fq-codel\"\n";
    assert_eq!(
        err(&format!("{fq}fq_flows = 0\n")),
        "switch.fq_flows = 0: must be 1 to 65536 hash buckets (Linux's default and the paper's: 1024)"
    );
    assert_eq!(
        err(&format!("{fq}codel_target = \"100us\"\ncodel_interval = \"100us\"\n")),
        "switch.codel_target = 100us: must be below codel_interval (100us): CoDel drops only after the \
             sojourn has stayed above target for an interval"
    );
    // The default interval (100 ms) against a target above it.
    assert!(err(&format!("{fq}codel_target = \"200ms\"\n")).starts_with("switch.codel_target = 200ms: must be below"));
    assert_eq!(err(&format!("{fq}fq_limit = 0\n")), "switch.fq_limit = 0: must be at least 1 packet (default 10240)");
    assert_eq!(
        err(&format!("{fq}fq_quantum = \"0B\"\n")),
        "switch.fq_quantum = 0B: must be positive (default 1514B, one Ethernet MTU)"
    );
    assert_eq!(err(&format!("{fq}codel_interval = \"0s\"\n")), "switch.codel_interval = 0s: must be positive");
    // Composed keys with a whole discipline.
    let e = err(&format!("{fq}marking = \"mq-ecn\"\nthreshold = \"65pkt\"\n"));
    assert!(e.starts_with("switch.marking = \"mq-ecn\": switch.qdisc \"fq-codel\" is a whole discipline"), "{e}");
    assert!(e.ends_with("(set switch.qdisc = \"composed\" to use it)"), "{e}");
    let e = err("[switch]\nqdisc = \"pfabric\"\nscheduler = \"sp\"\n");
    assert!(e.starts_with("switch.scheduler = \"sp\": switch.qdisc \"pfabric\" is a whole discipline"), "{e}");
    // A discipline's keys where it does not run.
    assert_eq!(
        err("[switch]\nfq_flows = 1024\n"),
        "switch.fq_flows = 1024: set, but qdisc \"composed\" with marking \"none\" does not use it \
             (only qdisc \"fq-codel\" does)"
    );
    assert_eq!(
        err("[switch]\nqdisc = \"pfabric\"\ncodel_target = \"5us\"\n"),
        "switch.codel_target = 5us: set, but qdisc \"pfabric\" does not use it \
             (only qdisc \"fq-codel\" or marking \"codel\" does)"
    );
    let e = err("[switch]\nqdisc = \"fq_codel\"\n");
    assert!(e.starts_with("switch.qdisc: unknown variant `fq_codel`") && e.contains("fq-codel"), "{e}");
    let e = err("[switch]\nmarking = \"codel\"\nthreshold = \"20pkt\"\n");
    assert!(e.starts_with("switch.threshold: set, but marking \"codel\" does not use it"), "{e}");
    let e = err("[switch]\nmarking = \"codel\"\ndequeue_marking = true\n");
    assert!(e.starts_with("switch.dequeue_marking = true: \"codel\" decides on its own sides"), "{e}");
    // The same checks in [fabric] and [nic].
    let e = err("[nic]\nqdisc = \"fq-codel\"\nfq_flows = 0\n");
    assert!(e.starts_with("nic.fq_flows = 0: must be 1 to 65536"), "{e}");
    let e = err("[switch]\nqdisc = \"fq-codel\"\n[fabric]\nmarking = \"per-port\"\nthreshold = \"20pkt\"\n");
    assert!(e.starts_with("fabric.marking = \"per-port\": fabric.qdisc \"fq-codel\" is a whole discipline"), "{e}");
    let e = err("[nic]\nqdisc = \"pfabric\"\nfq_limit = 10\n");
    assert!(e.starts_with("nic.fq_limit = 10: set, but qdisc \"pfabric\" does not use it"), "{e}");

    // The paper's setting: FQ-CoDel on host links in both directions,
    // the fabric composed with the switch's marking keys of its own.
    let paper = "[switch]\nqdisc = \"fq-codel\"\ncodel_target = \"5us\"\ncodel_interval = \"100us\"\n\
                     [fabric]\nqdisc = \"composed\"\nmarking = \"per-port\"\nthreshold = \"20pkt\"\n\
                     [nic]\ncodel_ecn = false\n";
    let c = Config::from_toml(&format!("{BASE}{paper}")).unwrap();
    let (fabric, nic) = (&c.fabric_port, c.nic_port.as_ref().unwrap());
    let codel =
        |p: &PortCfg| crate::switch::codel::CodelParams::read(&Table::new("switch", p.extra.clone()), true).unwrap();
    assert_eq!(
        (fabric.qdisc.as_str(), codel(fabric).codel_target, fabric.marking.as_str()),
        ("composed", None, "per-port")
    );
    assert_eq!(
        (nic.qdisc.as_str(), codel(nic).codel_target, codel(nic).codel_ecn),
        ("fq-codel", Some(Dur(5_000_000)), Some(false))
    );
    // A composed [switch] with MQ-ECN and an FQ-CoDel NIC: the NIC
    // does not inherit the marking.
    let mq = "[switch]\nqueues = 2\nmarking = \"mq-ecn\"\nthreshold = \"20pkt\"\n[nic]\nqdisc = \"fq-codel\"\n";
    let c = Config::from_toml(&format!("{BASE}{mq}")).unwrap();
    assert_eq!(c.nic_port.as_ref().unwrap().marking.as_str(), "none");
    // CoDel as a composed queue's marking takes the CoDel keys.
    Config::from_toml(&format!(
        "{BASE}[switch]\nmarking = \"codel\"\ncodel_target = \"5us\"\ncodel_interval = \"100us\"\n"
    ))
    .unwrap();
    // The new keys leave an existing config's resolved form alone
    // (result stores key runs by it).
    let plain = Config::from_toml(BASE).unwrap().resolved_json();
    assert!(plain["switch"].get("qdisc").is_none() && plain.get("nic").is_none());
    // A resolved config resolves again to itself (sweeps run the
    // resolved form): its default quantum, written as a one-entry
    // list, is not "set" for a whole discipline.
    let c = Config::from_toml(&format!("{BASE}{paper}")).unwrap().resolved_json();
    let again = Config::from_json(&c.to_string()).unwrap().resolved_json();
    assert_eq!(c, again);
}

/// Transport tuning profiles (`transport.profile`) and congestion controls'
/// defaults.
mod profiles {
    use crate::config::{CaKind, Config};

    const BASE: &str =
        "[run]\nduration = \"10ms\"\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n";

    fn cfg(extra: &str) -> Config {
        Config::from_toml(&format!("{BASE}{extra}")).unwrap()
    }

    fn err(extra: &str) -> String {
        Config::from_toml(&format!("{BASE}{extra}")).unwrap_err().0
    }

    /// Every row of FQ-CoDel in the DCN's Table II: minrto_ 45 us, maxrto_
    /// 2 s, rtxcur_init_ 45 us, tcpTick_ 1 us, interval_ 6 us (FullTcp's
    /// byte-counted delayed ACK, one segment per ACK), window_ 10^6,
    /// windowInit_ 12, maxcwnd_ = queue − 1, windowOption_ 0 (basic). The
    /// queue is [switch] buffer in packets: 36 KB (pFabric's 2×BDP) is 24
    /// packets of 1500 B → 23; "100 packets" → 99; the default 300 KB → 199.
    #[test]
    fn pfabric_profile_applies_table_ii() {
        let c = cfg("[switch]\nbuffer = \"36864B\"\n[transport]\nprofile = \"pfabric\"\n");
        let t = &c.transport;
        let us = 1_000_000;
        assert_eq!((t.min_rto.0, t.max_rto.0, t.init_rto()), (45 * us, 2_000_000 * us, 45 * us));
        assert_eq!(t.clock_granularity.map(|g| g.0), Some(us));
        assert_eq!((t.delayed_ack, t.delayed_ack_bytes, t.delayed_ack_timeout.0), (1, true, 6 * us));
        assert_eq!((t.rx_window, t.init_cwnd, t.max_cwnd, t.ca), (Some(1_000_000), 12, Some(23), CaKind::Basic));
        let packets = cfg("[switch]\nbuffer = \"100 packets\"\n[transport]\nprofile = \"pfabric\"\n");
        assert_eq!(packets.transport.max_cwnd, Some(99));
        assert_eq!(cfg("[transport]\nprofile = \"pfabric\"\n").transport.max_cwnd, Some(199));
        // The profile only tunes TCP: the cc stays the default DCTCP.
        assert_eq!(c.transport.cc, "dctcp");
    }

    /// A key given explicitly beats the profile, which beats the cc's own
    /// defaults (pFabric's IW 12 and 45 us RTO), which beat the ordinary
    /// defaults (IW 10, 5 ms).
    #[test]
    fn explicit_keys_override_the_profile_and_the_cc_defaults() {
        let c = cfg("[transport]\nprofile = \"pfabric\"\nmin_rto = \"1ms\"\nmax_cwnd = 50\nca = \"standard\"\n");
        let t = &c.transport;
        assert_eq!((t.min_rto.0, t.max_cwnd, t.ca), (1_000_000_000, Some(50), CaKind::Standard));
        assert_eq!((t.init_rto(), t.init_cwnd), (45_000_000, 12), "the rest still comes from the profile");
        let t = cfg("[transport]\ncc = \"pfabric\"\n").transport;
        assert_eq!((t.init_cwnd, t.min_rto.0, t.init_rto(), t.max_cwnd), (12, 45_000_000, 45_000_000, None));
        let t = cfg("[transport]\ncc = \"pfabric\"\ninit_cwnd = 20\n").transport;
        assert_eq!((t.init_cwnd, t.min_rto.0), (20, 45_000_000));
        let t = cfg("[transport]\ncc = \"pfabric\"\nprofile = \"pfabric\"\nmin_rto = \"90us\"\n").transport;
        assert_eq!((t.init_cwnd, t.min_rto.0, t.init_rto()), (12, 90_000_000, 45_000_000));
        let t = cfg("").transport;
        assert_eq!(
            (t.init_cwnd, t.min_rto.0, t.max_cwnd, t.rx_window, t.ca),
            (10, 5_000_000_000, None, None, CaKind::Standard)
        );
    }

    /// The resolved config names the profile and shows every value it set,
    /// and reads back to the same run (keys now explicit); in JSON a null
    /// counts as left out, so the profile still fills it.
    #[test]
    fn resolved_config_shows_the_profile_values() {
        let r = cfg("[transport]\nprofile = \"pfabric\"\n").resolved_json();
        let t = &r["transport"];
        assert_eq!(t["profile"], "pfabric");
        assert_eq!((t["min_rto"].as_str(), t["clock_granularity"].as_str()), (Some("45us"), Some("1us")));
        assert_eq!(
            (t["max_cwnd"].as_u64(), t["rx_window"].as_u64(), t["ca"].as_str()),
            (Some(199), Some(1_000_000), Some("basic"))
        );
        assert_eq!(Config::from_json(&r.to_string()).unwrap().resolved_json(), r);
        let mut plain = cfg("").resolved_json();
        assert!(plain["transport"]["max_cwnd"].is_null());
        plain["transport"]["profile"] = "pfabric".into();
        assert_eq!(Config::from_json(&plain.to_string()).unwrap().transport.max_cwnd, Some(199));
    }

    /// Bad input: one line naming the key, the value and what is allowed.
    #[test]
    fn bad_transport_tuning_is_refused() {
        assert_eq!(
            err("[transport]\nprofile = \"windows\"\n"),
            "transport.profile: unknown variant `windows`, expected one of `pfabric`, `linux`, `dcqcn-paper`, `dcqcn-nic`"
        );
        assert_eq!(
            err("[transport]\nmax_cwnd = 0\n"),
            "transport.max_cwnd = 0: must be at least 1 segment (leave it out for no limit)"
        );
        assert_eq!(
            err("[transport]\nrx_window = 0\n"),
            "transport.rx_window = 0: must be at least 1 packet (leave it out for no limit)"
        );
        assert_eq!(
            err("[transport]\nclock_granularity = \"0us\"\n"),
            "transport.clock_granularity = 0s: must be positive (leave it out for exact timers)"
        );
        assert_eq!(
            err("[transport]\nclock_granularity = \"-1us\"\n"),
            "transport.clock_granularity: \"-1us\": must not be negative"
        );
        let e = err("[transport]\nca = \"cubic\"\n");
        assert_eq!(e, "transport.ca: unknown variant `cubic`, expected `standard` or `basic`");
    }
}

/// Issue 28: a value of the wrong kind gets one line naming the key, the
/// value and what is allowed — the same for every key, whatever table
/// declares it (a section's, a scheme's, `[fabric]`'s), instead of serde's
/// "invalid type: string \"60%\", expected f64". Nothing new is accepted:
/// "60%" is still refused, with the fraction to write instead.
#[test]
fn values_of_the_wrong_kind_are_told_in_words_for_every_key() {
    let w = "[workload]\nkind = \"poisson\"\nflows = 10\n";
    assert_eq!(
        err(&format!("{w}load = \"60%\"\n")),
        "workload.load = \"60%\": must be a number (allowed: (0, 1]); for 60% write 0.6 (a fraction)"
    );
    assert_eq!(
        err(&format!("{w}load = \"0.6\"\n")),
        "workload.load = \"0.6\": must be a number (allowed: (0, 1]); write it without quotes: 0.6"
    );
    assert_eq!(
        err(&format!("{w}load = 0.6\nflows = 1.5\n").replace("flows = 10\n", "")),
        "workload.flows = 1.5: must be a whole number (allowed: 1 to 50000000)"
    );
    assert_eq!(err("[switch]\nqueues = 2.5\n"), "switch.queues = 2.5: must be a whole number (allowed: 1 to 64)");
    assert_eq!(
        err("[switch]\nqueues = 5000000000\n"),
        "switch.queues = 5000000000: must be a whole number up to 4294967295 (allowed: 1 to 64)"
    );
    assert_eq!(
        err("[host]\nlso = \"true\"\n"),
        "host.lso = \"true\": must be true or false; write it without quotes: true"
    );
    assert_eq!(
        err("[transport]\ninit_cwnd = \"16\"\n"),
        "transport.init_cwnd = \"16\": must be a whole number (allowed: 1 or more); write it without quotes: 16"
    );
    // A scheme's key, read by the registry, in [switch], [fabric] and [transport].
    assert_eq!(
        err("[switch]\nmqecn_beta = \"0.75\"\n"),
        "switch.mqecn_beta = \"0.75\": must be a number (allowed: (0, 1)); write it without quotes: 0.75"
    );
    assert_eq!(err("[fabric]\nmqecn_beta = true\n"), "fabric.mqecn_beta = true: must be a number (allowed: (0, 1))");
    assert_eq!(
        err("[transport]\ndctcp_g = \"1/16\"\n"),
        "transport.dctcp_g = \"1/16\": must be a number (allowed: (0, 1])"
    );
    // The unit types (times, rates, sizes, amounts) alike.
    assert_eq!(
        err("[transport]\nmin_rto = true\n"),
        "transport.min_rto = true: must be a duration with a unit, e.g. \"25us\" (allowed: positive)"
    );
    assert_eq!(
        err("[switch]\nbuffer = [1]\n"),
        "switch.buffer = a list: must be an amount with a unit, e.g. \"65pkt\" or \"300KB\" (allowed: positive)"
    );
    // Inside a list: the element's path, no range (the range is the list's).
    let pcap = Config::from_toml(&BASE.replace("[topology]", "pcap = [1]\n[topology]")).unwrap_err().0;
    assert_eq!(pcap, "run.pcap[0] = 1: must be a string (in quotes)");
    assert_eq!(
        err(&format!("{w}load = 0.5\nservice_weights = [1, \"a\"]\n")),
        "workload.service_weights[1] = \"a\": must be a number"
    );
    assert_eq!(
        err("[host]\nstages = \"100KB\"\n"),
        "host.stages = \"100KB\": must be a list ([...]) (allowed: increasing, at most 62)"
    );
}

/// Issue 28: every closed set of names says "did you mean" for a name
/// one slip away, as a misspelled key names the nearest keys: marking
/// schemes, schedulers, disciplines, congestion controls (for the network
/// and for one flow), profiles, recipes, presets and the other named
/// values, distributions. Far from every name, only the list is given.
#[test]
fn a_misspelled_name_gets_did_you_mean_in_every_closed_set() {
    let near = |extra: &str, key: &str, want: &str| {
        let e = err(extra);
        assert!(e.starts_with(&format!("{key}: unknown ")), "{e}");
        assert!(e.ends_with(&format!("; did you mean `{want}`?")), "{e}");
    };
    near("[switch]\nmarking = \"mqecn\"\n", "switch.marking", "mq-ecn");
    near("[switch]\nscheduler = \"dwr\"\n", "switch.scheduler", "dwrr");
    near("[switch]\nqdisc = \"fq_codel\"\n", "switch.qdisc", "fq-codel");
    near("[fabric]\nmarking = \"ML-ECN\"\n", "fabric.marking", "ml-ecn");
    near("[transport]\ncc = \"dctpc\"\n", "transport.cc", "dctcp");
    near("[transport]\nprofile = \"pfabrc\"\n", "transport.profile", "pfabric");
    near("[transport]\nca = \"basc\"\n", "transport.ca", "basic");
    near("[[flows]]\nsrc = 0\ndst = 2\ncc = \"renoo\"\n", "flows[0].cc", "reno");
    near("[switch]\nrecipe = \"mlecn\"\n", "switch.recipe", "ml-ecn");
    near("[host]\nstages = [\"1MB\"]\nstage_by = \"sizes\"\n", "host.stage_by", "size");
    near(
        "[switch]\nmarking = \"mm-ecn\"\nthreshold = \"65pkt\"\nmmecn_position = \"frnt\"\n",
        "switch.mmecn_position",
        "front",
    );
    let e = Config::from_toml("[run]\nduration = \"1ms\"\n[topology]\npreset = \"mqcn\"\n").unwrap_err().0;
    assert!(e.starts_with("topology.preset: unknown variant `mqcn`") && e.ends_with("did you mean `mqecn`?"), "{e}");
    let e = err("[workload]\nkind = \"poisson\"\nload = 0.5\nflows = 10\ndistribution = \"websearch\"\n");
    assert!(e.starts_with("workload.distribution: unknown distribution \"websearch\""), "{e}");
    assert!(e.ends_with("; did you mean `web_search`?"), "{e}");
    // Two names equally near are both offered; none near, none offered.
    assert!(err("[switch]\nscheduler = \"drr\"\n").ends_with("did you mean `wrr` or `dwrr`?"));
    assert_eq!(
        err("[transport]\nprofile = \"windows\"\n"),
        "transport.profile: unknown variant `windows`, expected one of `pfabric`, `linux`, `dcqcn-paper`, `dcqcn-nic`"
    );
    // Every registered name of every kind, one letter short, is found.
    use crate::switch::{marker::MARKINGS, recipe::RECIPES, scheduler::SCHEDULERS, QDISCS};
    let kinds: [(&str, Vec<&str>); 6] = [
        ("switch.marking", MARKINGS.iter().map(|d| d.about.name).collect()),
        ("switch.scheduler", SCHEDULERS.iter().map(|d| d.about.name).collect()),
        ("switch.qdisc", QDISCS.iter().map(|d| d.about.name).collect()),
        ("transport.cc", crate::declarations::registry::ccs().iter().map(|d| d.about.name).collect()),
        ("transport.profile", crate::declarations::registry::profiles().iter().map(|d| d.about.name).collect()),
        ("switch.recipe", RECIPES.iter().map(|d| d.about.name).collect()),
    ];
    for (key, names) in kinds {
        for name in &names {
            let slip = &name[..name.len() - 1];
            let e = error::unknown_name(key, slip, &names).0;
            let offered = e.split("; did you mean ").nth(1).unwrap_or_default();
            assert!(offered.contains(&format!("`{name}`")), "{e}");
        }
    }
    for name in Preset::NAMES.iter().chain(EcmpMode::NAMES).chain(Connections::NAMES).chain(Arrivals::NAMES) {
        let slip = &name[..name.len() - 1];
        let all: Vec<&str> = [Preset::NAMES, EcmpMode::NAMES, Connections::NAMES, Arrivals::NAMES].concat();
        let names: Vec<&str> = all.into_iter().filter(|n| n.len() > 1).collect();
        let e = error::unknown_variant(slip, &names);
        assert!(e.contains("did you mean") && e.contains(&format!("`{name}`")), "{e}");
    }
}

/// Issue 55: a misspelt section is named with the nearest one, a missing
/// [run] or [topology] in one line naming the section (not serde's
/// "missing field"), and a load given as a percentage with the fraction.
#[test]
fn sections_and_percentages_get_a_hint() {
    let e = err("[swtich]\nqueues = 2\n");
    assert!(e.starts_with("swtich: unknown field `swtich`, expected one of `run`"), "{e}");
    assert!(e.ends_with("; did you mean `switch`?"), "{e}");
    // "hosts" is a key of [topology] too: pointed there, and to [host].
    let e = err("[hosts]\nlso = true\n");
    assert!(e.contains("it is a key of [topology]") && e.ends_with("did you mean `host`?"), "{e}");
    let e = Config::from_toml("[run]\nduration = \"1ms\"\n[switch]\nqueues = 2\n").unwrap_err().0;
    assert!(e.starts_with("[topology]: missing; every experiment has one (the network, e.g. kind = "), "{e}");
    let e = Config::from_toml("[topology]\nkind = \"star\"\n").unwrap_err().0;
    assert!(e.starts_with("[run]: missing; every experiment has one"), "{e}");
    let w = "[workload]\nkind = \"poisson\"\nflows = 10\ndistribution = \"web_search\"\n";
    let e = err(&format!("{w}load = 70\n"));
    assert_eq!(e, "workload.load = 70: must lie in (0, 1]: the mean utilisation of each host link; for 70% write 0.7");
    assert!(err(&format!("{w}load = 250\n")).ends_with("host link"), "no hint past 100");
}

/// Issue 28: a key given in the wrong table is pointed to the table that
/// declares it, not to the nearest keys of the wrong one.
#[test]
fn a_key_of_another_table_is_pointed_there() {
    assert_eq!(
        err("[switch]\nstages = [\"100KB\"]\n"),
        "switch.stages: unknown field `stages` here; it is a key of [host]: host.stages"
    );
    assert_eq!(
        err("[fabric]\nstages = [\"100KB\"]\n"),
        "fabric.stages: unknown field `stages` here; it is a key of [host]: host.stages"
    );
    assert_eq!(
        err("[transport]\nmqecn_beta = 0.5\n"),
        "transport.mqecn_beta: unknown field `mqecn_beta` here; it is a key of [switch], with marking \"mq-ecn\": switch.mqecn_beta"
    );
    assert_eq!(
        err("[switch]\ndctcp_g = 0.5\n"),
        "switch.dctcp_g: unknown field `dctcp_g` here; it is a key of [transport], with cc \"dctcp\": transport.dctcp_g"
    );
    assert_eq!(
        err("[host]\nqueues = 8\n"),
        "host.queues: unknown field `queues` here; it is a key of [switch]: switch.queues"
    );
    assert_eq!(
        Config::from_toml(&format!("lso = true\n{BASE}")).unwrap_err().0,
        "lso: unknown field `lso` at the top level; it is a key of [host]: host.lso"
    );
    let e = err("[host]\nsrc = 1\n");
    assert_eq!(e, "host.src: unknown field `src` here; it is a key of [[flows]] and [[ping]]");
    // A key of two schemes of one table: both named, and where to set it.
    assert_eq!(
        err("[transport]\ncodel_target = \"5us\"\n"),
        "transport.codel_target: unknown field `codel_target` here; it is a key of [switch], with qdisc \"fq-codel\" \
         and [switch], with marking \"codel\": switch.codel_target"
    );
    // A key no table has keeps the nearest keys of its own.
    assert!(err("[switch]\nbuffe = 0\n").contains("the nearest are `buffer`"));
}

/// `host.jitter` as a duration or as packets' times at each host's NIC
/// rate: both read, write back in one spelling, and scale as documented
/// (1500 B at 1 Gbps is 12 us); a number without a unit, a negative count
/// or an unknown unit is one line naming the key.
#[test]
fn host_jitter_reads_durations_and_packet_times() {
    use crate::config::values::TimeOrPkts;
    let with = |v: &str| Config::from_toml(&format!("{BASE}[host]\njitter = {v}\n"));
    let cfg = with("\"1pkt\"").unwrap();
    assert_eq!(cfg.host.jitter, TimeOrPkts::Pkts(1.0));
    assert_eq!(cfg.host.jitter.at(1500, 1_000_000_000), 12_000_000);
    assert_eq!(with("\"0.5pkt\"").unwrap().host.jitter.at(1500, 10_000_000_000), 600_000);
    assert_eq!(with("\"2us\"").unwrap().host.jitter.at(1500, 1_000_000_000), 2_000_000);
    assert_eq!(with("\"0pkt\"").unwrap().host.jitter.at(1500, 1_000_000_000), 0);
    let resolved = cfg.resolved_json();
    assert_eq!(resolved["host"]["jitter"], "1pkt", "{resolved}");
    // The default (100 ns) keeps model 4's spelling, so stores' keys stay.
    assert_eq!(Config::from_toml(BASE).unwrap().resolved_json()["host"]["jitter"], "100ns");
    for bad in ["1", "\"-1pkt\"", "\"3 parsecs\""] {
        let e = with(bad).unwrap_err().0;
        assert!(e.contains("host.jitter") && !e.contains('\n'), "{bad}: {e}");
    }
}
