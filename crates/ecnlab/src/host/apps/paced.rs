//! A rate-limited application (FQ-CoDel in the DCN §III-B: streaming,
//! games): it writes one full segment of its data at open, then one more
//! every segment time at its rate, so its TCP can never send faster than
//! the rate, whatever the window allows. Its packets arrive at a switch
//! spaced far apart, as the paper's "packets of rate limited flows".

use crate::units::{Time, PS_PER_S};

#[derive(Clone, Copy, Debug)]
pub struct Paced {
    /// Time between writes: one segment at the rate.
    pub every: Time,
    /// Bytes per write (one segment's payload).
    pub chunk: u64,
}

impl Paced {
    pub fn new(bps: u64, mss: u32) -> Paced {
        let every = ((mss as u128 * 8 * PS_PER_S as u128) / bps as u128).max(1) as Time;
        Paced { every, chunk: mss as u64 }
    }

    /// What the application has handed TCP after one more write, given
    /// what it had (`limit`) and all it will ever write (`total`).
    #[inline]
    pub fn write(&self, limit: u64, total: u64) -> u64 {
        limit.saturating_add(self.chunk).min(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 Mbps with 1460 B segments: one write every 1460·8/10^7 s =
    /// 1.168 ms; the last write is cut to what is left.
    #[test]
    fn one_segment_per_segment_time() {
        let p = Paced::new(10_000_000, 1460);
        assert_eq!(p.every, 1_168_000_000);
        assert_eq!(p.write(0, 5000), 1460);
        assert_eq!(p.write(4380, 5000), 5000);
        assert_eq!(p.write(5000, u64::MAX), 6460);
    }
}
