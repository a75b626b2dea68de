"""Condor settings: everything that varies per deployment comes from the environment.

With no configuration at all Condor runs on a SQLite file with in-process
fallbacks (in-memory channel layer, sweeps on a thread), so `make run` works on
a bare machine. `DATABASE_URL` and `REDIS_URL` switch to PostgreSQL and Redis.
"""

from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF

from condor.database_settings import database
from core.env import (
    env_bool,
    env_email,
    env_fraction,
    env_header,
    env_int,
    env_list,
    env_rate,
    env_str,
    env_url,
    local_secret_key,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
# Unset: a random key generated once and kept in a local file, so a fresh clone
# runs without configuration. Deployments with several nodes must set SECRET_KEY.
SECRET_KEY = env_str("SECRET_KEY") or local_secret_key(BASE_DIR / "var" / "secret_key")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    # daphne first: its runserver serves HTTP, websockets and SSE from one process.
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework_api_key",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc as static files: the API docs load nothing from elsewhere
    "django_filters",
    "channels",
    "pgtrigger",
    "axes",
    "csp",
    # Condor's apps, from the top layer down (STYLE.md): each imports only those below it.
    "condor",
    "demo",
    "governance",
    "inbox",
    "approvals",
    "runs",
    "sessions_app",
    "registry",
    "audit",
    "agents",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's session, auth and messages middleware, passed over by an agent's API call (API key,
    # no cookie), which has no use for them (core/browser_middleware.py).
    "core.browser_middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "core.browser_middleware.AuthenticationMiddleware",
    "core.browser_middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # A control character in the path or a query parameter: 400 before any view or query sees it.
    "core.request_limits.ControlCharactersMiddleware",
    # Spans around gate, clarification, decision and resume (a no-op without an OpenTelemetry SDK).
    "core.tracing.TracingMiddleware",
    # Last, so it sees a view's database error first: 503 with Retry-After instead of 500.
    "core.db_unavailable.DatabaseUnavailableMiddleware",
    # After the others, as django-axes asks: turns a locked-out login into its lockout page.
    "axes.middleware.AxesMiddleware",
]

# --- HTTPS and browser hardening; README lists the production values ---------------------
# Off by default so `make run` works on plain http://127.0.0.1; `manage.py check --deploy`
# is clean with the documented production environment (tests/test_production_settings.py).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Behind a TLS-terminating proxy: `X-Forwarded-Proto: https` (only if the proxy always sets it).
SECURE_PROXY_SSL_HEADER = env_header("SECURE_PROXY_SSL_HEADER")
# A deployment that redirects to HTTPS never sends its cookies in clear, unless told otherwise.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", SECURE_SSL_REDIRECT)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", SECURE_SSL_REDIRECT)
# django-csp, on every response: the inbox and the admin load scripts and styles from
# /static/ only (ES modules, no inline script or style attribute), so nothing inline runs.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],  # the inbox stylesheet's check-mark icon is a data: SVG
        "connect-src": [SELF],  # decisions (fetch) and the /ws/inbox/ socket, same origin
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
# -----------------------------------------------------------------------------------------

ROOT_URLCONF = "condor.urls"
WSGI_APPLICATION = "condor.wsgi.application"
ASGI_APPLICATION = "condor.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


DATABASES = {
    "default": database(
        env_url("DATABASE_URL", {"postgres", "postgresql", "pgsql", "sqlite"}), sqlite_path=BASE_DIR / "db.sqlite3"
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_url("REDIS_URL", {"redis", "rediss", "unix"})
# Every key Condor puts in Redis starts with this (channel groups, throttle counters, the
# Celery queue), so several deployments (or test runs) on one Redis database stay apart.
REDIS_PREFIX = env_str("CONDOR_CHANNEL_PREFIX", "condor")
# A receive() waits in Redis with BZPOPMIN blocking 5 s a round (channels_redis'
# brpop_timeout), and redis-py 8 gives up a read after its default socket timeout, also
# 5 s: an idle receive then failed with "Timeout reading", which ended an inbox socket
# and sent a stream to polling. The read timeout must outlast a round.
CHANNEL_LAYER_SOCKET_TIMEOUT_SECONDS = 15
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "core.channel_layer.RedisLayer",  # channels_redis, a lost cancel honoured
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": CHANNEL_LAYER_SOCKET_TIMEOUT_SECONDS}],
                "capacity": 1500,
                "expiry": 30,
                "prefix": REDIS_PREFIX,
            },
        }
    }
