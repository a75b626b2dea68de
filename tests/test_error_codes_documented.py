"""The README's error table is the contract clients branch on: it lists every code the API answers with."""

import re
from pathlib import Path

from core import errors

README = Path(__file__).resolve().parent.parent / "README.md"


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def answered_codes() -> set[tuple[int, str]]:
    """(status, code) of every error core/errors.py can answer with."""
    codes = {(cls.status, cls.code) for cls in (errors.CondorError, *_subclasses(errors.CondorError))}
    codes |= {(cls.status_code, code) for cls, code in errors.DRF_CODES.items()}
    codes.add((500, "server_error"))  # error_pages.server_error, the handler500 under /api/
    return codes


def documented_codes() -> set[tuple[int, str]]:
    section = README.read_text().split("## Error codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d{3}) \| `([a-z_]+)` \|", section, flags=re.M)
    return {(int(status), code) for status, code in rows}


def test_every_error_code_is_in_the_readme_table_with_its_status():
    documented = documented_codes()
    # invalid_payload is also DRF's 415 for a body that is not JSON, which its row says in words.
    assert answered_codes() - {(415, "invalid_payload")} == documented
