//! Packet captures (`run.pcap`): the headers of every packet a switch port
//! puts on its wire, as a pcap file with nanosecond timestamps, as tcpdump
//! on that egress interface would see them.
//!
//! Each record is an Ethernet, IPv4 and TCP (or ICMP echo) header built
//! from the simulated packet; the payload is not stored (the record's
//! original length says how long the frame was). The mapping, also in
//! docs/guide/running.md ("Packet captures"):
//! - host h is 10.(h >> 8 & 255).(h & 255).1; a node's MAC is 02:00 and its
//!   id in 4 bytes; the frame goes from the port's node to its peer;
//! - DSCP is the packet's stage tag when hosts tag stages (ML-ECN), else its
//!   service class; the ECN field is its codepoint;
//! - flow f's sender uses TCP port 1024 + f mod 64512 and its receiver port
//!   5001 + f div 64512; the SYN and SYN-ACK have sequence number 0, so data
//!   byte i is sequence number i + 1 and an ACK of bytes below a is a + 1
//!   (mod 2^32), its SACK blocks (one, or up to three with
//!   `transport.sack_blocks`) as a SACK option; data carries CWR, ACKs ECE,
//!   as the simulation set them;
//! - pings are ICMP echo requests and replies whose identifier is the ping
//!   stream's index and whose sequence number counts its echoes from 1 (a
//!   reply carries its request's, mod 2^16); the checksum is that of the
//!   header over a payload of zeros;
//! - the timestamp is when the first bit leaves the port (picoseconds
//!   truncated to nanoseconds); the IPv4 total length is the packet's size
//!   (headers counted as `transport.header`), at most 65535, or an ACK's
//!   headers with their SACK option where those are longer.
//!
//! A record is written into a buffer reserved up front and the buffer goes
//! to the sink when nearly full, so capturing allocates nothing per packet;
//! a run without captures never gets here (one flag per port is tested).

use crate::host::sack_blocks::More;
use crate::outputs::output::Output;
use crate::packet::{Ecn, Kind, Packet};
use crate::units::Time;

/// Bytes of a capture buffered before they go to the sink.
const CHUNK: usize = 1 << 20;
/// Longest record: 16 bytes of record header, Ethernet 14, IPv4 20, TCP
/// 20 with a 28-byte option of three SACK blocks.
const MAX_RECORD: usize = 16 + 14 + 20 + 48;
/// The snap length written in the file header: headers only.
pub const SNAPLEN: u32 = 96;
/// Record header + frame headers of one captured packet, for the resource
/// guard's estimate (a data packet or a plain ACK).
pub const RECORD_BYTES: u64 = 16 + 14 + 20 + 20;

pub struct Capture {
    /// The captured port and its name ("node:peer").
    pub port: u32,
    pub name: String,
    src_mac: u32,
    dst_mac: u32,
    buf: Vec<u8>,
    pub packets: u64,
}

