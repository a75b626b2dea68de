"""Owner-scoped run lookups, as sessions_app.scoping's: another client's run, or a run of a deleted
session, is 404."""

from agents.auth import calling_client
from core.errors import NotFound
from runs.models import Run


def owned_run(request, run_id) -> Run:
    run = (
        Run.objects.select_related("session")
        .filter(pk=run_id, session__client=calling_client(request), session__deleted_at__isnull=True)
        .first()
    )
    if run is None:
        raise NotFound("No such run.")
    return run
