//! The switch process's whole life, from its spec file to its report:
//! shared by the `ecnlab-switch` binary and the Python extension's
//! `switch_main` (`python -m ecnlab.switch`), so that every install of the
//! Python package carries the testbed's switch without a second build.
//! It forwards until SIGINT or SIGTERM (or its parent's death), then
//! writes its report.

use std::sync::atomic::Ordering;

use super::spec::SwitchSpec;
use super::switch::{Switch, STOP};

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Run the switch on `args` (one path: the SPEC.json `ecnlab testbed`
/// writes); returns the process's exit status (0 done, 1 failed while
/// forwarding, 2 bad arguments or spec). `prog` names the command in
/// messages. Takes over SIGINT and SIGTERM for the calling process.
pub fn switch_main(prog: &str, args: &[String]) -> i32 {
    let [path] = args else {
        eprintln!("usage: {prog} SPEC.json (written by `ecnlab testbed`)");
        return 2;
    };
    let spec: SwitchSpec = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{prog}: {path}: {e}");
            return 2;
        }
    };
    // SAFETY: the handler only stores to an atomic; prctl with constants.
    unsafe {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
        // Stop (and report) if the orchestrator dies without telling us.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        // Sleeps until a frame's tokens are in must end on time, not up to
        // the default 50 µs late.
        libc::prctl(libc::PR_SET_TIMERSLACK, 1);
    }
    if spec.realtime {
        let param = libc::sched_param { sched_priority: 10 };
        // SAFETY: sched_setscheduler on this process with a valid param.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
            eprintln!("{prog}: warning: no real-time priority ({})", std::io::Error::last_os_error());
        }
    }
    let mut sw = match Switch::new(spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return 2;
        }
    };
    // The orchestrator waits for this line before it starts the traffic.
    println!("ready");
    if let Err(e) = sw.run() {
        eprintln!("{prog}: {e}");
        return 1;
    }
    0
}
