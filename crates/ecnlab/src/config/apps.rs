//! The applications: `[[flows]]` (long-lived, sized, serial and
//! rate-limited flows), `[[ping]]` probes and `[[incast]]` rounds.

use super::error::{bad, fmt_dur, fmt_t, ConfigError};
use super::param::section;
use super::values::{Bytes, Dur, FlowSize, GapKind, Name, Rate, Senders};
use crate::units;

section! {
    /// `[[flows]]`: one entry is `count` flows from src to dst.
    pub struct FlowCfg {
        /// Sending host.
        src: u32;
        /// Receiving host.
        dst: u32;
        /// Service class: the switch queue its packets use.
        service: u32 = 0, range "0 to switch.queues - 1";
        /// Flows of this entry.
        count: u32 = 1, range "1 or more";
        /// Bytes to send, or "infinite" for a long-lived flow.
        size: FlowSize = FlowSize::Infinite;
        /// When the first SYN leaves.
        start: Dur = Dur(0);
        /// Long-lived flows stop sending new data here.
        stop: Option<Dur> = None, range "after start";
        /// The `count` flows run one after another, each opened when its predecessor's data is
        /// all acknowledged at the sender: a client that opens a new connection per transfer.
        serial: bool = false, source "Tuning ECN §5.2";
        /// Serial flows: the pause between one flow's last ACK and the next flow's SYN (an
        /// application's think time between transfers).
        serial_gap: Dur = Dur(0);
        /// "fixed": every pause is serial_gap; "exponential": each is drawn with mean serial_gap
        /// from the seed (Poisson-spaced transfers).
        serial_gap_kind: GapKind = GapKind::Fixed;
        /// The application writes its data at this rate (a stream: video, games), one full segment
        /// at a time, so the flow never sends faster; unset, it hands TCP all at once.
        rate: Option<Rate> = None, source "FQ-CoDel in the DCN §III-B";
        /// This entry's congestion control, so that flows of several share one network (Classic
        /// and L4S flows through DualPI2). Its keys come from [transport].
        cc: Option<Name> = None, resolved Given, default_doc "transport.cc";
        /// This entry's ECN-capable packets carry ECT(1), the L4S identifier, instead of ECT(0).
        ect1: Option<bool> = None, resolved Given, default_doc "transport.ect1", source "RFC 9331 §4";
    }
}

section! {
    /// `[[ping]]`: a stream of probes, answered by the destination.
    pub struct PingCfg {
        /// Probing host.
        src: u32;
        /// Answering host.
        dst: u32;
        /// Service class of the probes (and answers).
        service: u32 = 0;
        /// Time between probes.
        interval: Dur, range "positive, no faster than src's link";
        /// When the first probe leaves.
        start: Dur = Dur(0);
        /// Probe size on the wire.
        size: Bytes = Bytes(64), range "28 to 65000 bytes";
    }
}

section! {
    /// `[[incast]]`: rounds in which one receiver asks every sender for a block at once.
    pub struct IncastCfg {
        /// The host that asks.
        receiver: u32;
        /// A count (hosts 0, 1, ... skipping the receiver) or a list of host ids.
        senders: Senders;
        /// Bytes each sender answers with.
        block: Bytes, range "positive";
        /// Rounds, each after the last one's blocks have all arrived.
        rounds: u32, range "1 or more";
        /// Service class.
        service: u32 = 0;
        /// When the first round starts.
        start: Dur = Dur(0);
        /// Time between the receiver's consecutive requests in a round (its send loop); 0: all
        /// leave at once.
        request_gap: Dur = Dur(0);
        /// Each sender answers after a seeded random delay, uniform in [0, response_jitter), drawn
        /// anew every round (host latency).
        response_jitter: Dur = Dur(0);
    }
}

/// What the application checks need of the rest of the config.
pub struct AppContext<'a> {
    pub hosts: u32,
    /// switch.queues: services are 0 to queues - 1.
    pub queues: u32,
    /// The host link rate of a host.
    pub host_rate: &'a dyn Fn(u32) -> u64,
}

