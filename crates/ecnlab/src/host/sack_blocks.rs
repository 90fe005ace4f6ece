//! Up to three SACK blocks per ACK (RFC 2018 §4), opt-in by
//! `transport.sack_blocks` (3 in the `linux` profile).
//!
//! By default an ACK carries one block: the range holding the segment that
//! triggered it, none when that segment was in order. Linux sends as many
//! blocks as its option space holds beside the timestamps (40 bytes: 10
//! for timestamps, 2 + 8 per block, so three; tcp_established_options) on
//! every ACK while it holds data out of order, most recent first: the block
//! the latest segment landed in, then the blocks it reported before, in
//! the order it reported them (tcp_sack_new_ofo_skb moves a block a
//! segment joins to the front; it remembers four, TCP_NUM_SACKS). Repeating
//! older blocks is what makes SACK survive lost ACKs: a sender that missed
//! an ACK learns its block from the next ones (RFC 2018 §4).
//!
//! The receiver's side is here: per flow the last segments that arrived
//! out of order, newest first (`note`), and the blocks they fall in when
//! an ACK goes (`blocks`). Not modelled: D-SACK (RFC 2883: a duplicate
//! below the cumulative ACK is reported as a block of its own) and the
//! header's growth with the blocks (an ACK stays `transport.header` bytes).
//!
//! On the wire a packet is one cache line with no byte to spare
//! (`packet.rs`): the first block rides in `sack_lo`/`sack_hi` as before,
//! the other two in this slab, whose index plus one the ACK carries in
//! `payload` (unused on ACKs). The entry is taken when the sender reads the
//! ACK or when the network drops it; a packet crossing between parts of
//! the partitioned engine takes its blocks with it (`world/parallel/`).
//! The sender adds every block to its scoreboard (`scoreboard.rs`).

use crate::config::param::section;

section! {
    /// The key of the SACK blocks per ACK, in `[transport]`.
    pub struct SackBlocksParams {
        /// SACK blocks an ACK may carry. 1: the block holding the segment just received, none when
        /// it came in order (ecnlab's receivers before this key). 2 or 3: Linux's, on every ACK
        /// while data is held out of order, the newest block first, then the ones reported
        /// before. Three is what fits beside TCP timestamps. The `linux` profile sets 3.
        sack_blocks: u32 = 1, range "1 to 3", resolved Given, source "RFC 2018 §4; Linux tcp_output.c tcp_established_options, tcp_input.c tcp_sack_new_ofo_skb";
    }
}

impl SackBlocksParams {
    pub fn of(t: &crate::config::TransportCfg) -> SackBlocksParams {
        t.scheme_keys(SackBlocksParams::read).expect("a checked config")
    }

    pub fn validate(t: &crate::config::TransportCfg) -> Result<(), crate::config::ConfigError> {
        let n = Self::of(t).sack_blocks;
        if !(1..=3).contains(&n) {
            return Err(crate::config::bad(
                "transport.sack_blocks",
                n,
                "must be 1 to 3 (three blocks is what fits beside TCP timestamps)",
            ));
        }
        Ok(())
    }
}

/// An ACK's second and third blocks; (0, 0) is none.
pub type More = [(u64, u64); 2];
pub const NO_MORE: More = [(0, 0); 2];

/// Segments remembered per flow (Linux's TCP_NUM_SACKS).
const REMEMBERED: usize = 4;
const NONE: u64 = u64::MAX;

/// The run's multi-block SACK state: only where `sack_blocks` > 1.
pub struct SackBlocks {
    /// Blocks per ACK, 2 or 3.
    n: usize,
    /// Per flow (its receiver), a byte of each of the last segments that
    /// arrived out of order, newest first, one per block; NONE past the
    /// end. Grown to a flow when it first receives out of order.
    recent: Vec<[u64; REMEMBERED]>,
    /// The blocks of ACKs on their way: `payload - 1` indexes it.
    opts: Vec<More>,
    free: Vec<u32>,
    /// ACKs with blocks here that the network dropped (their entries
    /// freed there; the lifetime test needs some).
    pub dropped: u64,
}

/// The block of `ooo` (sorted, disjoint) holding byte `b`.
fn block_of(ooo: &[(u64, u64)], b: u64) -> Option<(u64, u64)> {
    let i = ooo.partition_point(|r| r.1 <= b);
    ooo.get(i).copied().filter(|r| r.0 <= b)
}

impl SackBlocks {
    pub fn new(t: &crate::config::TransportCfg) -> Option<SackBlocks> {
        let n = SackBlocksParams::of(t).sack_blocks as usize;
        (n > 1).then(|| SackBlocks { n, recent: Vec::new(), opts: Vec::new(), free: Vec::new(), dropped: 0 })
    }

