//! Persistent connections per host pair (`workload.connections =
//! "per-pair"`), as the MQ-ECN authors' ns-2 scripts run their flows
//! (`tcp-common-opt-raw.tcl`, `Agent_Aggr_pair`):
//!
//! * every ordered host pair owns one connection, opened before the flows
//!   (their 5-packet warm-up), so its first flow sends at once, no SYN;
//! * a flow that arrives while all of its pair's connections are busy gets
//!   an extra connection, which opens with a handshake and then stays in
//!   the pair's pool;
//! * a connection is free again once its flow's data is all acknowledged,
//!   and the next flow goes to the connection free the longest (in the
//!   script, the one that finished first claims the next arrival);
//! * a reused connection keeps its RTT estimate, RTO, ssthresh, cwnd and
//!   DCTCP α; slow-start restart (if on) puts cwnd back to the initial
//!   window when it was idle longer than its RTO (ns-2 FullTcp's
//!   `idle_restart` and `slowdown(CLOSE_CWND_INIT)`, which leave ssthresh
//!   alone);
//! * all flows of a connection share its ECMP path (ns-2 hashes the
//!   connection's flow id).
//!
//! ecnlab keeps one `Flow` per flow (its own sequence space and counters),
//! and moves a connection's state from the flow that freed it to the flow
//! that takes it over. Nothing here runs per packet.

use std::collections::{HashMap, VecDeque};

use crate::units::Time;

/// What a connection keeps from one flow to the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Carried {
    pub srtt: f64,
    pub rttvar: f64,
    pub rto: Time,
    pub cwnd: f64,
    pub ssthresh: f64,
    /// DCTCP's α (None for other congestion controls).
    pub alpha: Option<f64>,
    /// When the connection last sent data.
    pub last_send: Time,
}

/// How a flow gets its connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Assigned {
    /// The pair's first connection, already open: fresh state, no SYN.
    Opened { conn: u32 },
    /// A connection freed by an earlier flow: its state carries over.
    Reused { conn: u32, state: Carried },
    /// An extra connection for a busy pair: a handshake, fresh state.
    Extra { conn: u32 },
}

impl Assigned {
    pub fn conn(&self) -> u32 {
        match *self {
            Assigned::Opened { conn } | Assigned::Reused { conn, .. } | Assigned::Extra { conn } => conn,
        }
    }
}

#[derive(Default)]
struct Pair {
    /// Connections this pair has opened so far.
    opened: u32,
    /// Free connections, the longest free first.
    idle: VecDeque<(u32, Carried)>,
}

/// The connections of every host pair.
#[derive(Default)]
pub struct Pool {
    pairs: HashMap<(u32, u32), Pair>,
    /// Connections opened, over all pairs.
    opened: u32,
}

impl Pool {
    /// A connection for a flow from `src` to `dst` starting now.
    pub fn assign(&mut self, src: u32, dst: u32) -> Assigned {
        let pair = self.pairs.entry((src, dst)).or_default();
        if let Some((conn, state)) = pair.idle.pop_front() {
            return Assigned::Reused { conn, state };
        }
        // A connection's id is its number within its pair: the ECMP hash
        // adds the pair's ends (`World::flow_hash`), and a pair's
        // connections open in its sender's own order, on either engine.
        let conn = pair.opened;
        self.opened += 1;
        pair.opened += 1;
        if pair.opened == 1 {
            Assigned::Opened { conn }
        } else {
            Assigned::Extra { conn }
        }
    }

    /// The flow on connection `conn` of (`src`, `dst`) has all its data
    /// acknowledged: the connection is free, with `state`.
    pub fn release(&mut self, src: u32, dst: u32, conn: u32, state: Carried) {
        self.pairs.entry((src, dst)).or_default().idle.push_back((conn, state));
    }

    /// Connections opened so far, over all pairs.
    pub fn opened(&self) -> u32 {
        self.opened
    }
}

/// The pool plus, per flow, its connection: what `World` keeps when
/// `workload.connections = "per-pair"`.
pub struct PairConnections {
    pub pool: Pool,
    /// Per flow, the key its packets are hashed on for ECMP: its
    /// connection's id once it has one; flows outside the workload (and
    /// before they start) a key of their own, above every connection id.
    path_key: Vec<u32>,
    /// Per flow, whether it has handed its connection back.
    released: Vec<bool>,
    /// Workload flows are flows[first..end].
    first: usize,
    end: usize,
}

impl PairConnections {
    pub fn new(flows: usize, workload: (usize, usize)) -> Self {
        PairConnections {
            pool: Pool::default(),
            path_key: (0..flows as u32).map(|f| u32::MAX - f).collect(),
            released: vec![false; flows],
            first: workload.0,
            end: workload.1,
        }
    }

    /// Whether flow `fid` runs on a pair's connection (a workload flow).
    pub fn covers(&self, fid: u32) -> bool {
        (self.first..self.end).contains(&(fid as usize))
    }

