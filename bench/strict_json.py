"""Strict JSON parsing cost: core.parsers.loads_strict against plain json.loads.

Run by hand from the repository root:  .venv/bin/python bench/strict_json.py [--rounds N]

Three bodies: a typical gate call (~0.3 KB), a large clarification with many fields
(~20 KB), and a 1 MB tool result. Each figure is the best of several rounds of
repeated parses, in microseconds per body; the ratio is what strictness costs.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.parsers import loads_strict  # noqa: E402


def gate_call() -> bytes:
    return json.dumps(
        {
            "tool_call_id": "call_01HZY3",
            "step_id": "step-4",
            "tool": "prescribe_medication",
            "op": "create",
            "args": {
                "patient_id": "p-1042",
                "drug": "amoxicillin",
                "dose_mg": 500,
                "route": "oral",
                "frequency": "tid",
                "days": 7,
                "notes": "Penicillin allergy ruled out.",
            },
            "metadata": {"plan": "auto", "mutating": True},
        }
    ).encode()


def clarification() -> bytes:
    missing = [
        {
            "name": f"field_{i}",
            "type": "string",
            "hint": {"enum": [f"option {j}" for j in range(8)], "label": f"Field {i} — pick one"},
        }
        for i in range(120)
    ]
    return json.dumps(
        {
            "tool_call_id": "call-9",
            "step_id": "s-9",
            "tool": "book_appointment",
            "message": "Which slot and clinic?",
            "missing": missing,
        },
        ensure_ascii=False,
    ).encode()


def tool_result() -> bytes:
    rows = [
        {
            "id": i,
            "code": f"LOINC-{i:05d}",
            "value": i * 0.25,
            "unit": "mmol/L",
            "flag": i % 7 == 0,
            "comment": "Ré-analysé après hémolyse" if i % 11 == 0 else None,
        }
        for i in range(9000)
    ]
    return json.dumps({"output": {"rows": rows}, "is_error": False}, ensure_ascii=False).encode()


def best_microseconds(parse, body: bytes, rounds: int, volume: int) -> float:
    """The best of `rounds` rounds, each parsing `body` until about `volume` bytes were parsed."""
    repeat = max(1, volume // len(body))
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            parse(body)
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="one parse of each: checks the bench still runs")
    options = parser.parse_args()
    volume = 2_000_000
    if options.smoke:
        options.rounds, volume = 1, 1
    print(
        f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"best of {options.rounds} rounds"
    )
    print(f"{'body':<14}{'size':>10}{'json.loads':>14}{'loads_strict':>15}{'ratio':>8}")
    for name, body in [("gate call", gate_call()), ("clarification", clarification()), ("tool result", tool_result())]:
        assert loads_strict(body) == json.loads(body)
        plain = best_microseconds(json.loads, body, options.rounds, volume)
        strict = best_microseconds(loads_strict, body, options.rounds, volume)
        print(f"{name:<14}{len(body):>9,}B{plain:>12.1f}µs{strict:>13.1f}µs{strict / plain:>7.2f}x")


if __name__ == "__main__":
    main()
