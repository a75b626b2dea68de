"""Hypothesis strategies for clarification requests: `missing` lists of mostly near-valid hints.

Shared by the builder tests (test_resume_schemas.py) and the validator tests
(test_resume_validation.py).
"""

from hypothesis import strategies as st

from core.identifiers import is_field_name

# Any JSON value: the odd hint an agent might send, or an answer a reviewer's client might.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# Near-valid values per hint key, so the rich field kinds (selects, bounds, widgets)
# are reached often, with a sprinkling of wrong types and arbitrary JSON.
option = st.one_of(
    st.sampled_from(["a", "b", "c", "d"]),
    st.fixed_dictionaries(
        {"value": st.sampled_from(["a", "b", "e"])}, optional={"label": st.sampled_from(["A", "B", "C", ""])}
    ),
)
option_lists = st.one_of(
    st.lists(option, min_size=1, max_size=4, unique_by=lambda o: o["value"] if isinstance(o, dict) else o),
    st.lists(option, max_size=4),  # may repeat a value or be empty
)
bounds = st.one_of(
    st.integers(-2, 6),
    st.floats(-10, 10),
    st.sampled_from(
        [
            "2025-01-01",
            "2025-12-31",
            "2025-02-30",
            "2025-01-01T00:00:00Z",
            "2025-06-01T12:00:00+02:00",
            "2025-06-01T12:00:00",
            "soon",
        ]
    ),
)
flags = st.integers(0, 19).flatmap(lambda n: st.sampled_from(["yes", 1]) if n == 0 else st.booleans())


def near(good):
    # Mostly well-shaped, one time in twenty arbitrary JSON.
    return st.integers(0, 19).flatmap(lambda n: json_values if n == 0 else good)


def hint_of(**keys):
    common = {
        "label": near(st.sampled_from(["Dose", "Route", "Site", ""])),
        "description": near(st.just("Why we ask")),
        "required": near(flags),
    }
    return st.fixed_dictionaries({}, optional={**common, **{k: near(v) for k, v in keys.items()}})


structured_hints = st.one_of(
    hint_of(options=option_lists, radio=flags),
    hint_of(options=option_lists, multiple=flags, min=st.integers(0, 4), max=st.integers(0, 4)),
    hint_of(format=st.sampled_from(["date", "date-time"]), min=bounds, max=bounds),
    hint_of(textarea=flags, format=st.just("email"), min=st.integers(0, 9), max=st.integers(0, 99)),
    hint_of(min=bounds, max=bounds),
    hint_of(
        options=option_lists,
        radio=flags,
        multiple=flags,
        format=st.sampled_from(["date", "uri", "phone"]),
        textarea=flags,
        min=bounds,
        max=bounds,
    ),
)
hint_keys = st.sampled_from(
    [
        "label",
        "description",
        "required",
        "options",
        "radio",
        "multiple",
        "format",
        "min",
        "max",
        "textarea",
        "type",
        "colour",
    ]
)
hints = st.integers(0, 7).flatmap(
    lambda n: (
        json_values if n == 0 else st.dictionaries(hint_keys, json_values, max_size=5) if n == 1 else structured_hints
    )
)
types = near(st.sampled_from(["string", "number", "integer", "boolean", "date", "date-time", "array", "object"]))
# Identifiers only (core/identifiers.py).
names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,9}", fullmatch=True).filter(is_field_name)
items = st.one_of(
    st.fixed_dictionaries({"name": names}, optional={"type": types, "hint": hints}),
    # type and hint drawn to fit each other, so bounded dates, numbers and multi selects are common
    st.fixed_dictionaries(
        {"name": names, "type": st.sampled_from(["date", "date-time"]), "hint": hint_of(min=bounds, max=bounds)}
    ),
    st.fixed_dictionaries(
        {"name": names, "type": st.sampled_from(["number", "integer"]), "hint": hint_of(min=bounds, max=bounds)}
    ),
    st.fixed_dictionaries(
        {
            "name": names,
            "type": st.just("array"),
            "hint": hint_of(options=option_lists, min=st.integers(0, 4), max=st.integers(0, 4)),
        }
    ),
)
forms = st.lists(items, min_size=1, max_size=5, unique_by=lambda item: item["name"])
