//! MQ-ECN (Bai et al., NSDI 2016) as a marking scheme: its keys, its
//! declaration and its build. Each queue's threshold follows its share of
//! the link: from the round time under a round-robin scheduler
//! (`mq_ecn_round.rs`), from the weights of the backlogged queues under
//! WFQ (`mq_ecn_generic.rs`); with RED's keys instead of `threshold`, RED's
//! two thresholds are scaled by that share (§3.4, `red.rs`).

use super::red::{RedParams, Share};
use super::{Marker, MarkingDecl, MqEcn, MqEcnGeneric, Threshold};
use crate::config::param::section;
use crate::config::{bad, Dur};
use crate::switch::scheme::{About, Estimate, PortCtx};
use crate::units::tx_time;

section! {
    /// MQ-ECN's keys.
    pub struct MqEcnParams {
        /// EWMA gain β of the round-time estimate T_round.
        mqecn_beta: f64 = 0.75, range "(0, 1)", source "MQ-ECN §5", lenient true;
        /// The idle slot T_idle by which an idle port's estimate decays.
        mqecn_idle: Option<Dur> = None, range "positive", default_doc "one packet time at the port's rate",
            source "MQ-ECN §3.3.1", lenient true;
    }
}

/// MQ-ECN: its threshold form, or with RED's keys its probabilistic one.
pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[MqEcnParams::PARAMS, RedParams::PARAMS],
        ..About::new(
            "mq-ecn",
            "each queue's K follows its share of the link (from the round time, or over WFQ the weights); \
             with red_min/red_max/red_pmax instead of threshold, RED's thresholds do (§3.4)",
            "Bai et al., Enabling ECN in Multi-Service Multi-Queue Data Centers (NSDI 2016), §3",
        )
    },
    threshold: Threshold::Own,
    own_sides: None,
    validate,
    build,
};

fn validate(c: &PortCtx) -> Result<(), crate::config::ConfigError> {
    let p = c.read(MqEcnParams::read)?;
    if !(p.mqecn_beta > 0.0 && p.mqecn_beta < 1.0) {
        return Err(bad(&c.key("mqecn_beta"), p.mqecn_beta, "must lie strictly between 0 and 1"));
    }
    let red = c.read(RedParams::read)?;
    if red.given() {
        red.check(c, "MQ-ECN's probabilistic variant needs red_min, red_max and red_pmax")?;
        if c.port.threshold.is_some() {
            return Err(bad(
                &c.key("threshold"),
                "set",
                "MQ-ECN's probabilistic variant takes red_min/red_max instead of threshold; give one or the other",
            ));
        }
    } else {
        crate::switch::scheme::need_one_threshold(c, "mq-ecn")?;
    }
    if c.estimate == Estimate::None {
        return Err(bad(
            &c.key("marking"),
            "\"mq-ecn\"",
            "needs a weighted scheduler: wrr, dwrr, sp-dwrr (round-time estimate) or wfq (weight-sum estimate)",
        ));
    }
    if p.mqecn_idle.is_some_and(|d| d.0 == 0) {
        return Err(bad(&c.key("mqecn_idle"), "0s", "must be positive"));
    }
    Ok(())
}

