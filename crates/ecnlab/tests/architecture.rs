//! The house rules the code keeps: no source file of the engine, the PyO3
//! layer or the Python package over 800 lines (inline tests aside), and no
//! import circle at any level of the engine.
//!
//! Every room (a module with modules inside: the crate, `switch`,
//! `switch/marker`, `world`, ...) is a graph of its members, its files and
//! its sub-rooms taken whole, and no two members may use each other,
//! directly or round a circle: declarations sit in leaf files, and
//! registries import the implementations, not the other way round. A
//! room's own file (`mod.rs`, `lib.rs`, `x.rs` beside `x/`) is a member
//! too, but a file's use of its parent's file (`super::World`,
//! `super::Marker`: the room's shared declarations, which its files are
//! for) is not counted; a deeper file reaching up into an ancestor's file
//! is (world/parallel calling lib.rs's run).
//!
//! What "uses" means is read off the source (`architecture/paths.rs`), not
//! the compiler: every path that starts with `crate::`, `super::`,
//! `self::`, a child module or a module brought in by `use`, followed
//! through `use` re-exports to the file that defines the item. Comments,
//! strings and `#[cfg(test)]` items do not count (a test module may reach
//! anything it tests).

#[path = "architecture/paths.rs"]
mod paths;

use paths::Crate;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

/// Circles known and left for now, by room: a circle passes only if all
/// of its members are in one entry, so one that takes in anything else
/// fails, as does an entry no circle needs any more.
const ALLOWED: &[(&str, &[&str], &str)] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// A Python file's lines; a Rust file's without its `#[cfg(test)]` items,
/// and none of a file that is itself a test module (`tests.rs`).
fn code_lines(p: &Path) -> usize {
    let s = std::fs::read_to_string(p).expect("readable source");
    if p.extension().is_some_and(|x| x == "py") {
        return s.lines().count();
    }
    if p.file_name().is_some_and(|n| n == "tests.rs") {
        return 0;
    }
    s.lines().count() - paths::without_tests(&paths::blank(&s)).test_lines
}

#[test]
fn no_source_file_is_over_800_lines() {
    let mut all = Vec::new();
    files(&root().join("crates/ecnlab/src"), "rs", &mut all);
    files(&root().join("crates/ecnlab-py/src"), "rs", &mut all);
    files(&root().join("python/ecnlab"), "py", &mut all);
    let long: Vec<String> = all
        .iter()
        .map(|p| (p, code_lines(p)))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(p, n)| format!("{} ({n} lines)", p.strip_prefix(root()).unwrap_or(p).display()))
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}; split them by concern");
}

/// The strongly connected parts of `g` with more than one member (Tarjan).
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct St<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut St<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut part = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                part.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                s.out.push(part);
            }
        }
    }
    let mut s =
        St { g, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on: BTreeSet::new(), out: Vec::new() };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_room_has_an_import_circle() {
    let krate = Crate::read(&root().join("crates/ecnlab/src"));
    let mut found = Vec::new();
    for (room, graph) in krate.rooms() {
        let name = if room.is_empty() { "crate".to_string() } else { room.join("/") };
        for part in circles(&graph.edges) {
            let allowed =
                ALLOWED.iter().any(|(r, members, _)| *r == name && part.iter().all(|m| members.contains(&m.as_str())));
            if allowed {
                continue;
            }
            let evidence: Vec<String> = graph
                .why
                .iter()
                .filter(|((a, b), _)| part.contains(a) && part.contains(b))
                .map(|((a, b), at)| format!("{a} -> {b} ({at})"))
                .collect();
            found.push(format!("in {name}: {part:?}, by {evidence:?}"));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// Each allowed circle is still there: an entry outlives its reason only
/// until the work it waits for is done.
#[test]
fn every_allowed_circle_is_still_there() {
    let rooms = Crate::read(&root().join("crates/ecnlab/src")).rooms();
    for (room, members, why) in ALLOWED {
        let path: Vec<String> = room.split('/').map(String::from).collect();
        let graph = &rooms[&path];
        for m in *members {
            assert!(graph.edges.contains_key(*m), "{room} has no member {m} ({why})");
        }
        let needed = circles(&graph.edges).iter().any(|c| c.iter().all(|m| members.contains(&m.as_str())));
        assert!(needed, "no circle in {room} needs the entry for {why} any more: drop it");
    }
}

/// The reader sees what the rules rest on: a re-export is followed to the
/// file that defines the item, a use of the parent's file is not counted
/// and a use of a child's is, a known circle shows up, and a test module
/// and a comment count for nothing.
#[test]
fn the_reader_finds_what_it_should() {
    let rooms = Crate::read(&root().join("crates/ecnlab/src")).rooms();
    let room = |r: &str| &rooms[&r.split('/').map(String::from).collect::<Vec<_>>()];
    // Every folder with modules of its own, at any depth, and the crate.
    let names: Vec<String> = rooms.keys().map(|r| r.join("/")).collect();
    for r in [
        "",
        "config",
        "declarations",
        "engine",
        "host",
        "host/cc",
        "host/recovery",
        "network",
        "outputs",
        "switch",
        "switch/marker",
        "switch/scheduler",
        "traffic",
        "world",
    ] {
        assert!(names.contains(&r.to_string()), "{r} is not a room: {names:?}");
    }
    // A folder of one test module is no room (switch/recipe/tests.rs).
    assert!(names.contains(&"world/parallel".to_string()) && !names.contains(&"switch/recipe".to_string()));
    // `scheduler/sp_dwrr.rs` names `super::super::RoundObserver`, which
    // switch/mod.rs re-exports from `rounds.rs`.
    let switch = room("switch");
    assert!(switch.edges["scheduler"].contains("rounds"), "{:?}", switch.edges["scheduler"]);
    assert!(!switch.edges["scheduler"].contains("mod.rs"));
    // world/apps.rs extends `super::World`; world/mod.rs holds `Apps`.
    let world = room("world");
    assert!(!world.edges["apps"].contains("mod.rs") && world.edges["mod.rs"].contains("apps"));
    // world/lossless/ extends `World` one level down: the same rule.
    assert!(!world.edges["lossless"].contains("mod.rs") && world.edges["mod.rs"].contains("lossless"));
    // The loss-recovery seam: the sender calls the mechanisms, which work
    // on the core state and never name the sender; the core names neither.
    let host = room("host");
    assert!(host.edges["tcp_tx"].contains("recovery") && host.edges["recovery"].contains("snd"));
    assert!(!host.edges["recovery"].contains("tcp_tx") && !host.edges["snd"].contains("recovery"));
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&g), vec![BTreeSet::from(["a".into(), "b".into(), "c".into()])]);
    let s = paths::without_tests(&paths::blank(
        "use a::b; // crate::x::y\n#[cfg(test)]\nmod t;\n#[cfg(test)]\nmod u { fn f() {} }\nfn g() { \"crate::z\"; }\n",
    ));
    assert_eq!(s.test_mods, vec!["t".to_string()]);
    assert_eq!(s.test_lines, 4);
    let code = s.code;
    assert!(!code.contains("crate::") && !code.contains("mod u") && code.contains("fn g"), "{code}");
}
