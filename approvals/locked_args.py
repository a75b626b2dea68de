"""The arguments a reviewer's edit may not change: those that name the patient (SPEC section 4).

An edit may fix a dose; it may not move the call to another patient. Locked are:

* every object key that names the patient (``patient_ref``, ``patient_id``, ``mrn``), at the
  top level and nested at any depth, inside objects and lists alike: a patient named deep in
  an order is as much the call's target as one named at the top;
* the tool's identity args (its registry row's ``identity_args``), at the top level;
* every value, at any depth, equal to the patient_ref the card showed.

Names are compared with case and separators ignored (``patientId``, ``PATIENT-REF``): erring
toward locking. A locked path must hold the same JSON value after the edit; removing it is a
change, and so is adding a patient-naming key the original args did not have.
"""

import re

from core.errors import LockedArg
from core.hashing import canonical_json_fast

PATIENT_KEYS = frozenset({"patientref", "patientid", "mrn"})
# The card carries at most this many locked paths (a list of a thousand MRNs would otherwise
# grow every push); the decision checks every one of them whatever the card shows.
CARD_LIMIT = 100

_ABSENT = object()


def _normal(name) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def _names_patient(key, identity: frozenset, top: bool) -> bool:
    name = _normal(key)
    return name in PATIENT_KEYS or (top and name in identity)


def _is_patient_value(value, patient_ref: str) -> bool:
    if not patient_ref or isinstance(value, bool):
        return False
    return (isinstance(value, str) and value == patient_ref) or (isinstance(value, int) and str(value) == patient_ref)


def _walk(value, path: tuple, identity: frozenset, patient_ref: str, by_name_only: bool, found: dict) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            here = (*path, key)
            if _names_patient(key, identity, top=not path):
                found.setdefault(here, None)
                continue  # the whole value is locked: nothing under it needs a lock of its own
            _walk(item, here, identity, patient_ref, by_name_only, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, (*path, index), identity, patient_ref, by_name_only, found)
    elif path and not by_name_only and _is_patient_value(value, patient_ref):
        found.setdefault(path, None)


def locked_paths(args, *, identity_args=(), patient_ref: str = "", by_name_only: bool = False) -> list[tuple]:
    """The paths (tuples of keys and list indexes) of `args` an edit may not change, in args order.

    `by_name_only`: the paths locked by their name alone (of edited args: a value that
    merely equals the patient's ref is no retargeting).
    """
    found: dict = {}
    _walk(args, (), frozenset(_normal(name) for name in identity_args), patient_ref, by_name_only, found)
    return list(found)


def path_text(path: tuple) -> str:
    """A path as the inbox writes it (inbox/static/inbox/args.js pathText): ``order.mrn``, ``orders[0].mrn``."""
    text = ""
    for part in path:
        text = f"{text}[{part}]" if isinstance(part, int) else (f"{text}.{part}" if text else str(part))
    return text


def card_paths(args, *, identity_args=(), patient_ref: str = "") -> list[str]:
    """What a card shows read-only: `locked_paths` as text, at most CARD_LIMIT of them."""
    return [
        path_text(path)
        for path in locked_paths(args, identity_args=identity_args, patient_ref=patient_ref)[:CARD_LIMIT]
    ]


def _at(args, path: tuple):
    value = args
    for part in path:
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return _ABSENT
        elif not isinstance(value, dict) or part not in value:
            return _ABSENT
        value = value[part]
    return value


def _same(a, b) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return a is b
    # Equal as the payload hash sees them (RFC 8785: 1 and 1.0 are one number, true is not 1).
    return canonical_json_fast(a) == canonical_json_fast(b)


def refuse_retargeting(
    original: dict, edited: dict, *, identity_args=(), patient_ref: str = "", card_locked=()
) -> None:
    """Raise LockedArg (naming the field) if `edited` changes an argument of `original` that names the patient.

    `card_locked`: the paths the card showed as locked when the call parked; a
    top-level one among them stays locked even if the registry dropped it since.
    """
    identity = {*identity_args, *(name for name in card_locked if name in original)}
    paths = locked_paths(original, identity_args=identity, patient_ref=patient_ref)
    paths += [path for path in locked_paths(edited, identity_args=identity, by_name_only=True) if path not in paths]
    changed = [path_text(path) for path in paths if not _same(_at(original, path), _at(edited, path))]
    if changed:
        named = ", ".join(f"'{text}'" for text in changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        patient = f" ({patient_ref})" if patient_ref else ""
        raise LockedArg(
            f"{named} names the patient{patient}: an edit may not change it. Reject the card "
            "instead if the call is for another patient."
        )
