//! Flow sizes from empirical CDFs, sampled by linear interpolation between
//! points as ns-2's empirical random variable does. The four distributions
//! of the papers are embedded (copied from shared/workloads/); a user's own
//! CSV (`size_bytes,cdf`) works the same way.

use crate::rng::Rng;

const WEB_SEARCH: &str = include_str!("../workloads/web_search.csv");
const DATA_MINING: &str = include_str!("../workloads/data_mining.csv");
const CACHE: &str = include_str!("../workloads/cache.csv");
const HADOOP: &str = include_str!("../workloads/hadoop.csv");

pub const BUILT_IN: [&str; 4] = ["web_search", "data_mining", "cache", "hadoop"];

#[derive(Clone, Debug)]
pub struct EmpiricalCdf {
    /// (size in bytes, cumulative probability), non-decreasing in both.
    points: Vec<(f64, f64)>,
}

impl EmpiricalCdf {
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut points = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || (n == 0 && line.starts_with(|c: char| c.is_alphabetic())) {
                continue;
            }
            let mut it = line.split([',', ' ', '\t']).filter(|s| !s.is_empty());
            let (Some(a), Some(b)) = (it.next(), it.next()) else {
                return Err(format!("line {}: expected \"size_bytes,cdf\"", n + 1));
            };
            let size: f64 = a.parse().map_err(|_| format!("line {}: bad size {a:?}", n + 1))?;
            let cdf: f64 = b.parse().map_err(|_| format!("line {}: bad probability {b:?}", n + 1))?;
            if !(size >= 0.0 && (0.0..=1.0).contains(&cdf)) {
                return Err(format!("line {}: size must be >= 0 and cdf in [0, 1]", n + 1));
            }
            if let Some(&(ps, pc)) = points.last() {
                if size < ps || cdf < pc {
                    return Err(format!("line {}: sizes and probabilities must not decrease", n + 1));
                }
            }
            points.push((size, cdf));
        }
        match points.last() {
            None => Err("no points".into()),
            Some(&(_, c)) if (c - 1.0).abs() > 1e-9 => Err(format!("the last probability is {c}, not 1")),
            _ => Ok(EmpiricalCdf { points }),
        }
    }

    pub fn built_in(name: &str) -> Option<Self> {
        let text = match name {
            "web_search" => WEB_SEARCH,
            "data_mining" => DATA_MINING,
            "cache" => CACHE,
            "hadoop" => HADOOP,
            _ => return None,
        };
        Some(EmpiricalCdf::parse(text).expect("built-in CDF parses"))
    }

    /// Inverse CDF at u in [0, 1), interpolating linearly inside a segment.
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        // First point whose probability exceeds u.
        let i = p.partition_point(|&(_, c)| c <= u);
        if i == 0 {
            return p[0].0;
        }
        if i >= p.len() {
            return p[p.len() - 1].0;
        }
        let (s0, c0) = p[i - 1];
        let (s1, c1) = p[i];
        s0 + (s1 - s0) * (u - c0) / (c1 - c0)
    }

    /// A flow size in bytes, at least 1.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        (self.quantile(rng.uniform()).round() as u64).max(1)
    }

    /// Mean of the interpolated distribution (trapezoids between points,
    /// point masses where the CDF jumps at a size).
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        let mut m = p[0].0 * p[0].1;
        for w in p.windows(2) {
            let ((s0, c0), (s1, c1)) = (w[0], w[1]);
            m += (c1 - c0) * (s0 + s1) / 2.0;
        }
        m
    }
}

/// Where a service's flow sizes come from.
#[derive(Clone, Debug)]
pub enum SizeDist {
    One(EmpiricalCdf),
    /// Pick one of several with equal probability, then draw from it.
    Mix(Vec<EmpiricalCdf>),
}

