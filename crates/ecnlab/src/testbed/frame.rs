//! What the switch reads from and writes into a real Ethernet frame: the
//! IPv4 header's DSCP (the service class, hence the queue), its ECN field,
//! its destination address (the output port) and total length; and CE,
//! written with the header checksum updated incrementally (RFC 1624).

use crate::packet::Ecn;

const ETH_HEADER: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;

/// The fields of an IPv4 frame the switch acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Fields {
    /// Differentiated services code point: the upper six bits of the TOS
    /// byte. Hosts put the flow's service class here (`IP_TOS` = service << 2).
    pub dscp: u8,
    pub ecn: Ecn,
    pub dst: [u8; 4],
    /// The IP packet's length, headers included (what the simulator calls
    /// a packet's size).
    pub total_len: u16,
}

/// The IPv4 fields of `frame`, or None for anything else (ARP, IPv6, a
/// runt or a header that is not IPv4's).
pub fn ipv4(frame: &[u8]) -> Option<Ipv4Fields> {
    if frame.len() < ETH_HEADER + 20 || u16::from_be_bytes([frame[12], frame[13]]) != ETHERTYPE_IPV4 {
        return None;
    }
    let ip = &frame[ETH_HEADER..];
    if ip[0] >> 4 != 4 || (ip[0] & 0x0f) < 5 {
        return None;
    }
    let tos = ip[1];
    let ecn = match tos & 0b11 {
        0 => Ecn::NotEct,
        0b11 => Ecn::Ce,
        // ECT(0) and ECT(1) alike: the markers only ask "may I mark it".
        _ => Ecn::Ect,
    };
    Some(Ipv4Fields {
        dscp: tos >> 2,
        ecn,
        dst: [ip[16], ip[17], ip[18], ip[19]],
        total_len: u16::from_be_bytes([ip[2], ip[3]]),
    })
}

/// Set CE in the ECN field of the IPv4 frame `frame` (already known to be
/// IPv4) and update its header checksum for the changed 16-bit word.
///
/// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), in one's-complement arithmetic,
/// where m and m' are the old and new word (version/IHL and TOS).
pub fn set_ce(frame: &mut [u8]) {
    let ip = &mut frame[ETH_HEADER..];
    let old = u16::from_be_bytes([ip[0], ip[1]]);
    ip[1] |= 0b11;
    let new = u16::from_be_bytes([ip[0], ip[1]]);
    let hc = u16::from_be_bytes([ip[10], ip[11]]);
    let sum = ones_add(ones_add(!hc, !old), new);
    ip[10..12].copy_from_slice(&(!sum).to_be_bytes());
}

/// One's-complement 16-bit addition (end-around carry).
fn ones_add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    ((s & 0xffff) + (s >> 16)) as u16
}

/// The IPv4 header checksum of `header` (its checksum field included: a
/// correct header sums to zero), computed from scratch (RFC 791).
pub fn header_checksum(header: &[u8]) -> u16 {
    let mut sum = 0u16;
    for w in header.chunks(2) {
        sum = ones_add(sum, u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]));
    }
    !sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet frame around a 20-byte IPv4 header of a TCP segment from
    /// 10.213.0.1 to 10.213.0.3, DSCP 1, ECT(0), total length 1500, TTL 64,
    /// identification 0x1c46, DF set, with checksum `csum`.
    fn frame(tos: u8, csum: u16) -> Vec<u8> {
        let mut f = vec![0u8; 14];
        f[12] = 0x08;
        f.extend_from_slice(&[
            0x45,
            tos,
            0x05,
            0xdc,
            0x1c,
            0x46,
            0x40,
            0x00,
            0x40,
            0x06,
            (csum >> 8) as u8,
            csum as u8,
            10,
            213,
            0,
            1,
            10,
            213,
            0,
            3,
        ]);
        f
    }

    /// Checksum of the header above with TOS 0x06 (DSCP 1, ECT(0)), by
    /// hand: the nine non-zero words 4506 05dc 1c46 4000 4006 0ad5 0001
    /// 0ad5 0003 add up step by step to 4ae2, 6728, a728, e72e, f203, f204,
    /// fcd9, fcdc (no carry out), whose complement is 0323.
    const ECT_CSUM: u16 = 0x0323;
    /// The same header with TOS 0x07 (CE): the TOS word is one larger, so
    /// the sum is fcdd and the checksum one less.
    const CE_CSUM: u16 = 0x0322;

    #[test]
    fn hand_sum() {
        let words: [u32; 9] = [0x4506, 0x05dc, 0x1c46, 0x4000, 0x4006, 0x0ad5, 0x0001, 0x0ad5, 0x0003];
        assert_eq!(words.iter().sum::<u32>(), 0xfcdc);
        assert_eq!(header_checksum(&frame(0x06, 0)[14..]), ECT_CSUM);
        assert_eq!(header_checksum(&frame(0x07, 0)[14..]), CE_CSUM);
        // A correct header sums to zero.
        assert_eq!(header_checksum(&frame(0x06, ECT_CSUM)[14..]), 0);
    }

    #[test]
    fn set_ce_marks_and_keeps_the_checksum_right() {
        let mut f = frame(0x06, ECT_CSUM);
        let before = ipv4(&f).unwrap();
        assert_eq!((before.dscp, before.ecn, before.total_len), (1, Ecn::Ect, 1500));
        assert_eq!(before.dst, [10, 213, 0, 3]);
        set_ce(&mut f);
        let after = ipv4(&f).unwrap();
        assert_eq!((after.dscp, after.ecn), (1, Ecn::Ce));
        assert_eq!(u16::from_be_bytes([f[24], f[25]]), CE_CSUM);
        assert_eq!(header_checksum(&f[14..]), 0);
        // Marking again changes nothing.
        set_ce(&mut f);
        assert_eq!(u16::from_be_bytes([f[24], f[25]]), CE_CSUM);
    }

    #[test]
    fn incremental_update_agrees_with_a_full_sum_for_every_tos_and_checksum() {
        // Whatever the other words hold (here: the identification), the
        // incremental update gives the checksum a full recomputation gives.
        for id in [0u16, 0x1c46, 0xfffe, 0xffff] {
            for tos in [0x01u8, 0x02, 0x06, 0xfe, 0xfd] {
                let mut f = frame(tos, 0);
                f[18..20].copy_from_slice(&id.to_be_bytes());
                let c = header_checksum(&f[14..]);
                f[24..26].copy_from_slice(&c.to_be_bytes());
                set_ce(&mut f);
                assert_eq!(header_checksum(&f[14..]), 0, "tos {tos:#x} id {id:#x}");
            }
        }
    }

    #[test]
    fn not_ipv4_is_not_parsed() {
        let mut arp = frame(0, 0);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(ipv4(&arp), None);
        assert_eq!(ipv4(&frame(0, 0)[..30]), None);
        let mut v6 = frame(0, 0);
        v6[14] = 0x60;
        assert_eq!(ipv4(&v6), None);
    }
}
