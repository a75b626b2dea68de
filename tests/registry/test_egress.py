"""The egress check: args may only name hosts the tool declares, and it runs before the matrix."""

import pytest

from registry.policy import STATIC_REGISTRY, Context, Decision, ToolCall, ToolSpec, check_egress, evaluate

TYPED_ADULT = Context(autonomy="autonomous", tainted=False, consent=True, age_band="adult")

PARTNER = ToolSpec("fetch", policy_class="read", allowed_hosts=("api.partner.example", "files.partner.example:8443"))


def passes(value, spec=PARTNER, key="url"):
    return check_egress(spec, spec.policy_class, {key: value}) is None


def blocked_rule(value, spec=PARTNER, key="url"):
    verdict = check_egress(spec, spec.policy_class, {key: value})
    assert verdict is not None, f"{value!r} passed"
    assert verdict.decision is Decision.BLOCKED
    return verdict.rule_id


@pytest.mark.parametrize(
    "value",
    [
        "https://api.partner.example/v1/formulary?q=statin",
        "http://api.partner.example",
        "https://api.partner.example:444/any-port-for-a-bare-entry",
        "https://user:secret@api.partner.example/",
        "api.partner.example",
        "api.partner.example:9000",
        "https://API.Partner.EXAMPLE/",
        "API.PARTNER.EXAMPLE",
        "https://api.partner.example./trailing-dot",
        "api.partner.example.",
    ],
    ids=str,
)
def test_allowed_host_passes(value):
    assert passes(value)


@pytest.mark.parametrize(
    "value",
    [
        "https://evil.net/",
        "evil.net",
        "https://partner.example/",  # the parent domain is not listed
        "https://sub.api.partner.example/",  # no implicit subdomains
        "https://api.partner.example.evil.net/",
        "https://api.partner.example@evil.net/",  # user-info trick: the host is evil.net
        "https://api.partner.example:443@evil.net/",
        "https://evil.net#@api.partner.example",
        "https://evil.net?@api.partner.example",
        "https://api.partner.example../",  # only one trailing dot is dropped
    ],
    ids=str,
)
def test_other_hosts_are_blocked(value):
    assert blocked_rule(value) == "egress.host-not-allowed"


@pytest.mark.parametrize(
    "value",
    [
        "https://evil.net\\@api.partner.example",  # urllib says partner, browsers say evil.net
        "https://evil.net\\\\@api.partner.example",
        "https:\\\\api.partner.example",
        "api.partner.example\\evil.net",
        "https://api.partner.example\t.evil.net/",
        "https://api.partner.example\n/",
        " api.partner.example",
        "https://api.partner.example%2Eevil.net/",
        "https://api%2Epartner.example/",  # percent-escaped host: fail closed, not decoded
        "https://[::1/",
        "https://api.partner.example:99999/",
        "https://api.partner.example:http/",
        "api.partner.example/path",
        "//api.partner.example",
        "mailto:someone@api.partner.example",
        "api.partner.example@evil.net",
        "://api.partner.example",
        "https:///no-host",
        "*.partner.example",
        "",
    ],
    ids=repr,
)
def test_ambiguous_or_unparseable_values_fail_closed(value):
    assert blocked_rule(value) == "egress.host-not-allowed"


@pytest.mark.parametrize(
    "value",
    [
        None,
        42,
        4.2,
        True,
        ["https://api.partner.example"],
        {"href": "https://api.partner.example"},
        b"api.partner.example",
    ],
    ids=repr,
)
def test_non_string_values_fail_closed(value):
    assert blocked_rule(value) == "egress.host-not-allowed"


# Ports: an entry "host" allows any port, "host:port" only that one.


@pytest.mark.parametrize(
    "value",
    [
        "https://files.partner.example:8443/upload",
        "files.partner.example:8443",
    ],
    ids=str,
)
def test_host_port_entry_allows_its_port(value):
    assert passes(value)


@pytest.mark.parametrize(
    "value",
    [
        "https://files.partner.example/upload",  # https defaults to 443
        "https://files.partner.example:443/",
        "files.partner.example",  # bare host: port unknown, cannot prove it is 8443
        "files.partner.example:8444",
    ],
    ids=str,
)
def test_host_port_entry_refuses_other_ports(value):
    assert blocked_rule(value) == "egress.host-not-allowed"


def test_scheme_default_port_matches_a_host_port_entry():
    spec = ToolSpec("t", "read", allowed_hosts=("secure.example:443",))
    assert passes("https://secure.example/x", spec)
    assert not passes("http://secure.example/x", spec)


