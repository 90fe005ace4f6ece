//! The route table: every switch's equal-cost next-hop ports towards every
//! host, computed generically from the links (shortest paths by hop count).
//!
//! Hosts have one link each and do not forward, so every shortest path to a
//! host ends with the hop from its own switch (its *leaf*), and a switch's
//! set towards the host is its set towards that leaf. The table is kept per
//! leaf, not per host (one breadth-first search per leaf), and a switch has
//! few distinct sets (its uplinks, or one port down), so each entry is a
//! one-byte index into the switch's own list of sets; where every set is a
//! run of the switch's own ports to other switches (any fat-tree or
//! leaf-spine), the entry is that run instead (`rel`), which saves a hop
//! one dependent read. At k = 32 (8,192 hosts, 1,280 switches) a hop reads
//! from 0.27 MB of it, where one (offset, length) per switch and host took
//! 84 MB; every hop of every packet reads it. A small fabric (the papers' 144
//! hosts) keeps that direct per-host table instead: a few kilobytes, one
//! read a hop, where the compact form's chain of reads cost the ML-ECN
//! bench point 3%.

use std::collections::{HashMap, VecDeque};

/// Largest direct table kept (bytes): well inside one core's L2.
const DIRECT_MAX_BYTES: usize = 256 << 10;

pub struct RouteTable {
    /// Small fabrics: switch s towards host d at `s·hosts + d`, (offset,
    /// length) in `ports`; empty when the compact form is used.
    direct: Vec<(u32, u32)>,
    /// Per host: its leaf and the leaf's port down to it.
    hosts: Vec<HostRoute>,
    /// Leaves: switches that have hosts (the table's columns).
    leaves: u32,
    /// Entry of switch s towards leaf l at `row[s]·leaves + l`: an index
    /// into the switch's sets (`narrow` when every switch has at most 256
    /// sets, as in any fat-tree or leaf-spine; `wide` otherwise).
    narrow: Vec<u8>,
    wide: Vec<u16>,
    /// Switch s's row of entries. Equal rows are stored once: a set's index
    /// follows the order in which leaves first reach it, so switches of one
    /// role and place (every edge, every core, the aggregation switches of
    /// one pod) share a row, and a k = 32 fat-tree's 1,280 rows are 34
    /// (17 KB, where one row a switch took 0.66 MB and missed the cache on
    /// most hops of a large run).
    row: Vec<u32>,
    /// Switch s's sets are `spans[first[s]..]`: (offset, length) in `ports`.
    first: Vec<u32>,
    spans: Vec<(u32, u32)>,
    /// Equal sets are stored once.
    ports: Vec<u32>,
    /// The relative form, used when every switch's sets are runs of its
    /// own list of ports to other switches (any fat-tree or leaf-spine):
    /// switch s's list is `links[at[s].base..]`, and its entry towards leaf
    /// l, `rel[at[s].row·leaves + l]`, is that run (`Run`). A hop reads
    /// `hosts`, `at` and `rel`, each small and independent of the others
    /// but `rel`, and not the list itself where the run lies in one of the
    /// switch's evenly spaced segments (a link's two ports are numbered one
    /// after the other, so a switch's uplinks, made one after another, are
    /// two apart): a k = 32 profile put half of `get`'s samples on the span
    /// list this replaces, and most of `route`'s then on the list. Empty
    /// otherwise.
    rel: Vec<Run>,
    at: Vec<SwitchAt>,
    links: Vec<u32>,
}

/// A run of a switch's list of ports to switches: `len` ports from
/// position `start`; where they lie in one of the switch's evenly spaced
/// segments (`SwitchAt::seg`), segment `seg` from its position `pos`
/// (`seg` is `NO_SEG` where not).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Run {
    start: u8,
    len: u8,
    seg: u8,
    pos: u8,
}

const NO_SEG: u8 = u8::MAX;

/// Where a switch's row of runs and its list of ports are, and the list's
/// first two evenly spaced segments, each as (first port, spacing). A
/// fat-tree's edge switch has one (its uplinks, two apart), an aggregation
/// switch two (down to its pod's edges, then up to its cores), a core one;
/// a leaf-spine's leaf and spine one each.
#[derive(Clone, Copy)]
struct SwitchAt {
    row: u32,
    base: u32,
    seg: [(u32, u32); 2],
}

/// What a hop needs to know of its destination host, in one read.
#[derive(Clone, Copy)]
struct HostRoute {
    /// The switch index of the host's leaf.
    switch: u32,
    /// The leaf's index among leaves (the table's column).
    leaf: u32,
    /// The leaf's port to the host.
    down: u32,
}

