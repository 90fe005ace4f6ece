// A DCTCP permutation on htsim's k-ary fat-tree, driven from a file of
// (src, dst) pairs, for bench/htsim_permutation.py. Written for ecnlab; it
// only calls htsim's library (libhtsim.a and the datacenter objects of an
// htsim build) and is compiled against a build the user points at.
//
// The network is the one htsim's DCTCP examples use: FatTreeTopology with
// ECN queues (DCTCP marking at dequeue, K = 15 packets, fixed in htsim's
// alloc_queue), 1 us per link, one path per flow. By default a flow's path
// is drawn uniformly from the shortest paths with rand() (seeded here) and
// its ACKs come back the same way, as htsim's example mains do; a flow line
// may instead name the paths, as indices into FatTreeTopology's
// get_bidir_paths(src, dst) and get_bidir_paths(dst, src) lists.
//
// DCTCP: htsim's DCTCPSrc by default (-cut every-window). At the end of
// every window it updates alpha and, whenever alpha > 0, cuts cwnd by
// alpha/2, marks seen in that window or not. -cut marked uses PaperDctcp
// below instead, which cuts only in a window that saw ECN-Echo, as the
// DCTCP paper (Alizadeh et al., SIGCOMM 2010, §3.1) and ecnlab do.
//
// Usage: dctcp_permutation -perm FILE -end MS -seed N [-q PKTS]
//        [-ssthresh PKTS] [-linkspeed MBPS] [-cut every-window|marked]
// FILE: "Nodes N" then one line per flow, "src->dst" or
// "src->dst path P ack Q" (htsim's connection-matrix syntax for the pair,
// without starts or sizes: every flow is long-lived).
// Prints one line of key=value pairs (see the end of main).

#include <sys/time.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "clock.h"
#include "config.h"
#include "dctcp.h"
#include "ecn.h"
#include "eventlist.h"
#include "fat_tree_topology.h"
#include "network.h"
#include "tcp.h"

// Globals htsim's datacenter objects expect their main file to define.
uint32_t RTT = 1;
int DEFAULT_NODES = 128;
EventList eventlist;

// DCTCP with the paper's reaction: alpha is the EWMA (g = 1/16) of the
// fraction of ACKs with ECN-Echo per window, and cwnd shrinks by alpha/2 at
// the end of a window only if that window saw ECN-Echo. Everything else
// (window accounting, slow-start exit on the first echo, loss reaction) is
// as in htsim's DCTCPSrc, so the two differ in that one rule.
class PaperDctcp : public TcpSrc {
public:
    explicit PaperDctcp(EventList& ev) : TcpSrc(NULL, NULL, ev) {
        _window = 2 * Packet::data_packet_size();
        _rto = timeFromMs(10);
    }
    virtual void deflate_window() {
        _acks = _echoes = 0;
        _ssthresh = max(_cwnd / 2, (uint32_t)(2 * _mss));
        _window = _cwnd;
    }
    virtual void receivePacket(Packet& pkt) {
        _acks++;
        if (pkt.flags() & ECN_ECHO) {
            _echoes++;
            _ssthresh = min(_ssthresh, _cwnd);  // leave slow start
        }
        if (_acks * _mss >= _window) {
            _alpha = (1 - 1.0 / 16) * _alpha + (double)_echoes / _acks / 16;
            if (_echoes > 0) {
                _cwnd = max((uint32_t)(_cwnd * (1 - _alpha / 2)), (uint32_t)_mss);
                _ssthresh = _cwnd;
            }
            _acks = _echoes = 0;
            _window = _cwnd;
        }
        TcpSrc::receivePacket(pkt);
    }

private:
    uint32_t _window, _acks = 0, _echoes = 0;
    double _alpha = 0;
};

static void usage(const char* why) {
    std::cerr << "dctcp_permutation: " << why << "\n"
              << "usage: dctcp_permutation -perm FILE -end MS -seed N [-q PKTS] [-ssthresh PKTS]"
                 " [-linkspeed MBPS] [-cut every-window|marked]\n";
    std::exit(2);
}

static double wall_now() {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}

