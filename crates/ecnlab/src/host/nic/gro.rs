//! Receive offload (GRO, CEDM §II-A c): in a batch of frames handled by
//! one interrupt, consecutive in-order data packets of a flow merge into
//! one segment, which TCP then acknowledges with one ACK.
//!
//! As Linux's GRO: a packet joins the flow's open segment only if it
//! starts where that one ends, carries the same ECN codepoint (a change of
//! the IP TOS byte ends a merge, so CE and non-CE data never share one
//! segment and DCTCP's echo stays exact), and the result fits `gro_max`
//! (one header and the payload). A packet with CWR is handed up alone, and
//! control packets (SYN, ACKs, probes) pass through unmerged. Up to 8
//! flows have a segment open at once (Linux's `MAX_GRO_SKBS`); a ninth
//! hands up the oldest. Everything open is handed up at the batch's end.

use crate::packet::{Kind, Packet};

/// Flows with a segment open at once (Linux MAX_GRO_SKBS).
const OPEN: usize = 8;

/// Merge `batch` (arrival order) into `out` (emptied first): segments in
/// the order they were closed. `max` bounds a segment's bytes.
pub fn merge(batch: &[Packet], max: u64, out: &mut Vec<Packet>) {
    out.clear();
    // Open segments are the last `open` entries of `out`, oldest first.
    let mut open = 0usize;
    for p in batch {
        if p.kind != Kind::Data || p.payload == 0 || p.cwr {
            // A CWR segment goes up alone, after its flow's open segment
            // (Linux flushes that one first), so the flow stays in order.
            let first_open = out.len() - open;
            if p.kind == Kind::Data {
                if let Some(i) = (first_open..out.len()).find(|&i| out[i].flow == p.flow && out[i].src == p.src) {
                    out[first_open..=i].rotate_right(1);
                    open -= 1;
                }
            }
            out.push(*p);
            // Keep the open segments at the end.
            if open > 0 {
                let n = out.len();
                out[n - 1 - open..].rotate_right(1);
            }
            continue;
        }
        let first_open = out.len() - open;
        if let Some(i) = (first_open..out.len()).find(|&i| out[i].flow == p.flow && out[i].src == p.src) {
            let m = &mut out[i];
            if m.seq + m.payload as u64 == p.seq && m.ecn == p.ecn && m.size as u64 + p.payload as u64 <= max {
                m.payload += p.payload;
                m.size += p.payload;
                m.rtx |= p.rtx;
                continue;
            }
            // Close this one: it moves before the open segments.
            out[first_open..=i].rotate_right(1);
            open -= 1;
        } else if open == OPEN {
            open -= 1; // the oldest is closed where it stands
        }
        out.push(*p);
        open += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;

    fn data(flow: u32, seq: u64, ecn: Ecn) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 1, flow, 0, 1500);
        p.payload = 1460;
        p.seq = seq;
        p.ecn = ecn;
        p
    }

    fn shape(out: &[Packet]) -> Vec<(u32, u64, u32)> {
        out.iter().map(|p| (p.flow, p.seq, p.payload)).collect()
    }

    /// 17 in-order packets (a 20 µs batch at 10 Gbps) become one segment of
    /// 17 × 1460 B; a 64 KB bound splits 50 packets after 43.
    #[test]
    fn in_order_packets_merge_up_to_the_bound() {
        let b: Vec<_> = (0..17).map(|i| data(0, i * 1460, Ecn::Ect)).collect();
        let mut out = Vec::new();
        merge(&b, 64_000, &mut out);
        assert_eq!(shape(&out), vec![(0, 0, 17 * 1460)]);
        assert_eq!(out[0].size, 40 + 17 * 1460);
        let b: Vec<_> = (0..50).map(|i| data(0, i * 1460, Ecn::Ect)).collect();
        merge(&b, 64_000, &mut out);
        assert_eq!(shape(&out), vec![(0, 0, 43 * 1460), (0, 43 * 1460, 7 * 1460)]);
    }

    /// A CE change, a gap, or an ACK between: interleaved flows each merge,
    /// and a CE run stays apart from the packets around it.
    #[test]
    fn merges_stop_at_ecn_changes_and_gaps() {
        let b = vec![
            data(0, 0, Ecn::Ect),
            data(1, 0, Ecn::Ect),
            data(0, 1460, Ecn::Ect),
            data(0, 2920, Ecn::Ce),
            Packet::new(Kind::Ack, 0, 1, 5, 0, 40),
            data(1, 1460, Ecn::Ect),
            data(0, 4380, Ecn::Ce),
            data(1, 4380, Ecn::Ect), // a hole before it
        ];
        let mut out = Vec::new();
        merge(&b, 64_000, &mut out);
        assert_eq!(shape(&out), vec![(0, 0, 2920), (5, 0, 0), (1, 0, 2920), (0, 2920, 2920), (1, 4380, 1460)]);
    }

    /// A CWR packet closes its flow's open segment first and goes up after
    /// it: A(0), B(1460, CWR), C(2920) leave as A, B, C, in order.
    #[test]
    fn cwr_packet_keeps_its_flow_in_order() {
        let mut b = data(1, 1460, Ecn::Ect);
        b.cwr = true;
        let batch = [data(1, 0, Ecn::Ect), b, data(1, 2920, Ecn::Ect), data(2, 0, Ecn::Ect)];
        let mut out = Vec::new();
        merge(&batch, 64_000, &mut out);
        assert_eq!(shape(&out), [(1, 0, 1460), (1, 1460, 1460), (1, 2920, 1460), (2, 0, 1460)]);
    }
}
