"""The runs app's part in what happens to a session (sessions_app.signals), connected from RunsConfig.ready()."""

from runs.models import Run
from runs.spine import close_active_run
from runs.states import TerminalReason
from sessions_app.signals import session_deleting


def stop_active_run(sender, *, session, actor_client, **kwargs) -> Run | None:
    """A deleted session's active run ends `user_stopped`, in the delete's transaction; returns it (or None)."""
    return close_active_run(session, TerminalReason.USER_STOPPED, actor_client=actor_client)


def connect() -> None:
    session_deleting.connect(stop_active_run, dispatch_uid="runs.session_hooks.stop_active_run")
