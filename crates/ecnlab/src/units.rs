//! Units: time is integer picoseconds, sizes are bytes, rates are bits/s.
//!
//! Config strings carry their unit ("10Gbps", "85.2us", "300KB", "65pkt",
//! "200 packets"). `pkt` is a size (full packets' worth of bytes);
//! `packets` is a count, where any packet takes one.
//! KB/MB/GB are decimal (1000), KiB/MiB are binary (1024), as in most
//! simulator scripts' "K" for bytes being ambiguous: we pick SI and say so.

use std::fmt;

/// Simulated time in picoseconds.
pub type Time = u64;

pub const PS_PER_S: u64 = 1_000_000_000_000;

/// The longest time a config may give: 10^6 s (11.6 days) is 10^18 ps, a
/// eighteenth of what 64 bits count, so sums of times never overflow.
pub const MAX_TIME: Time = 1_000_000 * PS_PER_S;

/// The fastest rate a config may give: one byte per picosecond, so that
/// every packet takes time on the wire and simulated time moves on.
pub const MAX_RATE_BPS: u64 = 8 * PS_PER_S;

pub fn secs(t: Time) -> f64 {
    t as f64 / PS_PER_S as f64
}

/// Picoseconds needed to put `bytes` on a wire of `rate_bps`.
#[inline]
pub fn tx_time(bytes: u64, rate_bps: u64) -> Time {
    // 8e12 * 64 KiB fits easily in u64; u128 keeps huge LSO bursts safe too.
    ((bytes as u128 * 8 * PS_PER_S as u128) / rate_bps as u128) as Time
}

/// A line rate with its picoseconds per byte worked out once: every usual
/// rate divides 8e12 exactly, and a multiply is far cheaper than the
/// 128-bit division of `tx_time`, which the per-packet path would pay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineRate {
    pub bps: u64,
    /// 0 when the rate does not divide 8e12 (then `tx_time` divides).
    ps_per_byte: u64,
}

impl LineRate {
    pub fn new(bps: u64) -> LineRate {
        let ps_per_byte = if (8 * PS_PER_S).is_multiple_of(bps) { 8 * PS_PER_S / bps } else { 0 };
        LineRate { bps, ps_per_byte }
    }

    /// Picoseconds to put `bytes` on the wire; the same as `tx_time`.
    #[inline]
    pub fn tx_time(&self, bytes: u64) -> Time {
        if self.ps_per_byte != 0 {
            bytes * self.ps_per_byte
        } else {
            tx_time(bytes, self.bps)
        }
    }
}

/// Splits "85.2us" into (85.2, "us"); the number may carry a sign or exponent.
pub(crate) fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == 'e' || c == 'E')
                    && i > 0
                    && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+'))
                || ((c == '-' || c == '+') && (i == 0 || s[..i].ends_with(['e', 'E']))))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let num: f64 = s[..end].parse().ok()?;
    if !num.is_finite() {
        return None;
    }
    Some((num, s[end..].trim()))
}

pub fn parse_duration(s: &str) -> Result<Time, String> {
    const ALLOWED: &str = "a number followed by ps, ns, us, ms or s (e.g. \"25us\")";
    let (n, unit) = split_number(s).ok_or_else(|| format!("expected {ALLOWED}"))?;
    let scale = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => return Err(format!("unknown time unit {unit:?}; expected {ALLOWED}")),
    };
    if n < 0.0 {
        return Err("must not be negative".into());
    }
    let t = (n * scale).round();
    if t > MAX_TIME as f64 {
        return Err("longer than 1000000s (11.6 days), the longest simulated time ecnlab counts".into());
    }
    Ok(t as Time)
}

/// `value` in the largest of `units` (name, size) that holds it a whole
/// number of times: one canonical spelling per value.
fn canonical(value: u64, units: &[(&str, u64)]) -> String {
    let (name, size) =
        units.iter().find(|(_, size)| value.is_multiple_of(*size)).copied().unwrap_or(units[units.len() - 1]);
    format!("{}{name}", value / size)
}

