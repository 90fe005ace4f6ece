//! Collectors filled during a run: goodput bins per service, queue-length
//! samples, ping RTTs and incast rounds. All append-only columns.

use crate::units::Time;

pub struct Stats {
    pub goodput_bin: Time,
    /// Payload bytes delivered in order at receivers, [service][bin].
    pub goodput: Vec<Vec<u64>>,
    pub q_time: Vec<f64>,
    pub q_port: Vec<u32>,
    pub q_queue: Vec<u32>,
    pub q_bytes: Vec<u64>,
    pub q_packets: Vec<u32>,
    pub rtt_time: Vec<f64>,
    pub rtt_src: Vec<u32>,
    pub rtt_dst: Vec<u32>,
    pub rtt_service: Vec<u32>,
    pub rtt: Vec<f64>,
    pub inc_round: Vec<u32>,
    pub inc_start: Vec<f64>,
    pub inc_finish: Vec<f64>,
    pub inc_gbps: Vec<f64>,
}

impl Stats {
    /// `end` sizes the goodput bins up front (bins past it are never
    /// filled); runs without a duration grow them as time goes on.
    pub fn new(services: usize, end: Time, goodput_bin: Time) -> Self {
        let bins = if end == crate::config::NO_END { 0 } else { end.div_ceil(goodput_bin) as usize };
        Stats {
            goodput_bin,
            goodput: vec![vec![0; bins]; services],
            q_time: Vec::new(),
            q_port: Vec::new(),
            q_queue: Vec::new(),
            q_bytes: Vec::new(),
            q_packets: Vec::new(),
            rtt_time: Vec::new(),
            rtt_src: Vec::new(),
            rtt_dst: Vec::new(),
            rtt_service: Vec::new(),
            rtt: Vec::new(),
            inc_round: Vec::new(),
            inc_start: Vec::new(),
            inc_finish: Vec::new(),
            inc_gbps: Vec::new(),
        }
    }

    #[inline]
    pub fn deliver(&mut self, service: usize, now: Time, bytes: u64) {
        let bin = (now / self.goodput_bin) as usize;
        match self.goodput[service].get_mut(bin) {
            Some(b) => *b += bytes,
            None => self.grow(service, bin, bytes),
        }
    }

    /// A delivery past the last bin of a run without a duration (with one,
    /// nothing is delivered past its end): every service gets bins to `bin`.
    #[cold]
    fn grow(&mut self, service: usize, bin: usize, bytes: u64) {
        for g in &mut self.goodput {
            g.resize(bin + 1, 0);
        }
        self.goodput[service][bin] += bytes;
    }
}