impl RouteTable {
    /// Equal-cost egress ports of switch `sw` (its index among switches)
    /// towards host `dst`, in port order.
    #[inline]
    pub fn get(&self, sw: u32, dst: u32) -> &[u32] {
        if !self.direct.is_empty() {
            let (off, len) = self.direct[sw as usize * self.hosts.len() + dst as usize];
            return &self.ports[off as usize..(off + len) as usize];
        }
        let h = &self.hosts[dst as usize];
        if h.switch == sw {
            return std::slice::from_ref(&h.down);
        }
        if !self.rel.is_empty() {
            let at = self.at[sw as usize];
            let r = self.rel[at.row as usize * self.leaves as usize + h.leaf as usize];
            let off = at.base as usize + r.start as usize;
            return &self.links[off..off + r.len as usize];
        }
        let (off, len) = self.span(sw as usize, h.leaf as usize);
        &self.ports[off as usize..(off + len) as usize]
    }

    /// With the relative form (`is_relative`), switch `sw`'s next hop
    /// towards host `dst`: the one port of its set, or the one at `pick(n)`
    /// of its `n` (asked only when n > 1), as `get(sw, dst)[pick(n)]`, but
    /// computed where the set is evenly spaced, not read.
    #[inline]
    pub fn next_hop(&self, sw: u32, dst: u32, pick: impl FnOnce(usize) -> usize) -> u32 {
        if self.rel.is_empty() {
            let set = self.get(sw, dst);
            return if set.len() == 1 { set[0] } else { set[pick(set.len())] };
        }
        let h = &self.hosts[dst as usize];
        if h.switch == sw {
            return h.down;
        }
        let at = self.at[sw as usize];
        let r = self.rel[at.row as usize * self.leaves as usize + h.leaf as usize];
        let i = if r.len == 1 { 0 } else { pick(r.len as usize) };
        if r.seg != NO_SEG {
            let (port, step) = at.seg[r.seg as usize];
            port + step * (r.pos as u32 + i as u32)
        } else {
            self.links[at.base as usize + r.start as usize + i]
        }
    }

    /// Switch `sw`'s set towards leaf `leaf`.
    #[inline]
    fn span(&self, sw: usize, leaf: usize) -> (u32, u32) {
        let at = self.row[sw] as usize * self.leaves as usize + leaf;
        let local = if self.wide.is_empty() { self.narrow[at] as usize } else { self.wide[at] as usize };
        self.spans[self.first[sw] as usize + local]
    }

    /// How many ports the distinct sets hold in all.
    pub fn stored_ports(&self) -> usize {
        self.ports.len()
    }

    /// The direct per-host form is in use (a small fabric).
    pub fn is_direct(&self) -> bool {
        !self.direct.is_empty()
    }

    /// How many distinct rows the compact form stores (the relative
    /// form's, where it is used).
    pub fn distinct_rows(&self) -> usize {
        if !self.rel.is_empty() {
            return self.at.iter().map(|a| a.row).max().map_or(0, |r| r as usize + 1);
        }
        self.row.iter().max().map_or(0, |&r| r as usize + 1)
    }

    /// How many of the relative form's entries name a run that a hop
    /// reads from its switch's list (not evenly spaced, or past the
    /// switch's first two segments).
    pub fn runs_read(&self) -> usize {
        self.rel.iter().filter(|r| r.seg == NO_SEG).count()
    }

    /// The relative form is in use (see `rel`).
    pub fn is_relative(&self) -> bool {
        !self.rel.is_empty()
    }

    /// How many leaves the table has columns for.
    pub fn leaves(&self) -> u32 {
        self.leaves
    }

