//! `topology.kind = "graph"`: a network given link by link. Nodes are
//! numbered hosts first (0 .. hosts-1), then switches (hosts .. hosts +
//! switches - 1); each entry of `topology.links` is `[a, b]`, `[a, b, rate]`
//! or `[a, b, rate, delay]`, the missing values from `link_rate` and
//! `link_delay`. Every host has exactly one link, to a switch; switches may
//! link in any shape, cycles included (routes are shortest paths with ECMP,
//! `routes.rs`). Here: the link type, its checks, and the few facts of the
//! graph that other code asks of a topology (a host's rate, the fabric's
//! rates, the base RTT).

use super::error::ConfigError;
use super::param::TypeName;
use super::values::{Dur, Rate};
use crate::units::{self, Time};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;

/// The most nodes a graph has: 65536 hosts and 65536 switches
/// (`TopologyCfg::validate_graph`).
const MAX_NODES: usize = 2 * 65_536;

/// One full-duplex link: both directions have its rate and delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub a: u32,
    pub b: u32,
    /// None: `topology.link_rate` (filled in by `Links::filled`).
    pub rate: Option<Rate>,
    /// None: `topology.link_delay`.
    pub delay: Option<Dur>,
}

impl Link {
    pub fn rate(&self) -> u64 {
        self.rate.expect("filled").0
    }

    pub fn delay(&self) -> Time {
        self.delay.expect("filled").0
    }

    /// The entry as a file writes it, for messages.
    fn text(&self) -> String {
        let mut s = format!("[{}, {}", self.a, self.b);
        if let Some(r) = self.rate {
            s += &format!(", \"{}\"", units::fmt_rate(r.0));
        }
        if let Some(d) = self.delay {
            s += &format!(", \"{}\"", units::fmt_duration(d.0));
        }
        s + "]"
    }
}

impl<'de> Deserialize<'de> for Link {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Link;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a link [a, b], [a, b, rate] or [a, b, rate, delay], e.g. [0, 8, \"100Gbps\", \"1us\"]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Link, A::Error> {
                let short = || de::Error::custom("a link needs two node ids: [a, b], optionally a rate and a delay");
                let a: u32 = seq.next_element()?.ok_or_else(short)?;
                let b: u32 = seq.next_element()?.ok_or_else(short)?;
                let rate: Option<Rate> = seq.next_element()?;
                let delay: Option<Dur> = if rate.is_some() { seq.next_element()? } else { None };
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom("a link has at most 4 items: [a, b, rate, delay]"));
                }
                Ok(Link { a, b, rate, delay })
            }
        }
        d.deserialize_seq(V)
    }
}

impl Serialize for Link {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = 2 + self.rate.is_some() as usize + self.delay.is_some() as usize;
        let mut seq = s.serialize_seq(Some(n))?;
        seq.serialize_element(&self.a)?;
        seq.serialize_element(&self.b)?;
        if let Some(r) = &self.rate {
            seq.serialize_element(r)?;
        }
        if let Some(d) = &self.delay {
            seq.serialize_element(d)?;
        }
        seq.end()
    }
}

/// `topology.links`, in file order (a switch's ports are its links in this
/// order, so the order is part of the network), with the index of each
/// node's first link, so that a host's rate is one look-up.
#[derive(Clone, Debug)]
pub struct Links {
    pub list: Vec<Link>,
    first: Vec<u32>,
}

impl Links {
    pub fn new(list: Vec<Link>) -> Links {
        // Ids past the most a graph may have are refused by `Graph::validate`;
        // they get no slot here (a typo of 4e9 would otherwise allocate 16 GB).
        let n = list.iter().map(|l| l.a.max(l.b) as usize + 1).max().unwrap_or(0).min(MAX_NODES);
        let mut first = vec![u32::MAX; n];
        for (i, l) in list.iter().enumerate().rev() {
            for x in [l.a as usize, l.b as usize] {
                if x < n {
                    first[x] = i as u32;
                }
            }
        }
        Links { list, first }
    }

