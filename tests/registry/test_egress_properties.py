"""The comms egress check over generated recipients: a disallowed domain is never let through
however the address around it is written (SPEC section 2)."""

import string

from hypothesis import given
from hypothesis import strategies as st

from registry.policy import ToolSpec, check_egress

MAILER = ToolSpec("notify", policy_class="comms", allowed_hosts=("clinic.example",))
locals_ = st.text(alphabet=string.ascii_lowercase + string.digits + ".-+_", min_size=1, max_size=8).filter(
    lambda local: not local.startswith(".") and not local.endswith(".") and ".." not in local
)
evil_domains = st.sampled_from(
    ["evil.example", "EVIL.example", "clinic.example.evil.example", "évil.example", "evil.example."]
)
wrappers = st.sampled_from(
    [
        "{local}@{evil}",
        "Name <{local}@{evil}>",
        "gp@clinic.example, {local}@{evil}",
        "mailto:{local}@{evil}",
        "mailto:gp@clinic.example?bcc={local}@{evil}",
        "mailto:gp@clinic.example?subject=x&cc={local}%40{evil}",
        '"{local}@{evil}"@clinic.example',
        "{local}@{evil}@clinic.example",
        "{local}%{evil}@clinic.example",
        "{evil}!{local}@clinic.example",
        "gp@clinic.example ({local}@{evil})",
        "<@{evil}:{local}@clinic.example>",
    ]
)


def rule(args):
    verdict = check_egress(MAILER, "comms", args)
    return None if verdict is None else verdict.rule_id


@given(locals_, evil_domains, wrappers, st.sampled_from(["value", "key", "nested key", "list item"]))
def test_a_disallowed_or_ambiguous_recipient_is_blocked_wherever_it_stands(local, evil, wrapper, where):
    text = wrapper.format(local=local, evil=evil)
    args = {
        "value": {"to": text},
        "key": {text: {"name": "Bob"}},
        "nested key": {"a": [{"b": {text: 1}}]},
        "list item": {"cc": ["gp@clinic.example", text]},
    }[where]
    assert rule(args) == "egress.host-not-allowed", args


@given(st.lists(locals_, min_size=1, max_size=4), st.sampled_from([", ", "; ", ","]))
def test_plain_recipients_on_the_allowed_domain_pass(locals_list, separator):
    assert rule({"to": separator.join(f"{local}@clinic.example" for local in locals_list)}) is None


@given(st.lists(locals_, min_size=1, max_size=3), locals_, evil_domains)
def test_one_bad_recipient_blocks_a_list_of_good_ones(good, bad, evil):
    recipients = [f"{local}@clinic.example" for local in good] + [f"{bad}@{evil}"]
    assert rule({"to": ", ".join(recipients)}) == "egress.host-not-allowed"
