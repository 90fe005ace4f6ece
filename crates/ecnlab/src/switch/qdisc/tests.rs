//! Tests of the composed qdisc: packet accounting, pass-through and static paths, the marking rules (TCN, DeMe-Pro, CEDM), stage classes, whole disciplines.

use super::*;
use crate::packet::{Kind, Packet};
use crate::switch::marker::{Hooked, PerQueue};
use crate::switch::scheduler::Sp;

/// Queue counters add up, whichever side marks: per queue, every packet
/// offered was refused (buffer full, or the AQM at enqueue) or taken in,
/// and every packet taken in was sent or dropped on the way out
/// (dequeue marking with drop_not_ect). Each count is checked against
/// what the test itself saw.
#[test]
fn counters_account_for_every_packet() {
    for dequeue_marking in [false, true] {
        // 2 queues, K = 3 packets of 1000 B, room for 8 packets.
        let marker = Marker::PerQueue(PerQueue::standard(3000, 2));
        let mut qd = Qdisc::new(2, Scheduler::Sp(Sp), marker, Buffer::Bytes(8000), 10_000_000_000);
        qd.set_dequeue_marking(dequeue_marking);
        qd.drop_not_ect = true;
        let mut arena = Arena::default();
        let (mut offered, mut refused) = ([0u64; 2], [0u64; 2]);
        let (mut sent, mut sent_marked) = ([0u64; 2], [0u64; 2]);
        for i in 0..40u32 {
            let q = (i % 3 == 0) as u8;
            let mut p = Packet::new(Kind::Data, 0, 1, 0, q, 1000);
            p.ecn = if i % 4 == 0 { Ecn::NotEct } else { Ecn::Ect };
            let id = arena.alloc(p, 0);
            offered[q as usize] += 1;
            if qd.enqueue(0, id, &mut arena, 0).is_err() {
                refused[q as usize] += 1;
            }
            if i % 3 == 2 {
                if let Some((id, _)) = qd.dequeue(0, &mut arena, 0) {
                    let q = arena.get(id).service as usize;
                    sent[q] += 1;
                    sent_marked[q] += (arena.get(id).ecn == Ecn::Ce) as u64;
                }
            }
        }
        // Drain: every packet taken in leaves, or is dropped leaving.
        while let Some((id, _)) = qd.dequeue(0, &mut arena, 0) {
            let q = arena.get(id).service as usize;
            sent[q] += 1;
            sent_marked[q] += (arena.get(id).ecn == Ecn::Ce) as u64;
        }
        let out_drops = std::iter::from_fn(|| qd.take_dequeue_drop()).count() as u64;
        for q in 0..2 {
            let c = qd.counters(q);
            assert_eq!(c.enqueued, offered[q] - refused[q], "queue {q}, dequeue marking {dequeue_marking}");
            assert_eq!(refused[q], c.dropped_overflow + if dequeue_marking { 0 } else { c.dropped_aqm });
            assert_eq!(c.sent_packets, sent[q]);
            assert_eq!(c.marked, sent_marked[q]);
        }
        // Both schemes marked and dropped something, or the test
        // checks nothing.
        let total = |f: fn(&QueueCounters) -> u64| (0..2).map(|q| f(&qd.counters(q))).sum::<u64>();
        assert!(total(|c| c.marked) > 0 && total(|c| c.dropped_aqm) > 0 && total(|c| c.dropped_overflow) > 0);
        assert_eq!(out_drops, if dequeue_marking { total(|c| c.dropped_aqm) } else { 0 });
    }
}

/// A port on a 10 Gbps link, as `World` drives it: departures run when
/// due, and an arrival at an empty, idle port is sent at once, by
/// `pass_through` when `shortcut` is set. Returns (packet, CE) for each
/// packet sent, and counts shortcuts and fallbacks in `paths`.
struct Port {
    qd: Qdisc,
    arena: Arena,
    busy_until: Time,
    shortcut: bool,
    paths: (u32, u32),
    /// Shortcuts that marked or dropped (Not-ECT) their packet.
    shortcut_aqm: u32,
}

impl Port {
    fn send(&mut self, now: Time, id: u32, size: u32, out: &mut Vec<(u32, bool)>) {
        self.busy_until = now + self.qd.rate.tx_time(size as u64);
        out.push((id, self.arena.get(id).ecn == Ecn::Ce));
    }

