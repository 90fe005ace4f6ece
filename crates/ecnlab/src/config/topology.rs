//! `[topology]`: the network's shape, rates and delays; the presets from
//! the papers fill every key an experiment leaves out, so any of them can
//! be overridden one by one.

use super::error::ConfigError;
use super::graph::{Graph, Links};
use super::param::section;
use super::values::{Dur, EcmpMode, OneOrList, Preset, Rate, TopologyKind};
use crate::units::Time;

section! {
    /// `[topology]`.
    pub struct TopologyCfg {
        /// "star", "leaf-spine", "fat-tree", "ring" or "graph" (a preset implies leaf-spine).
        kind: Option<TopologyKind> = None;
        /// A topology from the papers: fills every key not given here (leaf-spine).
        preset: Option<Preset> = None;
        /// Star, graph: number of hosts (a graph's nodes 0 to hosts - 1).
        hosts: Option<u32> = None, range "2 to 65536";
        /// Host link rate: one for all, or one per host (star); a graph's
        /// default rate for links that give none.
        link_rate: Option<OneOrList<Rate>> = None;
        /// Switch-to-switch link rate (default: link_rate).
        uplink_rate: Option<Rate> = None, default_doc "link_rate";
        /// Propagation delay of every link (a graph: of links that give none).
        link_delay: Option<Dur> = None;
        /// Extra one-way delay on every host link (the MQ-ECN scripts' host delay).
        host_delay: Option<Dur> = None, default_doc "0s";
        /// Leaf-spine: leaves.
        leaves: Option<u32> = None, range "1 to 4096";
        /// Leaf-spine: spines.
        spines: Option<u32> = None, range "1 to 4096";
        /// Leaf-spine: hosts under each leaf.
        hosts_per_leaf: Option<u32> = None, range "1 to 4096";
        /// Fat-tree arity: k pods, k³/4 hosts.
        k: Option<u32> = None, range "even, 2 to 64";
        /// Ring: switches, each linked to the next and the last to the first (a cyclic fabric:
        /// where PFC can deadlock). Graph: number of switches (nodes hosts to hosts + switches - 1).
        switches: Option<u32> = None, range "ring: 3 to 1024; graph: 1 to 65536", resolved Given;
        /// Ring: hosts under each switch.
        hosts_per_switch: Option<u32> = None, range "1 to 4096", resolved Given;
        /// Graph: every link, [a, b, rate, delay] (rate and delay may be left
        /// out: link_rate, link_delay), full duplex. Hosts have one link each,
        /// to a switch; a switch's ports are its links in list order.
        links: Option<Links> = None, resolved Given;
        /// Graph: the switches' names in outputs, one per switch (default
        /// switch0, switch1, ...).
        switch_names: Option<Vec<String>> = None, resolved Given;
        /// Equal-cost multipath: "per-flow" (default), "per-packet" or "ns2".
        ecmp: EcmpMode = EcmpMode::PerFlow;
    }
}

const G: u64 = 1_000_000_000;
const US: u64 = 1_000_000;

/// 0.2 us per link plus 20 us on each host link: 81.6 us of propagation
/// per round trip across the spine, 85.2 us once store-and-forward is
/// added (MQ-ECN §5.2, CEDM §V).
fn leaf_spine(leaves: u32, spines: u32, hosts_per_leaf: u32, down: u64, up: u64) -> TopologyCfg {
    leaf_spine_with(leaves, spines, hosts_per_leaf, down, up, US / 5, 20 * US)
}

/// pFabric's delays, as FQ-CoDel in the DCN §IV-B states them: 12 us of
/// propagation per round trip between any two hosts, that is 1.5 us on
/// each of the 4 links each way (with store-and-forward of a 1500 B packet
/// at 10G, 40G, 40G, 10G: about 15 us).
fn pfabric_leaf_spine(leaves: u32) -> TopologyCfg {
    leaf_spine_with(leaves, 4, 16, 10 * G, 40 * G, 3 * US / 2, 0)
}