/// The checks of `[[flows]]`, `[[ping]]` and `[[incast]]`.
pub fn validate(
    flows: &[FlowCfg],
    pings: &[PingCfg],
    incasts: &[IncastCfg],
    c: &AppContext,
) -> Result<(), ConfigError> {
    let (hosts, q) = (c.hosts, c.queues);
    let host = |key: String, h: u32| -> Result<(), ConfigError> {
        if h >= hosts {
            Err(bad(&key, h, &format!("no such host; hosts are 0..{}", hosts - 1)))
        } else {
            Ok(())
        }
    };
    let service = |key: String, s: u32| -> Result<(), ConfigError> {
        if s >= q {
            Err(bad(&key, s, &format!("no such service queue; switch.queues = {q}, so services are 0..{}", q - 1)))
        } else {
            Ok(())
        }
    };
    for (i, f) in flows.iter().enumerate() {
        host(format!("flows[{i}].src"), f.src)?;
        host(format!("flows[{i}].dst"), f.dst)?;
        if f.src == f.dst {
            return Err(bad(&format!("flows[{i}].dst"), f.dst, "must differ from src"));
        }
        service(format!("flows[{i}].service"), f.service)?;
        if f.count == 0 {
            return Err(bad(&format!("flows[{i}].count"), 0, "must be at least 1"));
        }
        if !f.serial && (f.serial_gap.0 > 0 || f.serial_gap_kind != GapKind::Fixed) {
            return Err(bad(
                &format!("flows[{i}].serial_gap"),
                fmt_t(f.serial_gap.0),
                "only applies with serial = true",
            ));
        }
        if f.serial_gap_kind == GapKind::Exponential && f.serial_gap.0 == 0 {
            return Err(bad(
                &format!("flows[{i}].serial_gap_kind"),
                "\"exponential\"",
                "needs a positive serial_gap (the mean pause)",
            ));
        }
        if f.serial && f.size == FlowSize::Infinite {
            return Err(bad(&format!("flows[{i}].serial"), true, "needs sized flows (a size, not \"infinite\")"));
        }
        if let Some(stop) = f.stop {
            if stop.0 <= f.start.0 {
                return Err(bad(&format!("flows[{i}].stop"), fmt_t(stop.0), "must come after start"));
            }
        }
    }
    for (i, p) in pings.iter().enumerate() {
        host(format!("ping[{i}].src"), p.src)?;
        host(format!("ping[{i}].dst"), p.dst)?;
        if p.src == p.dst {
            return Err(bad(&format!("ping[{i}].dst"), p.dst, "must differ from src"));
        }
        service(format!("ping[{i}].service"), p.service)?;
        if p.interval.0 == 0 {
            return Err(bad(&format!("ping[{i}].interval"), "0s", "must be positive"));
        }
        if !(28..=65_000).contains(&p.size.0) {
            return Err(bad(&format!("ping[{i}].size"), p.size.0, "must be 28 to 65000 bytes"));
        }
        // Hosts never drop: probes sent faster than the link takes them
        // would pile up in the NIC without end.
        let bps = p.size.0 as f64 * 8.0 * units::PS_PER_S as f64 / p.interval.0 as f64;
        let link = (c.host_rate)(p.src);
        if bps > link as f64 {
            return Err(bad(
                &format!("ping[{i}].interval"),
                fmt_dur(p.interval.0),
                &format!(
                    "{}B every {} is faster than host{}'s {} link; its NIC queue would grow without end",
                    p.size.0,
                    fmt_dur(p.interval.0),
                    p.src,
                    units::fmt_rate(link)
                ),
            ));
        }
    }
    for (i, c) in incasts.iter().enumerate() {
        host(format!("incast[{i}].receiver"), c.receiver)?;
        service(format!("incast[{i}].service"), c.service)?;
        if c.block.0 == 0 {
            return Err(bad(&format!("incast[{i}].block"), "0B", "must be positive"));
        }
        if c.rounds == 0 {
            return Err(bad(&format!("incast[{i}].rounds"), 0, "must be at least 1"));
        }
        match &c.senders {
            Senders::Count(n) => {
                if *n == 0 || *n >= hosts {
                    return Err(bad(
                        &format!("incast[{i}].senders"),
                        n,
                        &format!("must be 1 to {} (hosts other than the receiver)", hosts - 1),
                    ));
                }
            }
            Senders::List(l) => {
                if l.is_empty() {
                    return Err(bad(&format!("incast[{i}].senders"), "[]", "needs at least one sender"));
                }
                for (j, &h) in l.iter().enumerate() {
                    host(format!("incast[{i}].senders[{j}]"), h)?;
                    if h == c.receiver {
                        return Err(bad(&format!("incast[{i}].senders[{j}]"), h, "must differ from the receiver"));
                    }
                }
            }
        }
    }
    Ok(())
}
