//! Stage tagging (ML-ECN §III-B-1, after PIAS): a sender tags each data
//! packet with its flow's stage, the range of bytes sent it lies in. With
//! elevation thresholds α_1 < … < α_n a flow carries stage j (1-based, the
//! paper's S_j) while α_{j−1} ≤ bytes sent < α_j (α_0 = 0, α_{n+1} = ∞), so
//! stages run 1..=n+1; untagged packets (ACKs, SYNs, runs without stages)
//! carry 0.

use crate::config::StageBy;

/// The most thresholds: a stage must fit DSCP's 6 bits, and a port has at
/// most 64 queues anyway.
pub use crate::config::host::MAX_STAGE_THRESHOLDS as MAX_THRESHOLDS;

pub struct Stages {
    alpha: Box<[u64]>,
    by: StageBy,
    /// Bit j set: packets of stage j are sent ECN-capable.
    ect: u64,
}

impl Stages {
    pub fn new(alpha: Vec<u64>, by: StageBy) -> Self {
        debug_assert!(alpha.windows(2).all(|w| w[0] < w[1]) && alpha.len() <= MAX_THRESHOLDS);
        Stages { alpha: alpha.into_boxed_slice(), by, ect: u64::MAX }
    }

    /// Only packets of these stages are sent ECN-capable, so no switch
    /// marks the others (ML-ECN Fig. 2's "mark only large/small flows": a
    /// switch that never marks a packet and a packet that cannot be marked
    /// are the same to TCP, as long as Not-ECT packets are queued, not
    /// dropped, where ECT ones would be marked — drop_not_ect off).
    pub fn ect_only(mut self, stages: &[u32]) -> Self {
        self.ect = stages.iter().fold(0, |m, &s| m | 1 << s);
        self
    }

    /// Packets of `stage` are sent ECN-capable.
    #[inline]
    pub fn ect(&self, stage: u8) -> bool {
        self.ect >> stage & 1 == 1
    }

    /// The stage of a flow that has sent `bytes` (1-based).
    #[inline]
    pub fn of(&self, bytes: u64) -> u8 {
        1 + self.alpha.iter().take_while(|&&a| a <= bytes).count() as u8
    }

    /// The tag of a data packet. "Bytes sent" is the flow's highest byte
    /// sent before this packet (snd_max), so a retransmission carries the
    /// flow's current stage, not the stage its bytes first had; with
    /// `stage_by = "size"` it is the flow's whole size (a long-lived flow
    /// is in the last stage), the a-priori split of ML-ECN Fig. 2.
    #[inline]
    pub fn tag(&self, seq: u64, max_sent: u64, retransmit: bool, size: Option<u64>) -> u8 {
        match self.by {
            StageBy::Sent => self.of(if retransmit { max_sent } else { seq }),
            StageBy::Size => size.map_or(self.alpha.len() as u8 + 1, |s| self.of(s.saturating_sub(1))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stage j exactly while α_{j−1} ≤ bytes sent < α_j (ML-ECN §III-B-1),
    /// for the thresholds 100 KB and 10 MB.
    #[test]
    fn stage_follows_bytes_sent() {
        let s = Stages::new(vec![100_000, 10_000_000], StageBy::Sent);
        for (sent, stage) in [(0, 1), (99_999, 1), (100_000, 2), (9_999_999, 2), (10_000_000, 3), (u64::MAX, 3)] {
            assert_eq!(s.of(sent), stage, "{sent} bytes sent");
        }
        // A retransmission of byte 0 after 200 KB were sent is in stage 2.
        assert_eq!(s.tag(0, 200_000, true, None), 2);
        assert_eq!(s.tag(0, 200_000, false, None), 1);
    }

    /// By size: a flow of exactly 100 KB is small (the paper's (0, 100KB]
    /// class), one byte more is medium; a long flow is in the last stage.
    #[test]
    fn stage_by_size_uses_the_flows_class() {
        let s = Stages::new(vec![100_000, 10_000_000], StageBy::Size);
        assert_eq!(s.tag(0, 0, false, Some(100_000)), 1);
        assert_eq!(s.tag(0, 0, false, Some(100_001)), 2);
        assert_eq!(s.tag(5_000_000, 0, false, Some(10_000_001)), 3);
        assert_eq!(s.tag(0, 0, false, None), 3);
        let only_large = s.ect_only(&[2, 3]);
        assert!(!only_large.ect(1) && only_large.ect(2) && only_large.ect(3));
    }
}