fn leaf_spine_with(
    leaves: u32,
    spines: u32,
    hosts_per_leaf: u32,
    down: u64,
    up: u64,
    link_delay: u64,
    host_delay: u64,
) -> TopologyCfg {
    TopologyCfg {
        kind: Some(TopologyKind::LeafSpine),
        preset: None,
        hosts: None,
        link_rate: Some(OneOrList::All(Rate(down))),
        uplink_rate: Some(Rate(up)),
        link_delay: Some(Dur(link_delay)),
        host_delay: Some(Dur(host_delay)),
        leaves: Some(leaves),
        spines: Some(spines),
        hosts_per_leaf: Some(hosts_per_leaf),
        k: None,
        switches: None,
        hosts_per_switch: None,
        links: None,
        switch_names: None,
        ecmp: EcmpMode::PerFlow,
    }
}

pub fn preset(p: Preset) -> TopologyCfg {
    match p {
        // MQ-ECN §5.2: 144 hosts, 12 leaves, 12 spines, 10 Gbps everywhere.
        // (Its 300 KB per port is a byte limit: the authors' ns-2 DWRR queue
        // admits while queued bytes fit in 200 × 1500 B. Set it with
        // `switch.buffer = "300KB"`; a preset fills topology keys only.)
        Preset::Mqecn => leaf_spine(12, 12, 12, 10 * G, 10 * G),
        // CEDM §V: pFabric's fabric, 9 leaves × 16 hosts, 4 spines,
        // 10G/40G, with MQ-ECN's delays (85.2 us RTT).
        Preset::Cedm => leaf_spine(9, 4, 16, 10 * G, 40 * G),
        // pFabric itself: the same fabric with its own short delays.
        Preset::Pfabric => pfabric_leaf_spine(9),
        // FQ-CoDel §IV-A scales pFabric's network down to 32 hosts with the
        // same delays; the paper gives no leaf and spine counts, so we keep
        // pFabric's 16 hosts per leaf and 4 spines: 2 leaves.
        Preset::Fqcodel => pfabric_leaf_spine(2),
    }
}

fn missing(key: &str, kind: &str, example: &str) -> ConfigError {
    ConfigError(format!("topology.{key}: missing; a {kind} needs it, e.g. {example}"))
}

impl TopologyCfg {
    /// This section with the preset's values filled in where keys are absent.
    pub fn resolved(&self) -> Result<TopologyCfg, ConfigError> {
        let Some(p) = self.preset else {
            if self.kind.is_none() {
                return Err(ConfigError(
                    "topology.kind: missing; expected one of star, leaf-spine, fat-tree, ring, graph (or give a preset)"
                        .into(),
                ));
            }
            if self.kind == Some(TopologyKind::Graph) {
                // Each link whole, so that two files giving one network
                // (defaults or not) resolve alike.
                if let Some(l) = &self.links {
                    let mut t = self.clone();
                    t.links = Some(l.filled(self.link_rate_one(), self.link_delay));
                    if t.links.as_ref().unwrap().list.iter().all(|l| l.rate.is_some() && l.delay.is_some()) {
                        t.link_rate = None;
                        t.link_delay = None;
                    }
                    return Ok(t);
                }
            }
            return Ok(self.clone());
        };
        let base = preset(p);
        if let Some(k) = self.kind {
            if k != TopologyKind::LeafSpine {
                return Err(ConfigError(format!(
                    "topology.preset = \"{}\": a leaf-spine preset; topology.kind must be \"leaf-spine\" or left out",
                    p.name()
                )));
            }
        }
        Ok(TopologyCfg {
            kind: base.kind,
            preset: Some(p),
            hosts: self.hosts,
            link_rate: self.link_rate.clone().or(base.link_rate),
            uplink_rate: self.uplink_rate.or(base.uplink_rate),
            link_delay: self.link_delay.or(base.link_delay),
            host_delay: self.host_delay.or(base.host_delay),
            leaves: self.leaves.or(base.leaves),
            spines: self.spines.or(base.spines),
            hosts_per_leaf: self.hosts_per_leaf.or(base.hosts_per_leaf),
            k: self.k,
            switches: self.switches,
            hosts_per_switch: self.hosts_per_switch,
            links: self.links.clone(),
            switch_names: self.switch_names.clone(),
            ecmp: self.ecmp,
        })
    }

