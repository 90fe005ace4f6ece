//! Priority Flow Control (IEEE 802.1Qbb): per (ingress port, priority), a
//! switch that holds too much of an upstream's traffic tells it to stop
//! sending that priority, with a PAUSE frame, and lets it go on, with a
//! PAUSE of zero quanta (RESUME), once the queue has drained. What arrives
//! after the PAUSE left (the frame on the upstream's wire, the PAUSE's
//! own trip and the upstream's response) lands in the queue's headroom,
//! sized so that nothing is ever dropped.
//!
//! The frame: 64 bytes of MAC control (EtherType 0x8808, opcode 0x0101),
//! a class-enable vector and one pause time per priority in quanta of 512
//! bit times; sent ahead of any queued data, after the frame on the wire.
//!
//! Per-packet functions: `Ingress::admit`, `Ingress::release` (charging,
//! XOFF and XON); the frames and the pauses are in `world/lossless/`.
//! Tests: below (headroom, hysteresis), `tests/scenarios/test_lossless.py`.

use super::shared_buffer::{dynamic_limit, Charge, Pool};
use crate::config::param::section;
use crate::config::{bad, Amt, ConfigError, Table};
use crate::units::{Amount, Time};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes of a PAUSE frame on the wire (the minimum Ethernet frame).
pub const FRAME_BYTES: u64 = 64;
/// A pause quantum is 512 bit times (IEEE 802.3 Annex 31B).
pub const QUANTUM_BITS: u64 = 512;
/// Priorities a PFC frame names.
pub const PRIORITIES: usize = 8;

/// `pfc_headroom`: "auto" (the worst case of the standard's terms) or an
/// amount.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Headroom {
    Auto,
    Given(Amount),
}

impl<'de> Deserialize<'de> for Headroom {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        if v.as_str() == Some("auto") {
            return Ok(Headroom::Auto);
        }
        Amt::deserialize(v).map(|a| Headroom::Given(a.0)).map_err(|e| {
            <D::Error as serde::de::Error>::custom(format!("{e}; or \"auto\" (the worst case from rate, delay, MTU)"))
        })
    }
}

impl Serialize for Headroom {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Headroom::Auto => s.serialize_str("auto"),
            Headroom::Given(a) => Amt(*a).serialize(s),
        }
    }
}

impl crate::config::param::TypeName for Headroom {
    fn type_name() -> String {
        "\"auto\" or an amount (\"30KB\", \"20pkt\")".into()
    }
}

section! {
    /// PFC's keys, in `[switch]` (one set for every switch and the hosts' NICs).
    pub struct PfcKeys {
        /// Priority Flow Control on the lossless priorities: switches PAUSE upstream ports and
        /// NICs per priority, which stop sending it.
        pfc: bool = false, per_port false, source "IEEE 802.1Qbb", resolved Given;
        /// The lossless priorities (a packet's priority is its service class).
        pfc_priorities: Vec<u32> = vec![0, 1, 2, 3, 4, 5, 6, 7], per_port false, range "0 to 7", resolved Given;
        /// A static XOFF threshold on an (ingress port, priority)'s shared bytes; unset, the
        /// dynamic one: switch.dt_alpha × the free shared buffer.
        pfc_xoff: Option<Amt> = None, per_port false, default_doc "dynamic", resolved Given;
        /// XON hysteresis: RESUME once the queue's headroom is empty and its shared bytes are
        /// this far below XOFF.
        pfc_xon_offset: Amt = Amt(Amount::Pkt(2)), per_port false, source "HPCC simulator: 2,496 B", resolved Given;
        /// Headroom per (ingress port, lossless priority): "auto" = 2 full packets + the PAUSE
        /// frame + the response + 2 × the link's bytes in flight one way (+ host.jitter's worth on
        /// a host's link), or an amount.
        pfc_headroom: Headroom = Headroom::Auto, per_port false, source "IEEE 802.1Qbb Annex N", resolved Given;
        /// The upstream's response to a PAUSE, in bytes at its line rate (it stops sending that
        /// priority this long after the frame has arrived).
        pfc_response: Amt = Amt(Amount::Bytes(3840)), per_port false, source "IEEE 802.3 Annex 31D: 60 quanta", resolved Given;
        /// Pause time a PAUSE asks for, in quanta of 512 bit times; the sender refreshes it at
        /// half that while the queue stays above XOFF.
        pfc_quanta: u32 = 65535, per_port false, range "1 to 65535", source "IEEE 802.1Qbb", resolved Given;
        /// Pause-storm watchdog: a switch's egress priority paused this long without a break
        /// stops obeying PAUSE for as long again, as deployed switches do (checked every
        /// pfc_deadlock_check); what it sends into a stuck receiver is dropped there. Unset: off.
        pfc_watchdog: Option<crate::config::Dur> = None, per_port false, resolved Given;
        /// Stuck receivers: hosts that stop taking packets from their NIC (a hung driver, a full
        /// receive ring) from pfc_stuck_from to pfc_stuck_until; their NIC holds what arrives in
        /// pfc_host_buffer and PAUSEs the switch once only its link's headroom is left.
        pfc_stuck_hosts: Vec<u32> = Vec::new(), per_port false, resolved Given;
        /// When the stuck hosts stop taking packets.
        pfc_stuck_from: crate::config::Dur = crate::config::Dur(0), per_port false, resolved Given;
        /// When they take them again (all that was held at once); unset: never.
        pfc_stuck_until: Option<crate::config::Dur> = None, per_port false, resolved Given;
        /// A stuck host's NIC receive buffer.
        pfc_host_buffer: Amt = Amt(Amount::Bytes(256_000)), per_port false, resolved Given;
        /// How often a run with pauses looks for a deadlock (ports paused on each other in a
        /// cycle that makes no progress).
        pfc_deadlock_check: crate::config::Dur = crate::config::Dur(100_000_000), per_port false, resolved Given;
    }
}