# Internationalised hosts: unicode and punycode are one host.


@pytest.mark.parametrize("entry", ["bücher.example", "xn--bcher-kva.example", "BÜCHER.example."], ids=str)
@pytest.mark.parametrize(
    "value",
    [
        "https://bücher.example/katalog",
        "https://BÜCHER.EXAMPLE/",
        "https://xn--bcher-kva.example/",
        "XN--BCHER-KVA.EXAMPLE",
        "bücher.example:443",
        "https://bücher.example。/",  # ideographic full stop, as browsers map it
    ],
    ids=str,
)
def test_unicode_and_punycode_forms_match_each_other(entry, value):
    assert passes(value, ToolSpec("t", "read", allowed_hosts=(entry,)))


def test_lookalike_unicode_host_is_blocked():
    spec = ToolSpec("t", "read", allowed_hosts=("paypal.example",))
    assert not passes("https://pаypal.example/", spec)  # Cyrillic "а"
    assert passes("https://ｐａｙｐａｌ.example/", spec)  # full-width letters map to ASCII


def test_unencodable_unicode_host_fails_closed():
    assert blocked_rule("https://bü_x.example/", ToolSpec("t", "read", allowed_hosts=("bü_x.example",)))


def test_ipv6_literals_compare_like_hosts():
    spec = ToolSpec("t", "read", allowed_hosts=("[2001:db8::1]:8080",))
    assert passes("http://[2001:db8::1]:8080/", spec)
    assert passes("[2001:db8::1]:8080", spec)
    assert not passes("http://[2001:db8::2]:8080/", spec)


# Where URLs are looked for.


@pytest.mark.parametrize("key", ["url", "endpoint", "target_url", "host", "URL", "Host"])
def test_every_url_key_is_checked(key):
    assert blocked_rule("evil.net", key=key) == "egress.host-not-allowed"
    assert passes("api.partner.example", key=key)


def test_other_keys_are_not_hosts():
    assert check_egress(PARTNER, "read", {"href": "https://evil.net", "note": "evil.net"}) is None
    assert check_egress(PARTNER, "read", {}) is None


@pytest.mark.parametrize(
    "args",
    [
        {"request": {"url": "https://evil.net/"}},
        {"requests": [{"endpoint": "https://api.partner.example/"}, {"endpoint": "https://evil.net/"}]},
        {"a": [[{"b": ({"host": "evil.net"},)}]]},
        {"batch": {"items": [{"meta": {"target_url": "https://evil.net/"}}]}},
    ],
    ids=["dict", "list-of-dicts", "deep-lists-and-tuples", "deep-dicts"],
)
def test_nested_urls_are_found(args):
    verdict = check_egress(PARTNER, "read", args)
    assert verdict is not None and verdict.rule_id == "egress.host-not-allowed"


def test_nested_allowed_urls_pass():
    args = {"requests": [{"endpoint": "https://api.partner.example/a"}, {"url": "api.partner.example"}]}
    assert check_egress(PARTNER, "read", args) is None


def test_nesting_deeper_than_the_recursion_limit_is_still_walked():
    args = {"url": "https://api.partner.example/"}
    for _ in range(3000):  # 6,000 containers, far past the recursion limit
        args = {"wrap": [args]}
    assert check_egress(PARTNER, "read", args) is None
    bad = {"url": "https://evil.net/"}
    for _ in range(3000):  # 6,000 containers, far past the recursion limit
        bad = {"wrap": [bad]}
    assert check_egress(PARTNER, "read", bad).rule_id == "egress.host-not-allowed"


def test_a_cyclic_structure_fails_closed_instead_of_looping():
    args = {"items": []}
    args["items"].append(args)
    assert check_egress(PARTNER, "read", args).rule_id == "egress.host-not-allowed"


def test_a_url_anywhere_on_a_tool_without_hosts_is_blocked():
    spec = ToolSpec("t", "read")
    assert blocked_rule("https://api.partner.example/", spec) == "egress.host-not-allowed"
    assert check_egress(None, None, {"url": "https://api.partner.example/"}).rule_id == ("egress.host-not-allowed")


# Comms without declared flows.


def test_comms_without_allowed_hosts_is_blocked_even_without_urls():
    verdict = check_egress(ToolSpec("notify", "comms"), "comms", {"message": "hi"})
    assert (verdict.decision, verdict.rule_id) == (Decision.BLOCKED, "egress.no-declared-flows")


def test_comms_with_hosts_and_no_urls_passes_egress():
    assert check_egress(STATIC_REGISTRY["send_email"], "comms", {"to": "pt@example.org"}) is None