int main(int argc, char** argv) {
    std::string perm_file;
    double end_ms = -1;
    long seed = -1;
    int queue_pkts = 100;  // 150 KB per port with 1500-byte packets
    int ssthresh_pkts = 15;  // htsim's DCTCP permutation example's default
    double linkspeed_mbps = 10000;
    bool paper_cut = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc) usage(("missing value after " + a).c_str());
        std::string v = argv[++i];
        if (a == "-perm") perm_file = v;
        else if (a == "-end") end_ms = std::stod(v);
        else if (a == "-seed") seed = std::stol(v);
        else if (a == "-q") queue_pkts = std::stoi(v);
        else if (a == "-ssthresh") ssthresh_pkts = std::stoi(v);
        else if (a == "-linkspeed") linkspeed_mbps = std::stod(v);
        else if (a == "-cut") {
            if (v != "every-window" && v != "marked") usage("-cut takes every-window or marked");
            paper_cut = v == "marked";
        }
        else usage(("unknown option " + a).c_str());
    }
    if (perm_file.empty() || end_ms <= 0 || seed < 0) usage("-perm, -end and -seed are required");

    // 1500 bytes on the wire per data packet, ACKs 40 (htsim counts no
    // headers: the whole packet is the segment).
    Packet::set_packet_size(1500);
    eventlist.setEndtime(timeFromMs(end_ms));
    srand(seed);

    std::ifstream in(perm_file);
    if (!in) usage(("cannot read " + perm_file).c_str());
    uint32_t nodes = 0;
    struct FlowLine {
        uint32_t src, dst;
        int path, ack;  // -1: draw at random
    };
    std::vector<FlowLine> flows;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (line.compare(0, 6, "Nodes ") == 0) {
            nodes = std::stoul(line.substr(6));
            continue;
        }
        size_t arrow = line.find("->");
        if (arrow == std::string::npos) continue;  // "Connections N" and the like
        std::istringstream words(line.substr(arrow + 2));
        FlowLine f = {(uint32_t)std::stoul(line.substr(0, arrow)), 0, -1, -1};
        words >> f.dst;
        std::string key;
        int value;
        while (words >> key >> value) {
            if (key == "path") f.path = value;
            else if (key == "ack") f.ack = value;
            else usage(("unknown word in a flow line: " + key).c_str());
        }
        flows.push_back(f);
    }
    if (nodes == 0 || flows.empty()) usage("the permutation file needs a Nodes line and src->dst lines");

    FatTreeTopology* top = new FatTreeTopology(nodes, speedFromMbps(linkspeed_mbps), memFromPkt(queue_pkts), NULL,
                                               &eventlist, NULL, ECN, 0);
    // htsim checks retransmission timers by scanning every 10 ms.
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    std::vector<TcpSrc*> srcs;
    std::vector<TcpSink*> sinks;
    for (size_t f = 0; f < flows.size(); f++) {
        uint32_t s = flows[f].src, d = flows[f].dst;
        if (s >= nodes || d >= nodes || s == d) usage("a flow names a host that does not exist, or itself");
        TcpSrc* src = paper_cut ? (TcpSrc*)new PaperDctcp(eventlist) : (TcpSrc*)new DCTCPSrc(NULL, NULL, eventlist);
        TcpSink* sink = new TcpSink();
        src->set_ssthresh(ssthresh_pkts * Packet::data_packet_size());
        scanner.registerTcp(*src);
        vector<const Route*>* out = top->get_bidir_paths(s, d, false);
        vector<const Route*>* back = top->get_bidir_paths(d, s, false);
        uint32_t choice = rand() % out->size();
        uint32_t path = flows[f].path < 0 ? choice : flows[f].path;
        uint32_t ack = flows[f].ack < 0 ? choice : flows[f].ack;
        if (path >= out->size() || ack >= back->size()) usage("a path index beyond the flow's paths");
        // htsim's TCP routes end at the endpoint that receives.
        Route* routeout = new Route(*out->at(path));
        routeout->push_back(sink);
        Route* routein = new Route(*back->at(ack));
        routein->push_back(src);
        src->connect(*routeout, *routein, *sink, 0);
        srcs.push_back(src);
        sinks.push_back(sink);
    }

    // Time the event loop only, as ecnlab's summary does.
    double t0 = wall_now();
    uint64_t events = 0;
    while (eventlist.doNextEvent()) events++;
    double wall = wall_now() - t0;

    uint64_t delivered = 0, sent = 0, drops = 0;
    for (size_t f = 0; f < flows.size(); f++) {
        // _cumulative_ack is the last in-order byte (sequence numbers
        // start at 1, so it counts in-order bytes).
        delivered += sinks[f]->_cumulative_ack;
        sent += srcs[f]->_packets_sent / srcs[f]->_mss;
        drops += srcs[f]->_drops;
    }
    double sim_s = end_ms / 1e3;
    std::cout << "htsim flows=" << flows.size() << " goodput_gbps=" << delivered * 8.0 / sim_s / 1e9
              << " delivered_bytes=" << delivered << " data_packets_sent=" << sent
              << " data_packets_delivered=" << delivered / Packet::data_packet_size()
              << " fast_retransmits=" << drops << " events=" << events << " wall_s=" << wall
              << " sim_s=" << sim_s << std::endl;
    return 0;
}