impl PfcKeys {
    /// The keys of `[switch]` (a checked config's; defaults where unreadable).
    pub fn of(extra: &serde_json::Map<String, serde_json::Value>) -> PfcKeys {
        PfcKeys::read(&Table::new("switch", extra.clone()), true)
            .unwrap_or_else(|_| PfcKeys::read(&Table::new("switch", Default::default()), true).unwrap())
    }

    /// Bit p set for each lossless priority (none without PFC).
    pub fn lossless(&self) -> u8 {
        if !self.pfc {
            return 0;
        }
        self.pfc_priorities.iter().fold(0u8, |m, &p| m | 1 << p)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        for (i, &p) in self.pfc_priorities.iter().enumerate() {
            if p >= PRIORITIES as u32 {
                return Err(bad(&format!("switch.pfc_priorities[{i}]"), p, "must be 0 to 7"));
            }
        }
        if !(1..=65535).contains(&self.pfc_quanta) {
            return Err(bad("switch.pfc_quanta", self.pfc_quanta, "must be 1 to 65535"));
        }
        if self.pfc_deadlock_check.0 == 0 {
            return Err(bad("switch.pfc_deadlock_check", "0s", "must be positive"));
        }
        if let Some(u) = self.pfc_stuck_until {
            if u.0 <= self.pfc_stuck_from.0 {
                return Err(bad(
                    "switch.pfc_stuck_until",
                    crate::config::fmt_dur(u.0),
                    "must be after switch.pfc_stuck_from",
                ));
            }
        }
        if self.pfc_watchdog.is_some_and(|w| w.0 == 0) {
            return Err(bad("switch.pfc_watchdog", "0s", "must be positive (leave it out for no watchdog)"));
        }
        Ok(())
    }

    /// The headroom of an ingress port whose link runs at `rate_bps` with
    /// one-way delay `delay`, for full packets of `pkt` bytes; `wobble`:
    /// how much later than its wire time a frame may land (a host's
    /// `host.jitter`), which holds that much more on the way.
    pub fn headroom(&self, rate_bps: u64, delay: Time, pkt: u64, wobble: Time) -> u64 {
        match self.pfc_headroom {
            Headroom::Given(a) => a.bytes(pkt),
            Headroom::Auto => {
                auto_headroom(rate_bps, delay, pkt, self.pfc_response.0.bytes(pkt)) + wire_bytes(rate_bps, wobble)
            }
        }
    }
}