def test_unparseable_allow_list_entries_are_ignored():
    spec = ToolSpec("t", "read", allowed_hosts=("not a host", "", "ok.example", "x:bad"))
    assert passes("https://ok.example/", spec)
    assert not passes("not a host", spec)


# Egress runs before the matrix.


def test_read_tool_with_a_bad_url_is_blocked_before_it_could_be_allowed():
    call = ToolCall("read_document", args={"url": "https://evil.net/chart.pdf"})
    verdict = evaluate(call, TYPED_ADULT, None)
    assert (verdict.decision, verdict.rule_id) == (Decision.BLOCKED, "egress.host-not-allowed")
    assert verdict.policy_class == "read"


def test_low_tier_write_with_a_nested_bad_url_is_blocked():
    call = ToolCall("record_vitals", "create", {"device": {"endpoint": "https://evil.net/"}})
    assert evaluate(call, TYPED_ADULT, None).rule_id == "egress.host-not-allowed"


def test_unregistered_tool_with_a_url_is_blocked_rather_than_parked():
    call = ToolCall("mystery", args={"url": "https://evil.net/"})
    assert evaluate(call, TYPED_ADULT, None).rule_id == "egress.host-not-allowed"


def test_comms_with_no_flows_is_blocked_before_the_child_rule():
    child = Context(autonomy="autonomous", tainted=False, consent=True, age_band="child")
    verdict = evaluate(ToolCall("notify"), child, ToolSpec("notify", "comms"))
    assert verdict.rule_id == "egress.no-declared-flows"


@pytest.mark.parametrize(
    "tool, args",
    [
        ("send_email", {"host": "smtp.clinic.example"}),
        ("create_calendar_event", {"target_url": "https://calendar.clinic.example/v2/events"}),
        ("sync_ehr", {"payload": {"endpoint": "https://ehr.partner.example/fhir/Patient"}}),
    ],
)
def test_catalog_comms_tools_reach_their_own_hosts(tool, args):
    verdict = evaluate(ToolCall(tool, "send", args), TYPED_ADULT, None)
    assert verdict.rule_id == "comms.autonomous-consented-allow"


def test_catalog_comms_tool_cannot_reach_another_tools_host():
    call = ToolCall("send_email", "send", {"host": "ehr.partner.example"})
    assert evaluate(call, TYPED_ADULT, None).rule_id == "egress.host-not-allowed"


def test_long_urls_are_checked_the_same_way():
    # Values past the parse cache's length limit take the uncached path.
    assert passes("https://api.partner.example/search?q=" + "a" * 2000)
    assert not passes("https://evil.net/search?q=" + "a" * 2000)
    assert not passes("https://api.partner.example@evil.net/?q=" + "a" * 2000)


# --- Comms: every value that is, as a whole, a URL, a host name or an e-mail address ----------

MAILER = ToolSpec(
    "notify", policy_class="comms", allowed_hosts=("smtp.clinic.example", "clinic.example", "hooks.clinic.example:8443")
)


def comms_rule(args, spec=MAILER):
    verdict = check_egress(spec, "comms", args)
    return None if verdict is None else verdict.rule_id


@pytest.mark.parametrize(
    "args",
    [
        {"targetUrl": "https://evil.example/hook"},
        {"callback": "http://evil.example"},
        {"smtp_server": "mail.evil.example"},
        {"smtp_server": "mail.evil.example:2525"},
        {"to": "x@evil.example"},
        {"to": "X@EVIL.Example"},
        {"to": "x@evil.example."},
        {"to": "Dr Who <who@evil.example>"},
        {"to": "mailto:who@evil.example?subject=results"},
        {"to": "gp@clinic.example, x@evil.example"},
        {"cc": ["gp@clinic.example", "x@evil.example"]},
        {"letter": {"delivery": {"relay": "Evil.Example."}}},
        {"relay": "évil.example"},  # IDN, checked in its punycode form
        {"relay": "evil\u3002example"},  # an ideographic full stop is a dot to IDNA
        {"to": "dr\uff20evil.example"},  # a fullwidth at sign: dr@evil.example to whatever folds it
        {"to": "gp@clinic.example\uff0cx@evil.example"},  # a fullwidth comma folds to a list
        {"link": "evil\uff0eexample/inbox"},  # a fullwidth full stop
        {"relay": "10.0.0.7"},
        {"relay": "[2001:db8::1]:25"},
        {"webhook": "//evil.example/hook"},
        {"webhook": "http:evil.example"},  # browsers read this as http://evil.example/
        {"webhook": " https://hooks.clinic.example:8443/ "},  # whitespace around a URL fails closed
        {"relay": "evil.cоm"},  # a Cyrillic о in the TLD: still a host name, and not an allowed one
        # File extensions that are top-level domains too name hosts: Moldova, Saint Helena,
        # Paraguay, Google's .zip and .mov.
        {"cc": "exfil.sh"},
        {"cc": "attacker.md"},
        {"cc": "evil.zip"},
        {"cc": "evil.py"},
        {"cc": "evil.mov"},
        {"relay": "localhost"},
        {"relay": "LOCALHOST:25"},
        # A URL but for its scheme: its host is checked.
        {"link": "evil.example/inbox"},
        {"link": "evil.example:8080/x?y=1"},
        {"link": "evil.example#top"},
        {"link": "clinic.example.evil.example/path"},
        {"link": "evil.example\\inbox"},
        {"link": "clinic.example\\@evil.example"},  # a backslash fails closed
    ],
    ids=repr,
)
def test_a_comms_destination_under_any_key_must_be_allowed(args):
    assert comms_rule(args) == "egress.host-not-allowed"