    /// The table of the network whose nodes are `nics.len()` hosts then
    /// switches, with `peers[p]` the node port p leads to, `out[node]` the
    /// ports leaving each node and `nics[h]` host h's port (a link's two
    /// ports are numbered one after the other). `keep_going` is asked at the start and every 0.2 s (a k = 64
    /// fat-tree's 2,048 searches take about a second); None if it says no.
    pub fn build(
        peers: &[u32],
        out: &[Vec<u32>],
        nics: &[u32],
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Option<RouteTable> {
        RouteTable::build_direct_up_to(peers, out, nics, keep_going, DIRECT_MAX_BYTES)
    }

    /// As `build`, keeping the direct table up to `direct_max` bytes.
    pub(crate) fn build_direct_up_to(
        peers: &[u32],
        out: &[Vec<u32>],
        nics: &[u32],
        keep_going: &mut dyn FnMut() -> bool,
        direct_max: usize,
    ) -> Option<RouteTable> {
        let hosts = nics.len() as u32;
        let switches = out.len() - hosts as usize;
        // Each host's leaf, numbered in the order of their first host.
        let mut leaf_of_switch = vec![u32::MAX; switches];
        let mut leaf_switches = Vec::new();
        let host_routes: Vec<HostRoute> = nics
            .iter()
            .enumerate()
            .map(|(h, &nic)| {
                let leaf = peers[nic as usize];
                assert!(leaf >= hosts, "host{h} is linked to a host");
                let switch = leaf - hosts;
                if leaf_of_switch[switch as usize] == u32::MAX {
                    leaf_of_switch[switch as usize] = leaf_switches.len() as u32;
                    leaf_switches.push(switch);
                }
                // A link's two ports are made one after the other.
                let down = nic ^ 1;
                debug_assert!(peers[down as usize] == h as u32);
                HostRoute { switch, leaf: leaf_of_switch[switch as usize], down }
            })
            .collect();

        // The switch-to-switch links in a compact adjacency (port, peer's
        // switch index): the searches read only this, not the ports.
        let mut start = Vec::with_capacity(switches + 1);
        let mut adj: Vec<(u32, u32)> = Vec::new();
        for node_out in &out[hosts as usize..] {
            start.push(adj.len());
            for &p in node_out {
                let peer = peers[p as usize];
                if peer >= hosts {
                    adj.push((p, peer - hosts));
                }
            }
        }
        start.push(adj.len());

        let nl = leaf_switches.len();
        let mut ids = vec![0u16; switches * nl];
        let mut own: Vec<Vec<(u32, u32)>> = vec![Vec::new(); switches];
        let mut stored = Vec::new();
        let mut interned: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut set = Vec::new();
        let mut dist = vec![u32::MAX; switches];
        let mut queue = VecDeque::with_capacity(switches);
        let mut asked = std::time::Instant::now();
        if !keep_going() {
            return None;
        }
        for (l, &leaf) in leaf_switches.iter().enumerate() {
            if l % 64 == 63 && asked.elapsed().as_secs_f64() > 0.2 {
                asked = std::time::Instant::now();
                if !keep_going() {
                    return None;
                }
            }
            dist.fill(u32::MAX);
            dist[leaf as usize] = 0;
            queue.push_back(leaf);
            while let Some(u) = queue.pop_front() {
                for &(_, v) in &adj[start[u as usize]..start[u as usize + 1]] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u as usize] + 1;
                        queue.push_back(v);
                    }
                }
            }
            for s in 0..switches {
                let here = dist[s];
                if here == 0 {
                    // The leaf itself, never asked (`get` answers with the
                    // host's port): it keeps index 0, so that leaves differ
                    // only where their routes do and share rows.
                    continue;
                }
                set.clear();
                if here != u32::MAX {
                    let closer = adj[start[s]..start[s + 1]].iter().filter(|&&(_, v)| dist[v as usize] + 1 == here);
                    set.extend(closer.map(|&(p, _)| p));
                }
                // Most switches keep the set they had towards the previous
                // leaf (all uplinks): try it before hashing.
                if l > 0 {
                    let prev = ids[s * nl + l - 1];
                    if own[s].get(prev as usize).is_some_and(|&span| same(&stored, span, &set)) {
                        ids[s * nl + l] = prev;
                        continue;
                    }
                }
                let off = *interned.entry(set.clone()).or_insert_with(|| {
                    stored.extend_from_slice(&set);
                    (stored.len() - set.len()) as u32
                });
                let span = (off, set.len() as u32);
                let local = match own[s].iter().position(|&x| x == span) {
                    Some(i) => i,
                    None => {
                        own[s].push(span);
                        own[s].len() - 1
                    }
                };
                ids[s * nl + l] = u16::try_from(local).expect("a switch has fewer than 65,536 next-hop sets");
            }
        }
        let mut first = Vec::with_capacity(switches);
        let mut spans = Vec::new();
        for sets in &own {
            first.push(spans.len() as u32);
            spans.extend_from_slice(sets);
        }
        let mut row = Vec::with_capacity(switches);
        let mut rows: Vec<u16> = Vec::new();
        let mut row_of: HashMap<&[u16], u32> = HashMap::new();
        for r in ids.chunks(nl.max(1)).take(switches) {
            let next = row_of.len() as u32;
            let id = *row_of.entry(r).or_insert_with(|| {
                rows.extend_from_slice(r);
                next
            });
            row.push(id);
        }
        row.resize(switches, 0);
        let narrow_fits = own.iter().all(|sets| sets.len() <= 256);
        let (narrow, wide) =
            if narrow_fits { (rows.iter().map(|&i| i as u8).collect(), Vec::new()) } else { (Vec::new(), rows) };
        // (The relative form only where the direct table is not kept.)
        let direct = switches * nics.len() * std::mem::size_of::<(u32, u32)>() <= direct_max;
        let (rel, at, links) =
            if direct { Default::default() } else { relative(&adj, &start, &own, &stored, &ids, nl) };
        let mut t = RouteTable {
            rel,
            at,
            links,
            direct: Vec::new(),
            hosts: host_routes,
            leaves: nl as u32,
            narrow,
            wide,
            row,
            first,
            spans,
            ports: stored,
        };
        if direct {
            t.direct = t.expand(switches);
        }
        Some(t)
    }

    /// The direct table: every switch's span towards every host, the leaves'
    /// ports down to their hosts joining `ports`.
    fn expand(&mut self, switches: usize) -> Vec<(u32, u32)> {
        let downs = self.ports.len() as u32;
        self.ports.extend(self.hosts.iter().map(|h| h.down));
        let mut direct = Vec::with_capacity(switches * self.hosts.len());
        for sw in 0..switches {
            for (d, h) in self.hosts.iter().enumerate() {
                direct.push(if h.switch as usize == sw {
                    (downs + d as u32, 1)
                } else {
                    self.span(sw, h.leaf as usize)
                });
            }
        }
        direct
    }
}

