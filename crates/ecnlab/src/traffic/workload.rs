//! Workload generation: Poisson arrivals of flows whose sizes come from
//! the distributions of `dist.rs`, scaled to a target load, with their
//! services and host pairs.

use crate::rng::Rng;
use crate::traffic::dist::SizeDist;

/// One generated flow.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub src: u32,
    pub dst: u32,
    pub service: u32,
    pub size: u64,
    pub start: crate::units::Time,
    /// A rate-limited flow: its application writes at this many bits/s.
    pub rate: Option<u64>,
}

/// Expected bytes on the wire for `payload` bytes: one header per segment
/// (half a segment of rounding on average).
pub(crate) fn wire(payload: f64, mss: u32, header: u32) -> f64 {
    payload + header as f64 * (payload / mss as f64 + 0.5)
}

/// The sized flows' distributions, cut at `max_size` when it is set.
pub(crate) fn size_dists(w: &crate::config::WorkloadCfg) -> Result<Vec<SizeDist>, String> {
    let dists: Vec<SizeDist> = w.distribution_names().iter().map(|n| SizeDist::resolve(n)).collect::<Result<_, _>>()?;
    Ok(match w.max_size {
        Some(cap) => dists.iter().map(|d| d.capped(cap.0 as f64)).collect(),
        None => dists,
    })
}

/// The part of `load` the sized flows carry: the rest goes to the extra
/// one-packet and rate-limited flows.
fn sized_load(w: &crate::config::WorkloadCfg) -> f64 {
    w.load * (1.0 - w.one_packet_share - w.rate_limited_share)
}

/// Sized flows per second that load every host link (`capacity` bits/s
/// in all) to their share of `w.load` on average, with services picked
/// with `p_service`.
fn flow_rate(
    w: &crate::config::WorkloadCfg,
    p_service: &[f64],
    dists: &[SizeDist],
    capacity: f64,
    mss: u32,
    header: u32,
) -> f64 {
    let mean_wire: f64 = p_service.iter().zip(dists).map(|(p, d)| p * wire(d.mean(), mss, header)).sum();
    sized_load(w) * capacity / (8.0 * mean_wire)
}

/// How long the workload's arrivals last, in seconds (the resource
/// guard's estimate of a run without a duration): flows over their rate.
pub fn arrival_span(w: &crate::config::WorkloadCfg, host_rates: &[u64], mss: u32, header: u32) -> Result<f64, String> {
    let dists = size_dists(w)?;
    let p_service = service_shares(w, host_rates.len() as u32, host_rates, &dists, mss, header);
    Ok(w.flows as f64 / flow_rate(w, &p_service, &dists, bottleneck(w, host_rates), mss, header))
}

/// Link capacity that carries `load`, bits/s: every host link's, or with
/// `senders` / `receivers` the side with less (see `Endpoints`).
fn bottleneck(w: &crate::config::WorkloadCfg, host_rates: &[u64]) -> f64 {
    let capacity: f64 = host_rates.iter().map(|&r| r as f64).sum();
    Endpoints::new(w, host_rates).map_or(capacity, |e| e.capacity)
}

/// Flows per second of an extra stream whose flows of `payload` bytes
/// carry `share` of the offered load.
fn extra_rate(w: &crate::config::WorkloadCfg, share: f64, payload: f64, bottleneck: f64, mss: u32, header: u32) -> f64 {
    share * w.load * bottleneck / (8.0 * wire(payload, mss, header))
}

/// How many flows the workload makes in all, the extra one-packet and
/// rate-limited ones included (for the resource guard).
pub fn flow_count(w: &crate::config::WorkloadCfg, host_rates: &[u64], mss: u32, header: u32) -> Result<f64, String> {
    let span = arrival_span(w, host_rates, mss, header)?;
    let bottleneck = bottleneck(w, host_rates);
    let extra = |share: f64, payload: f64| extra_rate(w, share, payload, bottleneck, mss, header) * span;
    let streams = w.rate_limited_size.map_or(0.0, |b| extra(w.rate_limited_share, b.0 as f64));
    Ok(w.flows as f64 + extra(w.one_packet_share, mss as f64) + streams)
}

/// Draws a flow's ends and service as the workload says.
struct Picker<'a> {
    w: &'a crate::config::WorkloadCfg,
    hosts: u32,
    ends: Option<Endpoints>,
    /// Every host link has the same rate.
    uniform: bool,
    /// Cumulative shares of the link rates, and of the service weights.
    by_rate: Vec<f64>,
    service_cdf: Vec<f64>,
    /// `by-source`: cumulative shares of the flows each host starts.
    by_source: Option<Vec<f64>>,
}

