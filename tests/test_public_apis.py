"""First-party code uses Django, the other libraries and CPython through their documented APIs only.

What counts as an offence, and how it is found, is in tests/helpers/private_names.py. Every
offence is listed with its file and line.
"""

from pathlib import Path
from textwrap import dedent

import pytest

from tests.helpers.private_names import load, offences

REPO = Path(__file__).resolve().parent.parent


def test_the_scan_covers_every_first_party_package():
    packages = {module.name.split(".")[0] for module in load(REPO)}
    assert {
        "condor",
        "demo",
        "governance",
        "inbox",
        "approvals",
        "runs",
        "sessions_app",
        "registry",
        "audit",
        "agents",
        "core",
        "condor_client",
        "condor_langgraph",
    } <= packages
    assert not packages & {"tests", "bench"}


def test_first_party_code_uses_no_private_library_name():
    found = offences(REPO)
    assert not found, "private or undocumented library names, or monkeypatches:\n" + "\n".join(map(str, found))


# --- what the scan catches, on a repository of one new app ---------------------------------


def scanned(tmp_path, source: str) -> list[str]:
    """The offences in a repository holding an app (`clinic`, never listed anywhere) with `source`."""
    app = tmp_path / "clinic"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "helpers.py").write_text("def _ours():\n    pass\n\n\nclass Ours:\n    _cached = None\n")
    (app / "module.py").write_text(dedent(source))
    return [str(offence) for offence in offences(tmp_path)]


@pytest.mark.parametrize(
    "source",
    [
        "from psycopg import _queries\n",
        "import psycopg._queries\n",
        "from psycopg._queries import PostgresQuery\n",
        "from json.encoder import c_make_encoder\n",
        "from django.db.models.sql import InsertQuery\n",
    ],
)
def test_a_private_or_undocumented_import_is_caught(tmp_path, source):
    assert [line.split(": ")[0] for line in scanned(tmp_path, source)] == ["clinic/module.py:1"]


@pytest.mark.parametrize(
    "source",
    [
        "def group_key(layer, group):\n    return layer._group_key(group)\n",
        "def nonce(request):\n    return getattr(request, '_csp_nonce', None)\n",
        "import json\n\n\ndef make():\n    return json.encoder.c_make_encoder\n",
        "def compiler(queryset):\n    return queryset.query.get_compiler('default')\n",
        "def cache(row):\n    return row._state.fields_cache\n",
    ],
)
def test_a_private_or_undocumented_attribute_of_a_library_is_caught(tmp_path, source):
    assert len(scanned(tmp_path, source)) == 1


def test_an_override_of_a_library_private_method_is_caught(tmp_path):
    source = """
        from django.contrib.sessions.backends import db


        class SessionStore(db.SessionStore):
            def _get_session_from_db(self):
                return None
    """
    assert scanned(tmp_path, source) == [
        "clinic/module.py:6: overrides _get_session_from_db of "
        "django.contrib.sessions.backends.db.SessionStore, a library's"
    ]


@pytest.mark.parametrize(
    "source",
    [
        "from psycopg import pq\n\npq.version = lambda: 0\n",
        "import json\n\njson.encoder.INFINITY = 0.0\n",
        "from django.db.models import Model\n\nsetattr(Model, 'save', print)\n",
    ],
)
def test_a_monkeypatch_is_caught(tmp_path, source):
    found = scanned(tmp_path, source)
    assert len(found) == 1 and "patches" in found[0]


@pytest.mark.parametrize(
    "source",
    [
        "from clinic.helpers import _ours\n\n\ndef call(helpers, row):\n    return helpers._ours(), row._meta.db_table\n",
        "def cached(ours):\n    return ours._cached\n",
        "def adding(row):\n    return row._state.adding, type(row)._default_manager\n",
        "from django.contrib import admin\n\nadmin.site.site_header = 'Condor'\n",
        "import json\n\nencode = json.JSONEncoder(sort_keys=True).encode\n",
    ],
)
def test_first_party_names_and_documented_apis_pass(tmp_path, source):
    assert scanned(tmp_path, source) == []