@pytest.mark.parametrize(
    "args",
    [
        {"to": "gp@clinic.example"},
        {"to": "GP@Clinic.Example."},
        {"to": "Dr Gray <gray@clinic.example>"},
        {"to": "gp@clinic.example; nurse@clinic.example"},
        {"to": "gp\uff20clinic.example"},  # folded, still an allowed address
        {"body": "Ｒｅｓｕｌｔｓ ａｒｅ ｉｎ"},  # fullwidth text that folds to no destination
        {"smtp_server": "SMTP.clinic.example"},
        {"callback": "https://hooks.clinic.example:8443/v1/delivered"},
        {"body": "Your results are in. Questions? Write to gp@clinic.example or evil.example."},
        {"subject": "Discharge", "attachment": "discharge.pdf", "dose": "5.2 mg", "note": "e.g. b.i.d."},
        {"greeting": "Hello", "count": 3, "flags": [True, None, 2.5], "version": "v1.2"},
        {"signature": "@clinic-team"},
        {"link": "https://clinic.example/results", "portal": "clinic.example/results?id=7"},
        {"dose": "5 mg/kg/day", "note": "see page 3/4", "ratio": "1.5/2"},
    ],
    ids=repr,
)
def test_comms_values_that_are_allowed_or_no_destination_pass(args):
    assert comms_rule(args) is None


def test_free_values_of_a_non_comms_tool_are_not_destinations():
    # Only the URL keys are checked for other classes: a chart note may name any host.
    spec = ToolSpec("write_note", "mutate", hitl_tier="low")
    assert check_egress(spec, "mutate", {"note": "Referred to x@evil.example", "to": "evil.example"}) is None
    assert check_egress(spec, "mutate", {"url": "https://evil.example/"}).rule_id == "egress.host-not-allowed"


def test_a_comms_recipient_outside_the_allow_list_blocks_an_otherwise_allowed_send():
    call = ToolCall("send_email", "send", {"host": "smtp.clinic.example", "to": "pt@evil.example"})
    assert evaluate(call, TYPED_ADULT, None).rule_id == "egress.host-not-allowed"
    allowed = ToolCall("send_email", "send", {"host": "smtp.clinic.example", "to": "pt@example.org"})
    assert evaluate(allowed, TYPED_ADULT, None).rule_id == "comms.autonomous-consented-allow"


# --- Comms: keys, mailto header fields and ambiguous addresses (SPEC section 2) ----------------


@pytest.mark.parametrize(
    "args",
    [
        {"recipients": {"x@evil.example": {"name": "Bob"}}},
        {"links": {"https://evil.example/x": "click"}},
        {"deep": [{"ok": {"evil.example/inbox": True}}]},
        {"Bob <x@evil.example>": "cc"},
    ],
    ids=repr,
)
def test_an_object_key_that_names_a_destination_is_checked(args):
    assert comms_rule(args) == "egress.host-not-allowed"


def test_keys_that_are_plain_words_or_allowed_destinations_pass():
    assert (
        comms_rule(
            {
                "to": "gp@clinic.example",
                "gp@clinic.example": {"name": "Gray"},
                "https://clinic.example/results": "portal",
            }
        )
        is None
    )


