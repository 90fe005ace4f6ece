"""Write experiments/mlecn-fig4 ... mlecn-fig15/figure.toml: one shared sweep,
and per paper figure its panels and what the paper reports (ML-ECN §IV).

Run from the repository root: `python experiments/mlecn-fig4/generate.py
--comparators`. The claim tables below are the transcription of §IV's text;
edit them here, not in the generated files.
"""

# ruff: noqa: E501  (the claims are prose, one line each)

import sys
from pathlib import Path

COMPARATORS = "--comparators" in sys.argv  # MM-ECN and A-ECN cases
OTHERS = ["DCTCP", "MQ-ECN"] + (["MM-ECN", "A-ECN"] if COMPARATORS else [])

SWEEP = """# The sweep every ML-ECN leaf-spine figure (mlecn-fig4 to mlecn-fig15)
# draws from, so one store runs each point once for all twelve. Each figure
# sweeps the workloads it plots (here: {SCOPE}; mlecn-fig4 has all five),
# WRR and DWRR, three loads, every scheme; 50,000 flows a point (base.toml). The
# comparators put host pairs' flows on 8 equal-quantum queues by service
# (MQ-ECN's settings, which ML-ECN's authors used for every scheme); ML-ECN
# classifies by stage into 3 small, 3 medium and 2 large queues with quanta
# 4:2:1 x 1.5 KB. mlecn-fig4/NOTES.md has the set-up and the findings.
# The mean over seeds with its 95% interval on every point (docs/statistics.md);
# --quick runs the first seed.
seeds = [1, 2, 3]

[sweep]
base = "../mlecn-fig4/base.toml"
[sweep.grid]
"workload.distribution" = [{WORKLOADS}]
"switch.scheduler" = ["wrr", "dwrr"]
"workload.load" = [0.4, 0.6, 0.8]
[[sweep.case]]
label = "DCTCP"
"switch.marking" = "per-queue"
[[sweep.case]]
label = "MQ-ECN"
"switch.marking" = "mq-ecn"
"""
if COMPARATORS:
    SWEEP += """[[sweep.case]]
label = "MM-ECN"
"switch.marking" = "mm-ecn"
[[sweep.case]]
label = "A-ECN"
"switch.marking" = "a-ecn"
"""
SWEEP += """[[sweep.case]]
label = "ML-ECN"
"switch.marking" = "ml-ecn"
"switch.quantum" = ["6000B", "6000B", "6000B", "3000B", "3000B", "3000B", "1500B", "1500B"]
"switch.small_queues" = [0, 1, 2]
"switch.medium_queues" = [3, 4, 5]
"switch.large_queues" = [6, 7]
[sweep.quick]
set = { "workload.flows" = 1000 }
grid = { "workload.load" = [0.8] }
"""

WL = {
    "mix": "mix",
    "web_search": "web search",
    "cache": "cache",
    "data_mining": "data mining",
    "hadoop": "Hadoop",
}
CLS = {
    "small": "(0, 100KB]",
    "medium": "(100KB, 10MB]",
    "large": "(10MB, inf)",
    "overall": "all flows",
}
SCHED = {"wrr": "WRR", "dwrr": "DWRR"}


def sweep(workloads):
    """The figure's slice of the one ML-ECN leaf-spine sweep: the workloads it
    draws. A point's store key is its whole config, so the slices share their
    points with mlecn-fig4's whole sweep and one store runs each once; a
    figure of one or two workloads has its record as soon as those have run."""
    scope = "all five" if workloads == list(WL) else " and ".join(WL[w] for w in workloads)
    wl = ", ".join(f'"{w}"' for w in workloads)
    return SWEEP.replace("{SCOPE}", scope).replace("{WORKLOADS}", wl)


def panel(title, metric, wl, sch, ylabel, normalize=None, scale=None):
    s = f'[[panel]]\ntitle = "{title}"\nkind = "line"\nx = "workload.load"\nmetric = "{metric}"\n'
    if scale:
        s += f"args = {{ scale = {scale} }}\n"
    if normalize:
        s += f'normalize = "{normalize}"\n'
    s += f'where = {{ "workload.distribution" = "{wl}", "switch.scheduler" = "{sch}" }}\nxlabel = "load"\nylabel = "{ylabel}"\n'
    return s