    fn arrive(&mut self, now: Time, p: Packet) -> Vec<(u32, bool)> {
        let mut out = Vec::new();
        while self.qd.packets > 0 && self.busy_until <= now {
            let t = self.busy_until;
            if let Some((id, size)) = self.qd.dequeue(t, &mut self.arena, 0) {
                self.send(t, id, size, &mut out);
            }
        }
        let id = self.arena.alloc(p, 0);
        if self.qd.packets == 0 && now >= self.busy_until {
            if self.shortcut {
                if let Some(r) = self.qd.pass_through(now, id, &mut self.arena, 0, 0) {
                    self.paths.0 += 1;
                    let aqm = matches!(r, Err(DropReason::Aqm)) || self.arena.get(id).ecn == Ecn::Ce;
                    self.shortcut_aqm += aqm as u32;
                    if r.is_ok() {
                        self.send(now, id, p.size, &mut out);
                    }
                    return out;
                }
                self.paths.1 += 1;
            }
            if self.qd.enqueue(now, id, &mut self.arena, 0).is_ok() {
                // None only where a dequeue hook dropped it (drop_not_ect).
                match self.qd.dequeue(now, &mut self.arena, 0) {
                    Some((id, size)) => self.send(now, id, size, &mut out),
                    None => assert!(self.qd.take_dequeue_drop().is_some(), "just queued"),
                }
            }
        } else {
            let _ = self.qd.enqueue(now, id, &mut self.arena, 0);
        }
        out
    }
}

/// MQ-ECN's estimate: T_round, or W_est over WFQ (0 for other markers).
fn mq_estimate(qd: &Qdisc) -> f64 {
    match &qd.marker {
        Marker::MqEcn(m) => m.t_round(),
        Marker::MqEcnGeneric(m) => m.w_est(),
        _ => 0.0,
    }
}

/// Drive two copies of a port, `a` with the shortcut and `b` without,
/// through the same 5,000 bursty arrivals (bursts at 1.5 to 3 times the
/// line rate, then quiet gaps; three sizes; one packet in 11 Not-ECT), and
/// require the same departures, CE marks, MQ-ECN estimate and occupancy at
/// every step, and the same counters at the end.
fn side_by_side(a: &mut Port, b: &mut Port, what: &str) {
    let mut now = 0;
    for i in 0..5000u64 {
        now += if i % 23 == 0 { 30_000_000 } else { 200_000 * (1 + i * 7 % 4) };
        let (q, size) = ((i % 3 == 0) as u8, [1500, 600, 1000][(i / 2 % 3) as usize]);
        let mut p = Packet::new(Kind::Data, 0, 1, 0, q, size);
        p.ecn = if i % 11 == 0 { Ecn::NotEct } else { Ecn::Ect };
        assert_eq!(a.arrive(now, p), b.arrive(now, p), "{what}, arrival {i}");
        assert_eq!(mq_estimate(&a.qd).to_bits(), mq_estimate(&b.qd).to_bits(), "{what}, arrival {i}");
        assert_eq!((a.qd.bytes, a.qd.max_bytes), (b.qd.bytes, b.qd.max_bytes), "{what}, arrival {i}");
    }
    let count = |c: QueueCounters| {
        (c.enqueued, c.marked, c.dropped_overflow, c.dropped_aqm, c.max_bytes, c.sent_packets, c.sent_bytes)
    };
    for q in 0..2 {
        assert_eq!(count(a.qd.counters(q)), count(b.qd.counters(q)), "{what}, queue {q}");
    }
}

