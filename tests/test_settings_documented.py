"""Every environment variable Condor reads is in the README's configuration table, so an operator
who reads the table knows every knob (a setting added without its row fails here)."""

import re

from tests.helpers.processes import REPO

# The modules that read the environment, each through core/env.py's readers.
READERS = ["condor/settings.py", "condor/database_settings.py"]


def variables_read() -> set[str]:
    names = set()
    for module in READERS:
        names |= set(re.findall(r"\benv_[a-z]+\(\s*\"([A-Z][A-Z0-9_]*)\"", (REPO / module).read_text()))
    return names


def variables_documented() -> set[str]:
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Configuration (environment)\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split(" | ", 1)[0])}


def test_the_readers_are_found():
    assert {"DATABASE_URL", "CONDOR_DB_POOL_MIN", "CONDOR_AUDIT_KEY"} <= variables_read()


def test_every_variable_read_is_in_the_configuration_table():
    assert sorted(variables_read() - variables_documented()) == []