def expect(
    panel, series, rule, text, source, than=None, paper=None, tolerance=None, slack=None, x=None
):
    s = f'[[expect]]\npanel = {panel}\nseries = "{series}"\n'
    if x is not None:
        s += f"x = {x}\n"
    s += f'rule = "{rule}"\n'
    if than:
        s += f'than = "{than}"\n'
    if paper is not None:
        s += f"paper = {paper}\n"
    if tolerance is not None:
        s += f"tolerance = {tolerance}\n"
    if slack is not None:
        s += f"slack = {slack}\n"
    s += f'text = "{text}"\nsource = "{source}"\n'
    return s


def gap_expect(panel, rule, text, source, than, gap):
    """ML-ECN `gap` (a fraction) below or above `than`, as the paper states it;
    'matches' within 20% of the gap either way (issue 53: ±50% let "more than
    55%" match any cut from 28% to 82%; the claims table uses the same 20%)."""
    band = f"{gap * 80:.0f}-{gap * 120:.0f}%"
    text += f"; 'matches' = a cut of {band}" if rule == "below" else f"; 'matches' = {band} above"
    return expect(panel, "ML-ECN", rule, text, source, than=than, paper=gap, tolerance=0.2)


def header(fid, fig, title, desc, section, layout):
    return (
        f'id = "{fid}"\npaper = "ML-ECN"\nfigure = "{fig}"\ntitle = "{title}"\n'
        f'description = "{desc}"\n'
        f'source = "Alanazi & Hamdaoui, Fair Packet Enqueueing and Marking in Multi-Queue Datacenter Networks (ML-ECN), {section}, {fig}"\n'
        f"layout = {layout}\n\n"
    )


def write(fid, text):
    Path(f"experiments/{fid}").mkdir(exist_ok=True)
    Path(f"experiments/{fid}/figure.toml").write_text(text)


# ---------------------------------------------------------------- FCT / throughput by class
# claims[(workload, class)] = {scheme: (gap, text)}; gap None = direction only
def fct_claims():
    c = {}
    ws_small = "ML-ECN cuts the small-flow average FCT by more than 55% against every other scheme (web search)"
    for o in OTHERS:
        c[("web_search", "small", o)] = (0.55, ws_small)
        c[("cache", "small", o)] = (
            0.60,
            "ML-ECN cuts the small-flow average FCT by more than 60% against every other scheme (cache)",
        )
    med_ws = {"A-ECN": 0.22, "MM-ECN": 0.22, "DCTCP": 0.20, "MQ-ECN": 0.18}
    med_ca = {"A-ECN": 0.18, "MM-ECN": 0.18, "DCTCP": 0.17, "MQ-ECN": 0.15}
    for o in OTHERS:
        c[("web_search", "medium", o)] = (
            med_ws[o],
            f"ML-ECN's medium-flow average FCT is ~{med_ws[o]:.0%} below {o}'s (web search)",
        )
        c[("cache", "medium", o)] = (
            med_ca[o],
            f"ML-ECN's medium-flow average FCT is ~{med_ca[o]:.0%} below {o}'s (cache)",
        )
    mix_small = {"DCTCP": 0.54, "A-ECN": 0.51, "MM-ECN": 0.51, "MQ-ECN": 0.39}
    for o in OTHERS:
        c[("mix", "small", o)] = (
            mix_small[o],
            f"ML-ECN cuts the small-flow average FCT by ~{mix_small[o]:.0%} against {o} (mix; 'up to' for all but DCTCP)",
        )
        c[("mix", "medium", o)] = (
            None,
            "ML-ECN's medium-flow average FCT is notably below every other scheme's (mix)",
        )
    for wl in ["data_mining", "hadoop"]:
        for o in OTHERS:
            c[(wl, "medium", o)] = (
                None,
                f"ML-ECN's medium-flow gain is larger than with web search and cache ({WL[wl]})",
            )
    return c


def small_dm(wl, sch, o):
    # §IV-A-3 a: vs MQ-ECN 40% (WRR) / 47% (DWRR) data mining, 44% / 52% Hadoop;
    # vs A-ECN, MM-ECN, DCTCP: more than 44% (WRR) / 52% (DWRR) for both.
    if o == "MQ-ECN":
        g = {
            ("data_mining", "wrr"): 0.40,
            ("data_mining", "dwrr"): 0.47,
            ("hadoop", "wrr"): 0.44,
            ("hadoop", "dwrr"): 0.52,
        }[(wl, sch)]
        return (
            g,
            f"ML-ECN's small-flow average FCT is up to {g:.0%} below MQ-ECN's ({WL[wl]}, {SCHED[sch]})",
        )
    g = 0.44 if sch == "wrr" else 0.52
    return (
        g,
        f"ML-ECN's small-flow average FCT is more than {g:.0%} below {o}'s ({WL[wl]}, {SCHED[sch]})",
    )


