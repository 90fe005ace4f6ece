//! Stamps the engine with a digest of its own sources (`ECNLAB_SOURCE_DIGEST`),
//! so that results kept from one build are never mistaken for another's:
//! a sweep's store keys each point by its config and this digest.

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut paths = Vec::new();
    for d in ["src", "workloads"] {
        files(&root.join(d), &mut paths);
        println!("cargo:rerun-if-changed={d}");
    }
    paths.push(root.join("Cargo.toml"));
    println!("cargo:rerun-if-changed=Cargo.toml");
    paths.sort();
    // FNV-1a over (relative path, contents) of every file, in path order.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in &paths {
        let rel = p.strip_prefix(&root).unwrap_or(p).to_string_lossy().replace('\\', "/");
        for b in rel.bytes().chain([0]).chain(fs::read(p).unwrap_or_default()) {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=ECNLAB_SOURCE_DIGEST={h:016x}");
}