/// `pass_through` on an empty port leaves exactly the state of an
/// `enqueue` followed at once by a `dequeue`: counters, CE marks, the
/// MQ-ECN round-time estimate (fed by the queue's turn) and so every
/// later marking and scheduling decision, and AQM drops of Not-ECT
/// packets (`drop_not_ect`). Two copies of a port take the
/// same bursty arrivals, one with the shortcut; quanta of 1500 B and
/// 700 B make DWRR take the shortcut or fall back to its FIFO path.
/// WFQ with MQ-ECN's weight-sum estimate always takes the shortcut.
#[test]
fn pass_through_equals_enqueue_then_dequeue() {
    use crate::switch::marker::{MqEcn, MqEcnGeneric};
    use crate::switch::scheduler::{wrr, Dwrr, Wfq};
    const RATE: u64 = 10_000_000_000;
    let make = |sched: u8, shortcut: bool| {
        let quanta = [1500, 700];
        let s = match sched {
            0 | 3 => Scheduler::RoundRobin(Dwrr::new(quanta.to_vec(), true)),
            1 => Scheduler::RoundRobin(wrr(quanta.to_vec())),
            4 => Scheduler::Wfq(Wfq::new(&quanta)),
            _ => Scheduler::Sp(Sp),
        };
        // K = 1400 B, below a full-size packet, so even an empty port
        // marks (or drops Not-ECT) a 1500 B one; one idle slot = one
        // packet time.
        let m = if sched == 2 {
            Marker::PerQueue(PerQueue::standard(1400, 2))
        } else if sched == 3 {
            // RED with a real average (w_q = 0.2, idle decay through
            // `queue_emptied`) and random draws, over DWRR.
            Hooked::Red(crate::switch::marker::Red::new(1000, 3000, 0.5, 0.2, true, true, 1_200_000, 2)).into()
        } else if sched == 4 {
            Marker::MqEcnGeneric(MqEcnGeneric::new(1400, &quanta, 0.75, 1_200_000))
        } else {
            Marker::MqEcn(MqEcn::new(1400, &quanta, RATE, 0, 0.75, 1_200_000))
        };
        let mut qd = Qdisc::new(2, s, m, Buffer::Bytes(8_000), RATE);
        // One packet in 11 is Not-ECT and dropped where it would be marked.
        qd.drop_not_ect = true;
        Port { qd, arena: Arena::default(), busy_until: 0, shortcut, paths: (0, 0), shortcut_aqm: 0 }
    };
    for sched in 0..5u8 {
        let (mut a, mut b) = (make(sched, true), make(sched, false));
        side_by_side(&mut a, &mut b, &format!("scheduler {sched}"));
        // Both paths ran, queues built up to marks and overflows, and
        // MQ-ECN had rounds to time; else the comparison shows little.
        let total = |f: fn(&QueueCounters) -> u64| (0..2).map(|q| f(&a.qd.counters(q))).sum::<u64>();
        assert!(a.paths.0 > 100, "scheduler {sched}: {:?}", a.paths);
        assert_eq!(a.paths.1 > 0, sched == 0 || sched == 3, "scheduler {sched}: {:?}", a.paths);
        assert!(total(|c| c.marked) > 100 && total(|c| c.dropped_overflow) > 0, "scheduler {sched}");
        // (RED's average decays while a port is idle, so its shortcuts
        // rarely mark: only the others must mark on the shortcut.)
        assert!(total(|c| c.dropped_aqm) > 0 && (sched == 3 || a.shortcut_aqm > 0), "scheduler {sched}");
        assert!(matches!(sched, 2 | 3) || mq_estimate(&a.qd) > 0.0);
    }
}

/// A static marker judging at dequeue (`dequeue_marking`, Tuning ECN §4.2)
/// takes the shortcut too, judging the lone packet as `dequeue` would: the
/// same CE marks, counters and MQ-ECN estimate as the long way, on the same
/// bursty arrivals as above. K = 1400 B, so a lone 1500 B packet is marked
/// on the shortcut. Without `drop_not_ect` a mark cannot fail; with it the
/// port goes the long way (`pass_through` None), as a hooked marker does
/// unless it passes the lone packet without a draw (`passes_alone`).
#[test]
fn pass_through_judges_a_lone_packet_as_dequeue_would() {
    use crate::switch::marker::MqEcn;
    use crate::switch::scheduler::{wrr, Dwrr};
    const RATE: u64 = 10_000_000_000;
    let make = |m: u8, shortcut: bool, drop_not_ect: bool| {
        let quanta = [1500, 700];
        let s = if m == 1 {
            Scheduler::RoundRobin(wrr(quanta.to_vec()))
        } else {
            Scheduler::RoundRobin(Dwrr::new(quanta.to_vec(), true))
        };
        let marker = match m {
            0 | 1 => Marker::PerQueue(PerQueue::standard(1400, 2)),
            2 => Marker::MqEcn(MqEcn::new(1400, &quanta, RATE, 0, 0.75, 1_200_000)),
            // MM-ECN-like at the front: a hooked marker judging at dequeue.
            _ => {
                Hooked::MmEcn(crate::switch::marker::mm_ecn::MmEcn { k_low: 700, k_high: 1400, pmax: 1.0, front: true })
                    .into()
            }
        };
        let mut qd = Qdisc::new(2, s, marker, Buffer::Bytes(8_000), RATE);
        qd.drop_not_ect = drop_not_ect;
        qd.set_dequeue_marking(true);
        Port { qd, arena: Arena::default(), busy_until: 0, shortcut, paths: (0, 0), shortcut_aqm: 0 }
    };
    // MM-ECN-like (3) with K_low = 700 B: 600 B packets pass alone on the
    // shortcut, larger ones go the long way (their lone judgement may draw).
    for (m, drop_not_ect) in [(0, false), (1, false), (2, false), (0, true), (3, false)] {
        let (mut a, mut b) = (make(m, true, drop_not_ect), make(m, false, drop_not_ect));
        assert!(a.qd.drops_at_dequeue(), "marker {m}: judged at dequeue");
        side_by_side(&mut a, &mut b, &format!("marker {m}, drop_not_ect {drop_not_ect}"));
        if drop_not_ect {
            assert_eq!(a.paths.0, 0, "marker {m}: no shortcut where a mark may drop");
        } else if m == 3 {
            assert!(a.paths.0 > 50 && a.paths.1 > 100 && a.shortcut_aqm == 0, "marker {m}: {:?}", a.paths);
        } else {
            // The shortcut ran and marked lone full-size packets.
            assert!(a.paths.0 > 100 && a.shortcut_aqm > 10, "marker {m}: {:?}, {} marked", a.paths, a.shortcut_aqm);
        }
    }
}