/// The checks of the shared buffer's and PFC's keys against the rest of
/// the experiment.
pub fn validate_network(cfg: &crate::config::Config) -> Result<(), ConfigError> {
    let sb = super::shared_buffer::SharedBufferKeys::of(&cfg.switch.extra);
    let pk = PfcKeys::of(&cfg.switch.extra);
    sb.validate(cfg.switch.queues)?;
    pk.validate()?;
    if pk.pfc && !sb.dynamic() {
        return Err(bad(
            "switch.pfc",
            true,
            "PFC's thresholds are on the switch's shared buffer: set switch.buffer_policy = \"dynamic\" too",
        ));
    }
    if !pk.pfc_stuck_hosts.is_empty() && !pk.pfc {
        return Err(bad(
            "switch.pfc_stuck_hosts",
            format!("{:?}", pk.pfc_stuck_hosts),
            "a stuck receiver PAUSEs its switch: needs switch.pfc = true",
        ));
    }
    for (i, &h) in pk.pfc_stuck_hosts.iter().enumerate() {
        if h >= cfg.hosts() {
            return Err(bad(
                &format!("switch.pfc_stuck_hosts[{i}]"),
                h,
                &format!("no such host (hosts 0 to {})", cfg.hosts() - 1),
            ));
        }
    }
    if !sb.dynamic() && !pk.pfc {
        return Ok(());
    }
    let key = if pk.pfc { "switch.pfc" } else { "switch.buffer_policy" };
    let value = if pk.pfc { "true".to_string() } else { "\"dynamic\"".to_string() };
    if cfg.run.threads > 0 {
        return Err(bad(
            key,
            &value,
            &format!(
                "runs on the sequential engine only (run.threads = {}); PFC frames and the shared pool do not \
                 cross the partitioned engine's parts: set run.threads = 0",
                cfg.run.threads
            ),
        ));
    }
    let ports = [("switch", Some(&cfg.switch)), ("fabric", Some(&cfg.fabric_port)), ("nic", cfg.nic_port.as_ref())];
    for (sec, port) in ports {
        let Some(p) = port else { continue };
        let whole = p.qdisc.as_str() != "composed";
        if whole && (sec != "nic" || pk.pfc) {
            return Err(bad(
                &format!("{sec}.qdisc"),
                format!("\"{}\"", p.qdisc.as_str()),
                &format!(
                    "a whole discipline keeps its own buffer and queues, which {key} cannot pause or charge; \
                     use qdisc \"composed\""
                ),
            ));
        }
    }
    Ok(())
}

/// The headroom that makes a priority lossless: what can still arrive
/// after the queue crossed XOFF. The frame being sent when the crossing
/// happens delays the PAUSE (one packet); the PAUSE itself; its trip up
/// the wire; the upstream's response; the packet it is sending when it
/// stops (another); and everything that was on the wire coming down
/// (the trip again). IEEE 802.1Qbb Annex N lists the same terms; the
/// HPCC simulator's formula is 2·(MTU+48) + 3,860 + 2·rate·delay.
pub fn auto_headroom(rate_bps: u64, delay: Time, pkt: u64, response: u64) -> u64 {
    2 * pkt + FRAME_BYTES + response + 2 * wire_bytes(rate_bps, delay)
}

/// Bytes a link of `rate_bps` carries in `t` (rounded up).
fn wire_bytes(rate_bps: u64, t: Time) -> u64 {
    (rate_bps as u128 * t as u128).div_ceil(8 * crate::units::PS_PER_S as u128) as u64
}

/// The pause time `quanta` asks for on a link of `rate_bps`.
pub fn pause_time(quanta: u32, rate_bps: u64) -> Time {
    crate::units::tx_time(quanta as u64 * QUANTUM_BITS / 8, rate_bps)
}

/// One (ingress port, priority) of a switch, charged at ingress.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ingress {
    /// Reserve and shared bytes.
    pub charge: Charge,
    /// Bytes in the headroom, and the headroom's size (0: lossy).
    pub headroom: u64,
    pub headroom_size: u64,
    /// XOFF: a PAUSE went upstream and no RESUME since.
    pub xoff: bool,
    pub peak_headroom: u64,
    pub peak_bytes: u64,
}

/// Where `Ingress::admit` put a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// In the reserve or the pool.
    Shared,
    /// In the headroom: XOFF holds (or was just crossed).
    Headroom,
    /// Nowhere: the headroom was full (lossless), or the threshold
    /// refused it (lossy).
    Refused,
}

/// What the thresholds of an ingress queue are now.
#[derive(Clone, Copy, Debug)]
pub struct Thresholds {
    pub reserved: u64,
    /// XOFF on the shared bytes (α × free pool, or static).
    pub xoff: u64,
    pub xon_offset: u64,
    /// The HPCC simulator's rules (`buffer_accounting = "hpcc"`): XOFF
    /// only once a packet goes to the headroom (above the threshold, not
    /// at it), and XON also below this many bytes (its 1,248 B).
    pub xoff_on_headroom: bool,
    pub xon_floor: u64,
}

impl Thresholds {
    pub fn new(reserved: u64, static_xoff: Option<u64>, alpha: f64, pool: &Pool, xon_offset: u64) -> Thresholds {
        Thresholds {
            reserved,
            xoff: static_xoff.unwrap_or_else(|| dynamic_limit(alpha, pool)),
            xon_offset,
            xoff_on_headroom: false,
            xon_floor: 0,
        }
    }
}

