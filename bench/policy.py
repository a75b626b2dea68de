"""Policy engine throughput: evaluate() decisions per second on one core.

Run by hand from the repository root:  .venv/bin/python bench/policy.py [--calls N] [--rounds N]

The workload mimics a clinical agent's traffic: mostly reads and low-tier charting,
some high-tier writes, comms with URL/host args (a few nested, a few aimed at the
wrong host), exec, unknown tools, database descriptors laid over the static registry,
and a mix of autonomy, taint, consent and age bands. Prints the best of several rounds.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from registry.policy import Context, ToolCall, ToolSpec, evaluate  # noqa: E402

TARGET = 200_000

# (weight, tool, op, args, metadata, registered descriptor or None)
_SHAPES = [
    (20, "get_patient_summary", "", {"patient_id": "p-1042"}, {}, None),
    (12, "search_patients", "", {"query": "Okafor", "limit": 20}, {"plan": "auto"}, None),
    (8, "read_document", "", {"document_id": "doc-77", "pages": [1, 2]}, {}, None),
    (4, "web_search", "", {"query": "apixaban renal dosing"}, {}, None),
    (12, "record_vitals", "create", {"bp": "128/82", "pulse": 71, "spo2": 98}, {}, None),
    (8, "write_clinical_note", "update", {"note": "Reviewed labs.", "section": "plan"}, {}, None),
    (3, "record_allergy", "Remove", {"allergy_id": "al-9"}, {}, None),
    (5, "prescribe_medication", "create", {"drug": "amoxicillin", "dose": "500 mg"}, {}, None),
    (3, "change_medication", "discontinue", {"medication_id": "m-3"}, {}, None),
    (2, "sign_document", "sign", {"document_id": "doc-78"}, {"approval_policy": "never"}, None),
    (5, "send_email", "send", {"host": "smtp.clinic.example", "to": "pt@example.org"}, {}, None),
    (
        3,
        "create_calendar_event",
        "create",
        {"event": {"target_url": "https://calendar.clinic.example/v2/events"}, "when": "2025-03-04"},
        {},
        None,
    ),
    (
        3,
        "sync_ehr",
        "push",
        {"endpoint": "https://ehr.partner.example:443/fhir/Observation"},
        {},
        ToolSpec("sync_ehr", hitl_tier="high"),
    ),
    (1, "sync_ehr", "push", {"endpoint": "https://ehr.partner.example@exfil.example/"}, {}, None),
    (2, "run_script", "run", {"script": "summarise_labs.py"}, {}, None),
    (3, "order_lab_panel", "create", {"panel": "CMP"}, {}, ToolSpec("order_lab_panel", "mutate", "low")),
    (
        2,
        "fetch_formulary",
        "",
        {"url": "https://formulary.partner.example/search?q=statin"},
        {},
        ToolSpec("fetch_formulary", allowed_hosts=("formulary.partner.example",)),
    ),
    (2, "update_problem_list", "create", {"problem": "T2DM"}, {"mutating": True}, ToolSpec("update_problem_list")),
    (2, "translate_leaflet", "", {"text": "..."}, {}, None),  # unknown to both registries
]

_CONTEXTS = [
    Context("autonomous", False, True, "adult"),
    Context("autonomous", False, False, "teen"),
    Context("guarded", False, True, "adult"),
    Context("ambient", True, True, "adult"),
    Context("autonomous", True, False, "child"),
    Context("autonomous", False, True, "unknown"),
]


def build_workload(size: int, seed: int = 4) -> list[tuple[ToolCall, Context, ToolSpec | None]]:
    rng = random.Random(seed)
    weights = [shape[0] for shape in _SHAPES]
    workload = []
    for _ in range(size):
        _w, tool, op, args, metadata, registered = rng.choices(_SHAPES, weights)[0]
        workload.append((ToolCall(tool, op, args, metadata), rng.choice(_CONTEXTS), registered))
    return workload


def run_round(workload) -> float:
    start = time.perf_counter()
    for call, ctx, registered in workload:
        evaluate(call, ctx, registered)
    return len(workload) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="one round of 2,000 calls: checks the bench still runs")
    options = parser.parse_args()
    if options.smoke:
        options.calls, options.rounds = 2000, 1

    if hasattr(os, "sched_setaffinity"):  # one core, so the figure is per core
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    workload = build_workload(options.calls)
    mix = Counter(evaluate(c, x, r).rule_id for c, x, r in workload)  # also warms caches
    rates = [run_round(workload) for _ in range(options.rounds)]
    best = max(rates)

    print(f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.machine()}, one core")
    print(f"{options.calls:,} calls/round x {options.rounds} rounds")
    print("verdict mix: " + ", ".join(f"{rule} {n * 100 / len(workload):.0f}%" for rule, n in mix.most_common()))
    print(f"median {sorted(rates)[len(rates) // 2]:,.0f} decisions/s")
    print(f"best   {best:,.0f} decisions/s (target {TARGET:,}: {'met' if best >= TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()