/// A plain port's static path (`enqueue_plain`, `pass_through_plain`,
/// `dequeue_plain`) does what the general one does, for every static
/// marker: two copies of a port take the same random arrivals (in
/// bursts and lulls, three sizes, one packet in 7 Not-ECT and dropped
/// where it would be marked) and departures, one by each path, and every verdict, CE mark,
/// counter and MQ-ECN estimate must agree at every step.
#[test]
fn static_path_equals_general_path() {
    use crate::switch::marker::{MqEcn, MqEcnGeneric, PerPool, PerPort};
    use crate::switch::scheduler::{Dwrr, Wfq};
    const RATE: u64 = 10_000_000_000;
    let quanta = [1500, 700, 3000];
    let make = |m: usize| {
        let marker = match m {
            0 => Marker::None,
            1 => Marker::PerQueue(PerQueue::standard(4000, 3)),
            2 => Marker::PerPort(PerPort { k: 6000 }),
            3 => Marker::PerPool(PerPool { k: 5000 }),
            4 => Marker::MqEcn(MqEcn::new(6000, &quanta, RATE, 0, 0.75, 1_200_000)),
            5 => Marker::PerQueue(PerQueue::minimum(9000, &quanta)),
            _ => Marker::MqEcnGeneric(MqEcnGeneric::new(6000, &quanta, 0.75, 1_200_000)),
        };
        let sched = match m {
            6 => Scheduler::Wfq(Wfq::new(&quanta)),
            5 => Scheduler::Sp(Sp),
            _ => Scheduler::RoundRobin(Dwrr::new(quanta.to_vec(), true)),
        };
        let mut qd = Qdisc::new(3, sched, marker, Buffer::Bytes(20_000), RATE);
        qd.drop_not_ect = true;
        assert!(qd.is_plain(), "marker {m}");
        qd
    };
    for m in 0..7 {
        let (mut a, mut b) = (make(m), make(m));
        let (mut arena_a, mut arena_b) = (Arena::default(), Arena::default());
        let mut rng = Rng::new(m as u64 + 1);
        let (mut now, mut marks, mut drops, mut shortcuts) = (0, 0, 0, 0);
        for i in 0..20_000u64 {
            // Quiet gaps now and then, so ports empty and MQ-ECN decays.
            now += if rng.uniform() < 0.02 { 20_000_000 } else { 300_000 + rng.next_u64() % 900_000 };
            // Bursts that build the queues up, then lulls that drain them.
            let arriving = if (i / 60) % 2 == 0 { 0.75 } else { 0.25 };
            if rng.uniform() < arriving {
                let q = (rng.next_u64() % 3) as u8;
                let mut p = Packet::new(Kind::Data, 0, 1, 0, q, [1500, 600, 64][(rng.next_u64() % 3) as usize]);
                p.ecn = if i % 7 == 0 { Ecn::NotEct } else { Ecn::Ect };
                let (ia, ib) = (arena_a.alloc(p, 0), arena_b.alloc(p, 0));
                // A shared pool that counts more than this port.
                let pool = a.bytes + rng.next_u64() % 4000;
                let (ra, rb) = if a.packets == 0 && rng.uniform() < 0.5 {
                    let (ra, rb) = (
                        a.pass_through_plain(now, ia, &mut arena_a, pool),
                        b.pass_through(now, ib, &mut arena_b, pool, pool),
                    );
                    assert_eq!(ra, rb, "marker {m}, step {i}");
                    match (ra, rb) {
                        (Some(ra), Some(rb)) => {
                            shortcuts += 1;
                            (ra, rb)
                        }
                        _ => (a.enqueue_plain(now, ia, &mut arena_a, pool), b.enqueue(now, ib, &mut arena_b, pool)),
                    }
                } else {
                    (a.enqueue_plain(now, ia, &mut arena_a, pool), b.enqueue(now, ib, &mut arena_b, pool))
                };
                assert_eq!(ra, rb, "marker {m}, step {i}");
                drops += ra.is_err() as u32;
                assert_eq!(arena_a.get(ia).ecn, arena_b.get(ib).ecn, "marker {m}, step {i}");
            } else {
                let pool = a.bytes;
                let (sa, sb) = (a.dequeue_plain(now, &mut arena_a, pool), b.dequeue(now, &mut arena_b, pool));
                assert_eq!(sa, sb, "marker {m}, step {i}");
                if let (Some((ia, _)), Some((ib, _))) = (sa, sb) {
                    assert_eq!(arena_a.get(ia).ecn, arena_b.get(ib).ecn, "marker {m}, step {i}");
                    marks += (arena_a.get(ia).ecn == Ecn::Ce) as u32;
                }
            }
            assert_eq!((a.bytes, a.packets, a.max_bytes), (b.bytes, b.packets, b.max_bytes));
            assert_eq!(mq_estimate(&a).to_bits(), mq_estimate(&b).to_bits(), "marker {m}, step {i}");
        }
        for q in 0..3 {
            let (ca, cb) = (a.counters(q), b.counters(q));
            assert_eq!(
                (ca.enqueued, ca.marked, ca.dropped_overflow, ca.dropped_aqm, ca.max_bytes, ca.sent_bytes),
                (cb.enqueued, cb.marked, cb.dropped_overflow, cb.dropped_aqm, cb.max_bytes, cb.sent_bytes),
                "marker {m}, queue {q}"
            );
        }
        // Both paths were taken, and the markers marked and dropped,
        // or the comparison shows little.
        assert!(shortcuts > 100 && drops > 100, "marker {m}: {shortcuts} shortcuts, {drops} drops");
        assert_eq!(marks > 100, m > 0, "marker {m}: {marks} marks");
        assert_eq!(mq_estimate(&a) > 0.0, m == 4 || m == 6, "marker {m}");
    }
}

