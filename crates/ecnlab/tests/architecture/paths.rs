//! A reader of the crate's module paths, enough to tell which file uses
//! which: it lexes away comments and literals, drops `#[cfg(test)]` items,
//! expands `use` trees, and resolves a path (`crate::`, `super::`,
//! `self::`, a child module, a module brought in by `use`) to the module
//! that defines its item, through re-exports. Macros are read as text: a
//! path written inside `macro_rules!` counts for the file that holds it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `src` with comments, string and char literals blanked to spaces
/// (newlines kept, so lines keep their numbers).
pub fn blank(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let keep_lines = |s: &[char], out: &mut String| {
        for &ch in s {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
    };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            let end = (i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len());
            keep_lines(&c[i..end], &mut out);
            i = end;
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            keep_lines(&c[i..j], &mut out);
            i = j;
        } else if c[i] == 'r' && !prev_ident && matches!(c.get(i + 1), Some('"') | Some('#')) {
            // A raw string r"..." or r#"..."# (r#ident is not one).
            let hashes = (i + 1..c.len()).take_while(|&j| c[j] == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let from = i + 2 + hashes;
            let end = (from..c.len()).find(|&j| c[j..].starts_with(&close)).map_or(c.len(), |j| j + close.len());
            out.push_str("\"\"");
            keep_lines(&c[i + 2..end], &mut out);
            i = end;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            keep_lines(&c[i + 1..(j + 1).min(c.len())], &mut out);
            i = j + 1;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            let end = (i + 3..c.len()).find(|&j| c[j] == '\'').map_or(c.len(), |j| j + 1);
            keep_lines(&c[i..end], &mut out);
            i = end;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else {
            // A lifetime's quote, or code.
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// A blanked file with its `#[cfg(test)]` items blanked too (newlines
/// kept), the test modules it declares (`#[cfg(test)] mod x;`) and the
/// lines those items took.
pub struct Stripped {
    pub code: String,
    pub test_mods: Vec<String>,
    pub test_lines: usize,
}

pub fn without_tests(blanked: &str) -> Stripped {
    const ATTR: &str = "#[cfg(test)]";
    let b = blanked.as_bytes();
    let mut code = blanked.to_string().into_bytes();
    let (mut test_mods, mut test_lines) = (Vec::new(), 0);
    let mut from = 0;
    while let Some(k) = blanked[from..].find(ATTR) {
        let start = from + k;
        let mut j = start + ATTR.len();
        // Further attributes, then the item up to its `;` or its braces.
        loop {
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if b[j..].starts_with(b"#[") {
                j = b[j..].iter().position(|&x| x == b']').map_or(b.len(), |p| j + p + 1);
            } else {
                break;
            }
        }
        let head = j;
        let mut depth = 0i32;
        while j < b.len() {
            match b[j] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    let mut braces = 0;
                    while j < b.len() {
                        match b[j] {
                            b'{' => braces += 1,
                            b'}' => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let end = (j + 1).min(b.len());
        let item: Vec<&str> = blanked[head..end].split_whitespace().collect();
        if let ["mod", name] | ["pub", "mod", name] | ["pub(crate)", "mod", name] = item.as_slice() {
            test_mods.push(name.trim_end_matches(';').to_string());
        }
        test_lines += 1;
        for x in &mut code[start..end] {
            if *x == b'\n' {
                test_lines += 1;
            } else {
                *x = b' ';
            }
        }
        from = end;
    }
    Stripped { code: String::from_utf8(code).expect("blanking keeps UTF-8"), test_mods, test_lines }
}

fn is_ident(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::` and single punctuation, each with its line.
fn tokens(code: &str) -> Vec<(String, usize)> {
    let c: Vec<char> = code.chars().collect();
    let (mut out, mut line, mut i) = (Vec::new(), 1, 0);
    while i < c.len() {
        if c[i] == '\n' {
            line += 1;
            i += 1;
        } else if c[i].is_whitespace() {
            i += 1;
        } else if c[i].is_alphanumeric() || c[i] == '_' {
            let j = (i..c.len()).find(|&j| !(c[j].is_alphanumeric() || c[j] == '_')).unwrap_or(c.len());
            out.push((c[i..j].iter().collect(), line));
            i = j;
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push(("::".into(), line));
            i += 2;
        } else {
            out.push((c[i].to_string(), line));
            i += 1;
        }
    }
    out
}

/// One `use` tree from `t[*j]`, its paths (with the name each brings in;
/// None for a glob) appended to `out`.
fn use_tree(t: &[(String, usize)], j: &mut usize, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let at = |j: usize| t.get(j).map_or("", |x| x.0.as_str());
    if at(*j) == "{" {
        *j += 1;
        while *j < t.len() && at(*j) != "}" {
            use_tree(t, j, prefix.clone(), out);
            if at(*j) == "," {
                *j += 1;
            }
        }
        *j += 1;
        return;
    }
    if at(*j) == "*" {
        *j += 1;
        out.push((prefix, None));
        return;
    }
    if at(*j) == "::" {
        *j += 1;
    }
    let mut segs = prefix;
    while is_ident(at(*j)) {
        segs.push(at(*j).to_string());
        *j += 1;
        if at(*j) != "::" {
            break;
        }
        *j += 1;
        if at(*j) == "{" || at(*j) == "*" {
            return use_tree(t, j, segs, out);
        }
    }
    if segs.last().is_some_and(|s| s == "self") {
        segs.pop();
    }
    let mut name = segs.last().cloned();
    if at(*j) == "as" {
        name = Some(at(*j + 1).to_string());
        *j += 2;
    }
    out.push((segs, name));
}

/// One module's file as read.
struct Module {
    /// Its path under `src/`.
    file: String,
    /// The names `use` brings in, each with its path as written.
    imports: BTreeMap<String, Vec<String>>,
    /// Every path its code names (those of its `use`s too), with the line.
    paths: Vec<(Vec<String>, usize)>,
}

/// A room: its members (its own file under its file name, each child
/// module under its name) and which uses which, with a place that shows it.
pub struct Room {
    pub edges: BTreeMap<String, BTreeSet<String>>,
    pub why: BTreeMap<(String, String), String>,
}

pub struct Crate {
    mods: BTreeMap<Vec<String>, Module>,
}

impl Crate {
    /// Every module file under `src` (binaries and test modules aside).
    pub fn read(src: &Path) -> Crate {
        let mut all = Vec::new();
        super::files(src, "rs", &mut all);
        let mut mods = BTreeMap::new();
        let mut tests = BTreeSet::new();
        for p in all {
            let rel = p.strip_prefix(src).expect("under src").to_string_lossy().replace('\\', "/");
            if rel.starts_with("bin/") {
                continue;
            }
            let mut path: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
            if path.last().is_some_and(|l| l == "mod") || path == ["lib"] {
                path.pop();
            }
            let s = without_tests(&blank(&std::fs::read_to_string(&p).expect("readable source")));
            for t in &s.test_mods {
                tests.insert([path.clone(), vec![t.clone()]].concat());
            }
            let t = tokens(&s.code);
            let (mut imports, mut paths) = (BTreeMap::new(), Vec::new());
            let at = |j: usize| t.get(j).map_or("", |x| x.0.as_str());
            let mut i = 0;
            while i < t.len() {
                let prev = if i > 0 { at(i - 1) } else { "" };
                if at(i) == "use" && prev != "::" {
                    let (line, mut j, mut out) = (t[i].1, i + 1, Vec::new());
                    use_tree(&t, &mut j, Vec::new(), &mut out);
                    for (segs, name) in out {
                        if let Some(n) = name {
                            imports.insert(n, segs.clone());
                        }
                        paths.push((segs, line));
                    }
                    i = j;
                } else if is_ident(at(i))
                    && at(i + 1) == "::"
                    && prev != "::"
                    && (prev != "$" || at(i) == "crate")
                    // `pub(in crate::world)` says who may see, not what is used.
                    && !(prev == "in" && i >= 3 && at(i - 2) == "(" && at(i - 3) == "pub")
                {
                    let (line, mut segs, mut j) = (t[i].1, vec![at(i).to_string()], i + 1);
                    while at(j) == "::" && is_ident(at(j + 1)) {
                        segs.push(at(j + 1).to_string());
                        j += 2;
                    }
                    paths.push((segs, line));
                    i = j;
                } else {
                    i += 1;
                }
            }
            mods.insert(path, Module { file: rel, imports, paths });
        }
        mods.retain(|m, _| !tests.iter().any(|t| m.starts_with(t)));
        Crate { mods }
    }

    /// The module that defines what `segs`, written in module `ctx`,
    /// names, and whether it names an item there (rather than the module).
    fn resolve(&self, ctx: &[String], segs: &[String], depth: usize) -> Option<(Vec<String>, bool)> {
        let (first, rest) = segs.split_first()?;
        let child = |m: &[String], s: &str| {
            let c = [m.to_vec(), vec![s.to_string()]].concat();
            self.mods.contains_key(&c).then_some(c)
        };
        let mut cur = match first.as_str() {
            "crate" => vec![],
            "super" => ctx[..ctx.len().checked_sub(1)?].to_vec(),
            "self" => ctx.to_vec(),
            s => match child(ctx, s) {
                Some(c) => c,
                None if depth < 16 => {
                    let p = self.mods.get(ctx)?.imports.get(s)?;
                    match self.resolve(ctx, p, depth + 1)? {
                        (m, false) => m,
                        found => return Some(found),
                    }
                }
                None => return None,
            },
        };
        for s in rest {
            match s.as_str() {
                "super" => {
                    cur.pop()?;
                }
                "self" => {}
                s => match child(&cur, s) {
                    Some(c) => cur = c,
                    None => {
                        // An item of `cur`, or one it re-exports.
                        let via = self.mods.get(&cur)?.imports.get(s).filter(|_| depth < 16);
                        return via.and_then(|p| self.resolve(&cur, p, depth + 1)).or(Some((cur, true)));
                    }
                },
            }
        }
        Some((cur, false))
    }

    /// Which module uses which: (user, used, file:line) for every path that
    /// names an item of another module of the crate.
    fn uses(&self) -> Vec<(Vec<String>, Vec<String>, String)> {
        let mut out = Vec::new();
        for (m, module) in &self.mods {
            for (segs, line) in &module.paths {
                if let Some((to, true)) = self.resolve(m, segs, 0) {
                    if &to != m {
                        out.push((m.clone(), to, format!("{}:{line}", module.file)));
                    }
                }
            }
        }
        out
    }

    /// Every room, by its module path (the crate's is empty).
    pub fn rooms(&self) -> BTreeMap<Vec<String>, Room> {
        let uses = self.uses();
        let mut rooms = BTreeMap::new();
        for (r, own) in &self.mods {
            let kids: Vec<&Vec<String>> =
                self.mods.keys().filter(|m| m.len() == r.len() + 1 && m.starts_with(r)).collect();
            if kids.is_empty() {
                continue;
            }
            let own_name = own.file.rsplit('/').next().unwrap_or_default().to_string();
            let member = |m: &Vec<String>| {
                if !m.starts_with(r) {
                    None
                } else if m.len() == r.len() {
                    Some(own_name.clone())
                } else {
                    Some(m[r.len()].clone())
                }
            };
            let mut room = Room { edges: BTreeMap::new(), why: BTreeMap::new() };
            for k in kids {
                room.edges.entry(k[r.len()].clone()).or_default();
            }
            room.edges.entry(own_name.clone()).or_default();
            for (from, to, at) in &uses {
                // A use of the room's own file (`super::World`) by a file of
                // the room, at any depth (world/lossless/frames.rs extends
                // `World` as world/apps.rs does): the room's shared
                // declarations, which its files are for.
                if to == r && from.len() > r.len() {
                    continue;
                }
                if let (Some(a), Some(b)) = (member(from), member(to)) {
                    if a != b {
                        room.edges.entry(a.clone()).or_default().insert(b.clone());
                        room.why.entry((a, b)).or_insert_with(|| at.clone());
                    }
                }
            }
            rooms.insert(r.clone(), room);
        }
        rooms
    }
}