    /// Flow `fid`'s receiver took a segment starting at `seq` above
    /// rcv_nxt; `ooo` is what it now holds out of order. Its block goes to
    /// the front; blocks it merged with, and ones rcv_nxt has passed, go.
    pub fn note(&mut self, fid: u32, seq: u64, ooo: &[(u64, u64)]) {
        let fid = fid as usize;
        if self.recent.len() <= fid {
            self.recent.resize(fid + 1, [NONE; REMEMBERED]);
        }
        let Some(front) = block_of(ooo, seq) else { return };
        let old = self.recent[fid];
        let mut new = [NONE; REMEMBERED];
        // The blocks of new[..k], to keep one byte per block.
        let mut kept = [front; REMEMBERED];
        new[0] = seq;
        let mut k = 1;
        for &b in old.iter().take_while(|&&b| b != NONE) {
            let Some(r) = block_of(ooo, b) else { continue };
            if k < REMEMBERED && !kept[..k].contains(&r) {
                (new[k], kept[k]) = (b, r);
                k += 1;
            }
        }
        self.recent[fid] = new;
    }

    /// The blocks of flow `fid`'s next ACK: newest first, those rcv_nxt
    /// has passed left out.
    pub fn blocks(&self, fid: u32, ooo: &[(u64, u64)]) -> ((u64, u64), More) {
        let mut out = [(0, 0); 3];
        if ooo.is_empty() {
            return (out[0], NO_MORE);
        }
        let Some(recent) = self.recent.get(fid as usize) else { return (out[0], NO_MORE) };
        let mut k = 0;
        for &b in recent.iter().take_while(|&&b| b != NONE) {
            if k == self.n {
                break;
            }
            if let Some(r) = block_of(ooo, b) {
                if !out[..k].contains(&r) {
                    out[k] = r;
                    k += 1;
                }
            }
        }
        (out[0], [out[1], out[2]])
    }

