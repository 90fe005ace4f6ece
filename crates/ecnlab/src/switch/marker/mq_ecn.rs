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