impl Capture {
    /// A capture of port `port`, which links node `node` to node `peer`.
    pub fn new(port: u32, name: String, node: u32, peer: u32) -> Self {
        let mut buf = Vec::with_capacity(CHUNK);
        // pcap file header: nanosecond magic, version 2.4, UTC, Ethernet.
        buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&SNAPLEN.to_le_bytes());
        buf.extend_from_slice(&1u32.to_le_bytes());
        Capture { port, name, src_mac: node, dst_mac: peer, buf, packets: 0 }
    }

    /// Packet `p` starts leaving the port at `now`.
    /// `more`: an ACK's further SACK blocks (`host/sack_blocks.rs`).
    pub fn record(&mut self, now: Time, p: &Packet, more: &More, out: &mut Output) {
        let mut r = [0u8; MAX_RECORD];
        let n = frame(&mut r[16..], p, more, self.src_mac, self.dst_mac);
        let ns = now / 1000;
        r[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        r[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        r[8..12].copy_from_slice(&(n as u32).to_le_bytes());
        // On the wire: the packet's size, or its headers where an ACK's
        // SACK option makes them longer (see `frame`).
        r[12..16].copy_from_slice(&(p.size.max(n as u32 - 14).saturating_add(14)).to_le_bytes());
        self.buf.extend_from_slice(&r[..16 + n]);
        self.packets += 1;
        if self.buf.len() > CHUNK - MAX_RECORD {
            self.flush(out);
        }
    }

    /// A PFC frame (IEEE 802.1Qbb) this port sent at `now`: MAC control
    /// to 01:80:c2:00:00:01, opcode 0x0101, the class-enable vector with
    /// bit `prio` and `quanta` as that priority's pause time (0: RESUME),
    /// padded to the 64-byte minimum; 60 bytes kept, as a capture without
    /// the frame check sequence.
    pub fn record_pfc(&mut self, now: Time, prio: u8, quanta: u16, out: &mut Output) {
        let mut r = [0u8; 16 + 60];
        let b = &mut r[16..];
        b[0..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
        b[6] = 0x02;
        put32(b, 8, self.src_mac);
        put16(b, 12, 0x8808);
        put16(b, 14, 0x0101);
        put16(b, 16, 1 << prio);
        put16(b, 18 + 2 * prio as usize, quanta);
        let ns = now / 1000;
        r[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        r[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        r[8..12].copy_from_slice(&60u32.to_le_bytes());
        r[12..16].copy_from_slice(&60u32.to_le_bytes());
        self.buf.extend_from_slice(&r);
        self.packets += 1;
        if self.buf.len() > CHUNK - MAX_RECORD {
            self.flush(out);
        }
    }

    /// Hand the buffered bytes to the sink (the file header at least once).
    pub fn flush(&mut self, out: &mut Output) {
        if !self.buf.is_empty() {
            out.capture(&self.name, &self.buf);
            self.buf.clear();
        }
    }
}

/// Host h's IPv4 address.
pub fn host_ip(h: u32) -> [u8; 4] {
    [10, (h >> 8) as u8, h as u8, 1]
}

/// The TCP ports of flow `f`: (sender, receiver).
pub fn flow_ports(f: u32) -> (u16, u16) {
    ((1024 + f % 64512) as u16, (5001 + f / 64512) as u16)
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// Write the frame headers of `p` into `b`; returns their length.
fn frame(b: &mut [u8], p: &Packet, more: &More, src_mac: u32, dst_mac: u32) -> usize {
    // Ethernet
    b[0] = 0x02;
    put32(b, 2, dst_mac);
    b[6] = 0x02;
    put32(b, 8, src_mac);
    put16(b, 12, 0x0800);
    // IPv4
    let ip = &mut b[14..];
    let tcp = !p.is_ping();
    ip[0] = 0x45;
    let ecn = match p.ecn {
        Ecn::NotEct => 0,
        Ecn::Ect1 => 1,
        Ecn::Ect => 2,
        Ecn::Ce => 3,
    };
    let dscp = if p.stage != 0 { p.stage } else { p.service };
    ip[1] = (dscp << 2) | ecn;
    // An ACK's SACK option makes its headers longer than the
    // `transport.header` bytes the simulation counted: the lengths say so,
    // or readers would find the TCP header running past the packet.
    let blocks = sack_blocks(p, more);
    let l4_len = if !tcp {
        8
    } else if blocks > 0 {
        24 + 8 * blocks
    } else {
        20
    };
    put16(ip, 2, p.size.max(20 + l4_len as u32).min(65535) as u16);
    put16(ip, 6, 0x4000); // don't fragment
    ip[8] = 64;
    ip[9] = if tcp { 6 } else { 1 };
    ip[12..16].copy_from_slice(&host_ip(p.src));
    ip[16..20].copy_from_slice(&host_ip(p.dst));
    let mut sum: u32 = 0;
    for i in (0..20).step_by(2) {
        sum += u16::from_be_bytes([ip[i], ip[i + 1]]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    put16(ip, 10, !(sum as u16));
    let l4 = &mut ip[20..];
    if !tcp {
        l4[0] = if p.kind == Kind::PingReq { 8 } else { 0 };
        put16(l4, 4, p.flow as u16);
        put16(l4, 6, p.seq as u16);
        // RFC 792's checksum over the 8 header bytes (the payload is zeros).
        let mut sum: u32 = (0..8).step_by(2).map(|i| u16::from_be_bytes([l4[i], l4[i + 1]]) as u32).sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        put16(l4, 2, !(sum as u16));
        return 14 + 20 + 8;
    }
    // TCP
    let (snd, rcv) = flow_ports(p.flow);
    let from_sender = matches!(p.kind, Kind::Syn | Kind::Data);
    let (sport, dport) = if from_sender { (snd, rcv) } else { (rcv, snd) };
    put16(l4, 0, sport);
    put16(l4, 2, dport);
    const ACK: u8 = 0x10;
    let (seq, ack, mut flags) = match p.kind {
        Kind::Syn => (0, 0, 0x02),
        Kind::SynAck => (0, 1, 0x02 | ACK),
        Kind::Data => ((p.seq as u32).wrapping_add(1), 1, ACK),
        _ => (1, (p.seq as u32).wrapping_add(1), ACK),
    };
    if p.ece {
        flags |= 0x40;
    }
    if p.cwr {
        flags |= 0x80;
    }
    put32(l4, 4, seq);
    put32(l4, 8, ack);
    l4[13] = flags;
    put16(l4, 14, 65535);
    if blocks > 0 {
        let all = [(p.sack_lo, p.sack_hi), more[0], more[1]];
        for (i, &(lo, hi)) in all.iter().take(blocks).enumerate() {
            put32(l4, 24 + 8 * i, (lo as u32).wrapping_add(1));
            put32(l4, 28 + 8 * i, (hi as u32).wrapping_add(1));
        }
        // NOP, NOP, SACK of 2 + 8 bytes per block.
        l4[20..24].copy_from_slice(&[1, 1, 5, 2 + 8 * blocks as u8]);
    }
    l4[12] = (l4_len as u8 / 4) << 4;
    14 + 20 + l4_len
}

/// SACK blocks an ACK carries: its first, then those of `more` (`host/
/// sack_blocks.rs`), up to the first empty one; 0 for other packets.
fn sack_blocks(p: &Packet, more: &More) -> usize {
    if p.kind != Kind::Ack || p.sack_hi <= p.sack_lo {
        return 0;
    }
    1 + more.iter().take_while(|b| b.1 > b.0).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::sack_blocks::NO_MORE;
    use crate::outputs::output::Collect;

    /// A data packet with CE and CWR, and an ACK with ECE and a SACK block:
    /// every field where a reader expects it (offsets from RFC 791 and 793).
    #[test]
    fn headers_carry_the_simulated_fields() {
        let mut c = Collect::default();
        let mut out = Output::new(&mut c);
        let mut cap = Capture::new(7, "switch:host2".into(), 3, 2);
        let mut d = Packet::new(Kind::Data, 0, 2, 70_000, 5, 1500);
        d.seq = 1460;
        d.payload = 1460;
        d.ecn = Ecn::Ce;
        d.cwr = true;
        cap.record(2_000_123_456_789, &d, &NO_MORE, &mut out);
        let mut a = Packet::new(Kind::Ack, 2, 0, 70_000, 5, 40);
        a.seq = 2920;
        a.ece = true;
        a.sack_lo = 4380;
        a.sack_hi = 5840;
        cap.record(2_000_123_457_000, &a, &NO_MORE, &mut out);
        // With three blocks (`transport.sack_blocks`): a 28-byte option.
        cap.record(2_000_123_458_000, &a, &[(8760, 10220), (7300, 7301)], &mut out);
        cap.flush(&mut out);
        let f = &c.captures[0].1;
        assert_eq!(f[..4], [0x4d, 0x3c, 0xb2, 0xa1]);
        let r = &f[24..];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 2); // seconds
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 123_456); // ns
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 54); // captured
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 1514); // on the wire
        let e = &r[16..];
        assert_eq!(e[0..6], [2, 0, 0, 0, 0, 2]); // to node 2
        assert_eq!(e[6..12], [2, 0, 0, 0, 0, 3]); // from node 3
        let ip = &e[14..];
        assert_eq!(ip[1], 5 << 2 | 3); // DSCP 5, CE
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1500);
        assert_eq!(ip[12..20], [10, 0, 0, 1, 10, 0, 2, 1]);
        let sum: u32 = (0..20).step_by(2).map(|i| u16::from_be_bytes([ip[i], ip[i + 1]]) as u32).sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff, "IPv4 header checksum");
        let t = &ip[20..];
        assert_eq!(u16::from_be_bytes([t[0], t[1]]) as u32, 1024 + 70_000 % 64512);
        assert_eq!(u16::from_be_bytes([t[2], t[3]]), 5002);
        assert_eq!(u32::from_be_bytes(t[4..8].try_into().unwrap()), 1461);
        assert_eq!(t[13], 0x80 | 0x10); // CWR, ACK
        let r2 = &r[16 + 54..];
        assert_eq!(u32::from_le_bytes(r2[8..12].try_into().unwrap()), 66);
        // A 40-byte ACK with a 12-byte SACK option: 52 bytes of IPv4 and
        // TCP headers, so the lengths say 52 (IPv4) and 66 (on the wire).
        assert_eq!(u32::from_le_bytes(r2[12..16].try_into().unwrap()), 66);
        assert_eq!(u16::from_be_bytes([r2[16 + 16], r2[16 + 17]]), 52);
        let t2 = &r2[16 + 34..];
        assert_eq!(u16::from_be_bytes([t2[0], t2[1]]), 5002); // from the receiver
        assert_eq!(u32::from_be_bytes(t2[8..12].try_into().unwrap()), 2921);
        assert_eq!(t2[12] >> 4, 8); // 32-byte header
        assert_eq!(t2[13], 0x40 | 0x10); // ECE, ACK
        assert_eq!(t2[20..24], [1, 1, 5, 10]);
        assert_eq!(u32::from_be_bytes(t2[24..28].try_into().unwrap()), 4381);
        assert_eq!(u32::from_be_bytes(t2[28..32].try_into().unwrap()), 5841);
        let r3 = &r2[16 + 66..];
        assert_eq!(u32::from_le_bytes(r3[8..12].try_into().unwrap()), 82);
        assert_eq!(u32::from_le_bytes(r3[12..16].try_into().unwrap()), 82);
        assert_eq!(u16::from_be_bytes([r3[16 + 16], r3[16 + 17]]), 68);
        let t3 = &r2[16 + 66 + 16 + 34..];
        assert_eq!(t3[12] >> 4, 12); // 48-byte header
        assert_eq!(t3[20..24], [1, 1, 5, 26]);
        let words: Vec<u32> =
            (24..48).step_by(4).map(|i| u32::from_be_bytes(t3[i..i + 4].try_into().unwrap())).collect();
        assert_eq!(words, [4381, 5841, 8761, 10221, 7301, 7302]);
        assert_eq!(cap.packets, 3);
        assert_eq!(f.len(), 24 + 16 + 54 + 16 + 66 + 16 + 82);
    }
}
