"""The runs app's answers to what sessions need from it (the slots of sessions_app/extensions.py).

Installed from RunsConfig.ready(), so sessions_app reads runs without importing them.
"""

from django.db.models import Exists, Min, OuterRef, Subquery, TextField
from django.db.models.functions import Cast

from runs.models import Run, RunEvent
from runs.spine import close_active_run
from runs.states import RunState, TerminalReason


def run_frames(session) -> list[tuple]:
    # Through the join rather than a list of the session's run ids: no query for the ids and no
    # IN list of hundreds of parameters. Text columns only: the frames as JSON for the caller to
    # parse (a run's rows in one go: Django's JSON converter costs more per row than the parse), the run
    # id as the database writes it (UUID objects cost more to build and to hash than the rest), and
    # no times, whose parsing costs as much.
    return list(_frames_of(session.pk))


def _frames_of(session_id):
    return (_with_frames(RunEvent.objects.filter(run__session=session_id)).order_by("id")
            .values_list(Cast("run_id", TextField()), Cast("frames", TextField())))


def first_frame_times(run_ids) -> dict:
    events = _with_frames(RunEvent.objects.filter(run_id__in=run_ids)).values("run_id").annotate(at=Min("created_at"))
    return {row["run_id"]: row["at"] for row in events.order_by()}


def _with_frames(events):
    return events.exclude(frames=[])


def run_states() -> list[str]:
    return [state.value for state in RunState]


def latest_run_in(sessions, state: str):
    latest = Run.objects.filter(session=OuterRef("pk")).order_by("-created_at").values("state")[:1]
    return sessions.annotate(latest_run_state=Subquery(latest)).filter(latest_run_state=state)


def without_runs(sessions):
    return sessions.filter(~Exists(Run.objects.filter(session=OuterRef("pk"))))


def stop_active_run(session, *, actor_client) -> Run | None:
    return close_active_run(session, TerminalReason.USER_STOPPED, actor_client=actor_client)


def install() -> None:
    from sessions_app import extensions

    for name in ("run_frames", "first_frame_times", "run_states", "latest_run_in", "without_runs", "stop_active_run"):
        getattr(extensions, name).install(globals()[name])
