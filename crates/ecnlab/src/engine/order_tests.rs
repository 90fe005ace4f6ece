//! The queue against a reference that is exact by construction: a sorted
//! map keyed by (time, insertion number), with events near, far and beyond
//! every level, and ties between events that entered at different levels.

use super::*;
use crate::rng::Rng;
use std::collections::BTreeMap;

const NS: Time = 1_000;
const US: Time = 1_000_000;
const MS: Time = 1_000_000_000;
const S: Time = 1_000_000_000_000;

/// Pops and schedules at random, from inside the run as the simulator
/// does, and checks every pop against the reference. Delays range from 0
/// (the current time, into the slot being served) through the wheel and
/// every level to beyond the top one (the heap); a fifth of the events go
/// to a few fixed instants (and a tenth to just before one), bucket, span and level boundaries among them,
/// so one instant is scheduled from far away (a high level) and again
/// when near (a low level, the wheel, the slot being served).
fn run_against_reference(seed: u64, steps: usize) {
    let mut rng = Rng::new(seed);
    let mut q = EventQueue::new();
    let mut reference: BTreeMap<(Time, u64), u32> = BTreeMap::new();
    let mut seq = 0u64;
    let spans = [1u64 << 20, 1 << 26, 1 << 32, 1 << 38, 1 << 44, 1 << 50];
    let mut instants: Vec<Time> = (0..24)
        .map(|i| {
            let unit = spans[i % spans.len()];
            let t = unit * (1 + rng.next_u64() % 40);
            if i % 4 == 0 {
                t - 1 - rng.next_u64() % 1000
            } else {
                t
            }
        })
        .collect();
    instants.extend((0..8).map(|_| rng.next_u64() % (3000 * S)));
    let delays = [0, 20 * NS, US, 70 * US, 5 * MS, 300 * MS, 20 * S, 1200 * S, 5000 * S];
    let mut used = [0u32; 3];
    for step in 0..steps {
        for _ in 0..rng.next_u64() % 3 {
            let pick = rng.next_u64() % 10;
            let t = if pick < 3 {
                let later: Vec<Time> = instants.iter().copied().filter(|&t| t >= q.now).collect();
                let Some(&t) = later.get((rng.next_u64() % later.len().max(1) as u64) as usize) else { continue };
                if pick == 0 {
                    // A wake-up up to two spans before the instant, from
                    // which it is scheduled again into the wheel's ring.
                    t.saturating_sub(rng.next_u64() % (1 << 27)).max(q.now)
                } else {
                    t
                }
            } else {
                let d = delays[(rng.next_u64() % delays.len() as u64) as usize];
                q.now + if d == 0 { 0 } else { rng.next_u64() % d }
            };
            let id = seq as u32;
            let before = (q.levels.len(), q.levels.in_heap());
            q.at(t, Event::Ping { probe: id });
            used[0] += (q.levels.len() > before.0) as u32;
            used[1] += (q.levels.in_heap() > before.1) as u32;
            used[2] += (t == q.now) as u32;
            reference.insert((t, seq), id);
            seq += 1;
        }
        let limit = if step % 7 == 0 { q.now + rng.next_u64() % (100 * US) } else { Time::MAX };
        let expected = reference.first_key_value().map(|(&(t, _), &id)| (t, id)).filter(|e| e.0 <= limit);
        let got = q.pop_until(limit).map(|(t, e)| match e {
            Event::Ping { probe } => (t, probe),
            other => panic!("unexpected {other:?}"),
        });
        assert_eq!(got, expected, "step {step}, seed {seed}");
        if got.is_some() {
            reference.pop_first();
        }
        assert_eq!(q.len(), reference.len());
    }
    while let Some((t, e)) = q.pop() {
        let ((rt, _), id) = reference.pop_first().expect("the queue popped an event never scheduled");
        assert_eq!((t, e), (rt, Event::Ping { probe: id }));
    }
    assert!(reference.is_empty() && q.is_empty());
    // The mix reached the levels, the heap beyond them and the current time.
    assert!(used.iter().all(|&n| n > 50), "seed {seed}: levels, heap, now used {used:?}");
}

#[test]
fn random_mix_pops_in_time_then_insertion_order() {
    for seed in 1..=6 {
        run_against_reference(seed, 60_000);
    }
}

/// An event queued in the levels and one scheduled later straight into
/// the wheel's ring, for the same instant in the next span, meet in one
/// ring bucket: the earlier-scheduled one must pop first.
#[test]
fn cascaded_event_goes_before_a_later_one_of_its_time() {
    let bucket: Time = 1 << 20;
    let mut q = EventQueue::new();
    let t = 69 * bucket + 5; // span 1, 69 buckets ahead: into the levels
    q.at(t, Event::Ping { probe: 0 });
    assert_eq!(q.levels.len(), 1);
    q.at(10 * bucket, Event::Ping { probe: 1 });
    assert_eq!(q.pop(), Some((10 * bucket, Event::Ping { probe: 1 })));
    // 59 buckets ahead now: straight into the ring, beside nothing yet.
    q.at(t, Event::Ping { probe: 2 });
    assert_eq!(q.levels.len(), 1, "the later event should have gone to the ring");
    q.at(t - 1, Event::Ping { probe: 3 });
    assert_eq!(q.pop(), Some((t - 1, Event::Ping { probe: 3 })));
    assert_eq!(q.pop(), Some((t, Event::Ping { probe: 0 })));
    assert_eq!(q.pop(), Some((t, Event::Ping { probe: 2 })));
    assert!(q.is_empty());
}

/// The same instant scheduled from each level down, then at the current
/// time: the pops follow the scheduling order.
#[test]
fn one_instant_scheduled_from_every_level() {
    let t: Time = 3000 * S + 12_345;
    let mut q = EventQueue::new();
    let mut probe = 0;
    // Wake-ups at shrinking distances before t, each scheduling t again.
    for ahead in [2000 * S, 10 * S, 200 * MS, 3 * MS, 50 * US, 500 * NS, 3 * NS] {
        q.at(t - ahead, Event::Sample);
    }
    q.at(t, Event::Ping { probe });
    probe += 1;
    // t and every wake-up but the first lie beyond the top level's window
    // (1126 s) at first; each is rescheduled at a lower level as time nears.
    assert_eq!(q.levels.in_heap(), 7);
    let mut next = 0;
    while let Some((now, e)) = q.pop() {
        match e {
            Event::Sample => {
                q.at(t, Event::Ping { probe });
                probe += 1;
            }
            Event::Ping { probe: p } => {
                assert_eq!(now, t);
                if p == 0 {
                    // Scheduled from inside the run at the current time.
                    q.at(t, Event::Ping { probe });
                    probe += 1;
                }
                assert_eq!(p, next, "pops out of scheduling order");
                next += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(probe, 9);
}

/// A 300 s run's timers never reach the heap: the top level covers
/// 1126 s (2^50 ps).
#[test]
fn levels_reach_past_a_long_run() {
    let mut q = EventQueue::new();
    for i in 0..1000 {
        q.at(i * 300 * MS, Event::Ping { probe: i as u32 });
    }
    assert_eq!(q.levels.in_heap(), 0);
    q.at(1 << 50, Event::Sample);
    assert_eq!(q.levels.in_heap(), 1);
    for i in 0..1000 {
        assert_eq!(q.pop(), Some((i * 300 * MS, Event::Ping { probe: i as u32 })));
    }
}