/// The relative form of the table (see `RouteTable::rel`), or three empty
/// vectors where some switch's set is not a run of its list of ports to
/// switches (`adj[start[s]..start[s + 1]]`), starts past 255 or is longer.
fn relative(
    adj: &[(u32, u32)],
    start: &[usize],
    own: &[Vec<(u32, u32)>],
    stored: &[u32],
    ids: &[u16],
    nl: usize,
) -> (Vec<Run>, Vec<SwitchAt>, Vec<u32>) {
    let none = (Vec::new(), Vec::new(), Vec::new());
    let links: Vec<u32> = adj.iter().map(|&(p, _)| p).collect();
    let mut runs: Vec<Vec<Run>> = Vec::with_capacity(own.len());
    let mut at = Vec::with_capacity(own.len());
    for (s, sets) in own.iter().enumerate() {
        let list = &links[start[s]..start[s + 1]];
        let segs = segments(list);
        let mut mine = Vec::with_capacity(sets.len());
        for &(off, len) in sets {
            let set = &stored[off as usize..(off + len) as usize];
            let Some(a) = (0..=list.len().saturating_sub(set.len())).find(|&a| list[a..].starts_with(set)) else {
                return none;
            };
            if a > 0xFF || set.len() > 0xFF {
                return none;
            }
            let within = segs.iter().take(2).position(|&(from, n, _, _)| from <= a && a + set.len() <= from + n);
            let (seg, pos) = within.map_or((NO_SEG, 0), |k| (k as u8, (a - segs[k].0) as u8));
            mine.push(Run { start: a as u8, len: set.len() as u8, seg, pos });
        }
        runs.push(mine);
        let seg = |k: usize| segs.get(k).map_or((0, 0), |&(_, _, port, step)| (port, step));
        at.push(SwitchAt { row: 0, base: start[s] as u32, seg: [seg(0), seg(1)] });
    }
    let mut rel = Vec::new();
    let mut row_of: HashMap<Vec<Run>, u32> = HashMap::new();
    let mut r = vec![Run::default(); nl];
    for (s, a) in at.iter_mut().enumerate() {
        for (l, e) in r.iter_mut().enumerate() {
            // A leaf's own column, never asked, has index 0 (see `build`),
            // as its uplinks do: so every edge switch's row is one.
            *e = runs[s].get(ids[s * nl + l] as usize).copied().unwrap_or_default();
        }
        let next = row_of.len() as u32;
        a.row = *row_of.entry(r.clone()).or_insert_with(|| {
            rel.extend_from_slice(&r);
            next
        });
    }
    (rel, at, links)
}

/// A list of ports cut into evenly spaced segments, in order: (position,
/// length, first port, spacing); a port that starts no rising step is a
/// segment of its own (spacing 0).
fn segments(list: &[u32]) -> Vec<(usize, usize, u32, u32)> {
    let mut out = Vec::new();
    let mut q = 0;
    while q < list.len() {
        let step = match list.get(q + 1) {
            Some(&next) if next > list[q] => next - list[q],
            _ => 0,
        };
        let mut e = q;
        while step > 0 && e + 1 < list.len() && list[e + 1] == list[e] + step {
            e += 1;
        }
        out.push((q, e - q + 1, list[q], step));
        q = e + 1;
    }
    out
}

fn same(stored: &[u32], (off, len): (u32, u32), set: &[u32]) -> bool {
    &stored[off as usize..(off + len) as usize] == set
}