impl SizeDist {
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            SizeDist::One(c) => c.sample(rng),
            SizeDist::Mix(v) => {
                let i = ((rng.uniform() * v.len() as f64) as usize).min(v.len() - 1);
                v[i].sample(rng)
            }
        }
    }

    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::One(c) => c.mean(),
            SizeDist::Mix(v) => v.iter().map(|c| c.mean()).sum::<f64>() / v.len() as f64,
        }
    }

    /// A built-in name, "mix", or a CSV file path.
    pub fn resolve(name: &str) -> Result<SizeDist, String> {
        if name == "mix" {
            return Ok(SizeDist::Mix(BUILT_IN.iter().map(|n| EmpiricalCdf::built_in(n).expect("built in")).collect()));
        }
        if let Some(c) = EmpiricalCdf::built_in(name) {
            return Ok(SizeDist::One(c));
        }
        if name.ends_with(".csv") || name.contains('/') {
            let text = std::fs::read_to_string(name).map_err(|e| format!("cannot read {name:?}: {e}"))?;
            return EmpiricalCdf::parse(&text).map(SizeDist::One).map_err(|e| format!("{name:?}: {e}"));
        }
        Err(format!("unknown distribution {name:?}; expected one of web_search, data_mining, cache, hadoop, mix, or a path to a size_bytes,cdf CSV file"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Means quoted in ML-ECN §IV for the interpolated CDFs (shared/README.md):
    /// web search ≈ 1.67 MB, data mining ≈ 7.47 MB, cache ≈ 0.91 MB,
    /// Hadoop ≈ 4.14 MB.
    #[test]
    fn analytic_means_match_the_papers() {
        for (name, want) in [("web_search", 1.67e6), ("data_mining", 7.47e6), ("cache", 0.91e6), ("hadoop", 4.14e6)] {
            let m = EmpiricalCdf::built_in(name).unwrap().mean();
            assert!((m / want - 1.0).abs() < 0.01, "{name}: {m}");
        }
    }

    #[test]
    fn quantiles_interpolate_and_respect_atoms() {
        let c = EmpiricalCdf::built_in("data_mining").unwrap();
        assert_eq!(c.quantile(0.0), 1460.0);
        assert_eq!(c.quantile(0.3), 1460.0); // half of the flows are exactly one packet
        assert!((c.quantile(0.55) - 2190.0).abs() < 1e-6); // halfway 1460 → 2920
        assert!(EmpiricalCdf::parse("size_bytes,cdf\n10,0.5\n5,1\n").is_err());
        assert!(EmpiricalCdf::parse("1,0\n2,0.9\n").is_err());
    }
}

/// One generated flow.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub src: u32,
    pub dst: u32,
    pub service: u32,
    pub size: u64,
    pub start: crate::units::Time,
}

/// Flows per second that load every host link (`capacity` bits/s in all)
/// to `w.load` on average, with services picked with `p_service`.
fn flow_rate(
    w: &crate::config::WorkloadCfg,
    p_service: &[f64],
    dists: &[SizeDist],
    capacity: f64,
    mss: u32,
    header: u32,
) -> f64 {
    // Expected bytes on the wire per flow: payload plus one header per
    // segment (half a segment of rounding on average).
    let wire = |m: f64| m + header as f64 * (m / mss as f64 + 0.5);
    let mean_wire: f64 = p_service.iter().zip(dists).map(|(p, d)| p * wire(d.mean())).sum();
    w.load * capacity / (8.0 * mean_wire)
}

/// How long the workload's arrivals last, in seconds (the resource
/// guard's estimate of a run without a duration): flows over their rate.
pub fn arrival_span(w: &crate::config::WorkloadCfg, host_rates: &[u64], mss: u32, header: u32) -> Result<f64, String> {
    let dists: Vec<SizeDist> = w.distribution_names().iter().map(|n| SizeDist::resolve(n)).collect::<Result<_, _>>()?;
    let services = w.services as usize;
    // Services weighted as in `poisson`, closely enough for an estimate.
    let p_service = match &w.service_weights {
        Some(wts) => {
            let sum: f64 = wts.iter().sum();
            wts.iter().map(|x| x / sum).collect()
        }
        None => vec![1.0 / services as f64; services],
    };
    let capacity: f64 = host_rates.iter().map(|&r| r as f64).sum();
    let bottleneck = Endpoints::new(w, host_rates).map_or(capacity, |e| e.capacity);
    Ok(w.flows as f64 / flow_rate(w, &p_service, &dists, bottleneck, mss, header))
}

/// Poisson arrivals sized so that every host's access link carries `load`
/// on average (headers counted); uniform random source and destination;
/// services by host pair or by weight; sizes from each service's CDF.
pub fn poisson(
    w: &crate::config::WorkloadCfg,
    host_rates: &[u64],
    mss: u32,
    header: u32,
    seed: u64,
) -> Result<Vec<Arrival>, String> {
    use crate::config::ServiceMapping;
    let hosts = host_rates.len() as u32;
    let dists: Vec<SizeDist> = w.distribution_names().iter().map(|n| SizeDist::resolve(n)).collect::<Result<_, _>>()?;
    let services = w.services as usize;
    // How often each service is picked.
    let p_service: Vec<f64> = match w.service_mapping {
        ServiceMapping::ByPair => {
            let pairs = hosts as u64 * (hosts as u64 - 1);
            (0..services as u64).map(|s| ((pairs - s).div_ceil(services as u64)) as f64 / pairs as f64).collect()
        }
        ServiceMapping::Weighted => {
            let wts = w.service_weights.clone().unwrap_or_else(|| vec![1.0; services]);
            let sum: f64 = wts.iter().sum();
            wts.iter().map(|x| x / sum).collect()
        }
    };
    let capacity: f64 = host_rates.iter().map(|&r| r as f64).sum();
    let ends = Endpoints::new(w, host_rates);
    // All to all, every link carries `load`; from senders to receivers,
    // the side with less capacity does (the client's link, when one
    // client fetches from many servers).
    let bottleneck = ends.as_ref().map_or(capacity, |e| e.capacity);
    let rate = flow_rate(w, &p_service, &dists, bottleneck, mss, header);
    let mut rng = Rng::stream(seed, 0x3017_0AD5);
    let mut cdf = p_service.clone();
    for i in 1..cdf.len() {
        cdf[i] += cdf[i - 1];
    }
    // With unequal host links, sources and destinations are drawn in
    // proportion to link rate so that every link carries the same `load`.
    let uniform = host_rates.iter().all(|&r| r == host_rates[0]);
    let mut by_rate: Vec<f64> = host_rates.iter().map(|&r| r as f64 / capacity).collect();
    for i in 1..by_rate.len() {
        by_rate[i] += by_rate[i - 1];
    }
    let pick = |rng: &mut Rng| -> u32 {
        let u = rng.uniform();
        by_rate.partition_point(|&c| c <= u).min(hosts as usize - 1) as u32
    };
    let mut t = 0.0f64;
    let mut out = Vec::with_capacity(w.flows as usize);
    for _ in 0..w.flows {
        t += -(1.0 - rng.uniform()).ln() / rate;
        let (src, dst) = if let Some(e) = &ends {
            e.pick(&mut rng)
        } else if uniform {
            let src = (rng.uniform() * hosts as f64) as u32 % hosts;
            let mut dst = (rng.uniform() * (hosts - 1) as f64) as u32 % (hosts - 1);
            if dst >= src {
                dst += 1;
            }
            (src, dst)
        } else {
            let src = pick(&mut rng);
            let mut dst = pick(&mut rng);
            while dst == src {
                dst = pick(&mut rng);
            }
            (src, dst)
        };
        let service = match w.service_mapping {
            ServiceMapping::ByPair => {
                let pair = src as u64 * (hosts as u64 - 1) + (dst - (dst > src) as u32) as u64;
                (pair % services as u64) as u32
            }
            ServiceMapping::Weighted => {
                let u = rng.uniform();
                cdf.iter().position(|&c| u < c).unwrap_or(services - 1) as u32
            }
        };
        let size = dists[service as usize].sample(&mut rng);
        let start = w.start.0 + (t * crate::units::PS_PER_S as f64) as u64;
        out.push(Arrival { src, dst, service, size, start });
    }
    Ok(out)
}

/// Where workload flows go when `workload.senders` or `receivers` narrow
/// them: a source in proportion to link rate among the senders, then a
/// destination likewise among the receivers other than the source.
struct Endpoints {
    senders: Vec<(u32, f64)>,
    receivers: Vec<(u32, f64)>,
    /// Link capacity of the side that limits the offered load, bits/s.
    capacity: f64,
}

impl Endpoints {
    /// None when both are left out (all to all, drawn as before).
    fn new(w: &crate::config::WorkloadCfg, host_rates: &[u64]) -> Option<Endpoints> {
        if w.senders.is_none() && w.receivers.is_none() {
            return None;
        }
        let hosts = host_rates.len() as u32;
        let side = |ids: Vec<u32>| -> Vec<(u32, f64)> {
            ids.into_iter().map(|h| (h, host_rates[h as usize] as f64)).collect()
        };
        let (senders, receivers) = (side(w.sender_hosts(hosts)), side(w.receiver_hosts(hosts)));
        let sum = |v: &[(u32, f64)]| v.iter().map(|x| x.1).sum::<f64>();
        let capacity = sum(&senders).min(sum(&receivers));
        Some(Endpoints { senders, receivers, capacity })
    }

    fn draw(set: &[(u32, f64)], not: Option<u32>, rng: &mut Rng) -> u32 {
        let total: f64 = set.iter().filter(|x| Some(x.0) != not).map(|x| x.1).sum();
        let mut u = rng.uniform() * total;
        let mut last = set[0].0;
        for &(h, r) in set.iter().filter(|x| Some(x.0) != not) {
            last = h;
            if u < r {
                return h;
            }
            u -= r;
        }
        last
    }

    fn pick(&self, rng: &mut Rng) -> (u32, u32) {
        // A sender that is also the only receiver is never drawn (config
        // validation rules out a single host on both sides).
        loop {
            let src = Self::draw(&self.senders, None, rng);
            if self.receivers.iter().any(|x| x.0 != src) {
                return (src, Self::draw(&self.receivers, Some(src), rng));
            }
        }
    }
}

#[cfg(test)]
mod endpoint_tests {
    use crate::config::Config;

    /// One client fetching from eight servers (MQ-ECN §5.1.2): every flow
    /// ends at the client, the servers share the sending evenly, and the
    /// client's 1 Gbps link is offered `load` on average, headers counted.
    #[test]
    fn client_fetching_from_servers_loads_the_client_link() {
        let cfg = Config::from_toml(
            "[run]\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 9\nlink_rate = \"1Gbps\"\n\
             link_delay = \"25us\"\n[workload]\nkind = \"poisson\"\nload = 0.5\nflows = 40000\n\
             receivers = [0]\nsenders = [1, 2, 3, 4, 5, 6, 7, 8]\n",
        )
        .unwrap();
        let w = cfg.workload.as_ref().unwrap();
        let flows = super::poisson(w, &[1_000_000_000; 9], 1460, 40, 7).unwrap();
        assert!(flows.iter().all(|f| f.dst == 0 && f.src != 0));
        let mut per_sender = [0u32; 9];
        for f in &flows {
            per_sender[f.src as usize] += 1;
        }
        // 5,000 each on average; binomial sd ≈ 66.
        assert!(per_sender[1..].iter().all(|&n| (4700..5300).contains(&n)), "{per_sender:?}");
        // Offered wire bytes over the span, against the client's link.
        let bytes: f64 = flows.iter().map(|f| f.size as f64 + 40.0 * (f.size as f64 / 1460.0 + 0.5)).sum();
        let span = crate::units::secs(flows.last().unwrap().start);
        let load = bytes * 8.0 / span / 1e9;
        // Heavy-tailed sizes: 40,000 web-search flows give the mean within a few %.
        assert!((load - 0.5).abs() < 0.05, "offered {load}");
        let e = Config::from_toml(
            "[run]\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"1Gbps\"\n\
             link_delay = \"25us\"\n[workload]\nkind = \"poisson\"\nload = 0.5\nflows = 4\nreceivers = [3]\n",
        )
        .unwrap_err();
        assert_eq!(e.0, "workload.receivers[0] = 3: no such host; hosts are 0..2");
    }
}
