//! pFabric's window rule (pFabric §4.2, ns-2 MinTCP): no ECN, and on each
//! ACK that acknowledges new data one segment in slow start, else the
//! configured congestion avoidance step — per ACK, however many segments
//! it covers, and whether or not the window was in use (ns-2 opencwnd has
//! neither byte counting nor RFC 7661). Capped at max_cwnd like every
//! cc. The loss side (timeouts only, probe mode) is in `host/pfabric.rs`.

use super::{AckInfo, CcDecl, CongestionControl, EchoMode, Fill, Window};

/// pFabric's transport starts at line rate with a BDP window of 12
/// packets and a fixed 45 us RTO, about three fabric RTTs (pFabric §4.2;
/// the YAPS and ns-2 configurations, docs/schemes/pfabric.md).
pub const DECL: CcDecl = CcDecl {
    about: crate::switch::scheme::About {
        params: &[],
        ..crate::switch::scheme::About::new(
            "pfabric",
            "pFabric's minimal rate control: no ECN, a BDP initial window, a small fixed RTO, timeouts only; \
          stamps each packet with its flow's remaining bytes",
            "Alizadeh et al., pFabric (SIGCOMM 2013) §4.2; ns-2 MinTCP",
        )
    },
    defaults: &[
        ("init_cwnd", Fill::Json("12")),
        ("min_rto", Fill::Json("\"45us\"")),
        ("init_rto", Fill::Json("\"45us\"")),
    ],
    echo: EchoMode::None,
    pfabric: true,
    rdma: false,
    validate: |_| Ok(()),
    build: |_| super::Cc::MinTcp(MinTcp),
};

pub struct MinTcp;

impl CongestionControl for MinTcp {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: AckInfo) -> bool {
        if a.acked > 0 {
            w.open(1.0);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportCfg;

    fn ack(acked: u64) -> AckInfo {
        AckInfo {
            acked,
            delivered: acked,
            ece: false,
            una: 0,
            snd_max: 0,
            mss: 1460,
            cwnd_limited: false,
            now: 0,
            srtt: 0,
            rtt: 0,
        }
    }

    /// One segment per ACK in slow start even when the ACK covers two
    /// (a delayed ACK) and the sender was not window-limited; a duplicate
    /// ACK grows nothing; the cap is max_cwnd (ns-2 tcp.cc opencwnd).
    #[test]
    fn one_segment_per_new_ack_up_to_max_cwnd() {
        let t: TransportCfg = serde_json::from_str(r#"{"cc": "pfabric", "max_cwnd": 14}"#).unwrap();
        let mut w = Window::new(12.0, &t);
        let mut c = MinTcp;
        c.on_ack(&mut w, ack(2920));
        assert_eq!(w.cwnd, 13.0);
        c.on_ack(&mut w, ack(0));
        assert_eq!(w.cwnd, 13.0);
        for _ in 0..5 {
            c.on_ack(&mut w, ack(1460));
        }
        assert_eq!(w.cwnd, 14.0);
    }
}