def by_class_figure(fid, fig, workloads, metric_kind, section):
    fct = metric_kind == "fct"
    panels, exps = [], []
    claims = fct_claims()
    n = 0
    for wl in workloads:
        for sch in ["wrr", "dwrr"]:
            for cls in ["small", "medium", "large"]:
                n += 1
                letter = chr(ord("a") + n - 1)
                if fct:
                    panels.append(
                        panel(
                            f"({letter}) {WL[wl]}, {SCHED[sch]}: {CLS[cls]}",
                            f"fct_{cls}_mean",
                            wl,
                            sch,
                            "FCT / DCTCP's",
                            normalize="DCTCP",
                        )
                    )
                else:
                    panels.append(
                        panel(
                            f"({letter}) {WL[wl]}, {SCHED[sch]}: {CLS[cls]}",
                            f"fct_{cls}_tput",
                            wl,
                            sch,
                            "throughput / DCTCP's",
                            normalize="DCTCP",
                        )
                    )
                for o in OTHERS:
                    if cls == "large":
                        if fct:
                            txt = "large flows: ML-ECN comparable to the others (web search and cache: about 7% worse); the issue's bar: within ~10%"
                        else:
                            txt = "large flows: ML-ECN's throughput comparable to the others' (data mining: ~6% higher)"
                        exps.append(
                            expect(n, "ML-ECN", "within", txt, section, than=o, tolerance=0.1)
                        )
                        continue
                    if fct:
                        if wl in ("data_mining", "hadoop") and cls == "small":
                            gap, txt = small_dm(wl, sch, o)
                        else:
                            gap, txt = claims[(wl, cls, o)]
                        if gap is None:
                            exps.append(
                                expect(n, "ML-ECN", "below", txt, section, than=o, slack=0.01)
                            )
                        else:
                            exps.append(gap_expect(n, "below", txt, section, o, gap))
                    else:
                        gap = TPUT_CLASS.get((wl, sch, cls, o))
                        if gap is None:
                            exps.append(
                                expect(
                                    n,
                                    "ML-ECN",
                                    "above",
                                    f"ML-ECN's {cls}-flow throughput is above {o}'s ({WL[wl]})",
                                    section,
                                    than=o,
                                    slack=0.01,
                                )
                            )
                        else:
                            txt = f"ML-ECN's {cls}-flow throughput is ~{gap:.0%} above {o}'s ({WL[wl]}, {SCHED[sch]})"
                            exps.append(gap_expect(n, "above", txt, section, o, gap))
                for o in OTHERS[1:]:
                    if fct:
                        exps.append(
                            expect(
                                n,
                                o,
                                "within",
                                f"(implied: the paper's gaps from ML-ECN to DCTCP and to {o} are alike) {o}'s {cls}-flow average FCT is within 15% of DCTCP's",
                                section,
                                than="DCTCP",
                                tolerance=0.15,
                            )
                        )
                    else:
                        exps.append(
                            expect(
                                n,
                                o,
                                "within",
                                f"(implied: ML-ECN's gains over DCTCP and over {o} are alike) {o}'s {cls}-flow throughput is within 15% of DCTCP's",
                                section,
                                than="DCTCP",
                                tolerance=0.15,
                            )
                        )
    return panels, exps, workloads


# ML-ECN §IV-B-1: mix small-flow throughput gains (WRR: A-ECN 35, MM-ECN 33, DCTCP 37, MQ-ECN 32%;
# DWRR 45, 34, 30% for three of them — the text does not say which; we read A-ECN, MM-ECN, DCTCP)
TPUT_CLASS = {}
for o, g in {"A-ECN": 0.35, "MM-ECN": 0.33, "DCTCP": 0.37, "MQ-ECN": 0.32}.items():
    TPUT_CLASS[("mix", "wrr", "small", o)] = g
for o, g in {"A-ECN": 0.45, "MM-ECN": 0.34, "DCTCP": 0.30}.items():
    TPUT_CLASS[("mix", "dwrr", "small", o)] = g