/// A time as a config string that parses back to it exactly ("85200ns").
pub fn fmt_duration(t: Time) -> String {
    if t == 0 {
        return "0s".into();
    }
    canonical(t, &[("s", PS_PER_S), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000), ("ps", 1)])
}

/// A rate as a config string that parses back to it exactly ("10Gbps").
pub fn fmt_rate(bps: u64) -> String {
    canonical(
        bps,
        &[("Tbps", 1_000_000_000_000), ("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("Kbps", 1_000), ("bps", 1)],
    )
}

pub fn parse_rate(s: &str) -> Result<u64, String> {
    const ALLOWED: &str = "a number followed by bps, Kbps, Mbps, Gbps or Tbps (e.g. \"10Gbps\")";
    let (n, unit) = split_number(s).ok_or_else(|| format!("expected {ALLOWED}"))?;
    let scale = match unit {
        "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        _ => return Err(format!("unknown rate unit {unit:?}; expected {ALLOWED}")),
    };
    let bps = (n * scale).round();
    if bps < 1.0 {
        return Err("must be positive".into());
    }
    if bps > MAX_RATE_BPS as f64 {
        return Err("faster than 8Tbps (one byte per picosecond), the fastest link ecnlab models".into());
    }
    Ok(bps as u64)
}

/// An amount of buffer or threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    /// Bytes ("300KB").
    Bytes(u64),
    /// Bytes, in full-size packets of mss + header ("65pkt" = 65 × 1500 B
    /// with the default mss): a size, whatever the packets queued are.
    Pkt(u64),
    /// A count of packets of any size ("200 packets"): a buffer where a
    /// 40-byte ACK takes a slot as a 1500-byte segment does (ns-2's
    /// DropTail, switches with fixed-size cells). Buffers only.
    Packets(u64),
}

impl Amount {
    /// In bytes, counting a packet as `pkt_bytes` (payload + headers).
    pub fn bytes(self, pkt_bytes: u64) -> u64 {
        match self {
            Amount::Bytes(b) => b,
            Amount::Pkt(p) | Amount::Packets(p) => p.saturating_mul(pkt_bytes),
        }
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Amount::Bytes(b) => write!(f, "{b}B"),
            Amount::Pkt(p) => write!(f, "{p}pkt"),
            Amount::Packets(p) => write!(f, "{p} packets"),
        }
    }
}

pub fn parse_bytes(s: &str) -> Result<u64, String> {
    match parse_amount(s)? {
        Amount::Bytes(b) => Ok(b),
        Amount::Pkt(_) | Amount::Packets(_) => {
            Err("expected a size in bytes (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), not packets".into())
        }
    }
}

/// A buffer size: bytes, `pkt` (full packets' worth of bytes) or a count
/// of `packets`.
pub fn parse_amount(s: &str) -> Result<Amount, String> {
    const ALLOWED: &str = "a number followed by B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, pkt (full packets' \
         worth of bytes) or packets (a count of packets of any size), e.g. \"300KB\", \"200pkt\", \"200 packets\"";
    let (n, unit) = split_number(s).ok_or_else(|| format!("expected {ALLOWED}"))?;
    if n < 0.0 {
        return Err("must not be negative".into());
    }
    let whole = |n: f64| {
        if n.fract() != 0.0 {
            Err("a packet count must be a whole number".to_string())
        } else {
            Ok(n as u64)
        }
    };
    let scale = match unit {
        "pkt" => return Ok(Amount::Pkt(whole(n)?)),
        "packets" | "packet" => return Ok(Amount::Packets(whole(n)?)),
        "pkts" => {
            let n = whole(n)?;
            return Err(format!(
                "\"pkts\" is ambiguous; write \"{n}pkt\" for {n} full packets' worth of bytes, \
                 or \"{n} packets\" for a count of packets of any size"
            ));
        }
        "B" => 1.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown size unit {unit:?}; expected {ALLOWED}")),
    };
    Ok(Amount::Bytes((n * scale).round() as u64))
}