else:
    # One process only: fine for `make run`, not for several web nodes.
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Login and API abuse -----------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
SESSION_COOKIE_AGE = env_int("CONDOR_SESSION_AGE_SECONDS", 8 * 3600)  # one shift
# Django's database sessions (their read kept as one text: core/session_store.py), not cached_db: its cache writes are unguarded, so with Redis out a
# reviewer's requests would fail, and a sign-out then could leave the session cached and valid.
SESSION_ENGINE = "core.session_store"
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out login (inbox and admin alike) before any password is checked.
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend; a signed-in user is loaded with their reviewers-group membership.
    "approvals.auth_backends.ReviewerAwareModelBackend",
]
AXES_FAILURE_LIMIT = env_int("CONDOR_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(seconds=env_int("CONDOR_LOGIN_COOLOFF_SECONDS", 900))
# A username from one address: locking a whole address would lock every reviewer behind
# a hospital's NAT after a few typos. The address is REMOTE_ADDR (forwarded headers are
# not trusted), so behind a reverse proxy this is a lock on the username.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_ENABLE_ACCESS_FAILURE_LOG = True  # every failed sign-in stays visible in the admin
AXES_LOCKOUT_CALLABLE = "audit.lockout.locked_out"
# Requests per client and scope (agents/throttling.py); a rate is `N/second|minute|hour|day` or `off`.
CONDOR_THROTTLE_RATES = {
    "default": env_rate("CONDOR_THROTTLE_RATE", "1200/minute"),
    "gate": env_rate("CONDOR_THROTTLE_RATE_GATE", "3000/minute"),  # tool calls and clarifications
}
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle"},
    "api_keys": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "api-keys"},
}
if REDIS_URL:
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # Shared by every web process: the throttle's counters, and the checked API keys, so a
    # revocation strikes them everywhere at once. Short timeouts and no retries: while Redis
    # is out the throttle lets requests through and keys are checked in the database
    # (agents/throttling.py, agents/api_key_cache.py).
    for name in ("throttle", "api_keys"):
        CACHES[name] = {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"{REDIS_PREFIX}-{name}",
            "OPTIONS": {"socket_timeout": 0.25, "socket_connect_timeout": 0.25, "retry": Retry(NoBackoff(), 0)},
        }
# -----------------------------------------------------------------------------------------
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/inbox/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# The admin shows times to the second, in ISO order (condor/formats/en/formats.py).
FORMAT_MODULE_PATH = ["condor.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True  # serve straight from static/ without collectstatic

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "agents.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["agents.auth.IsAgent"],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.negotiation.ContentNegotiation",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["agents.throttling.ClientRateThrottle"],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Condor API",
    "DESCRIPTION": "Human approval between clinical AI agents and the patient data they would change.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/docs/ and /api/redoc/ (core/api_docs.py) from the bundles drf-spectacular-sidecar ships.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Tags and operation ids from the path after /api/v1/ (sessions_create, runs_resume_create).
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.document_run_stream",
        "core.schema.document_not_authenticated",
        "core.schema.document_payload_too_large",
        "core.schema.document_control_characters",
        "core.schema.document_limits",
    ],
    # One name per choice set that several serializers share.
    "ENUM_NAME_OVERRIDES": {
        "RunStateEnum": "runs.states.RUN_STATES",
        "TerminalReasonEnum": "runs.states.TERMINAL_REASONS",
        "GateDecisionEnum": ["allow", "blocked"],
        "ApprovalStatusEnum": "approvals.models.ApprovalStatus",
        "ErrorCodeEnum": "core.errors.STABLE_CODES",
    },
}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": f"{REDIS_PREFIX}:"} if REDIS_URL else {}
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

CONDOR_APPROVAL_TTL_SECONDS = env_int("CONDOR_APPROVAL_TTL_SECONDS", 900)
CONDOR_SUSPEND_TTL_SECONDS = env_int("CONDOR_SUSPEND_TTL_SECONDS", 3600)
# How long a reviewer's claim on a card lasts unless renewed (SPEC section 10).
CONDOR_CLAIM_TTL_SECONDS = env_int("CONDOR_CLAIM_TTL_SECONDS", 300)
# An approval still undecided this far into its TTL is escalated once by the sweep (SPEC section 10).
CONDOR_ESCALATE_AFTER_FRACTION = env_fraction("CONDOR_ESCALATE_AFTER_FRACTION", 0.5)
# Escalation emails: through SMTP when EMAIL_URL is set, else printed to the console (`make run`).
_email = env_email("EMAIL_URL")
if _email:
    EMAIL_BACKEND = _email["EMAIL_BACKEND"]
    EMAIL_HOST, EMAIL_PORT = _email["EMAIL_HOST"], _email["EMAIL_PORT"]
    EMAIL_HOST_USER, EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_USER"], _email["EMAIL_HOST_PASSWORD"]
    EMAIL_USE_TLS, EMAIL_USE_SSL, EMAIL_TIMEOUT = (
        _email["EMAIL_USE_TLS"],
        _email["EMAIL_USE_SSL"],
        _email["EMAIL_TIMEOUT"],
    )
else:
    EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "condor@localhost")