    /// Every link with its rate and delay, the missing ones from the
    /// defaults (None where a link lacks one and there is no default).
    pub fn filled(&self, rate: Option<Rate>, delay: Option<Dur>) -> Links {
        Links::new(self.list.iter().map(|l| Link { rate: l.rate.or(rate), delay: l.delay.or(delay), ..*l }).collect())
    }

    /// The link of node `n` that comes first in the file.
    pub fn first_of(&self, n: u32) -> Option<&Link> {
        self.first.get(n as usize).filter(|&&i| i != u32::MAX).map(|&i| &self.list[i as usize])
    }
}

impl PartialEq for Links {
    fn eq(&self, o: &Links) -> bool {
        self.list == o.list
    }
}

impl<'de> Deserialize<'de> for Links {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Link>::deserialize(d).map(Links::new)
    }
}

impl Serialize for Links {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.list.serialize(s)
    }
}

impl TypeName for Links {
    fn type_name() -> String {
        "list of links [a, b, rate, delay] (rate and delay optional: link_rate, link_delay)".into()
    }
}

/// The shape a graph's keys give.
pub struct Graph<'a> {
    pub hosts: u32,
    pub switches: u32,
    pub links: &'a Links,
    pub switch_names: Option<&'a [String]>,
}

impl Graph<'_> {
    fn nodes(&self) -> u32 {
        self.hosts + self.switches
    }

    fn node_words(&self, n: u32) -> String {
        if n < self.hosts {
            format!("host {n}")
        } else {
            format!("switch {n}")
        }
    }

    /// Every check of a graph, one error for the first fault, naming the
    /// link as written.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let (h, n) = (self.hosts, self.nodes());
        let ids = format!("hosts are 0 to {}, switches {} to {}", h - 1, h, n - 1);
        if self.links.list.is_empty() {
            return Err(ConfigError("topology.links = []: a graph needs its links, e.g. [[0, 2], [1, 2]]".into()));
        }
        let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
        let mut host_link = vec![usize::MAX; h as usize];
        let mut degree = vec![0u32; n as usize];
        for (i, l) in self.links.list.iter().enumerate() {
            let at = format!("topology.links[{i}] = {}", l.text());
            for x in [l.a, l.b] {
                if x >= n {
                    return Err(ConfigError(format!("{at}: node {x} does not exist; {ids}")));
                }
            }
            if l.a == l.b {
                return Err(ConfigError(format!("{at}: links {} to itself", self.node_words(l.a))));
            }
            if l.a < h && l.b < h {
                return Err(ConfigError(format!("{at}: links two hosts; a host links to a switch ({ids})")));
            }
            let key = (l.a.min(l.b), l.a.max(l.b));
            if let Some(j) = seen.insert(key, i) {
                return Err(ConfigError(format!(
                    "{at}: a second link between nodes {} and {} (links[{j}] is the first); one link per pair",
                    key.0, key.1
                )));
            }
            for x in [l.a, l.b] {
                degree[x as usize] += 1;
                if x < h {
                    let j = host_link[x as usize];
                    if j != usize::MAX {
                        return Err(ConfigError(format!(
                            "{at}: host {x} already has a link (links[{j}]); each host has exactly one"
                        )));
                    }
                    host_link[x as usize] = i;
                }
            }
            match l.rate {
                None => {
                    return Err(ConfigError(format!(
                        "{at}: no rate; give it as the third item or set topology.link_rate"
                    )))
                }
                Some(Rate(0)) => return Err(ConfigError(format!("{at}: the rate must be above 0"))),
                _ => {}
            }
            if l.delay.is_none() {
                return Err(ConfigError(format!(
                    "{at}: no delay; give it as the fourth item or set topology.link_delay"
                )));
            }
        }
        if let Some(x) = host_link.iter().position(|&j| j == usize::MAX) {
            return Err(ConfigError(format!("topology.links: host {x} has no link; each host has exactly one")));
        }
        if let Some(x) = (h..n).find(|&x| degree[x as usize] == 0) {
            return Err(ConfigError(format!(
                "topology.links: switch {x} has no link (topology.switches = {}); drop it or link it",
                self.switches
            )));
        }
        // Every host reaches host 0 (hosts do not forward).
        let dist = self.hops_from(0);
        if let Some(x) = (1..h).find(|&x| dist[x as usize] == u32::MAX) {
            return Err(ConfigError(format!(
                "topology.links: host {x} cannot reach host 0 (links[{}] = {} leads to a part of the network \
                 without it); every host must reach every other",
                host_link[x as usize],
                self.links.list[host_link[x as usize]].text()
            )));
        }
        if let Some(names) = self.switch_names {
            if names.len() != self.switches as usize {
                return Err(ConfigError(format!(
                    "topology.switch_names = a list of {}: needs one name per switch ({})",
                    names.len(),
                    self.switches
                )));
            }
            let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
            all.sort_unstable();
            if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
                return Err(ConfigError(format!("topology.switch_names: \"{}\" twice; names must differ", w[0])));
            }
            if let Some(s) = names.iter().find(|s| s.is_empty() || s.starts_with("host")) {
                return Err(ConfigError(format!(
                    "topology.switch_names: \"{s}\": a name must be non-empty and not start with \"host\" (the hosts' names)"
                )));
            }
        }
        Ok(())
    }

    /// Each node's neighbours, by link order.
    fn adjacency(&self) -> Vec<Vec<(u32, Time)>> {
        let mut adj = vec![Vec::new(); self.nodes() as usize];
        for l in &self.links.list {
            adj[l.a as usize].push((l.b, l.delay.map_or(0, |d| d.0)));
            adj[l.b as usize].push((l.a, l.delay.map_or(0, |d| d.0)));
        }
        adj
    }

    /// Hops from host `src` to every node (hosts other than `src` do not
    /// forward); u32::MAX where unreachable.
    fn hops_from(&self, src: u32) -> Vec<u32> {
        self.search(src, &self.adjacency()).0
    }

    /// Breadth-first from `src`: hops, and the longest propagation delay
    /// among the shortest paths, to every node.
    fn search(&self, src: u32, adj: &[Vec<(u32, Time)>]) -> (Vec<u32>, Vec<Time>) {
        let n = self.nodes() as usize;
        let (mut hops, mut delay) = (vec![u32::MAX; n], vec![0; n]);
        hops[src as usize] = 0;
        let mut queue = VecDeque::from([src]);
        while let Some(u) = queue.pop_front() {
            if u < self.hosts && u != src {
                continue;
            }
            for &(v, d) in &adj[u as usize] {
                let next = hops[u as usize] + 1;
                if hops[v as usize] == u32::MAX {
                    hops[v as usize] = next;
                    queue.push_back(v);
                }
                if hops[v as usize] == next {
                    delay[v as usize] = delay[v as usize].max(delay[u as usize] + d);
                }
            }
        }
        (hops, delay)
    }

    /// Round-trip propagation of the longest host-to-host shortest path
    /// (the base RTT d of `TopologyCfg::base_rtt`). Searches once per
    /// switch with hosts: hosts under one switch see the same paths but
    /// for their own link's delay.
    pub fn base_rtt(&self) -> Time {
        let adj = self.adjacency();
        let mut done: HashSet<(u32, Time)> = HashSet::new();
        let mut longest = 0;
        for src in 0..self.hosts {
            let Some(l) = self.links.first_of(src) else { continue };
            let sw = if l.a == src { l.b } else { l.a };
            // Hosts on one switch with equal link delays have equal paths.
            if !done.insert((sw, l.delay())) {
                continue;
            }
            let (_, delay) = self.search(src, &adj);
            longest = longest.max((0..self.hosts).map(|d| delay[d as usize]).max().unwrap_or(0));
        }
        2 * longest
    }

    /// The distinct rates of switch-to-switch links, slowest first.
    pub fn fabric_rates(&self) -> Vec<u64> {
        let mut r: Vec<u64> =
            self.links.list.iter().filter(|l| l.a >= self.hosts && l.b >= self.hosts).map(|l| l.rate()).collect();
        r.sort_unstable();
        r.dedup();
        r
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
