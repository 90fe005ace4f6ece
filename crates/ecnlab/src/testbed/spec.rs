//! What the orchestrator (`python/ecnlab/testbed`) tells the switch process:
//! the experiment, the emulated rate and the port of each host. One JSON
//! file, written by the orchestrator and read once at start.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    /// The experiment's resolved config (as `ecnlab run` gets it); its
    /// `[switch]` section builds every port's queue discipline.
    pub config: serde_json::Value,
    /// The emulated link rate of every port.
    pub rate_bps: u64,
    /// Token bucket size in bytes (MQ-ECN §4.2: about 1.67 MTU).
    pub bucket_bytes: u64,
    /// Bytes a frame occupies on a real Ethernet wire beyond what the
    /// socket sees: preamble and start delimiter (8), FCS (4) and the
    /// inter-frame gap (12).
    pub wire_overhead: u64,
    pub ports: Vec<PortSpec>,
    /// Propagation delay added at every output port, after the token
    /// bucket (picoseconds): in a star a frame crosses two links, host to
    /// switch and switch to host, so the orchestrator gives both links'
    /// one-way delay here, and a round trip gets four, as in the simulator.
    /// The uplink's serialisation happens in the sending host's kernel (a
    /// tbf at the link rate); its constant delay is added here rather than
    /// before the output queue, which shifts every frame's arrival at the
    /// queue alike and so changes no frame's arrival at its host.
    #[serde(default)]
    pub delay_ps: u64,
    /// Queue lengths are sampled this often (picoseconds); 0: never.
    #[serde(default)]
    pub sample_interval_ps: u64,
    /// Run the loop as a real-time task (SCHED_FIFO): ordinary processes
    /// then cannot preempt it between frames. The kernel's RT throttling
    /// still leaves them 5% of its core.
    #[serde(default)]
    pub realtime: bool,
    /// Where the report (JSON) goes when the switch stops.
    pub report: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    /// The switch-side veth facing the host.
    pub ifname: String,
    /// The host's index in the experiment (`[[flows]] src/dst`).
    pub host: u32,
    /// The host's IPv4 address: frames to it leave through this port.
    pub ip: [u8; 4],
}