/// A marking threshold: bytes or `pkt`. Marking compares bytes, so a count
/// of packets of any size is refused rather than guessed at.
pub fn parse_threshold(s: &str) -> Result<Amount, String> {
    match parse_amount(s)? {
        Amount::Packets(n) => Err(format!(
            "a threshold is compared with queued bytes; write \"{n}pkt\" for {n} full packets' worth of bytes"
        )),
        a => Ok(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1s"), Ok(PS_PER_S));
        assert_eq!(parse_duration("85.2us"), Ok(85_200_000));
        assert_eq!(parse_duration("0.2s"), Ok(200_000_000_000));
        assert_eq!(parse_duration("5ms"), Ok(5_000_000_000));
        assert_eq!(parse_duration("1e-3s"), Ok(1_000_000_000));
        assert!(parse_duration("5").unwrap_err().contains("unknown time unit"));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("-1s").is_err());
        assert_eq!(parse_duration("1000000s"), Ok(MAX_TIME));
        assert!(parse_duration("999999999s").unwrap_err().contains("longer than 1000000s"));
    }

    #[test]
    fn rates_and_sizes() {
        assert_eq!(parse_rate("10Gbps"), Ok(10_000_000_000));
        assert_eq!(parse_rate("2.5Gbps"), Ok(2_500_000_000));
        assert!(parse_rate("10Gbs").is_err());
        assert_eq!(parse_rate("8Tbps"), Ok(MAX_RATE_BPS));
        assert!(parse_rate("9Tbps").unwrap_err().contains("faster than 8Tbps"));
        assert_eq!(parse_amount("300KB"), Ok(Amount::Bytes(300_000)));
        assert_eq!(parse_amount("64KiB"), Ok(Amount::Bytes(65_536)));
        assert_eq!(parse_amount("65pkt"), Ok(Amount::Pkt(65)));
        assert_eq!(parse_amount("200 packets"), Ok(Amount::Packets(200)));
        assert_eq!(parse_amount("1packet"), Ok(Amount::Packets(1)));
        assert_eq!(Amount::Pkt(65).bytes(1500), 97_500);
        assert!(parse_amount("6.5pkt").is_err());
        assert!(parse_amount("200pkts").unwrap_err().contains("ambiguous"));
        assert!(parse_bytes("3pkt").is_err());
        assert!(parse_bytes("3 packets").is_err());
        assert_eq!(parse_threshold("65pkt"), Ok(Amount::Pkt(65)));
        assert!(parse_threshold("65 packets").unwrap_err().contains("write \"65pkt\""));
    }

    #[test]
    fn canonical_spellings_parse_back() {
        assert_eq!(fmt_duration(85_200_000), "85200ns");
        assert_eq!(fmt_duration(PS_PER_S), "1s");
        assert_eq!(fmt_duration(0), "0s");
        assert_eq!(fmt_rate(10_000_000_000), "10Gbps");
        assert_eq!(fmt_rate(2_500_000_000), "2500Mbps");
        for t in [1, 999, 1_200_000, 85_200_000, 7 * PS_PER_S, 123_456_789_012] {
            assert_eq!(parse_duration(&fmt_duration(t)), Ok(t));
        }
        for r in [7, 1_000, 2_500_000_000, 40_000_000_000] {
            assert_eq!(parse_rate(&fmt_rate(r)), Ok(r));
        }
    }

    #[test]
    fn serialization_time() {
        // 1500 B at 10 Gbps is 1.2 us; at 1 Gbps 12 us.
        assert_eq!(tx_time(1500, 10_000_000_000), 1_200_000);
        assert_eq!(tx_time(1500, 1_000_000_000), 12_000_000);
        // The precomputed form agrees, exact rates or not.
        for bps in [1_000_000_000, 10_000_000_000, 40_000_000_000, 3_000_000_000, 7] {
            for bytes in [1, 64, 1500, 9000, 65_000] {
                assert_eq!(LineRate::new(bps).tx_time(bytes), tx_time(bytes, bps), "{bps} bps, {bytes} B");
            }
        }
    }
}
