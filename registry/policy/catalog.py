"""The built-in static registry: tools whose risk Condor knows without a database row.

Step 2 of policy class resolution reads this. A governance admin's registry row (step 1)
can still override any field, but a tool listed here is never left to client metadata
or to the read default. Read-only at runtime: it is shared by every gate call.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .types import PolicyClass, Tier, ToolSpec, Trust

_READ, _MUTATE, _EXEC, _COMMS = (
    PolicyClass.READ.value,
    PolicyClass.MUTATE.value,
    PolicyClass.EXEC.value,
    PolicyClass.COMMS.value,
)
_LOW, _HIGH = Tier.LOW.value, Tier.HIGH.value

_CATALOG: tuple[ToolSpec, ...] = (
    # High-tier writes: prescriptions, medication changes, billing, signatures.
    ToolSpec(
        "prescribe_medication", _MUTATE, _HIGH,
        description="Prescribe a new medication for the patient: drug, dose, route, frequency and duration.",
    ),
    ToolSpec(
        "change_medication", _MUTATE, _HIGH,
        description="Change the dose, route or frequency of an active medication, or discontinue it.",
    ),
    ToolSpec(
        "submit_billing_claim", _MUTATE, _HIGH,
        description="Submit an insurance claim for an encounter with its diagnosis and procedure codes.",
    ),
    ToolSpec(
        "sign_document", _MUTATE, _HIGH,
        description="Sign a clinical document (letter, discharge summary, referral) on the clinician's behalf.",
        approvals_required=2,  # four eyes: a signature is the clinician's word
    ),
    # Low-tier writes: routine charting the clinician asked for.
    ToolSpec(
        "record_vitals", _MUTATE, _LOW,
        description="Record vital signs such as blood pressure, pulse, temperature, SpO2 and weight.",
    ),
    ToolSpec(
        "write_clinical_note", _MUTATE, _LOW,
        description="Write or amend a progress note in the patient's chart.",
    ),
    ToolSpec(
        "record_allergy", _MUTATE, _LOW,
        description="Record an allergy or intolerance with its reaction and severity.",
    ),
    # Reads.
    ToolSpec(
        "search_patients", _READ,
        description="Search patients by name, date of birth or record number.",
    ),
    ToolSpec(
        "read_document", _READ,
        description="Read a document from the patient's record.",
    ),
    ToolSpec(
        "get_patient_summary", _READ,
        description="Summarise the patient's problems, medications, allergies and recent results.",
    ),
    # Untrusted reads: their results taint the session (SPEC section 2).
    ToolSpec(
        "web_search", _READ, trust=Trust.UNTRUSTED.value,
        description="Search the public web for clinical guidance; results are untrusted.",
    ),
    ToolSpec(
        "parse_uploaded_document", _READ, trust=Trust.UNTRUSTED.value,
        description="Extract text from a document the patient uploaded; its content is untrusted.",
    ),
    # Comms: each may only reach the hosts it declares.
    ToolSpec(
        # The mail server, and the domains recipients may be at: every e-mail address in
        # a comms call's args is a destination too (egress.py). example.org: demo patients.
        "send_email", _COMMS, allowed_hosts=("smtp.clinic.example", "clinic.example", "example.org"),
        description="Send an email to the patient or a colleague through the clinic's mail server.",
    ),
    ToolSpec(
        "create_calendar_event", _COMMS, allowed_hosts=("calendar.clinic.example",),
        description="Book an appointment or reminder in the clinic calendar.",
    ),
    ToolSpec(
        "sync_ehr", _COMMS, allowed_hosts=("ehr.partner.example",),
        description="Push chart updates to the partner hospital's electronic health record.",
    ),
    # Exec.
    ToolSpec(
        "run_script", _EXEC,
        description="Run an analysis script in the sandbox.",
    ),
)  # fmt: skip

STATIC_REGISTRY: Mapping[str, ToolSpec] = MappingProxyType({spec.name: spec for spec in _CATALOG})