/// The service of every flow from host `src` under `by-source`: the MQ-ECN
/// authors' `spine_empirical_diffserv.tcl` sets ((dst + 1)·hosts + src + 1)
/// mod services, which is this whenever hosts is a multiple of services
/// (144 and 8 in §5.2).
pub fn source_service(src: u32, services: u32) -> u32 {
    (src + 1) % services
}

/// `by-source`: how many flows per second each host starts, relative to
/// the others. Each host offers the same share of its link with its
/// service's sizes (the authors' λ = rate·load / (8·mean size)), so a host
/// whose sizes are small starts more flows.
fn source_weights(host_rates: &[u64], services: u32, dists: &[SizeDist], mss: u32, header: u32) -> Vec<f64> {
    (0..host_rates.len() as u32)
        .map(|h| {
            let d = &dists[source_service(h, services) as usize];
            host_rates[h as usize] as f64 / wire(d.mean(), mss, header)
        })
        .collect()
}

/// How often each service is picked under each mapping.
fn service_shares(
    w: &crate::config::WorkloadCfg,
    hosts: u32,
    host_rates: &[u64],
    dists: &[SizeDist],
    mss: u32,
    header: u32,
) -> Vec<f64> {
    use crate::config::ServiceMapping;
    let services = w.services as usize;
    match w.service_mapping {
        ServiceMapping::ByPair => {
            let pairs = hosts as u64 * (hosts as u64 - 1);
            (0..services as u64).map(|s| ((pairs - s).div_ceil(services as u64)) as f64 / pairs as f64).collect()
        }
        ServiceMapping::Weighted => {
            let wts = w.service_weights.clone().unwrap_or_else(|| vec![1.0; services]);
            let sum: f64 = wts.iter().sum();
            wts.iter().map(|x| x / sum).collect()
        }
        ServiceMapping::BySource => {
            let wts = source_weights(host_rates, services as u32, dists, mss, header);
            let sum: f64 = wts.iter().sum();
            let mut shares = vec![0.0; services];
            for (h, x) in wts.iter().enumerate() {
                shares[source_service(h as u32, services as u32) as usize] += x / sum;
            }
            shares
        }
    }
}

impl Picker<'_> {
    fn pick(&self, rng: &mut Rng) -> (u32, u32, u32) {
        use crate::config::ServiceMapping;
        let hosts = self.hosts;
        let by_rate = |rng: &mut Rng| -> u32 {
            let u = rng.uniform();
            self.by_rate.partition_point(|&c| c <= u).min(hosts as usize - 1) as u32
        };
        let (src, dst) = if let Some(e) = &self.ends {
            e.pick(rng)
        } else if let Some(cdf) = &self.by_source {
            // A source in proportion to the flows it starts, then any other
            // host (the authors' script runs one Poisson process per pair).
            let u = rng.uniform();
            let src = cdf.partition_point(|&c| c <= u).min(hosts as usize - 1) as u32;
            let mut dst = (rng.uniform() * (hosts - 1) as f64) as u32 % (hosts - 1);
            if dst >= src {
                dst += 1;
            }
            (src, dst)
        } else if self.uniform {
            let src = (rng.uniform() * hosts as f64) as u32 % hosts;
            let mut dst = (rng.uniform() * (hosts - 1) as f64) as u32 % (hosts - 1);
            if dst >= src {
                dst += 1;
            }
            (src, dst)
        } else {
            let src = by_rate(rng);
            let mut dst = by_rate(rng);
            while dst == src {
                dst = by_rate(rng);
            }
            (src, dst)
        };
        let services = self.w.services as usize;
        let service = match self.w.service_mapping {
            ServiceMapping::ByPair => {
                let pair = src as u64 * (hosts as u64 - 1) + (dst - (dst > src) as u32) as u64;
                (pair % services as u64) as u32
            }
            ServiceMapping::Weighted => {
                let u = rng.uniform();
                self.service_cdf.iter().position(|&c| u < c).unwrap_or(services - 1) as u32
            }
            ServiceMapping::BySource => source_service(src, services as u32),
        };
        (src, dst, service)
    }
}