CONDOR_IDLE_TIMEOUT_SECONDS = env_int("CONDOR_IDLE_TIMEOUT_SECONDS", 600)
CONDOR_SWEEP_INTERVAL_SECONDS = env_int("CONDOR_SWEEP_INTERVAL_SECONDS", 30)
# A sweep pass closes runs and expires approvals this many at a time (one transaction a batch)...
CONDOR_SWEEP_BATCH_SIZE = env_int("CONDOR_SWEEP_BATCH_SIZE", 1000)
# ...batch after batch until nothing is due or the pass has run this long (each step still gets one batch).
CONDOR_SWEEP_BUDGET_SECONDS = env_int("CONDOR_SWEEP_BUDGET_SECONDS", 20)
# Worker processes a Celery pass is split over (condor/tasks.py): each walks its own slice of the
# key space. Up to the worker's --concurrency; a large backlog drains that many times faster.
CONDOR_SWEEP_PARTS = env_int("CONDOR_SWEEP_PARTS", 1)
CONDOR_IDEMPOTENCY_TTL_SECONDS = env_int("CONDOR_IDEMPOTENCY_TTL_SECONDS", 86400)
# Largest request body accepted (413 payload_too_large beyond it); see core/body_limit.py.
CONDOR_MAX_BODY_BYTES = env_int("CONDOR_MAX_BODY_BYTES", 1024 * 1024)
# Django's own form and upload parsing (the login page, the admin) stops at the same size; the
# servers' wrappers (core/body_limit.py) refuse a bigger body before Django reads any of it.
DATA_UPLOAD_MAX_MEMORY_SIZE = CONDOR_MAX_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = CONDOR_MAX_BODY_BYTES
# Seconds between SSE heartbeat comments, so proxies keep an idle stream open.
CONDOR_STREAM_HEARTBEAT_SECONDS = env_int("CONDOR_STREAM_HEARTBEAT_SECONDS", 15)
# How long a push after commit may hold its request (or a sweep batch) when Redis hangs; a push
# cut off is left to the drainer (runs/publish.py).
CONDOR_PUSH_TIMEOUT_MS = env_int("CONDOR_PUSH_TIMEOUT_MS", 1000)
# Open (pending) approvals one client may have; a suspend past it is 429 too_many_pending.
CONDOR_MAX_PENDING_PER_CLIENT = env_int("CONDOR_MAX_PENDING_PER_CLIENT", 500)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

CELERY_BEAT_SCHEDULE = {
    # A pass still queued when the next is due is dropped: after a worker outage the queue
    # holds one pass, not one per missed interval.
    "condor-sweep": {
        "task": "condor.sweep",
        "schedule": float(CONDOR_SWEEP_INTERVAL_SECONDS),
        "options": {"expires": float(CONDOR_SWEEP_INTERVAL_SECONDS)},
    },
}
# The audit chains' heads, signed with a key the database never sees, appended to a file the
# deployment keeps append-only (audit/checkpoints.py); beat writes one every interval.
CONDOR_AUDIT_KEY = env_str("CONDOR_AUDIT_KEY")
CONDOR_AUDIT_CHECKPOINT_FILE = env_str("CONDOR_AUDIT_CHECKPOINT_FILE") or None
CONDOR_AUDIT_CHECKPOINT_SECONDS = env_int("CONDOR_AUDIT_CHECKPOINT_SECONDS", 300)
if CONDOR_AUDIT_CHECKPOINT_FILE:
    CELERY_BEAT_SCHEDULE["condor-audit-checkpoint"] = {
        "task": "condor.audit_checkpoint",
        "schedule": float(CONDOR_AUDIT_CHECKPOINT_SECONDS),
        "options": {"expires": float(CONDOR_AUDIT_CHECKPOINT_SECONDS)},
    }
# Without a broker (no REDIS_URL) nothing runs Celery beat: a serving process (condor/wsgi.py,
# condor/asgi.py; not a management command) sweeps on a thread of its own, unless this says otherwise.
CONDOR_INPROCESS_SWEEPS = env_bool("CONDOR_INPROCESS_SWEEPS", not REDIS_URL)

# How long a checked API key is trusted without asking the database (agents/api_key_cache.py): a
# revocation the ORM does not see (a bulk update, SQL) applies within it.
CONDOR_API_KEY_CACHE_SECONDS = env_int("CONDOR_API_KEY_CACHE_SECONDS", 5)
# While the inbox websocket is down, the page re-reads the pending cards this often.
CONDOR_INBOX_POLL_SECONDS = env_int("CONDOR_INBOX_POLL_SECONDS", 10)
# Canonical-JSON bytes of args a card carries; past it the card says so and fetches the rest on demand.
CONDOR_CARD_ARGS_MAX_BYTES = env_int("CONDOR_CARD_ARGS_MAX_BYTES", 16 * 1024)
