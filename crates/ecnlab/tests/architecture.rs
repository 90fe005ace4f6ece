//! The house rules the code keeps: no source file of the engine, the PyO3
//! layer or the Python package over 800 lines (inline tests aside), and no
//! two top-level modules of the engine that use each other, directly or
//! round a circle (a module's state and the modules that read it are
//! layered: config below the schemes, the schemes below the registry).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

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

/// A file's code without its inline tests (from `#[cfg(test)]` on), and
/// nothing of a file that is itself a test module (`tests.rs`).
fn code(p: &Path) -> String {
    if p.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let s = std::fs::read_to_string(p).expect("readable source");
    match s.find("#[cfg(test)]") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[test]
fn no_source_file_is_over_800_lines() {
    let mut all = Vec::new();
    files(&root().join("crates/ecnlab/src"), "rs", &mut all);
    files(&root().join("crates/ecnlab-py/src"), "rs", &mut all);
    files(&root().join("python/ecnlab"), "py", &mut all);
    let long: Vec<String> = all
        .iter()
        .map(|p| (p, code(p).lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(p, n)| format!("{} ({n} lines)", p.strip_prefix(root()).unwrap_or(p).display()))
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}; split them by concern");
}

#[test]
fn no_top_level_modules_use_each_other_in_a_circle() {
    let src = root().join("crates/ecnlab/src");
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).expect("src").flatten() {
        let p = e.path();
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if name == "lib" || name == "bin" {
            continue;
        }
        let mut fs = Vec::new();
        if p.is_dir() {
            files(&p, "rs", &mut fs);
        } else if p.extension().is_some_and(|x| x == "rs") {
            fs.push(p.clone());
        } else {
            continue;
        }
        let mut deps = BTreeSet::new();
        for f in fs {
            let c = code(&f);
            for (i, _) in c.match_indices("crate::") {
                let dep: String =
                    c[i + 7..].chars().take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_').collect();
                if dep != name && !dep.is_empty() {
                    deps.insert(dep);
                }
            }
        }
        uses.insert(name, deps);
    }
    // Every circle shows up as a module that reaches itself.
    let mut circles = Vec::new();
    for start in uses.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        while let Some((m, path)) = stack.pop() {
            for d in uses.get(&m).into_iter().flatten() {
                if d == start {
                    circles.push(path.join(" -> ") + " -> " + start);
                } else if uses.contains_key(d) && seen.insert(d.clone()) {
                    let mut p = path.clone();
                    p.push(d.clone());
                    stack.push((d.clone(), p));
                }
            }
        }
    }
    assert!(circles.is_empty(), "modules that use each other: {circles:?}");
}
