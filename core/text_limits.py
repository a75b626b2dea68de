"""Control characters in the text people read: refused, never stored.

A patient ref, a care unit or a title is one line: any C0 control character (tab and line
breaks included) or DEL in it is refused. A line break in a patient ref went on into an
escalation e-mail's subject, where Django refuses it (BadHeaderError), so no e-mail left.
A reviewer's reason may run over several lines: tab, line feed and carriage return are
allowed there, every other control character is not. NUL is refused everywhere (PostgreSQL
stores it neither in text nor in jsonb).
"""

import re

from django.core.exceptions import ValidationError

CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
CONTROL_CHARACTERS_BUT_LINE_BREAKS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def has_control_characters(text: str, *, multiline: bool = False) -> bool:
    pattern = CONTROL_CHARACTERS_BUT_LINE_BREAKS if multiline else CONTROL_CHARACTERS
    return pattern.search(text) is not None


def single_line(value) -> None:
    """Validator: one line of plain text (patient refs, care units, titles)."""
    if isinstance(value, str) and has_control_characters(value):
        raise ValidationError(
            "must not contain control characters (tab, line breaks, NUL and the like).", code="control_characters"
        )


def free_text(value) -> None:
    """Validator: text that may run over several lines (reasons): no control characters but tab and line breaks."""
    if isinstance(value, str) and has_control_characters(value, multiline=True):
        raise ValidationError(
            "must not contain control characters other than tab and line breaks.", code="control_characters"
        )