for sch in ["wrr", "dwrr"]:
    for o, g in {"A-ECN": 0.26, "MM-ECN": 0.25, "DCTCP": 0.25, "MQ-ECN": 0.21}.items():
        TPUT_CLASS[("mix", sch, "medium", o)] = g


def overall_figure(fid, fig, kind, section):
    panels, exps = [], []
    n = 0
    tput_gain = {
        "mix": 0.24,
        "web_search": 0.38,
        "cache": 0.33,
        "data_mining": 0.36,
        "hadoop": 0.34,
    }
    for sch in ["wrr", "dwrr"]:
        for wl in WL:
            n += 1
            letter = chr(ord("a") + n - 1)
            if kind == "fct":
                panels.append(
                    panel(
                        f"({letter}) {WL[wl]}, {SCHED[sch]}",
                        "fct_overall_mean",
                        wl,
                        sch,
                        "FCT / DCTCP's",
                        normalize="DCTCP",
                    )
                )
            else:
                panels.append(
                    panel(
                        f"({letter}) {WL[wl]}, {SCHED[sch]}",
                        "fct_overall_tput",
                        wl,
                        sch,
                        "throughput / DCTCP's",
                        normalize="DCTCP",
                    )
                )
            for o in OTHERS:
                if kind == "fct":
                    if wl == "mix":
                        gap = 0.15 if o == "MQ-ECN" else 0.20
                        txt = f"ML-ECN's overall average FCT is {'up to 15%' if o == 'MQ-ECN' else '20%'} below {o}'s (mix)"
                        exps.append(gap_expect(n, "below", txt, section, o, gap))
                    else:
                        exps.append(
                            expect(
                                n,
                                "ML-ECN",
                                "below",
                                f"ML-ECN has the lowest overall average FCT for every workload and both schedulers ({WL[wl]})",
                                section,
                                than=o,
                                slack=0.01,
                            )
                        )
                else:
                    g = tput_gain[wl]
                    txt = f"ML-ECN's average throughput is more than {g:.0%} above the other schemes' ({WL[wl]})"
                    exps.append(gap_expect(n, "above", txt, section, o, g))
            for o in OTHERS[1:]:
                what = "overall average FCT" if kind == "fct" else "average throughput"
                exps.append(
                    expect(
                        n,
                        o,
                        "within",
                        f"(implied: ML-ECN's gains over every scheme are alike) {o}'s {what} is within 15% of DCTCP's",
                        section,
                        than="DCTCP",
                        tolerance=0.15,
                    )
                )
    return panels, exps, list(WL)


def marks_figure(fid, fig, workloads, section):
    panels, exps = [], []
    n = 0
    for wl in workloads:
        for sch in ["wrr", "dwrr"]:
            for cls in ["small", "medium", "large"]:
                n += 1
                letter = chr(ord("a") + n - 1)
                panels.append(
                    panel(
                        f"({letter}) {WL[wl]}, {SCHED[sch]}: {CLS[cls]}",
                        f"fct_{cls}_marks",
                        wl,
                        sch,
                        "CE-marked packets (thousands)",
                        scale=0.001,
                    )
                )
                if cls == "small":
                    exps.append(
                        expect(
                            n,
                            "ML-ECN",
                            "value",
                            "ML-ECN marks no packet of small flows",
                            section,
                            paper=0.0,
                            tolerance=0.0,
                        )
                    )
                    for o in OTHERS:
                        exps.append(
                            expect(
                                n,
                                o,
                                "above",
                                f"{o} marks small flows' packets (ML-ECN none)",
                                section,
                                than="ML-ECN",
                            )
                        )
                    continue
                # ML-ECN's own point, against DCTCP (the same claim seen from it).
                fewer = wl in ("web_search", "cache") and cls == "large"
                exps.append(
                    expect(
                        n,
                        "ML-ECN",
                        "below" if fewer else "above",
                        f"ML-ECN marks {'fewer' if fewer else 'more'} {cls}-flow packets than the other schemes ({WL[wl]}): {'below' if fewer else 'above'} DCTCP",
                        section,
                        than="DCTCP",
                        slack=0.01,
                    )
                )
                if fewer:
                    for o in OTHERS:
                        exps.append(
                            expect(
                                n,
                                o,
                                "above",
                                f"ML-ECN marks fewer large-flow packets than the others ({WL[wl]}): {o} above it",
                                section,
                                than="ML-ECN",
                                slack=0.01,
                            )
                        )
                else:
                    for o in OTHERS:
                        exps.append(
                            expect(
                                n,
                                o,
                                "below",
                                f"the others mark fewer {cls}-flow packets than ML-ECN ({WL[wl]}): {o} below it",
                                section,
                                than="ML-ECN",
                                slack=0.01,
                            )
                        )
    return panels, exps, workloads


