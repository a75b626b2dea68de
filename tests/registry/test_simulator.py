"""The policy simulator (issue 10): the admin page answers exactly what the engine answers, on the whole matrix."""

import json
from itertools import product

import pytest

from core.parsers import MAX_JSON_DEPTH
from registry.models import ToolDescriptor
from registry.policy import STATIC_REGISTRY, AgeBand, Autonomy, Context, evaluate
from registry.policy import ToolCall as PolicyCall
from tests.governance.test_admin import admin_client
from tests.helpers.approval_loop import gate
from tests.helpers.runs import open_executing_run

SIMULATOR = "/admin/registry/tooldescriptor/simulator/"

# Registry rows that exercise every resolution step next to the static catalog.
EXTRA_ROWS = {
    "legacy_write": {"metadata": {"mutating": True}},  # step 3: metadata says mutating
    "plain_lookup": {},  # step 4: registered with nothing -> read
    "fax_letter": {"policy_class": "comms", "allowed_hosts": ["fax.example"]},
    "bulk_note": {"policy_class": "mutate", "hitl_tier": "low"},
    "send_email": {"policy_class": "comms", "allowed_hosts": ["mail.other.example"]},  # overrides the static hosts
    "record_vitals": {"policy_class": "mutate", "hitl_tier": "high"},  # overrides the static tier
}
# (op, args, client metadata): destructive and not, egress allowed and refused, step-3 promotion.
CALLS = [
    ("update", {}, {}),
    ("delete", {"note": "x"}, {}),
    ("send", {"url": "https://fax.example/in"}, {}),
    ("send", {"to": "someone@evil.example"}, {"mutating": True}),
]
CONTEXTS = {Context(a, t, c, b) for a, t, c, b in product(Autonomy, (False, True), (False, True), AgeBand)}


@pytest.fixture
def registry(catalog):
    for name, fields in EXTRA_ROWS.items():
        ToolDescriptor.objects.update_or_create(
            name=name, defaults={"policy_class": None, "hitl_tier": None, "allowed_hosts": [], "metadata": {}, **fields}
        )


def query(tool, op="", args=None, metadata=None, **ctx):
    return {
        "tool": tool,
        "op": op,
        "autonomy": ctx.get("autonomy", "autonomous"),
        "age_band": ctx.get("age_band", "adult"),
        "args": json.dumps(args or {}),
        "metadata": json.dumps(metadata or {}),
        **({"tainted": "on"} if ctx.get("tainted") else {}),
        **({"consent": "on"} if ctx.get("consent") else {}),
    }


def row_spec(tool):
    """The registry row as the gate loads it."""
    row = ToolDescriptor.objects.filter(name=tool).first()
    return row.to_spec() if row is not None else None


def engine(tool, op, args, metadata, ctx, registered=None):
    """The engine called directly."""
    return evaluate(
        PolicyCall(tool=tool, op=op, args=args, metadata=metadata),
        ctx,
        registered if registered is not None else row_spec(tool),
    )


def test_the_simulator_agrees_with_the_engine_on_the_whole_matrix(gina, registry):
    http = admin_client(gina)
    tools = sorted(set(STATIC_REGISTRY) | set(EXTRA_ROWS))
    checked = 0
    for tool, (op, args, metadata) in product(tools, CALLS):
        response = http.get(SIMULATOR, query(tool, op, args, metadata))
        assert response.status_code == 200
        table = response.context["result"]["table"]
        assert {ctx for ctx, _ in table.rows} == CONTEXTS  # every context of the matrix, once
        assert len(table.rows) == len(CONTEXTS)
        assert [destructive for _, destructive in table.ops] == [op == "delete", op != "delete"]
        registered = row_spec(tool)
        for ctx, verdicts in table.rows:
            for (table_op, _), verdict in zip(table.ops, verdicts, strict=True):
                assert verdict == engine(tool, table_op, args, metadata, ctx, registered), (tool, table_op, ctx)
                checked += 1
        top = response.context["result"]["verdict"]
        assert top == engine(tool, op, args, metadata, Context("autonomous", False, False, "adult"))
        assert top.rule_id.encode() in response.content
    assert checked == len(tools) * len(CALLS) * len(CONTEXTS) * 2


def test_a_catalog_tool_without_a_registry_row_is_simulated_from_the_catalog(gina, db):
    response = admin_client(gina).get(SIMULATOR, query("prescribe_medication"))
    assert response.context["result"]["registered"] is None
    assert response.context["result"]["verdict"].rule_id == "mutate.high-tier-always-approval"


@pytest.mark.parametrize(
    "ctx",
    [
        {"autonomy": "autonomous", "age_band": "adult", "consent": True},
        {"autonomy": "guarded", "age_band": "adult", "consent": True},
        {"autonomy": "autonomous", "age_band": "child", "consent": False},
    ],
)
def test_the_simulator_says_what_the_gate_then_does(gina, api, catalog, ctx):
    run_id = open_executing_run(api, autonomy=ctx["autonomy"], age_band=ctx["age_band"], consent=ctx["consent"])
    answer = gate(api, run_id, tool="record_vitals", op="update", args={"pulse": 80}).json()
    simulated = admin_client(gina).get(SIMULATOR, query("record_vitals", "update", {"pulse": 80}, **ctx))
    verdict = simulated.context["result"]["verdict"]
    # The API says "suspended" where the engine says require_approval: the call was parked.
    said = {"require_approval": "suspended"}.get(str(verdict.decision), str(verdict.decision))
    assert (verdict.rule_id, said) == (answer["rule_id"], answer["decision"]), answer


def test_the_simulator_refuses_a_non_ascii_op_and_args_that_are_not_an_object(gina, catalog):
    response = admin_client(gina).get(SIMULATOR, {**query("record_vitals", "dèlete"), "args": "[1, 2]"})
    assert response.status_code == 200
    assert response.context["result"] is None
    assert set(response.context["form"].errors) == {"op", "args"}


@pytest.mark.parametrize("field", ["args", "metadata"])
def test_the_simulator_refuses_json_nested_past_the_limit_as_a_form_error(gina, catalog, field):
    # Nested past Python's recursion limit, the stdlib parser raised: a 500 for a shared link.
    deep = '{"a": ' * 2000 + "1" + "}" * 2000
    response = admin_client(gina).get(SIMULATOR, {**query("record_vitals", "update"), field: deep})
    assert response.status_code == 200
    assert response.context["result"] is None
    assert set(response.context["form"].errors) == {field}
    assert f"deeper than {MAX_JSON_DEPTH}" in str(response.context["form"].errors[field])


def test_the_simulator_escapes_what_it_echoes(gina, catalog):
    response = admin_client(gina).get(SIMULATOR, query("record_vitals", args={"note": "<script>alert(1)</script>"}))
    assert b"<script>alert(1)</script>" not in response.content


def test_compliance_may_use_the_simulator(carl, catalog):
    assert admin_client(carl).get(SIMULATOR, query("send_email")).status_code == 200


def test_a_reviewer_is_not_let_into_the_simulator(rita, catalog):
    response = admin_client(rita).get(SIMULATOR)
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_the_admin_index_links_the_simulator(carl, db):
    assert SIMULATOR.encode() in admin_client(carl).get("/admin/").content
