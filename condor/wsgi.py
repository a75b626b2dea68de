"""WSGI entry point: the REST API and admin under gunicorn threads (the fast path for sync DRF views)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor.settings")
django_wsgi_app = get_wsgi_application()

from core.body_limit import WSGIBodySizeLimit  # noqa: E402  (after set-up, as the imports below)

application = WSGIBodySizeLimit(django_wsgi_app)  # the body limit, before Django reads a byte

from condor.gc_settings import configure_gc_for_serving  # noqa: E402  (after set-up: it freezes what is loaded)
from condor.inprocess import start_if_configured  # noqa: E402
from runs.publish import keep_a_loop_per_thread  # noqa: E402

keep_a_loop_per_thread()  # gunicorn's request threads live as long as the process
start_if_configured()  # no broker (no REDIS_URL): this serving process sweeps
configure_gc_for_serving()
