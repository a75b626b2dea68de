"""What sessions_app needs from the apps built on it, installed by them: sessions_app never imports them.

Dependencies run one way: condor ← sessions_app ← runs ← approvals (STYLE.md).
Yet a session's history folds in its runs' stream frames, its list filters by
the state of its latest run, deleting it stops its active run, and re-linking its
patient waits until no approval is open. Each is a slot here that runs fills from
RunsConfig.ready() (runs/session_hooks.py), or approvals from ApprovalsConfig.ready()
(approvals/bound_context.py). An empty slot is a configuration error when called,
never a silent nothing.
"""

from django.core.exceptions import ImproperlyConfigured


class Slot:
    def __init__(self, name: str):
        self.name, self._function = name, None

    def install(self, function) -> None:
        self._function = function

    def __call__(self, *args, **kwargs):
        if self._function is None:
            raise ImproperlyConfigured(f"sessions_app.extensions.{self.name} is empty: the runs or approvals app "
                                       "fills it in its AppConfig.ready().")
        return self._function(*args, **kwargs)


# (session) -> [(run id, frames)]: its runs' persisted stream chunks in commit order, a row an event that
# had any; both as text, the id as the database writes it (Cast to text, as history reads its messages').
run_frames = Slot("run_frames")
# (run ids) -> {run_id: when its first frame was persisted}.
first_frame_times = Slot("first_frame_times")
# () -> the run states, as strings.
run_states = Slot("run_states")
# (queryset of sessions, state) -> those whose latest run is in `state`.
latest_run_in = Slot("latest_run_in")
# (queryset of sessions) -> those that never opened a run.
without_runs = Slot("without_runs")
# (locked session, *, actor_client) -> the run it stopped `user_stopped` (None if none was active).
stop_active_run = Slot("stop_active_run")
# (session) -> whether it holds an approval still pending, or approved and not yet used (approvals fills it).
has_open_approvals = Slot("has_open_approvals")