impl Ingress {
    /// Charge a `size`-byte packet of a lossless priority. True in the
    /// second place when it makes the queue cross XOFF now (send a PAUSE).
    pub fn admit(&mut self, size: u64, t: &Thresholds, pool: &mut Pool) -> (Admitted, bool) {
        let mut r = Admitted::Shared;
        if self.headroom == 0 && self.charge.admits(size, t.reserved, t.xoff, pool) {
            self.charge.add(size, t.reserved, pool);
        } else if self.headroom + size <= self.headroom_size {
            self.headroom += size;
            self.peak_headroom = self.peak_headroom.max(self.headroom);
            r = Admitted::Headroom;
        } else {
            return (Admitted::Refused, !self.xoff && self.cross(true));
        }
        self.peak_bytes = self.peak_bytes.max(self.charge.bytes + self.headroom);
        let over = r == Admitted::Headroom || (!t.xoff_on_headroom && self.charge.in_pool(t.reserved) >= t.xoff);
        (r, !self.xoff && self.cross(over))
    }

    /// Set XOFF if `over`; true when it was just set.
    fn cross(&mut self, over: bool) -> bool {
        if over {
            self.xoff = true;
        }
        over
    }

    /// Give back a `size`-byte packet: from the headroom first (counters,
    /// as chips keep them). True when XON holds now (send a RESUME).
    pub fn release(&mut self, size: u64, t: &Thresholds, pool: &mut Pool) -> bool {
        let from_headroom = self.headroom.min(size);
        self.headroom -= from_headroom;
        self.charge.remove(size - from_headroom, t.reserved, pool);
        let below = self.charge.in_pool(t.reserved) + t.xon_offset <= t.xoff || self.charge.bytes < t.xon_floor;
        if self.xoff && self.headroom == 0 && below {
            self.xoff = false;
            return true;
        }
        false
    }

    /// Charge a lossy packet here (`buffer_accounting = "ingress"`): the
    /// dynamic threshold without headroom or PAUSE.
    pub fn admit_lossy(&mut self, size: u64, t: &Thresholds, pool: &mut Pool) -> bool {
        if !self.charge.admits(size, t.reserved, t.xoff, pool) {
            return false;
        }
        self.charge.add(size, t.reserved, pool);
        self.peak_bytes = self.peak_bytes.max(self.charge.bytes);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At 100 Gb/s over 1 µs with 1,036-byte frames: 2 × 1,036 + 64 +
    /// 3,840 + 2 × 12,500 = 30,976 B; the HPCC simulator's formula gives
    /// 2 × 1,084 + 3,860 + 25,000 = 31,028 B for the same link (its
    /// README: 30.96 KB).
    #[test]
    fn auto_headroom_is_the_standards_worst_case() {
        assert_eq!(auto_headroom(100_000_000_000, 1_000_000, 1036, 3840), 30_976);
        // 10 Gb/s, 5 µs, 1,500 B: 3,000 + 64 + 3,840 + 12,500.
        assert_eq!(auto_headroom(10_000_000_000, 5_000_000, 1500, 3840), 19_404);
    }

    /// 65,535 quanta of 512 bit times at 100 Gb/s: 335.5 µs.
    #[test]
    fn a_full_pause_lasts_65535_quanta() {
        assert_eq!(pause_time(65535, 100_000_000_000), 335_539_200);
        assert_eq!(pause_time(1, 10_000_000_000), 51_200);
    }

    /// XOFF when the shared bytes reach the threshold; later packets in the
    /// headroom; XON only with the headroom empty and the queue an offset
    /// below XOFF; a full headroom refuses.
    #[test]
    fn xoff_headroom_and_xon_hysteresis() {
        let mut pool = Pool { size: 1_000_000, ..Pool::default() };
        let t = Thresholds { reserved: 0, xoff: 10_000, xon_offset: 2_000, xoff_on_headroom: false, xon_floor: 0 };
        let mut g = Ingress { headroom_size: 5_000, ..Ingress::default() };
        for i in 0..9 {
            assert_eq!(g.admit(1000, &t, &mut pool), (Admitted::Shared, false), "packet {i}");
        }
        assert_eq!(g.admit(1000, &t, &mut pool), (Admitted::Shared, true), "the 10th reaches XOFF");
        for _ in 0..5 {
            assert_eq!(g.admit(1000, &t, &mut pool), (Admitted::Headroom, false));
        }
        assert_eq!(g.admit(1000, &t, &mut pool).0, Admitted::Refused, "headroom full");
        assert_eq!(g.peak_headroom, 5_000);
        // Draining: the headroom empties first, then two more packets'
        // worth below XOFF gives XON.
        for _ in 0..5 {
            assert!(!g.release(1000, &t, &mut pool));
        }
        assert!(!g.release(1000, &t, &mut pool), "9,000 B: within the offset");
        assert!(g.release(1000, &t, &mut pool), "8,000 B = XOFF − offset: XON");
        assert_eq!(pool.used, 8_000);
    }
}