/// TCN marks at dequeue exactly the packets that waited longer than T
/// (strictly), under DWRR with two queues: the sojourn each packet had
/// is worked out here from its own enqueue and dequeue times.
#[test]
fn tcn_marks_exactly_the_packets_that_waited_longer_than_t() {
    use crate::switch::marker::Tcn;
    use crate::switch::scheduler::Dwrr;
    let t = 20_000_000; // T = 20 µs
    let m = Hooked::Tcn(Tcn { threshold: t }).into();
    let mut qd = Qdisc::new(
        2,
        Scheduler::RoundRobin(Dwrr::new(vec![1500, 1500], true)),
        m,
        Buffer::Bytes(1 << 30),
        10_000_000_000,
    );
    let mut arena = Arena::default();
    let mut born = std::collections::HashMap::new();
    let (mut now, mut checked, mut marked) = (0u64, 0, 0);
    for i in 0..4000u64 {
        // 50 steps of irregular bursts (1.8 packets per dequeue), then
        // 50 of none: queues build up and drain, and sojourns fall on
        // both sides of T.
        let burst = if (i / 50) % 2 == 0 { (i * 7 % 5) / 2 + 1 } else { 0 };
        for j in 0..burst {
            let mut p = Packet::new(Kind::Data, 0, 1, 0, ((i + j) % 2) as u8, 1500);
            p.ecn = Ecn::Ect;
            let id = arena.alloc(p, 0);
            qd.enqueue(now, id, &mut arena, 0).unwrap();
            born.insert(id, now);
        }
        now += 1_200_000 + i * 13 % 700_000;
        if let Some((id, _)) = qd.dequeue(now, &mut arena, 0) {
            let sojourn = now - born.remove(&id).unwrap();
            let ce = arena.get(id).ecn == Ecn::Ce;
            assert_eq!(ce, sojourn > t, "packet {id}: sojourn {sojourn} ps");
            checked += 1;
            marked += ce as u32;
            arena.free(id);
        }
    }
    // Both outcomes happened many times.
    assert!(marked > 200 && checked - marked > 200, "{marked} of {checked}");
    assert_eq!(qd.counters(0).marked + qd.counters(1).marked, marked as u64);
}

