"""Hidden and look-alike characters are shown, not obeyed, in the admin (issue 9, item 1).

A reviewer who reads "2.5 mg" where the args say "\\u202e5.2\\u202c mg" approves something
else; compliance reading the same row in the admin must see the override for what it is.
The rules are reveal.js's in the inbox (tests/live/test_inbox_ui_cards.py covers that side).
"""

import importlib.util
from pathlib import Path

import pytest

from approvals.models import Approval, ToolCall
from core.display import contains_hidden, has_hidden, reveal
from runs.models import Run
from tests.governance.test_admin import admin_client, change_url
from tests.helpers.approval_loop import suspend
from tests.helpers.runs import open_executing_run

TRICK = {"drug": "amoxicillin", "dose": "\u202e5.2\u202c mg", "dr\u0435g": "x"}


# --- the rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, html",
    [
        (
            "\u202e5.2\u202c mg",
            '<span class="reveal reveal--hidden" title="Hidden character U+202E">⟨U+202E⟩</span>5.2'
            '<span class="reveal reveal--hidden" title="Hidden character U+202C">⟨U+202C⟩</span> mg',
        ),
        (
            "d\u0435lete",
            'd<span class="reveal reveal--lookalike" dir="ltr" title="Look-alike character U+0435">'
            "\u0435⟨U+0435⟩</span>lete",
        ),
    ],
)
def test_hidden_characters_are_replaced_and_look_alikes_marked(text, html):
    assert reveal(text) == html


# Shared with the inbox's reveal.js (tests/live/test_inbox_ui_cards.py): the same verdicts.
HIDDEN_OR_LOOKALIKE = [
    "delete\u200b",
    "\ufeffx",
    "a\u00adb",
    "a\u2066b\u2069",
    "a\u061cb",
    "a\u200eb",
    "a\u2060b",
    "a\u0085b",
    "a\u00a0b",
    "a\u3000b",
    "a\u2028b",
    "a\U000e0041b",
    "a\ue000b",
    "ｄelete",
    "\U0001d41dose",
    "ﬁle",
    "pay\u0440al",
    "\u0440\u0430\u0443\u0440\u0430l.example",
    "\u0430\u0440\u0435 x",  # a whole word of Cyrillic look-alikes in Latin text
    # Right-to-left letters (or Arabic digits) among digits or other letters: the bidi algorithm reorders these.
    "\u0640 2.5 / 25 \u0640",
    "\u05d0 2.5 / 25 \u05d0",
    "מינון 25 mg",
    "Dr שרה",
    "dose \u0662\u0665",
    "\u0662.\u0665 / \u0662\u0665",
    "\u0710\u0712 10",
    "\u0780\u0781 10",
    "\u07ca\u07cb 10",
]
ORDINARY = [
    "5.2 mg",
    "line one\nline two\tindented",
    "José Müller",
    "mg/m²",
    "Иванов",
    "Доза 5 мл",
    "αβγ δοκιμή",
    "東京",
    "",
    "שלום עולם",
    "مرحبا بالعالم",
    "ܫܠܡܐ",
    "ދިވެހި",
]


@pytest.mark.parametrize("text", HIDDEN_OR_LOOKALIKE, ids=ascii)
def test_what_counts_as_hidden_or_look_alike(text):
    assert has_hidden(text)
    assert "⟨U+" in reveal(text)


@pytest.mark.parametrize("text", ORDINARY, ids=ascii)
def test_ordinary_text_in_any_script_is_left_alone(text):
    assert not has_hidden(text)
    assert reveal(text) == text


def test_right_to_left_letters_among_digits_are_boxed_left_to_right_and_marked():
    box = '<span class="reveal reveal--rtl" dir="ltr" title="Right-to-left character U+0640">\u0640⟨U+0640⟩</span>'
    assert reveal("\u0640 2.5 / 25 \u0640") == f"{box} 2.5 / 25 {box}"


def test_the_inbox_knows_the_same_right_to_left_characters():
    # JavaScript has no bidi class property: inbox/static/inbox/rtl.js is generated from Python's unicodedata.
    spec = importlib.util.spec_from_file_location("rtl_class", Path(__file__).parents[2] / "scripts" / "rtl_class.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.TARGET.read_text() == script.module_text(), "run: .venv/bin/python scripts/rtl_class.py"


def test_text_is_escaped_never_html():
    assert reveal("<b>\u202e</b>") == (
        '&lt;b&gt;<span class="reveal reveal--hidden" title="Hidden character U+202E">⟨U+202E⟩</span>&lt;/b&gt;'
    )


def test_keys_and_values_at_any_depth_count():
    assert contains_hidden({"a": [{"b": "ok"}, {"c\u200b": 1}]})
    assert contains_hidden([[["\u202e"]]])
    assert not contains_hidden({"a": [{"b": "ok", "n": 5}], "name": "José"})


# --- the admin ------------------------------------------------------------------------------


@pytest.fixture
def tricked(api, catalog) -> Approval:
    run_id = open_executing_run(api)
    return Approval.objects.get(pk=suspend(api, run_id, args=TRICK)["id"])


def test_the_approval_page_marks_hidden_characters_and_warns(carl, tricked):
    page = admin_client(carl).get(change_url(tricked))
    assert page.status_code == 200
    html = page.content.decode()
    assert "⟨U+202E⟩" in html and "⟨U+202C⟩" in html and "⟨U+0435⟩" in html
    assert "\u202e" not in html and "\u202c" not in html
    assert "This record contains hidden or look-alike characters" in html
    assert "governance/reveal.css" in html


def test_the_tool_call_page_marks_them_too(carl, tricked):
    html = admin_client(carl).get(change_url(ToolCall.objects.get(run=tricked.run))).content.decode()
    assert "⟨U+202E⟩" in html and "\u202e" not in html
    assert "This record contains hidden or look-alike characters" in html


def test_the_approval_page_marks_a_dose_between_tatweels_and_warns(carl, api, catalog):
    run_id = open_executing_run(api)
    approval = Approval.objects.get(pk=suspend(api, run_id, args={"dose_mg_per_week": "\u0640 2.5 / 25 \u0640"})["id"])
    html = admin_client(carl).get(change_url(approval)).content.decode()
    assert html.count("\u0640⟨U+0640⟩") == 2 and 'class="reveal reveal--rtl" dir="ltr"' in html
    assert "right-to-left letters among digits or other text" in html


def test_lists_and_links_reveal_what_an_agent_chose(carl, api, catalog):
    run_id = open_executing_run(api, title="\u05d0 2.5 / 25 \u05d0", patient_ref="MRN-\u202e5")
    http = admin_client(carl)
    sessions = http.get("/admin/sessions_app/session/").content.decode()
    assert "\u05d0⟨U+05D0⟩" in sessions and "⟨U+202E⟩" in sessions and "\u202e" not in sessions
    runs = http.get("/admin/runs/run/").content.decode()  # the run's session, linked by its title
    assert "\u05d0⟨U+05D0⟩" in runs
    session = http.get(change_url(Run.objects.get(pk=run_id).session)).content.decode()
    assert "⟨U+202E⟩" in session and "\u202e" not in session


def test_a_plain_record_has_no_warning(carl, api, catalog):
    run_id = open_executing_run(api)
    approval = Approval.objects.get(pk=suspend(api, run_id)["id"])
    html = admin_client(carl).get(change_url(approval)).content.decode()
    assert "hidden or look-alike" not in html
    assert "amoxicillin" in html


def test_the_approval_list_shows_its_columns(carl, tricked):
    html = admin_client(carl).get("/admin/approvals/approval/").content.decode()
    assert "prescribe_medication" in html