def drop_figure(fid, section):
    panels, exps = [], []
    n = 0
    for sch in ["wrr", "dwrr"]:
        for wl in WL:
            n += 1
            letter = chr(ord("a") + n - 1)
            panels.append(
                panel(
                    f"({letter}) {WL[wl]}, {SCHED[sch]}",
                    "drop_rate",
                    wl,
                    sch,
                    "packet drop rate (per 1,000 packets)",
                    scale=1000,
                )
            )
            exps.append(
                expect(
                    n,
                    "DCTCP",
                    "above",
                    f"DCTCP has the highest drop rate ({WL[wl]})",
                    section,
                    than="ML-ECN",
                    slack=0.01,
                )
            )
            exps.append(
                expect(
                    n,
                    "ML-ECN",
                    "below",
                    f"ML-ECN drops much less than DCTCP ({WL[wl]})",
                    section,
                    than="DCTCP",
                    slack=0.01,
                )
            )
            for o in [x for x in OTHERS if x != "DCTCP"]:
                if o == "A-ECN":
                    exps.append(
                        expect(
                            n,
                            o,
                            "above",
                            f"ML-ECN drops much less than A-ECN ({WL[wl]})",
                            section,
                            than="ML-ECN",
                            slack=0.01,
                        )
                    )
                elif wl in ("data_mining", "hadoop"):
                    exps.append(
                        expect(
                            n,
                            o,
                            "within",
                            f"ML-ECN, MM-ECN and MQ-ECN all drop little ({WL[wl]}): {o} within 50% of ML-ECN",
                            section,
                            than="ML-ECN",
                            tolerance=0.5,
                        )
                    )
                elif wl == "mix":
                    exps.append(
                        expect(
                            n,
                            o,
                            "below",
                            "at 80% load ML-ECN drops slightly more than MQ-ECN and MM-ECN (mix)",
                            section,
                            than="ML-ECN",
                            x=0.8,
                            slack=0.01,
                        )
                    )
                    exps.append(
                        expect(
                            n,
                            o,
                            "within",
                            f"below 80% load ML-ECN's drop rate is close to {o}'s (mix)",
                            section,
                            than="ML-ECN",
                            x=[0.4, 0.6],
                            tolerance=0.5,
                        )
                    )
                elif o == "MQ-ECN":
                    exps.append(
                        expect(
                            n,
                            o,
                            "below",
                            f"MQ-ECN drops less than ML-ECN ({WL[wl]}: it lowers every queue's threshold early)",
                            section,
                            than="ML-ECN",
                            slack=0.01,
                        )
                    )
                else:
                    exps.append(
                        expect(
                            n,
                            o,
                            "above",
                            f"ML-ECN drops less than MM-ECN ({WL[wl]})",
                            section,
                            than="ML-ECN",
                            slack=0.01,
                        )
                    )
    return panels, exps, list(WL)


def emit(fid, fig, title, desc, section, layout, panels, exps, workloads):
    write(
        fid,
        header(fid, fig, title, desc, section, layout)
        + sweep(workloads)
        + "\n"
        + "\n".join(panels)
        + "\n# ---------------------------------------------------------------- what the paper reports\n"
        + "\n".join(exps),
    )


