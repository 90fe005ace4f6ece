//! The testbed's switch process as a binary of its own: `ecnlab-switch
//! SPEC.json`, run inside the switch's network namespace (`make switch`).
//! The Python package runs the same code from its extension module
//! (`python -m ecnlab.switch`, `testbed/process.rs`), so it needs no copy
//! of this binary.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(ecnlab::testbed::process::switch_main("ecnlab-switch", &args));
}
