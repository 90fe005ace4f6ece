"""ecnlab advise for PIE and DualPI2 (issue 55): their RFCs' times scaled to
the RTT, worked out by hand, equal to what the engine's recipes fill, and a
note where the buffer cannot hold the RFCs' defaults."""

from __future__ import annotations

import pytest

from ecnlab.advise import advise, format_advice
from ecnlab.advise_aqm import aqm_settings, fmt_duration
from ecnlab.runner import resolve

STAR = {
    "run": {"duration": "1ms"},
    "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps"},
    "flows": [{"src": 0, "dst": 1}],
}


def settings(scheme: str, rtt_s: float) -> dict[str, str]:
    return dict(next(s for s in aqm_settings(rtt_s) if s.scheme == scheme).settings)


def test_values_at_a_hundred_microseconds() -> None:
    # RTT / 100 ms = 1/1000. PIE (RFC 8033 §5.2): 15 ms -> 15 us, 150 ms -> 150 us,
    # α 0.125 -> 125, β 1.25 -> 1,250.
    assert settings("pie", 100e-6) == {
        "switch.marking": "pie",
        "switch.pie_target": "15us",
        "switch.pie_tupdate": "15us",
        "switch.pie_max_burst": "150us",
        "switch.pie_alpha": "125",
        "switch.pie_beta": "1250",
    }
    # DualPI2 (RFC 9332 A.1, RTT_max = 100 us): target 0.15 × 100 us = 15 us,
    # T_update = min(15, 33.3) us, α = 0.1 × 15e-6 / 1e-8 = 150, β = 0.3 / 1e-4 =
    # 3,000; the ramp from 100/7 = 14.286 us over 100/14 = 7.143 us.
    assert settings("dualpi2", 100e-6) == {
        "switch.qdisc": "dualpi2",
        "switch.dualpi2_target": "15us",
        "switch.dualpi2_tupdate": "15us",
        "switch.dualpi2_alpha": "150",
        "switch.dualpi2_beta": "3000",
        "switch.dualpi2_min_th": "14286ns",
        "switch.dualpi2_range": "7143ns",
    }
    assert fmt_duration(1.5) == "1500ms" and fmt_duration(2e-12) == "1ns"


@pytest.mark.parametrize("link_us", [25.0, 21.3, 2.5])
def test_advise_gives_what_the_recipes_fill(link_us: float) -> None:
    # A star's base RTT is 4 link delays: 100, 85.2 and 10 us.
    rtt = 4 * link_us * 1e-6
    for scheme in ("pie", "dualpi2"):
        config = {**STAR, "topology": {**STAR["topology"], "link_delay": f"{link_us}us"}}
        config["switch"] = {"recipe": scheme}
        sw = resolve(config)["switch"]
        for key, value in settings(scheme, rtt).items():
            got = sw[key.split(".", 1)[1]]
            if key.endswith(("alpha", "beta")):
                assert got == pytest.approx(float(value), rel=1e-5), (scheme, key)
            else:
                assert got == value, (scheme, key)


def test_a_data_centre_buffer_cannot_hold_the_rfcs_defaults() -> None:
    # 300 KB at 10 Gbps holds 300,000 × 8 / 1e10 = 240 us: below 800 us and 15 ms.
    a = advise("10Gbps", "100us", buffer="300KB")
    notes = [w for w in a.warnings if "RFC 8033" in w]
    assert len(notes) == 1 and "holds 240 us" in notes[0]
    text = format_advice(a)
    assert "--set switch.recipe=pie" in text and "--set switch.recipe=dualpi2" in text
    # The RFCs' own network (bench/pie_star.toml): 20 MB at 1 Gbps holds 160 ms.
    assert not [w for w in advise("1Gbps", "10ms", buffer="20MB").warnings if "RFC" in w]
    # A buffer of 10 KB holds 8 us at 10 Gbps: even the scaled 15 us target does not fit;
    # DualPI2's ramp starts at 14.3 us, also beyond.
    small = advise("10Gbps", "100us", buffer="10KB").warnings
    assert any(w.startswith("even pie's scaled values need 15 us") for w in small)
    assert any(w.startswith("even dualpi2's scaled values need 14.29 us") for w in small)