/// DemePro through the qdisc: K = 20 packets, two DWRR queues with
/// equal quanta. Queue 0 takes 15 packets, queue 1 five (20 in all, not
/// over K); the 21st, to queue 1, puts the port over K with fair shares
/// of 10.5 packets each, queue 0 4.5 over. The one CE of the run must be
/// on queue 0's first packet (its head then), not on the arriving packet
/// nor on any later packet of queue 0, whatever order DWRR sends them in.
#[test]
fn deme_pro_marks_the_head_of_the_queue_over_its_share() {
    use crate::switch::marker::{DemePro, FairShare};
    use crate::switch::scheduler::Dwrr;
    let m = Hooked::DemePro(DemePro::new(20 * 1500, &[1500, 1500], FairShare::Occupancy)).into();
    let sched = Scheduler::RoundRobin(Dwrr::new(vec![1500, 1500], true));
    let mut qd = Qdisc::new(2, sched, m, Buffer::Bytes(1 << 30), 10_000_000_000);
    let mut arena = Arena::default();
    let mut ids = Vec::new();
    for q in std::iter::repeat_n(0, 15).chain(std::iter::repeat_n(1, 6)) {
        let mut p = Packet::new(Kind::Data, 0, 1, 0, q, 1500);
        p.ecn = Ecn::Ect;
        let id = arena.alloc(p, 0);
        qd.enqueue(0, id, &mut arena, 0).unwrap();
        ids.push(id);
    }
    // Nothing is marked on the way in.
    assert!(ids.iter().all(|&i| arena.get(i).ecn == Ecn::Ect));
    let mut marked = Vec::new();
    while let Some((id, _)) = qd.dequeue(0, &mut arena, 0) {
        if arena.get(id).ecn == Ecn::Ce {
            marked.push(id);
        }
    }
    assert_eq!(marked, [ids[0]]);
    assert_eq!((qd.counters(0).marked, qd.counters(1).marked), (1, 0));
}

/// DemePro's own count of each queue's bytes stays equal to the queue's
/// through overflow drops (the buffer holds 12 packets), dequeue drops
/// of Not-ECT heads (drop_not_ect) and empty queues, under random
/// arrivals to three queues and random service.
#[test]
fn deme_pro_keeps_an_exact_count_of_each_queue() {
    use crate::switch::marker::{DemePro, FairShare};
    use crate::switch::scheduler::Dwrr;
    let m = Hooked::DemePro(DemePro::new(6 * 1500, &[1500, 1500, 3000], FairShare::Occupancy)).into();
    let sched = Scheduler::RoundRobin(Dwrr::new(vec![1500, 1500, 3000], true));
    let mut qd = Qdisc::new(3, sched, m, Buffer::Bytes(12 * 1500), 10_000_000_000);
    qd.drop_not_ect = true;
    let mut arena = Arena::default();
    let mut rng = Rng::new(5);
    let (mut overflows, mut out_drops, mut marks) = (0, 0, 0);
    for i in 0..20_000u64 {
        if rng.uniform() < 0.55 {
            let q = (rng.next_u64() % 3) as u8;
            let size = [1500, 600, 64][(rng.next_u64() % 3) as usize];
            let mut p = Packet::new(Kind::Data, 0, 1, 0, q, size);
            p.ecn = if rng.uniform() < 0.2 { Ecn::NotEct } else { Ecn::Ect };
            let id = arena.alloc(p, 0);
            if qd.enqueue(i, id, &mut arena, 0).is_err() {
                overflows += 1;
                arena.free(id);
            }
        } else if let Some((id, _)) = qd.dequeue(i, &mut arena, 0) {
            marks += (arena.get(id).ecn == Ecn::Ce) as u32;
            arena.free(id);
        }
        while let Some(id) = qd.take_dequeue_drop() {
            out_drops += 1;
            arena.free(id);
        }
        let Some(Hooked::DemePro(d)) = qd.marker.hooked() else { unreachable!() };
        for q in 0..3 {
            assert_eq!(d.queue_bytes(q), qd.queues[q].fifo.bytes, "step {i}, queue {q}");
        }
    }
    assert!(overflows > 100 && out_drops > 100 && marks > 100, "{overflows} {out_drops} {marks}");
}