    /// Keep an ACK's further blocks while it travels: the value for its
    /// `payload`.
    pub fn put(&mut self, m: More) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.opts[i as usize] = m;
                i + 1
            }
            None => {
                self.opts.push(m);
                self.opts.len() as u32
            }
        }
    }

    /// The ACK with `payload` arrived or was dropped: its blocks, freed.
    pub fn take(&mut self, payload: u32) -> More {
        let i = payload - 1;
        self.free.push(i);
        self.opts[i as usize]
    }

    /// The ACK with `payload` was dropped in the network.
    pub fn drop_ack(&mut self, payload: u32) {
        self.dropped += 1;
        self.take(payload);
    }

    /// An ACK's further blocks, left in place (packet captures).
    pub fn peek(&self, payload: u32) -> More {
        self.opts[payload as usize - 1]
    }

    /// ACKs in flight with blocks kept here (for the conservation test).
    pub fn kept(&self) -> usize {
        self.opts.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::cc::EchoMode;
    use crate::host::tcp_rx::TcpReceiver;

    fn three() -> SackBlocks {
        let t: crate::config::TransportCfg = serde_json::from_str(r#"{"sack_blocks": 3}"#).unwrap();
        SackBlocks::new(&t).expect("3 blocks")
    }

    /// RFC 2018 §4's example, case 3: eight 500-byte segments from 5000,
    /// the 2nd, 4th, 6th and 8th lost. The RFC's table of the ACKs (ACK,
    /// then blocks newest first), then the 4th segment arriving late and
    /// then the 2nd. Sequence numbers as the RFC's.
    #[test]
    fn rfc2018_case3_reports_the_newest_block_first_then_the_older_ones() {
        let mut rx = TcpReceiver::new(EchoMode::None, 1);
        rx.rcv_nxt = 5000;
        let mut sb = three();
        let ack = |rx: &mut TcpReceiver, sb: &mut SackBlocks, seq: u64| {
            let before = rx.rcv_nxt;
            let out = rx.on_data(seq, 500, 500, false, false);
            if seq > before {
                sb.note(0, seq, rx.ooo());
            }
            let (first, more) = sb.blocks(0, rx.ooo());
            let blocks: Vec<(u64, u64)> = [first, more[0], more[1]].into_iter().filter(|b| b.1 > b.0).collect();
            (out.ack.expect("every segment ACKed").ack, blocks)
        };
        assert_eq!(ack(&mut rx, &mut sb, 5000), (5500, vec![]));
        assert_eq!(ack(&mut rx, &mut sb, 6000), (5500, vec![(6000, 6500)]));
        assert_eq!(ack(&mut rx, &mut sb, 7000), (5500, vec![(7000, 7500), (6000, 6500)]));
        assert_eq!(ack(&mut rx, &mut sb, 8000), (5500, vec![(8000, 8500), (7000, 7500), (6000, 6500)]));
        // The 4th segment (6500) arrives: its block now spans 6000-7500.
        assert_eq!(ack(&mut rx, &mut sb, 6500), (5500, vec![(6000, 7500), (8000, 8500)]));
        // The 2nd (5500): the cumulative ACK jumps to 7500.
        assert_eq!(ack(&mut rx, &mut sb, 5500), (7500, vec![(8000, 8500)]));
    }

    /// Four blocks are remembered, three sent: the oldest drops off the
    /// ACK, and comes back once a newer one is filled in.
    #[test]
    fn four_remembered_three_sent() {
        let mut sb = three();
        let ooo = [(10, 20), (30, 40), (50, 60), (70, 80)];
        for s in [10, 30, 50, 70] {
            sb.note(7, s, &ooo[..]);
        }
        assert_eq!(sb.blocks(7, &ooo), ((70, 80), [(50, 60), (30, 40)]));
        // 20-30 arrives: (10, 40) is the newest block now.
        let ooo = [(10, 40), (50, 60), (70, 80)];
        sb.note(7, 20, &ooo);
        assert_eq!(sb.blocks(7, &ooo), ((10, 40), [(70, 80), (50, 60)]));
        // A flow that never received out of order sends none.
        assert_eq!(sb.blocks(3, &ooo), ((0, 0), NO_MORE));
    }

    /// The slab gives each ACK its blocks back and reuses freed entries.
    #[test]
    fn the_slab_returns_each_acks_blocks() {
        let mut sb = three();
        let a = sb.put([(1, 2), (3, 4)]);
        let b = sb.put([(5, 6), (0, 0)]);
        assert_eq!(sb.kept(), 2);
        assert_eq!(sb.take(a), [(1, 2), (3, 4)]);
        let c = sb.put([(7, 8), (9, 10)]);
        assert_eq!(c, a, "a freed entry is reused");
        assert_eq!(sb.take(b), [(5, 6), (0, 0)]);
        assert_eq!(sb.take(c), [(7, 8), (9, 10)]);
        assert_eq!(sb.kept(), 0);
    }

    /// Why more blocks (RFC 2018 §4): ten segments out; 1, 3 and 5 are
    /// lost, and so are the ACKs that segments 2 and 4 triggered. With one
    /// block per ACK the sender never learns that the receiver holds 2 and
    /// 4 and resends them in recovery as holes; with three, the ACK of 6
    /// repeats their blocks and only 1, 3 and 5 are resent. Then nothing
    /// more is lost; every retransmission goes in order, every ACK arrives.
    #[test]
    fn repeated_blocks_spare_the_resends_that_lost_acks_cause() {
        const MSS: u64 = 1460;
        for n in [1, 3] {
            let t: crate::config::TransportCfg =
                serde_json::from_str(&format!(r#"{{"cc": "reno", "init_cwnd": 10, "sack_blocks": {n}}}"#)).unwrap();
            let mut tx = crate::host::tcp_tx::TcpSender::new(&t);
            tx.limit = 10 * MSS;
            tx.open(0);
            tx.on_synack(100, 0);
            let mut rx = TcpReceiver::new(EchoMode::None, 1);
            let mut sb = SackBlocks::new(&t);
            let mut now = 1000;
            let mut wire: Vec<u64> = std::iter::from_fn(|| tx.next_segment(now)).map(|g| g.seq / MSS).collect();
            assert_eq!(wire, (0..10).collect::<Vec<_>>());
            let (mut resent, mut first) = (Vec::new(), true);
            while !tx.drained() {
                assert!(!wire.is_empty(), "{n} blocks: stalled at snd_una {}", tx.una);
                for q in std::mem::take(&mut wire) {
                    if first && [1, 3, 5].contains(&q) {
                        continue;
                    }
                    let before = rx.rcv_nxt;
                    let out = rx.on_data(q * MSS, MSS as u32, MSS as u32, false, false);
                    if let Some(sb) = &mut sb {
                        if q * MSS > before {
                            sb.note(0, q * MSS, rx.ooo());
                        }
                    }
                    let a = out.ack.expect("every segment ACKed");
                    let (sack, more) = match &sb {
                        Some(sb) => sb.blocks(0, rx.ooo()),
                        None => (a.sack, NO_MORE),
                    };
                    if first && [2, 4].contains(&q) {
                        continue; // the ACK is lost
                    }
                    now += 1000;
                    tx.on_ack_blocks(now, a.ack, sack, &more, false, now - 500);
                    for g in std::iter::from_fn(|| tx.next_segment(now)) {
                        if g.retransmit {
                            resent.push(g.seq / MSS);
                        }
                        wire.push(g.seq / MSS);
                    }
                }
                first = false;
            }
            assert_eq!(tx.timeouts, 0);
            let want: &[u64] = if n == 3 { &[1, 3, 5] } else { &[1, 2, 3, 4, 5] };
            assert_eq!(resent, want, "{n} blocks");
        }
    }

    #[test]
    fn more_than_three_blocks_is_refused_by_key() {
        let t: crate::config::TransportCfg = serde_json::from_str(r#"{"sack_blocks": 4}"#).unwrap();
        let e = SackBlocksParams::validate(&t).unwrap_err().to_string();
        assert!(e.contains("transport.sack_blocks") && e.contains('4') && e.contains("1 to 3"), "{e}");
    }
}