/// MQ-ECN's share estimate picks its variant by scheduler: the weight sum
/// under WFQ (no rounds to time, §3.4), the round time otherwise.
fn build(c: &PortCtx) -> Marker {
    let p = c.params(MqEcnParams::read);
    let quanta = c.port.quanta();
    let idle = p.mqecn_idle.map(|d| d.0).unwrap_or_else(|| tx_time(c.pkt, c.rate_bps));
    let strict = (c.strict)(c);
    let generic = c.estimate == Estimate::Weights;
    let red = c.params(RedParams::read);
    if red.given() {
        let share = if generic {
            Share::Weights(MqEcnGeneric::new(0, &quanta, p.mqecn_beta, idle))
        } else {
            Share::Round(MqEcn::new(0, &quanta, c.rate_bps, strict, p.mqecn_beta, idle))
        };
        return red.build(c).with_mq_ecn(share).into();
    }
    if generic {
        Marker::MqEcnGeneric(MqEcnGeneric::new(c.k(), &quanta, p.mqecn_beta, idle))
    } else {
        Marker::MqEcn(MqEcn::new(c.k(), &quanta, c.rate_bps, strict, p.mqecn_beta, idle))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::RoundObserver;
    use crate::units::Time;

    struct Obs<'a>(&'a mut MqEcn);
    impl RoundObserver for Obs<'_> {
        fn activated(&mut self, q: usize, now: Time) {
            self.0.activated(q, now)
        }
        fn turn_end(&mut self, q: usize, end: Time) {
            self.0.turn_end(q, end)
        }
    }

    const PKT: Time = 1_200_000; // 1500 B at 10 Gbps
    const RATE: u64 = 10_000_000_000;

    /// Two queues with the given quanta, both always backlogged with 1500 B
    /// packets, served back to back for `steps` packets.
    fn backlogged(k: u64, quanta: [u64; 2], steps: usize) -> MqEcn {
        let mut m = MqEcn::new(k, &quanta, RATE, 0, 0.75, PKT);
        let mut d = crate::switch::scheduler::Dwrr::new(quanta.to_vec(), true);
        let mut qs = [crate::switch::queue::Queue::default(), crate::switch::queue::Queue::default()];
        for (q, fifo) in qs.iter_mut().enumerate() {
            for i in 0..steps as u32 {
                fifo.fifo.push(i, 1500);
            }
            d.activate(q, 0, &mut Obs(&mut m));
        }
        let mut now = 0;
        for _ in 0..steps {
            let q = d.select(now, &qs, crate::units::LineRate::new(RATE), &mut Obs(&mut m));
            qs[q].fifo.pop();
            now += PKT;
        }
        m
    }

    /// Equal 1500 B quanta at 10 Gbps: each turn is one packet, so every
    /// sample is 2 packet times = 2.4 us and K_i → K/2
    /// (docs/schemes/mq-ecn.md, prediction 1).
    #[test]
    fn equal_quanta_round_converges_to_two_packets() {
        let k = 65 * 1500;
        let m = backlogged(k, [1500, 1500], 300);
        assert!((m.t_round() - 2.0 * PKT as f64).abs() < 0.01 * PKT as f64, "T_round = {}", m.t_round());
        assert_eq!(m.threshold(0), k / 2);
        assert_eq!(m.threshold(1), k / 2);
    }

    /// Quanta 1500:6000: a round is 5 packet times, K_0 → K/5 and
    /// K_1 → 4K/5 (docs/schemes/mq-ecn.md, prediction 1).
    #[test]
    fn weighted_quanta_scale_thresholds() {
        let k = 80 * 1500;
        let m = backlogged(k, [1500, 6000], 1000);
        let t = m.t_round() / PKT as f64;
        assert!((t - 5.0).abs() < 0.05, "T_round = {t} packet times");
        assert!((m.threshold(0) as f64 / (k as f64 / 5.0) - 1.0).abs() < 0.02);
        assert!((m.threshold(1) as f64 / (k as f64 * 0.8) - 1.0).abs() < 0.02);
    }

    /// SP+DWRR: a strict queue keeps the standard K (MQ-ECN §3.4).
    #[test]
    fn strict_queues_keep_standard_k() {
        let mut m = MqEcn::new(65 * 1500, &[1500, 1500, 1500], RATE, 1, 0.75, PKT);
        for i in 0..50 {
            m.turn_end(1, (i + 1) * 3 * PKT);
        }
        assert_eq!(m.threshold(0), 65 * 1500);
        assert!(m.threshold(1) < 65 * 1500 / 2);
    }

    /// After 10 idle slots the estimate is scaled by 0.75^10 ≈ 0.056
    /// (docs/schemes/mq-ecn.md, prediction 2); a lone queue gets K
    /// (prediction 3: its samples equal its own quantum time).
    #[test]
    fn idle_decay_and_lone_queue() {
        let k = 65 * 1500;
        let mut m = MqEcn::new(k, &[1500, 1500], 10_000_000_000, 0, 0.75, PKT);
        m.set_t_round(2.0 * PKT as f64);
        m.port_idle(0);
        m.port_busy(10 * PKT + 5);
        assert!((m.t_round() / (2.0 * PKT as f64) - 0.75f64.powi(10)).abs() < 1e-9);
        // The arrival was dropped and the port is still empty: the next one,
        // half a slot later, finds no new whole slot to charge.
        m.port_busy(10 * PKT + PKT / 2);
        assert!((m.t_round() / (2.0 * PKT as f64) - 0.75f64.powi(10)).abs() < 1e-9);
        // One more whole slot: one more factor β.
        m.port_busy(11 * PKT + 5);
        assert!((m.t_round() / (2.0 * PKT as f64) - 0.75f64.powi(11)).abs() < 1e-9);
        m.set_t_round(0.0);
        for i in 0..50 {
            m.turn_end(0, (i + 1) * PKT);
        }
        assert_eq!(m.threshold(0), k);
    }
}