/// CEDM's mark, set at enqueue, is taken back at dequeue when the queue
/// has fallen below K1; a packet that came marked from upstream keeps
/// its CE whatever CEDM decides here.
#[test]
fn cedm_takes_back_only_its_own_marks() {
    use crate::switch::marker::Cedm;
    let m = Hooked::Cedm(Cedm::new(3000, 9000, 0.129, 1)).into();
    let mut qd = Qdisc::new(1, Scheduler::Sp(Sp), m, Buffer::Bytes(1 << 30), 10_000_000_000);
    let mut arena = Arena::default();
    let mut ids = Vec::new();
    // Five 1000 B packets: the 4th and 5th find q ≥ K1 = 3000 B
    // (avg_s = 0 ≥ 0) and are marked; the 2nd arrives already CE.
    for i in 0..5 {
        let mut p = Packet::new(Kind::Data, 0, 1, 0, 0, 1000);
        p.ecn = if i == 1 { Ecn::Ce } else { Ecn::Ect };
        let id = arena.alloc(p, 0);
        qd.enqueue(0, id, &mut arena, 0).unwrap();
        ids.push(id);
    }
    let ce = |a: &Arena| ids.iter().map(|&i| a.get(i).ecn == Ecn::Ce).collect::<Vec<_>>();
    assert_eq!(ce(&arena), [false, true, false, true, true]);
    assert_eq!(qd.counters(0).marked, 2);
    // Drain at 1 µs steps; each packet leaves 4000, 3000, ..., 0 B
    // behind. Every dequeue from the 3rd on leaves q < K1, so the 4th
    // and 5th lose their marks; the 2nd leaves q = K1 with avg_s still
    // > 0 (the first sample saw the build-up), and an upstream CE is
    // never this queue's to take back anyway.
    for k in 1..=5u64 {
        qd.dequeue(k * 1_000_000, &mut arena, 0).unwrap();
    }
    assert_eq!(ce(&arena), [false, true, false, false, false]);
    let c = qd.counters(0);
    assert_eq!((c.marked, c.unmarked), (0, 2));
    assert!(ids.iter().all(|&i| arena.get(i).marked_here.is_none()));
}

/// ML-ECN's classes share the link by weight: stages 1, 2, 3 go to the
/// small, medium and large queue (Alg. 1) and, kept backlogged under
/// WRR with quanta 4:2:1 (ML-ECN §IV), they send 4/7, 2/7, 1/7 of the
/// bytes; the bar is 3%.
#[test]
fn stage_classes_share_the_link_4_2_1() {
    use crate::switch::classifier::StageClasses;
    use crate::switch::scheduler::wrr;
    for rr in [wrr(vec![6000, 3000, 1500]), crate::switch::scheduler::Dwrr::new(vec![6000, 3000, 1500], true)] {
        let mut qd = Qdisc::new(3, Scheduler::RoundRobin(rr), Marker::None, Buffer::Bytes(1 << 30), 10_000_000_000);
        let classes = StageClasses::new([vec![0], vec![1], vec![2]], [vec![1], vec![2], vec![3]]);
        let mut arena = Arena::default();
        let offer = |qd: &mut Qdisc, arena: &mut Arena, stage: u8| {
            let mut p = Packet::new(Kind::Data, 0, 1, 9, classes.queue(stage, 9) as u8, 1500);
            p.stage = stage;
            let id = arena.alloc(p, 0);
            qd.enqueue(0, id, arena, 0).unwrap();
        };
        for _ in 0..20 {
            for stage in 1..=3 {
                offer(&mut qd, &mut arena, stage);
            }
        }
        let mut sent = [0u64; 3];
        for k in 0..7000u64 {
            let (id, size) = qd.dequeue(k * 1_200_000, &mut arena, 0).unwrap();
            sent[qd.classify(arena.get(id).service)] += size as u64;
            // Keep every class backlogged: refill what left.
            let stage = arena.get(id).stage;
            offer(&mut qd, &mut arena, stage);
            arena.free(id);
        }
        let total: u64 = sent.iter().sum();
        for (q, want) in [4.0 / 7.0, 2.0 / 7.0, 1.0 / 7.0].into_iter().enumerate() {
            let share = sent[q] as f64 / total as f64;
            assert!((share / want - 1.0).abs() < 0.03, "queue {q}: {share} vs {want}");
        }
    }
}