emit(
    "mlecn-fig4",
    "Fig. 4",
    "Leaf-spine: overall average FCT, five workloads",
    "144-host 10G leaf-spine, WRR and DWRR; overall mean FCT vs load for mix, web search, cache, data mining, Hadoop",
    "§IV-A",
    [2, 5],
    *overall_figure("mlecn-fig4", "Fig. 4", "fct", "§IV-A"),
)
emit(
    "mlecn-fig5",
    "Fig. 5",
    "Leaf-spine: FCT by flow size, mix workload",
    "144-host 10G leaf-spine, WRR and DWRR; small/medium/large mean FCT vs load, mix workload",
    "§IV-A-1",
    [2, 3],
    *by_class_figure("mlecn-fig5", "Fig. 5", ["mix"], "fct", "§IV-A-1"),
)
emit(
    "mlecn-fig6",
    "Fig. 6",
    "Leaf-spine: FCT by flow size, web search and cache",
    "144-host 10G leaf-spine, WRR and DWRR; small/medium/large mean FCT vs load, web search and cache",
    "§IV-A-2",
    [4, 3],
    *by_class_figure("mlecn-fig6", "Fig. 6", ["web_search", "cache"], "fct", "§IV-A-2"),
)
emit(
    "mlecn-fig7",
    "Fig. 7",
    "Leaf-spine: FCT by flow size, data mining and Hadoop",
    "144-host 10G leaf-spine, WRR and DWRR; small/medium/large mean FCT vs load, data mining and Hadoop",
    "§IV-A-3",
    [4, 3],
    *by_class_figure("mlecn-fig7", "Fig. 7", ["data_mining", "hadoop"], "fct", "§IV-A-3"),
)
emit(
    "mlecn-fig8",
    "Fig. 8",
    "Leaf-spine: average throughput, five workloads",
    "144-host 10G leaf-spine, WRR and DWRR; mean per-flow throughput (size/FCT) vs load, five workloads",
    "§IV-B",
    [2, 5],
    *overall_figure("mlecn-fig8", "Fig. 8", "tput", "§IV-B"),
)
emit(
    "mlecn-fig9",
    "Fig. 9",
    "Leaf-spine: throughput by flow size, mix workload",
    "144-host 10G leaf-spine, WRR and DWRR; per-class mean throughput vs load, mix workload",
    "§IV-B-1",
    [2, 3],
    *by_class_figure("mlecn-fig9", "Fig. 9", ["mix"], "tput", "§IV-B-1"),
)
emit(
    "mlecn-fig10",
    "Fig. 10",
    "Leaf-spine: throughput by flow size, web search and cache",
    "144-host 10G leaf-spine, WRR and DWRR; per-class mean throughput vs load, web search and cache",
    "§IV-B-2",
    [4, 3],
    *by_class_figure("mlecn-fig10", "Fig. 10", ["web_search", "cache"], "tput", "§IV-B-2"),
)
emit(
    "mlecn-fig11",
    "Fig. 11",
    "Leaf-spine: throughput by flow size, data mining and Hadoop",
    "144-host 10G leaf-spine, WRR and DWRR; per-class mean throughput vs load, data mining and Hadoop",
    "§IV-B-3",
    [4, 3],
    *by_class_figure("mlecn-fig11", "Fig. 11", ["data_mining", "hadoop"], "tput", "§IV-B-3"),
)
emit(
    "mlecn-fig12",
    "Fig. 12",
    "Leaf-spine: ECN-marked packets by flow size, mix workload",
    "144-host 10G leaf-spine, WRR and DWRR; CE-marked packets per flow class vs load, mix workload",
    "§IV-C-1",
    [2, 3],
    *marks_figure("mlecn-fig12", "Fig. 12", ["mix"], "§IV-C-1"),
)
emit(
    "mlecn-fig13",
    "Fig. 13",
    "Leaf-spine: ECN-marked packets by flow size, web search and cache",
    "144-host 10G leaf-spine, WRR and DWRR; CE-marked packets per flow class vs load, web search and cache",
    "§IV-C-2",
    [4, 3],
    *marks_figure("mlecn-fig13", "Fig. 13", ["web_search", "cache"], "§IV-C-2"),
)
emit(
    "mlecn-fig14",
    "Fig. 14",
    "Leaf-spine: ECN-marked packets by flow size, data mining and Hadoop",
    "144-host 10G leaf-spine, WRR and DWRR; CE-marked packets per flow class vs load, data mining and Hadoop",
    "§IV-C-3",
    [4, 3],
    *marks_figure("mlecn-fig14", "Fig. 14", ["data_mining", "hadoop"], "§IV-C-3"),
)
emit(
    "mlecn-fig15",
    "Fig. 15",
    "Leaf-spine: packet drop rate",
    "144-host 10G leaf-spine, WRR and DWRR; packets dropped per packet sent vs load, five workloads",
    "§IV-D",
    [2, 5],
    *drop_figure("mlecn-fig15", "§IV-D"),
)
