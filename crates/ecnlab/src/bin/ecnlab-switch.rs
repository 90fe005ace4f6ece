//! The testbed's switch process: `ecnlab-switch SPEC.json`, run inside the
//! switch's network namespace by `ecnlab testbed`. It forwards until SIGINT
//! or SIGTERM (or its parent's death), then writes its report.

use std::sync::atomic::Ordering;

use ecnlab::testbed::spec::SwitchSpec;
use ecnlab::testbed::switch::{Switch, STOP};

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: ecnlab-switch SPEC.json (written by `ecnlab testbed`)");
        std::process::exit(2);
    };
    let spec: SwitchSpec = match std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ecnlab-switch: {path}: {e}");
            std::process::exit(2);
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
            eprintln!("ecnlab-switch: warning: no real-time priority ({})", std::io::Error::last_os_error());
        }
    }
    let mut sw = match Switch::new(spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ecnlab-switch: {e}");
            std::process::exit(2);
        }
    };
    // The orchestrator waits for this line before it starts the traffic.
    println!("ready");
    if let Err(e) = sw.run() {
        eprintln!("ecnlab-switch: {e}");
        std::process::exit(1);
    }
}