@pytest.mark.parametrize(
    "to",
    [
        "mailto:gp@clinic.example?bcc=x@evil.example",
        "mailto:gp@clinic.example?cc=x@evil.example",
        "mailto:gp@clinic.example?to=x@evil.example",
        "mailto:gp@clinic.example?subject=Results&BCC=x%40evil.example",
        "mailto:?to=x@evil.example",
        "mailto:gp@clinic.example?bcc=gp@clinic.example,x@evil.example",
        "mailto:x%40evil.example@clinic.example",  # percent-decoded: two @
        "mailto:",  # no recipient at all
    ],
    ids=repr,
)
def test_a_mailto_urls_header_recipients_are_destinations(to):
    assert comms_rule({"to": to}) == "egress.host-not-allowed"


@pytest.mark.parametrize(
    "to",
    [
        "mailto:gp@clinic.example?subject=Results&body=write%20to%20x@evil.example",
        "mailto:gp@clinic.example?cc=nurse@clinic.example&bcc=admin@clinic.example",
        "MAILTO:gp@clinic.example",
    ],
    ids=repr,
)
def test_a_mailto_url_whose_recipients_are_all_allowed_passes(to):
    assert comms_rule({"to": to}) is None


@pytest.mark.parametrize(
    "to",
    [
        '"x@evil.example"@clinic.example',  # a quoted local part holding @
        "x@evil.example@clinic.example",  # more than one @
        "x%evil.example@clinic.example",  # % routing
        "evil.example!x@clinic.example",  # bang path
        "gp@clinic.example (x@evil.example)",  # a comment
        "gp(evil.example)@clinic.example",
        "gp@[10.0.0.7]",  # an IP literal
        "gp@[IPv6:2001:db8::1]",
        "<@evil.example:gp@clinic.example>",  # a source route
        "Gray <gp@clinic.example>, x%evil.example@clinic.example",
        '"x@evil.example" <gp@clinic.example>',  # an @ in the display name
        "Bob <mailto:gp@clinic.example>",
    ],
    ids=repr,
)
def test_an_address_that_reads_ambiguously_is_never_allowed(to):
    assert comms_rule({"to": to}) == "egress.host-not-allowed"


@pytest.mark.parametrize(
    "to",
    [
        "Dr. Gray <gp@clinic.example>",
        '"Gray, Ann" <gp@clinic.example>',
        "gp@clinic.example, Nurse <nurse@clinic.example>",
        "Ward 3: gp@clinic.example, nurse@clinic.example;",
        "gp.on-call+ward3@clinic.example",
    ],
    ids=repr,
)
def test_plain_addresses_lists_and_groups_on_allowed_domains_pass(to):
    assert comms_rule({"to": to}) is None


@pytest.mark.parametrize("to", ["x @ evil.example", "grp: x@evil.example;", "(note) x@evil.example"], ids=repr)
def test_an_address_written_with_spaces_groups_or_comments_is_still_an_address(to):
    assert comms_rule({"to": to}) == "egress.host-not-allowed"


@pytest.mark.parametrize(
    "to",
    [
        "gp@clinic.example x@evil.example",
        "x@evil.example gp@clinic.example",
        "gp@clinic.example\tx@evil.example",
        "gp@clinic.example  nurse@clinic.example\nx@evil.example",
        "gp@clinic.example nurse@clinic.example",  # no commas: a list some MTAs and mail(1) split, others refuse
    ],
    ids=repr,
)
def test_addresses_separated_only_by_whitespace_are_an_ambiguous_list(to):
    # Sendmail's old-style lists and command-line mailers read each word as a recipient;
    # RFC 5322 reads none: no one reading is sure, so no allow-list holds it.
    assert comms_rule({"to": to}) == "egress.host-not-allowed"
    assert comms_rule({"recipients": {to: {"name": "Bob"}}}) == "egress.host-not-allowed"


def test_a_sentence_that_mentions_an_address_is_still_no_destination():
    assert comms_rule({"body": "Reply to gp@clinic.example or x@evil.example if unsure."}) is None


def test_text_that_merely_holds_an_at_sign_is_not_a_destination():
    assert comms_rule({"body": "Take two tablets @ 8am, and call us @ the desk."}) is None


def test_an_overlong_address_list_fails_closed_unparsed():
    recipients = ", ".join(["gp@clinic.example"] * 150)  # over MAX_ADDRESS_VALUE
    assert comms_rule({"to": recipients}) == "egress.host-not-allowed"


def test_a_call_naming_more_address_text_than_its_budget_fails_closed():
    # The stdlib parser is slow on crafted input: one call parses at most MAX_ADDRESS_TEXT_PER_CALL characters.
    assert comms_rule({"cc": ["gp@clinic.example"] * 400}) is None  # 6,800 characters
    assert comms_rule({"cc": ["gp@clinic.example"] * 500}) == "egress.host-not-allowed"