/// Poisson arrivals sized so that every host's access link carries `load`
/// on average (headers counted); uniform random source and destination;
/// services by host pair or by weight; sizes from each service's CDF.
/// With `one_packet_share` or `rate_limited_share`, extra Poisson streams
/// of one-packet and rate-limited flows carry that part of the load over
/// the sized flows' span, each from a random stream of its own; all are
/// returned in start order.
pub fn poisson(
    w: &crate::config::WorkloadCfg,
    host_rates: &[u64],
    mss: u32,
    header: u32,
    seed: u64,
) -> Result<Vec<Arrival>, String> {
    use crate::config::ServiceMapping;
    let hosts = host_rates.len() as u32;
    let dists = size_dists(w)?;
    // How often each service is picked.
    let p_service = service_shares(w, hosts, host_rates, &dists, mss, header);
    let capacity: f64 = host_rates.iter().map(|&r| r as f64).sum();
    let ends = Endpoints::new(w, host_rates);
    // All to all, every link carries `load`; from senders to receivers,
    // the side with less capacity does (the client's link, when one
    // client fetches from many servers).
    let bottleneck = ends.as_ref().map_or(capacity, |e| e.capacity);
    let rate = flow_rate(w, &p_service, &dists, bottleneck, mss, header);
    let cumulative = |v: &[f64]| {
        let mut c = v.to_vec();
        for i in 1..c.len() {
            c[i] += c[i - 1];
        }
        c
    };
    // With unequal host links, sources and destinations are drawn in
    // proportion to link rate so that every link carries the same `load`.
    let by_rate: Vec<f64> = host_rates.iter().map(|&r| r as f64 / capacity).collect();
    let picker = Picker {
        w,
        hosts,
        ends,
        uniform: host_rates.iter().all(|&r| r == host_rates[0]),
        by_rate: cumulative(&by_rate),
        service_cdf: cumulative(&p_service),
        by_source: (w.service_mapping == ServiceMapping::BySource).then(|| {
            let wts = source_weights(host_rates, w.services, &dists, mss, header);
            let sum: f64 = wts.iter().sum();
            cumulative(&wts.iter().map(|x| x / sum).collect::<Vec<_>>())
        }),
    };
    let start = |t: f64| w.start.0 + (t * crate::units::PS_PER_S as f64) as u64;
    let mut rng = Rng::stream(seed, 0x3017_0AD5);
    let mut t = 0.0f64;
    let mut out = Vec::with_capacity(w.flows as usize);
    for _ in 0..w.flows {
        t += -(1.0 - rng.uniform()).ln() / rate;
        let (src, dst, service) = picker.pick(&mut rng);
        let size = dists[service as usize].sample(&mut rng);
        out.push(Arrival { src, dst, service, size, start: start(t), rate: None });
    }
    // The extra streams, until the last sized flow has arrived.
    let span = t;
    let mut extra = |share: f64, size: u64, app_rate: Option<u64>, purpose: u64| {
        if share <= 0.0 {
            return;
        }
        let rate = extra_rate(w, share, size as f64, bottleneck, mss, header);
        let mut rng = Rng::stream(seed, purpose);
        let mut t = -(1.0 - rng.uniform()).ln() / rate;
        while t <= span {
            let (src, dst, service) = picker.pick(&mut rng);
            out.push(Arrival { src, dst, service, size, start: start(t), rate: app_rate });
            t += -(1.0 - rng.uniform()).ln() / rate;
        }
    };
    extra(w.one_packet_share, mss as u64, None, 0x0E_9AC4);
    if let (Some(r), Some(b)) = (w.rate_limited_rate, w.rate_limited_size) {
        extra(w.rate_limited_share, b.0, Some(r.0), 0x5743_A000);
    }
    // Stable: the sized flows keep their order among equal starts.
    out.sort_by_key(|a| a.start);
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

    /// The extra streams carry their share of the offered bytes: at load
    /// 0.6 with one_packet_share = 0.1 and rate_limited_share = 0.05, the
    /// one-packet flows offer 0.06 and the streams 0.03 of each link, the
    /// sized flows the remaining 0.51, all over the sized flows' span; every
    /// one-packet flow is one full segment and every stream has its size
    /// and rate; the arrivals come in start order.
    #[test]
    fn extra_streams_carry_their_share_of_the_load() {
        let cfg = Config::from_toml(
            "[run]\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 8\nlink_rate = \"10Gbps\"\n\
             link_delay = \"1us\"\n[workload]\nkind = \"poisson\"\nload = 0.6\nflows = 20000\n\
             distribution = \"cache\"\none_packet_share = 0.1\nrate_limited_share = 0.05\n\
             rate_limited_rate = \"10Mbps\"\nrate_limited_size = \"20KB\"\n",
        )
        .unwrap();
        let w = cfg.workload.as_ref().unwrap();
        let flows = super::poisson(w, &[10_000_000_000; 8], 1460, 40, 11).unwrap();
        assert!(flows.windows(2).all(|p| p[0].start <= p[1].start));
        let wire = |f: &super::Arrival| f.size as f64 + 40.0 * (f.size as f64 / 1460.0).ceil();
        let span = crate::units::secs(flows.iter().rfind(|f| f.rate.is_none() && f.size != 1460).unwrap().start);
        let capacity = 8.0 * 10e9;
        let load = |pick: &dyn Fn(&super::Arrival) -> bool| {
            flows.iter().filter(|f| pick(f)).map(wire).sum::<f64>() * 8.0 / span / capacity
        };
        let one = load(&|f| f.rate.is_none() && f.size == 1460);
        let streams = load(&|f| f.rate.is_some());
        // Tens of thousands of equal-sized flows: within 3%.
        assert!((one / 0.06 - 1.0).abs() < 0.03, "one-packet load {one}");
        assert!((streams / 0.03 - 1.0).abs() < 0.03, "stream load {streams}");
        assert!(flows.iter().filter(|f| f.rate.is_some()).all(|f| f.size == 20_000 && f.rate == Some(10_000_000)));
        // The sized flows (cache sizes, a few of which may be 1460 B too)
        // are 20,000 and carry about 0.51 (heavy tail: within 10%).
        let sized = load(&|f| f.rate.is_none() && f.size != 1460);
        assert!((sized / 0.51 - 1.0).abs() < 0.1, "sized load {sized}");
        assert!(flows.iter().filter(|f| f.rate.is_none()).count() > 20_000 + 50_000);
    }

    /// `by-source` (the MQ-ECN authors' script): every flow of host h is in
    /// service (h + 1) mod 8, and every host offers the same load with its
    /// service's sizes, so it starts flows in inverse proportion to their
    /// mean size. With cache (0.91 MB mean) and data mining (7.47 MB) hosts
    /// (ML-ECN §IV's means), a cache host starts ≈ 8.2× as many flows as a
    /// data mining one (the means on the wire: 7.70 MB / 0.94 MB).
    #[test]
    fn by_source_services_follow_the_sender() {
        let cfg = Config::from_toml(
            "[run]\nduration = \"1s\"\n[topology]\nkind = \"star\"\nhosts = 16\nlink_rate = \"10Gbps\"\n\
             link_delay = \"1us\"\n[switch]\nqueues = 8\n[workload]\nkind = \"poisson\"\nload = 0.6\nflows = 100000\n\
             services = 8\nservice_mapping = \"by-source\"\n\
             distributions = [\"cache\", \"data_mining\", \"cache\", \"data_mining\", \"cache\", \"data_mining\", \"cache\", \"data_mining\"]\n",
        )
        .unwrap();
        let w = cfg.workload.as_ref().unwrap();
        let flows = super::poisson(w, &[10_000_000_000; 16], 1460, 40, 5).unwrap();
        assert!(flows.iter().all(|f| f.service == (f.src + 1) % 8 && f.dst != f.src));
        // Services 0, 2, 4, 6 (cache) come from hosts 7, 1, 3, 5, 9, ...:
        // odd hosts. Their flows against the even (data mining) hosts'.
        let cache = flows.iter().filter(|f| f.src % 2 == 1).count() as f64;
        let ratio = cache / (flows.len() as f64 - cache);
        let dm = |n: &str| super::wire(crate::traffic::dist::EmpiricalCdf::built_in(n).unwrap().mean(), 1460, 40);
        let want = dm("data_mining") / dm("cache");
        assert!((want - 8.2).abs() < 0.1, "{want}");
        // 100,000 flows, about 11,000 from data mining hosts: sd of the
        // ratio ≈ 1%.
        assert!((ratio / want - 1.0).abs() < 0.04, "{ratio} against {want}");
        // Every host's load: its flows' rate is load·C / (8·mean wire size),
        // so the arrivals span flows / Σ rates (an Erlang sum: sd 0.3%).
        let rate = 8.0 * 0.6 * 10e9 / 8.0 * (1.0 / dm("cache") + 1.0 / dm("data_mining"));
        let span = crate::units::secs(flows.last().unwrap().start);
        assert!((span * rate / 100_000.0 - 1.0).abs() < 0.01, "{}", span * rate / 100_000.0);
    }

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
