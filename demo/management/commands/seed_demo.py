"""Demo data for `make run`: people to log in as, an agent key, and cards waiting in the inbox."""

import os
from datetime import date

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django.db import transaction

from agents.models import ApiClient, ApiClientKey
from approvals.gate import GateCall, gate_tool_call
from approvals.models import Approval, ApprovalStatus, QuickReason, ReviewTeam
from approvals.suspend import SuspendRequest, persist_suspend
from audit import trail as audit
from governance.accounts import record_user_change, user_snapshot
from governance.management.commands.create_api_client import record_created
from runs import spine
from sessions_app.messages import append_message
from sessions_app.models import Session

PEOPLE = (
    # username, password, group, superuser
    ("reviewer", "condor-review", "reviewers", False),
    ("compliance", "condor-audit", "compliance", False),
    ("admin", "condor-admin", "governance", True),
    # A second governance admin: grants of governance and risk-lowering registry changes need two.
    ("admin2", "condor-admin2", "governance", False),
    ("ward4", "condor-ward4", "reviewers", False),
    ("ward6", "condor-ward6", "reviewers", False),
)
# Two wards, a reviewer each, and `reviewer` in both: cards route by the session's care unit.
TEAMS = (("Ward 4", ["Ward 4"], ("ward4", "reviewer")), ("Ward 6", ["Ward 6"], ("ward6", "reviewer")))
# Governance's quick rejection reasons, offered in the inbox's reject form.
QUICK_REASONS = (
    "Duplicate of an existing order",
    "Wrong patient or encounter",
    "Not indicated for this patient",
    "Dose outside the usual range: please review",
    "Needs discussion with the responsible clinician",
)
KEY_FILE = settings.BASE_DIR / "var" / "demo-agent.key"


