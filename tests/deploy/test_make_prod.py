"""`make prod` (README "Production layout"): it comes up on its one port, answers there, and Ctrl-C stops it all."""

import signal
import socket
import tempfile
from pathlib import Path

import pytest

from runs.models import Heartbeat
from tests.deploy.websocket import WebSocket
from tests.helpers.approval_loop import suspend
from tests.helpers.processes import REPO, Service, alive, descendants
from tests.helpers.runs import open_executing_run
from tests.helpers.waits import wait_for
from tests.live.wire import LiveAgent, LiveBrowser, SSEStream, chunk_type

pytestmark = pytest.mark.usefixtures("catalog")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(host: str) -> bool:
    try:
        return LiveAgent(host, None).get("/api/v1/sessions/").status_code in (401, 403)
    except OSError:  # nginx not listening yet, or gunicorn behind it not yet up (502 is an answer too)
        return False


def upgrades(host: str) -> bool:
    """daphne behind nginx answers a websocket upgrade: nginx says 502 until it is up, after gunicorn
    (an upgrade refused by daphne itself, as a stranger's is, is an answer too)."""
    try:
        WebSocket(host, "/ws/inbox/", headers={"Origin": f"http://{host}"}).close()
    except ConnectionError as refused:
        return "upgrade was refused" in str(refused) and " 502 " not in str(refused)
    except OSError:
        return False
    return True


@pytest.fixture
def prod(shared_env):
    """`make prod` on a free port with its own run directory; (service, host). Always stopped."""
    port = free_port()
    run_dir = Path(tempfile.mkdtemp(prefix="condor-prod-"))  # short: unix socket paths are limited
    env = {
        **shared_env,
        "CONDOR_RUN_DIR": str(run_dir),
        "WEB_CONCURRENCY": "1",
        "CELERY_CONCURRENCY": "1",
        "CONDOR_SWEEP_INTERVAL_SECONDS": "1",
    }
    # -o: the venv this suite runs in is the one make would (re)install.
    service = Service(
        "make-prod", ["make", "-o", ".venv/.installed", "prod", f"PORT={port}"], env, ready=r"make prod: Condor on"
    )
    with service:
        host = f"127.0.0.1:{port}"
        wait_for(lambda: answers(host) and upgrades(host), 90, "the API and the inbox socket behind nginx", service.log)
        yield service, host


def test_make_prod_refuses_to_start_without_postgres_and_redis():
    import subprocess

    done = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", "-o", "proxy", "prod"],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "DATABASE_URL is not set" in done.stderr and "REDIS_URL is not set" in done.stderr


def test_make_prod_answers_on_one_port_and_stops_on_ctrl_c(prod, ward_agent, rita):
    service, host = prod
    agent, reviewer = LiveAgent(host, ward_agent.raw_key), LiveBrowser(host, rita)

    page = reviewer.get("/inbox/")  # gunicorn
    assert page.status_code == 200 and b"inbox" in page.content.lower()
    run_id = open_executing_run(agent)  # gunicorn
    with WebSocket(host, "/ws/inbox/", headers={"Origin": f"http://{host}", "Cookie": reviewer.cookie_header}) as inbox:
        assert inbox.receive_json()["type"] == "snapshot"  # daphne, through the upgrade
        with SSEStream(host, f"/api/v1/runs/{run_id}/stream", {"Authorization": f"Api-Key {agent.key}"}) as stream:
            assert stream.response.getheader("x-vercel-ai-ui-message-stream") == "v1"
            approval = suspend(agent, run_id)
            # Both pushed live through nginx: the card to the socket, the chunks to the unbuffered stream.
            assert (
                inbox.receive_until(lambda message: message["type"] == "card.added")[-1]["card"]["id"] == approval["id"]
            )
            stream.until(lambda event: chunk_type(event) == "tool-approval-request")
    # The worker and beat are up too: a sweep pass has run.
    wait_for(lambda: Heartbeat.objects.filter(name="sweep").exists(), 60, "a sweep pass", service.log)

    started = descendants(service.process.pid)
    assert len(started) >= 5  # honcho, gunicorn, daphne, celery worker and beat, nginx (and their children)
    service.signal(signal.SIGINT)  # Ctrl-C in the terminal: the foreground process group
    service.wait(timeout=30)
    wait_for(
        lambda: not any(alive(pid) for pid in started),
        15,
        "every process to exit",
        lambda: f"{[pid for pid in started if alive(pid)]}\n{service.log()}",
    )
    assert not answers(host)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(host.rsplit(":", 1)[1])), timeout=2).close()


def test_the_readme_shows_the_procfile_and_proxy_configuration_make_prod_uses():
    readme = (REPO / "README.md").read_text()
    assert (REPO / "deploy" / "nginx.conf").read_text() in readme
    assert (REPO / "Procfile").read_text() in readme
