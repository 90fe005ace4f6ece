//! After the run: what each part owns moves into part 0 (`gather`), and
//! the tables every part wrote are merged (`write_tables`).

use super::super::partition::Partitioning;
use super::super::World;
use crate::outputs::output::{Collect, Sink};
use crate::outputs::report::{Column, Table};

/// Move what each part owns into part 0, whose `finish` then writes the
/// run's tables: every port from its node's part, every flow's sender from
/// its source's part and its receiver from its destination's; the counters
/// summed. `unfinished`: sized flows no part saw finish.
pub(super) fn gather(worlds: &mut [World], parts: &Partitioning, captured: &[(String, usize)], unfinished: usize) {
    let (w0, rest) = worlds.split_first_mut().expect("two parts or more");
    let part = |node: u32| parts.of_node[node as usize] as usize;
    for i in 0..w0.fabric.net.ports.len() {
        let owner = part(w0.fabric.net.ports[i].node);
        if owner != 0 {
            std::mem::swap(&mut w0.fabric.net.ports[i], &mut rest[owner - 1].fabric.net.ports[i]);
        }
    }
    let at_sender = w0.apps.fct_at_sender;
    for f in 0..w0.apps.flows.len() {
        let (s, d) = (part(w0.apps.flows[f].src), part(w0.apps.flows[f].dst));
        if s != 0 {
            std::mem::swap(&mut w0.apps.flows[f], &mut rest[s - 1].apps.flows[f]);
            // When it opened, and, for a serial flow, when its sender's
            // part started it.
            w0.apps.logs[f].opened = rest[s - 1].apps.logs[f].opened;
            w0.apps.logs[f].start = rest[s - 1].apps.logs[f].start;
            // Its per-pair connection's key, as its sender's part chose it.
            if let (Some(c0), Some(c)) = (w0.apps.conns.as_mut(), rest[s - 1].apps.conns.as_ref()) {
                c0.learn_path_key(f as u32, c.path_key(f as u32));
            }
        }
        // The receiver's end: in part d, or, when d is 0 and the sender's
        // end came from part s, in part s now.
        let rx_from = match (s, d) {
            (_, d) if d == s => None,
            (s, 0) => Some(s - 1),
            (_, d) => Some(d - 1),
        };
        if let Some(r) = rx_from {
            let (to, from) = (&mut w0.apps.flows[f], &mut rest[r].apps.flows[f]);
            std::mem::swap(&mut to.rx, &mut from.rx);
            (to.delack_event, to.last_data_ts, to.rx_high) = (from.delack_event, from.last_data_ts, from.rx_high);
            // (An incast flow finishes with its group's last round, at
            // its receiver, whatever `fct_end` says.)
            if !at_sender || to.incast_group().is_some() {
                to.finish = from.finish;
            }
        }
        if d != 0 {
            w0.apps.logs[f].reordered = rest[d - 1].apps.logs[f].reordered;
            w0.apps.logs[f].spurious = rest[d - 1].apps.logs[f].spurious;
        }
        w0.apps.logs[f].drops = rest.iter().fold(w0.apps.logs[f].drops, |n, w| n + w.apps.logs[f].drops);
    }
    for w in rest.iter() {
        if let (Some(c0), Some(c)) = (w0.apps.conns.as_mut(), w.apps.conns.as_ref()) {
            c0.add_opened(c);
        }
    }
    for (i, &(_, owner)) in captured.iter().enumerate() {
        if owner != 0 {
            w0.rec.captures[i].packets = rest[owner - 1].rec.captures[i].packets;
        }
    }
    for w in rest.iter_mut() {
        w0.rec.sent += w.rec.sent;
        w0.rec.delivered += w.rec.delivered;
        w0.rec.dropped += w.rec.dropped;
        w0.fabric.in_transit += w.fabric.in_transit;
        w0.rec.stats.take_rows_of(&mut w.rec.stats);
        for (a, b) in w0.rec.goodput_after_warmup.iter_mut().zip(&w.rec.goodput_after_warmup) {
            *a += b;
        }
    }
    w0.apps.unfinished = unfinished;
}

/// Hand part 0's tables to `sink`, each whole, with what every part
/// wrote of the others. Part 0 wrote the goodput series (summed over the
/// parts' bytes, `Goodput::write_summed`) and the series `gather` moved to
/// it (traces, windows, round trips, rounds; `Stats::finish` orders
/// them). Here: the queue samples (each part samples its own ports) in one
/// table in the sequential engine's order, by time, then port in
/// `sampled`'s order, then queue; each capture from the part in
/// `captured` that recorded it.
pub(super) fn write_tables(
    sinks: impl Iterator<Item = Collect>,
    sampled: &[u32],
    captured: &[(String, usize)],
    sink: &mut dyn Sink,
) -> Result<(), String> {
    let mut parts: Vec<Collect> = sinks.collect();
    let mut rank = vec![u32::MAX; sampled.iter().max().map_or(0, |&m| m as usize + 1)];
    for (i, &p) in sampled.iter().enumerate() {
        rank[p as usize] = i as u32;
    }
    // Sample and send times are the same f64 in every part for the same
    // instant, so their bits order them.
    let queues = merged(&mut parts, "queues", |t| {
        let (time, port, queue) = (f64s(t, "time"), u32s(t, "port"), u32s(t, "queue"));
        (0..time.len()).map(|i| (time[i].to_bits(), rank[port[i] as usize], queue[i], 0, 0)).collect()
    });
    let mut captures = Vec::with_capacity(captured.len());
    for (name, owner) in captured {
        let at = parts[*owner].captures.iter().position(|c| c.0 == *name).expect("every part flushed its captures");
        captures.push(parts[*owner].captures.swap_remove(at));
    }
    let first = parts.swap_remove(0);
    // A `Collect` holds each table in one piece: sent in batches of
    // `BATCH_ROWS`, as the sequential engine sends them.
    let mut out = crate::outputs::output::Output::new(sink);
    for t in first.tables.into_iter().chain(queues) {
        crate::outputs::stats::send_batches(t, &mut out);
    }
    if let Some(e) = out.failed {
        return Err(e);
    }
    for (port, bytes) in captures {
        sink.capture(&port, &bytes)?;
    }
    Ok(())
}

type RowKey = (u64, u32, u32, u32, u64);

/// Every part's rows of table `name` (a `Collect` keeps one table per
/// name), taken out of their sinks, as one table sorted by `keys` (one key
/// per row; the sort is stable: ties keep part order, then each part's row
/// order); None when no part wrote any.
fn merged(parts: &mut [Collect], name: &str, keys: impl Fn(&Table) -> Vec<RowKey>) -> Option<Table> {
    let mut all: Option<Table> = None;
    for s in parts.iter_mut() {
        let Some(i) = s.tables.iter().position(|t| t.name == name) else { continue };
        let t = s.tables.remove(i);
        match &mut all {
            Some(a) => a.append(t),
            None => all = Some(t),
        }
    }
    let mut all = all?;
    let k = keys(&all);
    let mut order: Vec<usize> = (0..k.len()).collect();
    order.sort_by_key(|&i| k[i]);
    for (_, c) in all.columns.iter_mut() {
        *c = c.select(&order);
    }
    Some(all)
}

pub(super) fn f64s<'t>(t: &'t Table, name: &str) -> &'t [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        _ => unreachable!("{}.{name} is a column of f64", t.name),
    }
}

pub(super) fn u32s<'t>(t: &'t Table, name: &str) -> &'t [u32] {
    match t.column(name) {
        Some(Column::U32(v)) => v,
        _ => unreachable!("{}.{name} is a column of u32", t.name),
    }
}