    /// A connection for workload flow `fid` from `src` to `dst`.
    pub fn assign(&mut self, fid: u32, src: u32, dst: u32) -> Assigned {
        let a = self.pool.assign(src, dst);
        self.path_key[fid as usize] = a.conn();
        a
    }

    /// Flow `fid` has all its data acknowledged: its connection is free,
    /// with `state` (once; later ACKs change nothing).
    pub fn release(&mut self, fid: u32, src: u32, dst: u32, state: Carried) {
        if !self.covers(fid) || std::mem::replace(&mut self.released[fid as usize], true) {
            return;
        }
        self.pool.release(src, dst, self.path_key[fid as usize], state);
    }

    #[inline]
    pub fn path_key(&self, fid: u32) -> u32 {
        self.path_key[fid as usize]
    }

    /// The partitioned engine: flow `fid`'s key as its sender's part
    /// assigned it, learnt by a part that did not (its receiver's, whose
    /// ACKs hash on it, a part it crosses, or part 0 gathering the run).
    pub fn learn_path_key(&mut self, fid: u32, key: u32) {
        self.path_key[fid as usize] = key;
    }

    /// The partitioned engine, at the end: the connections `other`
    /// (another part's) opened count with these.
    pub fn add_opened(&mut self, other: &PairConnections) {
        self.pool.opened += other.pool.opened;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::snd::TxState;
    use crate::host::tcp_tx::TcpSender;

    /// A reused persistent connection (the MQ-ECN authors' ns-2 set-up)
    /// starts its next flow established, with the RTT estimate, RTO,
    /// ssthresh and α the last flow left. After an idle time longer than
    /// the RTO, slow-start restart sets cwnd to the initial window (20 here)
    /// whatever it was, up or down, and keeps ssthresh: ns-2 FullTcp's
    /// `idle_restart()` (idle > t_rtxcur_) then `slowdown(CLOSE_CWND_INIT)`.
    #[test]
    fn a_reused_connection_keeps_its_state() {
        use crate::config::TransportCfg;
        const MSS: u64 = 1460;
        let t: TransportCfg = serde_json::from_str(
            "{\"cc\": \"dctcp\", \"init_cwnd\": 20, \"slow_start_restart\": true, \"dctcp_alpha_init\": 0.0}",
        )
        .unwrap();
        let mut old = TcpSender::new(&t);
        old.limit = 10 * MSS;
        old.open(0);
        old.on_synack(100_000_000, 0); // one 100 us RTT sample
        old.w.cwnd = 7.0;
        old.w.ssthresh = 9.0;
        old.cc.set_alpha(0.25);
        let c = old.carried();
        let rto = old.rto; // 5 ms: the floor over srtt + 4·rttvar = 300 us
        assert_eq!(rto, 5_000_000_000);
        let after = |idle: Time| {
            let mut s = TcpSender::new(&t);
            s.limit = 40 * MSS;
            s.resume(&c, c.last_send + idle);
            s
        };
        // Idle for less than the RTO: the window is the old one.
        let s = after(rto - 1);
        assert_eq!(s.state, TxState::Established);
        assert_eq!((s.w.cwnd, s.w.ssthresh, s.rto), (7.0, 9.0, rto));
        assert_eq!(s.cc.alpha(), Some(0.25));
        assert_eq!(s.srtt(), 100_000_000);
        // Longer: cwnd back to IW 20 (raised from 7), ssthresh still 9.
        let mut s = after(rto + 1);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (20.0, 9.0));
        assert_eq!(std::iter::from_fn(|| s.next_segment(c.last_send + rto + 1)).count(), 20);
    }

    fn state(cwnd: f64) -> Carried {
        Carried { srtt: 1.0, rttvar: 0.5, rto: 5, cwnd, ssthresh: 20.0, alpha: Some(0.1), last_send: 7 }
    }

    /// The authors' scheme: one open connection per pair, an extra one
    /// (with a handshake) only while the others are busy, and reuse of the
    /// connection free the longest, with its state.
    #[test]
    fn pairs_reuse_the_longest_free_connection() {
        let mut p = Pool::default();
        assert_eq!(p.assign(0, 1), Assigned::Opened { conn: 0 });
        // Busy: the next flow of the pair opens an extra connection.
        assert_eq!(p.assign(0, 1), Assigned::Extra { conn: 1 });
        // Another pair (and the reverse direction) has its own, numbered
        // within the pair.
        assert_eq!(p.assign(1, 0), Assigned::Opened { conn: 0 });
        p.release(0, 1, 1, state(30.0));
        p.release(0, 1, 0, state(10.0));
        // Connection 1 was freed first, so it goes first, state and all.
        assert_eq!(p.assign(0, 1), Assigned::Reused { conn: 1, state: state(30.0) });
        assert_eq!(p.assign(0, 1), Assigned::Reused { conn: 0, state: state(10.0) });
        // Both busy again: a third connection, with a handshake.
        assert_eq!(p.assign(0, 1), Assigned::Extra { conn: 2 });
        assert_eq!(p.opened(), 4);
    }
}