class Command(BaseCommand):
    help = "Create demo users, a demo agent key and a few pending approvals (idempotent)."

    def handle(self, *args, **options):
        for username, password, group, superuser in PEOPLE:
            self._person(username, password, group, superuser)
        self._teams()
        self._quick_reasons()
        client, key = self._agent()
        if not Approval.objects.filter(session__client=client, status=ApprovalStatus.PENDING).exists():
            self._pending_cards(client)
        self.stdout.write(self.style.SUCCESS("Demo ready."))
        base = f"http://127.0.0.1:{os.environ.get('PORT', '8000')}"
        self.stdout.write(
            f"  Inbox:  {base}/inbox/  (reviewer / condor-review: both wards; "
            f"ward4 / condor-ward4, ward6 / condor-ward6: one ward each)"
        )
        self.stdout.write("  Four eyes: sign_document needs two reviewers' approvals.")
        self.stdout.write(
            f"  Admin:  {base}/admin/  (admin / condor-admin and admin2 / condor-admin2: governance, "
            "two for four eyes; compliance / condor-audit)"
        )
        self.stdout.write(f"  Agent:  Authorization: Api-Key {key}")

    @transaction.atomic
    def _person(self, username, password, group, superuser):
        user = User.objects.filter(username=username).first()
        before = user_snapshot(user) if user is not None else None
        if user is None:
            user = User(username=username, is_staff=group != "reviewers", is_superuser=superuser)
            user.set_password(password)
            user.save()
        user.groups.add(Group.objects.get(name=group))
        after = user_snapshot(user)
        if after != before:
            record_user_change(
                "created" if before is None else "updated",
                user.pk,
                before,
                after,
                actor_system=audit.command("seed_demo"),
            )

    @transaction.atomic
    def _teams(self):
        for name, units, members in TEAMS:
            team, created = ReviewTeam.objects.get_or_create(name=name, defaults={"care_units": units})
            if created:
                team.members.set(User.objects.filter(username__in=members))
                audit.record(
                    audit.Kind.REVIEW_TEAM,
                    actor_system=audit.command("seed_demo"),
                    decision="created",
                    data={"team_id": team.pk, "before": None, "after": team.snapshot()},
                )

    @transaction.atomic
    def _quick_reasons(self):
        for position, text in enumerate(QUICK_REASONS):
            reason, created = QuickReason.objects.get_or_create(text=text, defaults={"position": position})
            if created:
                audit.record(
                    audit.Kind.QUICK_REASON,
                    actor_system=audit.command("seed_demo"),
                    decision="created",
                    data={"quick_reason_id": reason.pk, "before": None, "after": reason.snapshot()},
                )

    @transaction.atomic
    def _agent(self):
        client = ApiClient.objects.filter(name="demo-agent").first()
        if client is not None and KEY_FILE.exists():
            return client, KEY_FILE.read_text().strip()
        created = client is None
        if created:
            client = ApiClient.objects.create(name="demo-agent")
        key_row, key = ApiClientKey.objects.create_key(name="demo-agent key", client=client)
        record_created(audit.command("seed_demo"), *([client] if created else []), key_row)
        KEY_FILE.parent.mkdir(parents=True, exist_ok=True)
        KEY_FILE.write_text(key)
        KEY_FILE.chmod(0o600)
        return client, key

    def _pending_cards(self, client):
        session = Session.objects.create(
            client=client,
            title="Ward 4, bed 12: follow-up",
            patient_ref="MRN-20417",
            care_unit="Ward 4",
            autonomy="guarded",
            consent=True,
            age_band="adult",
        )
        run = spine.open_run(session)
        run = spine.transition(run.pk, "executing")
        _conversation(
            session,
            run,
            "Follow-up for his chest infection: he is still coughing, and his INR "
            "was high this morning. Sort out his medicines.",
            "His sputum culture grew a sensitive organism and he has no recorded penicillin allergy, so "
            "I'm proposing a 7-day course of amoxicillin. His INR of 4.8 with bruising puts him at "
            "bleeding risk on warfarin, so I'm also proposing to stop it, and recording today's "
            "observations.",
        )
        calls = [
            GateCall(
                "call-rx-1",
                "step-1",
                "prescribe_medication",
                "create",
                {
                    "patient_ref": "MRN-20417",
                    "drug": "amoxicillin",
                    "dose_mg": 500,
                    "route": "oral",
                    "frequency": "every 8 hours",
                    "days": 7,
                },
                _why(
                    "Persistent productive cough; sputum culture grew Haemophilus influenzae sensitive to "
                    "amoxicillin, and no penicillin allergy is recorded."
                ),
            ),
            GateCall(
                "call-med-2",
                "step-1",
                "change_medication",
                "discontinue",
                {"patient_ref": "MRN-20417", "medication": "warfarin", "reason": "bleeding risk"},
                _why(
                    "INR 4.8 this morning (target 2–3) with new bruising: stop warfarin and recheck the INR "
                    "tomorrow, as the anticoagulation guideline advises."
                ),
            ),
            GateCall(
                "call-vitals-3",
                "step-1",
                "record_vitals",
                "create",
                {"patient_ref": "MRN-20417", "heart_rate": 88, "bp": "128/82"},
                _why("Today's observations from the nurse's round, to chart with the review."),
            ),
        ]
        for call in calls:
            gate_tool_call(run, call, client=client)
            run.refresh_from_db()
        self._signature(client)
        # An allergy to something the run does not order: a question about penicillin beside the
        # amoxicillin above would leave a penicillin prescribed while its allergy is still unknown.
        persist_suspend(
            run.pk,
            SuspendRequest(
                tool_call_id="call-allergy-4",
                step_id="step-2",
                tool="record_allergy",
                op="create",
                args={"patient_ref": "MRN-20417", "substance": "codeine"},
                rule_id="clarification.requested",
                explanation="The agent needs more information to continue.",
                hitl_tier=None,
                kind="clarification",
                message="What reaction did the patient have to codeine, and how severe was it?",
                missing=(
                    {
                        "name": "severity",
                        "hint": {"label": "Severity", "options": ["mild", "moderate", "severe"], "radio": True},
                    },
                    {
                        "name": "reactions",
                        "hint": {
                            "label": "Reactions",
                            "multiple": True,
                            "options": ["rash", "hives", "anaphylaxis", "nausea"],
                        },
                    },
                    {"name": "onset", "type": "date", "hint": {"label": "Onset", "max": date.today().isoformat()}},
                    {"name": "notes", "hint": {"label": "Notes", "textarea": True, "required": False}},
                ),
            ),
            client=client,
        )

    def _signature(self, client):
        """A Ward 6 card that needs four eyes (sign_document): only ward6 and reviewer see it."""
        session = Session.objects.create(
            client=client,
            title="Ward 6, bed 1: discharge",
            patient_ref="MRN-30112",
            care_unit="Ward 6",
            autonomy="guarded",
            consent=True,
            age_band="adult",
        )
        run = spine.transition(spine.open_run(session).pk, "executing")
        _conversation(
            session,
            run,
            "Discharge summary 8812 is ready for Dr. Okafor's signature.",
            "The summary is complete and Dr. Okafor has reviewed it; I'm asking to sign it on her "
            "behalf so it reaches the GP today.",
        )
        gate_tool_call(
            run,
            GateCall(
                "call-sign-5",
                "step-1",
                "sign_document",
                "sign",
                {"patient_ref": "MRN-30112", "document": "discharge-summary-8812", "signer": "Dr. Okafor"},
                _why(
                    "Dr. Okafor reviewed discharge summary 8812 and asked for it to be signed "
                    "on her behalf so the GP has it on the day of discharge."
                ),
            ),
            client=client,
        )


def _why(rationale: str) -> dict:
    """A call's metadata with its rationale: the reviewer's card shows it as the agent's reason."""
    return {"rationale": rationale}


def _conversation(session, run, asked: str, answered: str) -> None:
    """The turn before the run's calls, as a chat front end stores it: the card shows it folded."""
    append_message(session, role="user", parts=[{"type": "text", "text": asked}])
    append_message(session, role="assistant", parts=[{"type": "text", "text": answered}], run_id=run.pk)