/// A whole discipline behind the Qdisc keeps the port's counts exact:
/// random arrivals of three sizes from 40 flows, random departures,
/// FQ-CoDel with a 30-packet limit (fattest-flow batches) and CoDel at
/// 5 µs / 100 µs on Not-ECT packets (drops), and pFabric in 20 KB
/// (push-outs and refused arrivals). At every step the Qdisc's bytes
/// and packets equal what the test holds, and at the end every packet
/// offered was sent, is queued, or was handed back as a drop, each
/// kind of drop counted where the reports look (overflow, AQM).
#[test]
fn whole_disciplines_account_for_every_packet() {
    use crate::switch::codel::Codel;
    use crate::switch::fq_codel::FqCodel;
    use crate::switch::pfabric::PFabric;
    use crate::switch::Whole;
    let codel = Codel { target: 5_000_000, interval: 100_000_000, mtu: 1500, ecn: true };
    for pick in 0..2 {
        let w = if pick == 0 {
            Whole::FqCodel(FqCodel::new(1024, 1514, 30, Buffer::Bytes(u64::MAX), codel))
        } else {
            Whole::PFabric(PFabric::new(Buffer::Bytes(20_000)))
        };
        let mut qd = Qdisc::whole(w, 10_000_000_000);
        qd.seed(Rng::new(3));
        let mut arena = Arena::default();
        let mut rng = Rng::new(9);
        let mut held = std::collections::HashMap::new();
        let (mut offered, mut refused, mut sent, mut dropped, mut marked) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for i in 0..40_000u64 {
            let now = i * 600_000;
            if rng.uniform() < 0.6 {
                let f = (rng.next_u64() % 40) as u32;
                let mut p = Packet::new(Kind::Data, f, 99, f, 0, [1500, 700, 64][(rng.next_u64() % 3) as usize]);
                p.ecn = if f.is_multiple_of(2) { Ecn::Ect } else { Ecn::NotEct };
                p.set_prio(rng.next_u64() % 100_000);
                let id = arena.alloc(p, 0);
                offered += 1;
                match qd.enqueue(now, id, &mut arena, 0) {
                    Ok(()) => {
                        held.insert(id, p.size as u64);
                    }
                    Err(e) => {
                        assert_eq!(e, DropReason::Overflow);
                        refused += 1;
                        arena.free(id);
                    }
                }
            } else if let Some((id, size)) = qd.dequeue(now, &mut arena, 0) {
                assert_eq!(held.remove(&id), Some(size as u64));
                sent += 1;
                marked += (arena.get(id).ecn == Ecn::Ce) as u64;
                arena.free(id);
            }
            while let Some(id) = qd.take_dequeue_drop() {
                assert!(held.remove(&id).is_some(), "a drop of a packet not queued");
                dropped += 1;
                arena.free(id);
            }
            assert_eq!((qd.bytes, qd.packets), (held.values().sum::<u64>(), held.len() as u64), "step {i}");
        }
        let c = qd.counters(0);
        assert_eq!(c.enqueued, offered - refused, "discipline {pick}");
        assert_eq!(c.sent_packets, sent);
        assert_eq!(c.marked, marked);
        assert_eq!(c.dropped_overflow + c.dropped_aqm, dropped + refused);
        assert_eq!(c.enqueued, sent + held.len() as u64 + dropped);
        assert_eq!(arena.live(), held.len());
        // Both kinds of drop happened (FQ-CoDel: batches and CoDel;
        // pFabric: push-outs and refusals), or the test shows little.
        if pick == 0 {
            assert!(c.dropped_overflow > 100 && c.dropped_aqm > 100 && marked > 100, "{c:?}");
        } else {
            assert!(dropped > 100 && refused > 100 && c.dropped_aqm == 0, "{c:?}");
        }
    }
}

/// A lossless queue's AQM marks and never drops (`set_lossless`): RED at
/// 1-3 KB with w_q = 1 over two queues, one carrying a PFC priority; a
/// Not-ECT packet above K that RED drops in the lossy queue (RFC 3168 §7:
/// a mark is only for ECN-capable packets) passes in the lossless one,
/// and ECN-capable ones are marked in both.
#[test]
fn a_lossless_queue_marks_but_never_drops() {
    let red = crate::switch::marker::Red::new(1000, 3000, 1.0, 1.0, false, false, 1_200_000, 2);
    let mut qd = Qdisc::new(2, Scheduler::Sp(Sp), Hooked::Red(red).into(), Buffer::Bytes(1 << 30), 10_000_000_000);
    qd.set_pausable();
    qd.set_lossless(1 << 1);
    let mut arena = Arena::default();
    for i in 0..40u32 {
        let q = (i % 2) as u8;
        let mut p = Packet::new(Kind::Data, 0, 1, 0, q, 1000);
        p.ecn = if i % 4 < 2 { Ecn::NotEct } else { Ecn::Ect };
        let id = arena.alloc(p, 0);
        let _ = qd.enqueue(0, id, &mut arena, 0);
    }
    let (lossy, lossless) = (qd.counters(0), qd.counters(1));
    // 20 packets each; above 3 KB RED acts on every one: the lossy queue
    // drops its Not-ECT ones (half, less the first three under K), the
    // lossless queue takes all 20.
    assert_eq!(lossless.enqueued, 20);
    assert_eq!(lossless.dropped_aqm, 0);
    assert!(lossy.dropped_aqm >= 8, "{lossy:?}");
    assert_eq!(lossy.enqueued + lossy.dropped_aqm, 20);
    assert!(lossy.marked >= 8 && lossless.marked >= 8, "{lossy:?} {lossless:?}");
}