    pub fn host_count(&self) -> u32 {
        match self.kind {
            Some(TopologyKind::Star) => self.hosts.unwrap_or(0),
            Some(TopologyKind::LeafSpine) => self.leaves.unwrap_or(0) * self.hosts_per_leaf.unwrap_or(0),
            Some(TopologyKind::FatTree) => self.k.map(|k| k * k * k / 4).unwrap_or(0),
            Some(TopologyKind::Ring) => self.switches.unwrap_or(0) * self.hosts_per_switch.unwrap_or(0),
            Some(TopologyKind::Graph) => self.hosts.unwrap_or(0),
            None => 0,
        }
    }

    /// Checks on a resolved topology section.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let kind = self.kind.expect("resolved");
        let name = match kind {
            TopologyKind::Star => "star",
            TopologyKind::LeafSpine => "leaf-spine",
            TopologyKind::FatTree => "fat-tree",
            TopologyKind::Ring => "ring",
            TopologyKind::Graph => "graph",
        };
        let only = |key: &str, set: bool, kinds: &str| -> Result<(), ConfigError> {
            if set {
                Err(ConfigError(format!("topology.{key}: not a key of a {name}; it belongs to {kinds}")))
            } else {
                Ok(())
            }
        };
        match kind {
            TopologyKind::Star => {
                let hosts = self.hosts.ok_or_else(|| missing("hosts", name, "8"))?;
                if !(2..=65_536).contains(&hosts) {
                    return Err(ConfigError(format!("topology.hosts = {hosts}: a star needs 2 to 65536 hosts")));
                }
                only("leaves", self.leaves.is_some(), "leaf-spine")?;
                only("spines", self.spines.is_some(), "leaf-spine")?;
                only("hosts_per_leaf", self.hosts_per_leaf.is_some(), "leaf-spine")?;
                only("k", self.k.is_some(), "fat-tree")?;
                only("switches", self.switches.is_some(), "ring and graph")?;
                only("hosts_per_switch", self.hosts_per_switch.is_some(), "ring")?;
                only("uplink_rate", self.uplink_rate.is_some(), "leaf-spine, fat-tree and ring")?;
            }
            TopologyKind::Graph => return self.validate_graph(),
            TopologyKind::Ring => {
                only("hosts", self.hosts.is_some(), "star (a ring has switches × hosts_per_switch)")?;
                only("leaves", self.leaves.is_some(), "leaf-spine")?;
                only("spines", self.spines.is_some(), "leaf-spine")?;
                only("hosts_per_leaf", self.hosts_per_leaf.is_some(), "leaf-spine")?;
                only("k", self.k.is_some(), "fat-tree")?;
                match self.switches {
                    None => return Err(missing("switches", name, "5")),
                    Some(n) if !(3..=1024).contains(&n) => {
                        return Err(ConfigError(format!("topology.switches = {n}: a ring needs 3 to 1024 switches")));
                    }
                    _ => {}
                }
                match self.hosts_per_switch {
                    None => return Err(missing("hosts_per_switch", name, "1")),
                    Some(n) if !(1..=4096).contains(&n) => {
                        return Err(ConfigError(format!("topology.hosts_per_switch = {n}: must be 1 to 4096")));
                    }
                    _ => {}
                }
            }
            TopologyKind::LeafSpine => {
                only("hosts", self.hosts.is_some(), "star (a leaf-spine has leaves × hosts_per_leaf)")?;
                only("k", self.k.is_some(), "fat-tree")?;
                only("switches", self.switches.is_some(), "ring and graph")?;
                only("hosts_per_switch", self.hosts_per_switch.is_some(), "ring")?;
                for (key, v) in
                    [("leaves", self.leaves), ("spines", self.spines), ("hosts_per_leaf", self.hosts_per_leaf)]
                {
                    match v {
                        None => return Err(missing(key, name, "4")),
                        Some(0) => return Err(ConfigError(format!("topology.{key} = 0: must be at least 1"))),
                        Some(n) if n > 4096 => {
                            return Err(ConfigError(format!("topology.{key} = {n}: at most 4096")));
                        }
                        _ => {}
                    }
                }
                if self.host_count() < 2 {
                    return Err(ConfigError("topology: a leaf-spine needs at least 2 hosts".into()));
                }
                // The route table holds switches × hosts entries.
                if self.host_count() > 1 << 20 {
                    return Err(ConfigError(format!(
                        "topology: leaves × hosts_per_leaf = {} hosts; at most 1048576",
                        self.host_count()
                    )));
                }
            }
            TopologyKind::FatTree => {
                only("hosts", self.hosts.is_some(), "star (a fat-tree has k³/4 hosts)")?;
                only("leaves", self.leaves.is_some(), "leaf-spine")?;
                only("spines", self.spines.is_some(), "leaf-spine")?;
                only("hosts_per_leaf", self.hosts_per_leaf.is_some(), "leaf-spine")?;
                only("switches", self.switches.is_some(), "ring and graph")?;
                only("hosts_per_switch", self.hosts_per_switch.is_some(), "ring")?;
                match self.k {
                    None => return Err(missing("k", name, "4")),
                    Some(k) if k < 2 || k % 2 != 0 || k > 64 => {
                        return Err(ConfigError(format!("topology.k = {k}: must be an even number from 2 to 64")));
                    }
                    _ => {}
                }
            }
        }
        only("links", self.links.is_some(), "graph")?;
        only("switch_names", self.switch_names.is_some(), "graph")?;
        match &self.link_rate {
            None => return Err(missing("link_rate", name, "\"10Gbps\"")),
            Some(OneOrList::List(l)) if kind != TopologyKind::Star => {
                return Err(ConfigError(format!(
                    "topology.link_rate = a list of {}: one rate per host is for a star; a {name} takes one rate",
                    l.len()
                )));
            }
            Some(OneOrList::List(l)) if l.len() != self.host_count() as usize => {
                return Err(ConfigError(format!(
                    "topology.link_rate = a list of {}: needs one rate per host ({})",
                    l.len(),
                    self.host_count()
                )));
            }
            _ => {}
        }
        if self.link_delay.is_none() {
            return Err(missing("link_delay", name, "\"25us\""));
        }
        Ok(())
    }

    /// A graph's default link rate (one rate; a list is refused by `validate_graph`).
    fn link_rate_one(&self) -> Option<Rate> {
        match &self.link_rate {
            Some(OneOrList::All(r)) => Some(*r),
            _ => None,
        }
    }

    /// The graph's shape, of a graph section.
    fn graph(&self) -> Graph<'_> {
        Graph {
            hosts: self.hosts.unwrap_or(0),
            switches: self.switches.unwrap_or(0),
            links: self.links.as_ref().expect("a graph has links"),
            switch_names: self.switch_names.as_deref(),
        }
    }

    fn validate_graph(&self) -> Result<(), ConfigError> {
        let only = |key: &str, set: bool, kinds: &str| -> Result<(), ConfigError> {
            if set {
                Err(ConfigError(format!(
                    "topology.{key}: not a key of a graph (it belongs to {kinds}); a graph gives every link in topology.links"
                )))
            } else {
                Ok(())
            }
        };
        only("preset", self.preset.is_some(), "leaf-spine")?;
        only("leaves", self.leaves.is_some(), "leaf-spine")?;
        only("spines", self.spines.is_some(), "leaf-spine")?;
        only("hosts_per_leaf", self.hosts_per_leaf.is_some(), "leaf-spine")?;
        only("k", self.k.is_some(), "fat-tree")?;
        only("hosts_per_switch", self.hosts_per_switch.is_some(), "ring")?;
        only("uplink_rate", self.uplink_rate.is_some(), "leaf-spine, fat-tree and ring")?;
        only("host_delay", self.host_delay.is_some(), "star, leaf-spine, fat-tree and ring")?;
        if let Some(OneOrList::List(l)) = &self.link_rate {
            return Err(ConfigError(format!(
                "topology.link_rate = a list of {}: a graph takes one default rate; give each link its own in topology.links",
                l.len()
            )));
        }
        match self.hosts {
            None => return Err(missing("hosts", "graph", "8")),
            Some(n) if !(2..=65_536).contains(&n) => {
                return Err(ConfigError(format!("topology.hosts = {n}: a graph needs 2 to 65536 hosts")));
            }
            _ => {}
        }
        match self.switches {
            None => return Err(missing("switches", "graph", "1")),
            Some(n) if !(1..=65_536).contains(&n) => {
                return Err(ConfigError(format!("topology.switches = {n}: a graph needs 1 to 65536 switches")));
            }
            _ => {}
        }
        if self.links.is_none() {
            return Err(missing("links", "graph", "[[0, 2, \"100Gbps\", \"1us\"], [1, 2, \"100Gbps\", \"1us\"]]"));
        }
        self.graph().validate()
    }

    /// Host link rate of host `h`.
    pub fn host_rate(&self, h: u32) -> u64 {
        if self.kind == Some(TopologyKind::Graph) {
            return self.graph().links.first_of(h).expect("validated: every host has a link").rate();
        }
        match self.link_rate.as_ref().expect("validated") {
            OneOrList::All(r) => r.0,
            OneOrList::List(l) => l[h as usize].0,
        }
    }

    /// The slowest host link's rate (a resolved, checked section).
    pub fn slowest_host_rate(&self) -> u64 {
        if self.kind == Some(TopologyKind::Graph) {
            return (0..self.host_count()).map(|h| self.host_rate(h)).min().unwrap_or(0);
        }
        match self.link_rate.as_ref().expect("validated") {
            OneOrList::All(r) => r.0,
            OneOrList::List(l) => l.iter().map(|r| r.0).min().unwrap_or(0),
        }
    }

    /// The base RTT d of CEDM's analysis (Table III: the round trip without
    /// queueing) as propagation alone, over the longest host-to-host path:
    /// two host links each way in a star, two host and two fabric links
    /// across a leaf-spine's spine, four fabric links through a fat-tree's
    /// core. A host link's delay is link_delay + host_delay. CEDM §V's
    /// star has 100 us (4 × 25 us); its leaf-spine 81.6 us of propagation
    /// (85.2 us with store-and-forward). A graph: its longest shortest path.
    pub fn base_rtt(&self) -> Time {
        if self.kind == Some(TopologyKind::Graph) {
            return self.graph().base_rtt();
        }
        let link = self.link_delay.map_or(0, |d| d.0);
        let host = link + self.host_delay.map_or(0, |d| d.0);
        let fabric_links = match self.kind {
            Some(TopologyKind::LeafSpine) if self.leaves.unwrap_or(0) > 1 => 2,
            Some(TopologyKind::FatTree) => 4,
            _ => 0,
        };
        2 * (2 * host + fabric_links * link)
    }

    /// Switch-to-switch link rate (a graph: its fastest such link).
    pub fn fabric_rate(&self) -> u64 {
        if self.kind == Some(TopologyKind::Graph) {
            return self.fabric_rates().last().copied().unwrap_or_else(|| self.host_rate(0));
        }
        self.uplink_rate.map(|r| r.0).unwrap_or_else(|| self.host_rate(0))
    }
}

impl TopologyCfg {
    /// Every switch-to-switch link rate, slowest first (empty: no fabric).
    pub fn fabric_rates(&self) -> Vec<u64> {
        match self.kind {
            Some(TopologyKind::Star) => Vec::new(),
            Some(TopologyKind::Graph) => self.graph().fabric_rates(),
            _ => vec![self.fabric_rate()],
        }
    }
}
