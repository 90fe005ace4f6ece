//! Every key ecnlab accepts, from the declarations: the catalog behind
//! `ecnlab keys` (as ns-3's `--PrintAttributes`) and the experiment-file
//! reference, `docs/reference.md`, which a test keeps equal to what
//! `reference_markdown` writes.

use crate::config::param::Param;
use crate::config::{
    ConfigError, FlowCfg, HostCfg, IncastCfg, PingCfg, PortCfg, RunCfg, TopologyCfg, TransportCfg, WorkloadCfg,
};
use crate::host::cc::Fill;
use crate::switch::classifier::StageClassKeys;
use crate::switch::marker::MARKINGS;
use crate::switch::pfc::PfcKeys;
use crate::switch::recipe::{self, RECIPES};
use crate::switch::scheduler::SCHEDULERS;
use crate::switch::scheme::About;
use crate::switch::shared_buffer::SharedBufferKeys;
use crate::switch::QDISCS;
use serde_json::{json, Value};

/// A table of keys: a section of the file, or the keys a scheme adds.
pub struct Group {
    /// "section", or the kind of scheme: "qdisc", "scheduler", "marking",
    /// "cc", "recovery", "profile"; or "recipe".
    pub kind: &'static str,
    pub name: &'static str,
    pub doc: &'static str,
    pub source: &'static str,
    pub params: Vec<&'static Param>,
    /// Keys it fills in when they are left out, as (key, value): a
    /// profile's and a congestion control's of `[transport]`, a recipe's as
    /// "section.key" with the value's source.
    pub fills: Vec<(&'static str, String)>,
    /// A recipe's: where each of its values comes from, in `fills`' order.
    pub sources: Vec<&'static str>,
}

fn section(name: &'static str, doc: &'static str, tables: &[&'static [Param]]) -> Group {
    Group {
        kind: "section",
        name,
        doc,
        source: "",
        params: tables.iter().flat_map(|t| t.iter()).collect(),
        fills: Vec::new(),
        sources: Vec::new(),
    }
}

fn scheme(kind: &'static str, a: &'static About) -> Group {
    let mut params: Vec<&'static Param> = Vec::new();
    for p in a.params.iter().flat_map(|t| t.iter()) {
        if !params.iter().any(|q| q.key == p.key) {
            params.push(p);
        }
    }
    Group { kind, name: a.name, doc: a.doc, source: a.source, params, fills: Vec::new(), sources: Vec::new() }
}

fn fills(list: &[(&'static str, Fill)]) -> Vec<(&'static str, String)> {
    list.iter()
        .map(|&(k, f)| {
            let v = match f {
                Fill::Json(text) => text.to_string(),
                Fill::QueueMinusOne => "the [switch] buffer in full packets, less one".to_string(),
            };
            (k, v)
        })
        .collect()
}

/// Every section, then every scheme by kind, in the registry's order.
pub fn groups() -> Vec<Group> {
    let mut g = vec![
        section("run", "the run's length, its seed, and what it records", &[RunCfg::PARAMS]),
        section(
            "topology",
            "the network's shape, rates and delays (a preset fills what is left out)",
            &[TopologyCfg::PARAMS],
        ),
        section(
            "switch",
            "every switch port; [fabric] (switch-to-switch ports) and [nic] (host NICs) take the same keys, \
             those marked per-port, as overrides of it. Each discipline, scheduler and marking scheme adds keys \
             of its own (below)",
            &[PortCfg::PARAMS, StageClassKeys::PARAMS, SharedBufferKeys::PARAMS, PfcKeys::PARAMS],
        ),
        section(
            "transport",
            "the TCP every host runs; a congestion control and a profile add keys of their own (below)",
            &[TransportCfg::PARAMS],
        ),
        section(
            "host",
            "the batching of the hosts' stacks (LSO, interrupt coalescing, GRO) and ML-ECN's stage tags",
            &[HostCfg::PARAMS],
        ),
        section("flows", "[[flows]] entries: long-lived, sized, serial and rate-limited flows", &[FlowCfg::PARAMS]),
        section("ping", "[[ping]] entries: probe streams", &[PingCfg::PARAMS]),
        section("incast", "[[incast]] entries: rounds of synchronised responses", &[IncastCfg::PARAMS]),
        section("workload", "background flows drawn from flow-size distributions", &[WorkloadCfg::PARAMS]),
    ];
    g.extend(QDISCS.iter().map(|d| scheme("qdisc", &d.about)));
    g.extend(SCHEDULERS.iter().map(|d| scheme("scheduler", &d.about)));
    g.extend(MARKINGS.iter().map(|d| scheme("marking", &d.about)));
    g.extend(
        crate::declarations::registry::ccs()
            .iter()
            .map(|d| Group { fills: fills(d.defaults), ..scheme("cc", &d.about) }),
    );
    g.extend(crate::host::recovery::MECHANISMS.iter().map(|d| scheme("recovery", &d.about)));
    g.extend(
        crate::declarations::registry::profiles()
            .iter()
            .map(|d| Group { fills: fills(d.fills), ..scheme("profile", &d.about) }),
    );
    g.extend(RECIPES.iter().map(|d| Group {
        fills: d.fills.iter().map(|f| (f.key, recipe::value_text(f))).collect(),
        sources: d.fills.iter().map(|f| f.source).collect(),
        ..scheme("recipe", &d.about)
    }));
    g
}

/// Which section a scheme kind's keys go in.
pub fn section_of(kind: &str) -> &'static str {
    match kind {
        "qdisc" | "scheduler" | "marking" | "recipe" => "switch",
        "cc" | "recovery" | "profile" => "transport",
        _ => "",
    }
}

/// The tables other than `sec`'s that declare `key`, as the experiment
/// file names them: "[host]", or for a scheme's key "[switch], with marking
/// \"mq-ecn\"". `[fabric]` and `[nic]` count as `[switch]`, a list entry
/// ("flows[2]") as its list.
pub fn homes(key: &str, sec: &str) -> Vec<(&'static str, String)> {
    let base = sec.split('[').next().unwrap_or_default();
    let base = if base == "fabric" || base == "nic" { "switch" } else { base };
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for g in groups().iter().filter(|g| g.params.iter().any(|p| p.key == key)) {
        let table = if g.kind == "section" { g.name } else { section_of(g.kind) };
        if table == base {
            continue;
        }
        let head = match table {
            "flows" | "ping" | "incast" => format!("[[{table}]]"),
            t => format!("[{t}]"),
        };
        // A loss-recovery mechanism's key is the mechanism: nothing to name.
        let plain = g.kind == "section" || g.kind == "recovery";
        let home = if plain { head } else { format!("{head}, with {} \"{}\"", g.kind, g.name) };
        if !out.iter().any(|(_, h)| *h == home) {
            out.push((table, home));
        }
    }
    out
}

/// An unknown key that another table declares: the message says where
/// it belongs ("switch.stages: unknown field `stages` here; it is a key of
/// [host]: host.stages") instead of the nearest keys of the wrong table.
/// Any other error is returned as it is.
pub fn point_to_home(e: ConfigError) -> ConfigError {
    let Some((sec, key)) = crate::config::error::unknown_key_of(&e) else {
        return e;
    };
    let homes = homes(key, sec);
    let Some((table, _)) = homes.first() else {
        return e;
    };
    let here = if sec.is_empty() { "at the top level" } else { "here" };
    let one_table = homes.iter().all(|(t, _)| t == table);
    let example = if one_table { format!(": {table}.{key}") } else { String::new() };
    let names: Vec<&str> = homes.iter().map(|(_, h)| h.as_str()).collect();
    let list = match names.len() {
        1 => names[0].to_string(),
        n => format!("{} and {}", names[..n - 1].join("; "), names[n - 1]),
    };
    // At the top level it may be a misspelt section ([hosts] for [host]).
    let near =
        if sec.is_empty() { crate::config::error::did_you_mean(key, &crate::config::SECTIONS) } else { String::new() };
    ConfigError(format!(
        "{}: unknown field `{key}` {here}; it is a key of {list}{example}{near}",
        crate::config::error::join(sec, key)
    ))
}

/// A key's doc, with what happens to it where its scheme does not run if
/// that is not the usual refusal.
fn doc(p: &Param) -> String {
    let d = cell(p.doc);
    if p.lenient {
        format!("{d} (Ignored where its scheme does not run.)")
    } else {
        d
    }
}

fn param_json(p: &Param) -> Value {
    json!({
        "key": p.key,
        "type": (p.ty)(),
        "default": p.default_text(),
        "range": p.range,
        "doc": doc(p),
        "source": p.source,
        "per_port": p.per_port,
    })
}

/// The catalog as JSON: `[{kind, name, section, doc, source, params: [{key,
/// type, default, range, doc, source, per_port}], fills: [[key, value]],
/// fill_sources: [source]}]` (fill_sources: a recipe's, else empty).
pub fn catalog() -> Value {
    groups()
        .iter()
        .map(|g| {
            json!({
                "kind": g.kind,
                "name": g.name,
                "section": if g.kind == "section" { g.name } else { section_of(g.kind) },
                "doc": g.doc,
                "source": g.source,
                "params": g.params.iter().map(|p| param_json(p)).collect::<Vec<_>>(),
                "fills": g.fills.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                "fill_sources": g.sources,
            })
        })
        .collect()
}

/// A sentence: the first letter capitalised.
fn sentence(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// One line of doc, as a Markdown table cell holds it.
fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

fn table(out: &mut String, params: &[&Param], per_port_column: bool) {
    if params.is_empty() {
        out.push_str("No keys of its own.\n\n");
        return;
    }
    if per_port_column {
        out.push_str(
            "| key | type | default | allowed | per port | what it is | source |\n|---|---|---|---|---|---|---|\n",
        );
    } else {
        out.push_str("| key | type | default | allowed | what it is | source |\n|---|---|---|---|---|---|\n");
    }
    for p in params {
        let per_port =
            if per_port_column { format!(" {} |", if p.per_port { "yes" } else { "no" }) } else { String::new() };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |{per_port} {} | {} |\n",
            p.key,
            cell(&(p.ty)()),
            cell(&p.default_text()),
            cell(p.range),
            doc(p),
            cell(p.source)
        ));
    }
    out.push('\n');
}

const KINDS: [(&str, &str); 7] = [
    ("qdisc", "Disciplines (`qdisc`)"),
    ("scheduler", "Schedulers (`scheduler`, composed discipline)"),
    ("marking", "Marking schemes (`marking`, composed discipline)"),
    ("recipe", "Recipes (`recipe`: a paper's set-up for a scheme)"),
    ("cc", "Congestion controls (`cc`)"),
    ("recovery", "Loss-recovery mechanisms (each its own key, with any `cc`)"),
    ("profile", "Profiles (`profile`)"),
];

/// The experiment-file reference, in Markdown (`docs/reference.md`).
pub fn reference_markdown() -> String {
    let groups = groups();
    let mut out = String::from(
        "# Experiment-file reference\n\n\
         Generated from the engine's declarations (`make reference`; `ecnlab keys` prints the same): \
         edit the declarations, not this file. A test fails when the two differ.\n\n\
         An experiment is a TOML file of sections. Values with units are strings: times (`\"25us\"`), \
         rates (`\"10Gbps\"`), sizes (`\"64KB\"`, decimal; `\"64KiB\"`, binary) and thresholds \
         (`\"300KB\"` or `\"65pkt\"`, full packets). A scheme's keys are refused on a port or transport \
         where the scheme does not run, except the few marked so in their description.\n\n",
    );
    for g in groups.iter().filter(|g| g.kind == "section") {
        let head = match g.name {
            "flows" | "ping" | "incast" => format!("[[{}]]", g.name),
            n => format!("[{n}]"),
        };
        out.push_str(&format!("## {head}\n\n{}.\n\n", sentence(&cell(g.doc))));
        table(&mut out, &g.params, g.name == "switch");
        for (kind, title) in KINDS.iter().filter(|(k, _)| section_of(k) == g.name) {
            out.push_str(&format!("### {title}\n\n"));
            for s in groups.iter().filter(|s| s.kind == *kind) {
                out.push_str(&format!("#### `{}`\n\n{}.", s.name, sentence(&cell(s.doc))));
                if !s.source.is_empty() {
                    out.push_str(&format!(" Source: {}.", cell(s.source)));
                }
                out.push_str("\n\n");
                if !s.sources.is_empty() {
                    out.push_str(
                        "Fills in, where the experiment leaves them out:\n\n| key | value | source |\n|---|---|---|\n",
                    );
                    for ((k, v), src) in s.fills.iter().zip(&s.sources) {
                        out.push_str(&format!("| `{k}` | {} | {} |\n", cell(v), cell(src)));
                    }
                    out.push('\n');
                    continue;
                }
                if !s.fills.is_empty() {
                    let f: Vec<String> = s.fills.iter().map(|(k, v)| format!("`{k}` = {v}")).collect();
                    out.push_str(&format!("Fills in, where the experiment leaves them out: {}.\n\n", f.join(", ")));
                }
                if s.params.is_empty() && !s.fills.is_empty() {
                    continue;
                }
                table(&mut out, &s.params, !["cc", "recovery", "profile"].contains(kind));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/reference.md is what the declarations make of it.
    #[test]
    fn the_reference_in_the_docs_is_generated_from_the_declarations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference.md");
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == reference_markdown(),
            "docs/reference.md differs from the engine's declarations: run `make reference` and commit it"
        );
    }

    /// The reference names every key of every declared table, and every
    /// scheme of every kind.
    #[test]
    fn the_reference_covers_every_declared_key_and_scheme() {
        let text = reference_markdown();
        for g in groups() {
            if g.kind != "section" {
                assert!(text.contains(&format!("#### `{}`", g.name)), "{} {}", g.kind, g.name);
            }
            for p in &g.params {
                assert!(text.contains(&format!("| `{}` |", p.key)), "{}.{}", g.name, p.key);
                assert!(!p.doc.trim().is_empty(), "{}.{} has no doc", g.name, p.key);
            }
        }
    }
}
