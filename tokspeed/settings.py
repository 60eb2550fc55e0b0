"""tokspeed settings, read from the environment (docs/operations.md lists them)."""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

from .env import envbool, envfloat, envint, envlist, read_secret
from .state import secret_path, var_dir

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = var_dir()

DEBUG = envbool("DEBUG", False)
# Without SECRET_KEY in the environment, the per-install secret kept in VAR_DIR: every entry point
# makes it with DEBUG on (tokspeed.state.settle_secret), `manage.py up` always.
SECRET_KEY = os.environ.get("SECRET_KEY") or read_secret(secret_path())
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    # The admin without autodiscovery at start-up: tokspeed/urls.py discovers the admin modules
    # when a web process loads its URLs, so speedtest and workers never import the admin forms.
    "django.contrib.admin.apps.SimpleAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / Redoc served locally: no CDN
    "providers",
    "benchmarks",
    "alerts",
    "advisor",
    "dashboard",
    "axes",  # login attempts limited per account and per address
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files (admin CSS, API docs) straight from gunicorn, after `collectstatic`.
    "dashboard.middleware.StaticFiles",  # WhiteNoise
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.middleware.RefuseNulQueryMiddleware",
    "dashboard.middleware.ReplicaReadsMiddleware",  # read-only views may read the replica
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

ROOT_URLCONF = "tokspeed.urls"
WSGI_APPLICATION = "tokspeed.wsgi.application"

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
                "dashboard.context_processors.public_dashboard",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'tokspeed.sqlite3'}"),
        conn_max_age=envint("DB_CONN_MAX_AGE", 60),
        # A persistent connection is checked before a request reuses it, so the first request
        # after a database restart reconnects instead of answering 500.
        conn_health_checks=True,
    )
}
# Workers ride out a database that is away for up to this long (reconnect, retry with capped
# backoff) before giving up on a write: benchmarks/resilience.py.
TOKSPEED_DB_OUTAGE_S = envfloat("TOKSPEED_DB_OUTAGE_S", 90.0)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Workers, beat and the web server share one file: wait for locks instead of failing.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # SQLite builds the covering indexes (benchmarks.Run) without their INCLUDE columns: nothing
    # to act on, so `manage.py migrate` does not warn of it (models.W040).
    SILENCED_SYSTEM_CHECKS = ["models.W040"]
# A read replica (PostgreSQL streaming replica): read-only pages and API (a fixed list,
# dashboard/middleware.py REPLICA_VIEWS) read it; writes, workers, admin and every page shown
# right after a write read the primary. A client that just wrote (POST, PUT, PATCH, DELETE)
# reads the primary for REPLICA_PIN_S seconds (a cookie), longer than the replica's usual lag.
DATABASE_REPLICA_URL = os.environ.get("DATABASE_REPLICA_URL", "")
TOKSPEED_REPLICA_PIN_S = envint("TOKSPEED_REPLICA_PIN_S", 10)
DATABASE_ROUTERS: list[str] = []
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = dj_database_url.parse(
        DATABASE_REPLICA_URL,
        conn_max_age=envint("DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
    # Tests (and `migrate`) treat it as the primary seen through another connection.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    DATABASE_ROUTERS = ["tokspeed.db_router.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out account or address
    "django.contrib.auth.backends.ModelBackend",
]
# Failed logins: after AXES_FAILURE_LIMIT failures an account, and separately an address, is
# locked out for AXES_COOLOFF_MIN minutes. Counted in the database, so every web process shares it.
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MIN", 15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # no start-up banner on stderr: commands print one line on error
# Behind N proxies, the client's address is read from X-Forwarded-For (0: the socket's address).
if envint("AXES_PROXY_COUNT", 0):
    AXES_IPWARE_PROXY_COUNT = envint("AXES_PROXY_COUNT", 0)
    AXES_IPWARE_META_PRECEDENCE_ORDER = ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"]
else:
    AXES_IPWARE_META_PRECEDENCE_ORDER = ["REMOTE_ADDR"]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "static"))

# --- HTTPS (production behind TLS; docs/operations.md "Production") -------------------------
# Each is off by default: `make run` serves plain HTTP on loopback.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", False)
# The header a TLS-terminating proxy sets, e.g. X-Forwarded-Proto (its value must be "https").
# Set it only behind such a proxy: a client could send the header itself otherwise.
_PROXY_SSL_HEADER = os.environ.get("SECURE_PROXY_SSL_HEADER", "").strip()
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _PROXY_SSL_HEADER.upper().replace("-", "_"), "https") if _PROXY_SSL_HEADER else None
)

# --- tokspeed -------------------------------------------------------------------------------
# Dashboard and read API without login (a team's internal deployment, or a demo).
TOKSPEED_PUBLIC_DASHBOARD = envbool("TOKSPEED_PUBLIC_DASHBOARD", False)
# Base URLs that resolve to private or loopback addresses are refused unless this is on.
TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = envbool("TOKSPEED_ALLOW_PRIVATE_ENDPOINTS", DEBUG)
# Absolute URL of the dashboard, used in emails.
TOKSPEED_BASE_URL = os.environ.get("TOKSPEED_BASE_URL", "http://localhost:8000").rstrip("/")
# Stream limits (seconds, bytes): every request has all four.
TOKSPEED_CONNECT_TIMEOUT_S = envfloat("TOKSPEED_CONNECT_TIMEOUT_S", 10.0)
TOKSPEED_IDLE_TIMEOUT_S = envfloat("TOKSPEED_IDLE_TIMEOUT_S", 120.0)
TOKSPEED_DEADLINE_S = envfloat("TOKSPEED_DEADLINE_S", 600.0)
TOKSPEED_MAX_BYTES = envint("TOKSPEED_MAX_BYTES", 16 * 1024 * 1024)

# Exports: a CSV request over STREAM_MAX_ROWS rows (or with background=1) becomes a background
# job writing a compressed file here, kept KEEP_HOURS hours.
TOKSPEED_EXPORT_DIR = os.environ.get("TOKSPEED_EXPORT_DIR", str(VAR_DIR / "exports"))
TOKSPEED_EXPORT_STREAM_MAX_ROWS = envint("TOKSPEED_EXPORT_STREAM_MAX_ROWS", 2_000_000)
TOKSPEED_EXPORT_KEEP_HOURS = envint("TOKSPEED_EXPORT_KEEP_HOURS", 72)
# Per signed-in user: background exports pending or running at once, and asked for in an hour;
# past either the request is answered 429 with Retry-After (docs/operations.md).
TOKSPEED_EXPORT_MAX_ACTIVE_PER_USER = envint("TOKSPEED_EXPORT_MAX_ACTIVE_PER_USER", 3)
TOKSPEED_EXPORT_MAX_PER_HOUR_PER_USER = envint("TOKSPEED_EXPORT_MAX_PER_HOUR_PER_USER", 20)
# Background exports run on their own queue and worker: the tick never waits behind one.
TOKSPEED_EXPORT_QUEUE = os.environ.get("TOKSPEED_EXPORT_QUEUE", "exports")

# Retention: raw samples of runs slotted more than this many days ago are deleted daily (runs,
# their summaries and the rollups are kept forever); 0 keeps samples forever.
TOKSPEED_SAMPLE_RETENTION_DAYS = envint("TOKSPEED_SAMPLE_RETENTION_DAYS", 400)

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://localhost//")
if CELERY_BROKER_URL.startswith("filesystem"):
    # The embedded broker: one folder of message files that every process shares (made when
    # Celery is set up, tokspeed/celery.py; never when settings are read).
    _BROKER_DIR = Path(os.environ.get("TOKSPEED_BROKER_DIR", VAR_DIR / "broker"))
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "control_folder": str(_BROKER_DIR / "control"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "store_processed": False,
    }
elif CELERY_BROKER_URL.startswith(("redis", "sentinel")):
    # Redis: an unacked message (its worker died) is redelivered after this many seconds. Keep
    # it above TOKSPEED_RUN_LEASE_S and below TOKSPEED_RUN_STALE_S, so a redelivered run resumes.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": envint("TOKSPEED_BROKER_VISIBILITY_TIMEOUT_S", 300),
        "unacked_restore_interval": 10,
        "unacked_restore_throttle": 1,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Cache (API throttle counters): shared by every web process --------------------------------
# Redis when the broker is Redis (or TOKSPEED_CACHE_URL names one), else a database table (made
# by dashboard's migration 0001), so two gunicorn workers never each count half of the requests.
TOKSPEED_CACHE_URL = os.environ.get("TOKSPEED_CACHE_URL") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else ""
)
if TOKSPEED_CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": TOKSPEED_CACHE_URL,
            "KEY_PREFIX": "tokspeed-cache",
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "tokspeed_cache",
        }
    }
# Read API and dashboard responses kept in CACHES until a run finishes (dashboard/caching.py);
# off: every request runs its queries (ETag and 304 still answered).
TOKSPEED_RESPONSE_CACHE = envbool("TOKSPEED_RESPONSE_CACHE", True)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Backstops against slow growth of a pool process (the cause found is fixed; docs/operations.md): a
# process is replaced after this many tasks, or once its resident memory passes this (KiB).
# 0 turns a backstop off (Celery's pool refuses 0 itself: None means never).
CELERY_WORKER_MAX_TASKS_PER_CHILD = envint("TOKSPEED_WORKER_MAX_TASKS_PER_CHILD", 200) or None
CELERY_WORKER_MAX_MEMORY_PER_CHILD = (
    envint("TOKSPEED_WORKER_MAX_MEMORY_PER_CHILD_KB", 400_000) or None
)
# Central work (tick, evaluations, email); probes run on their vantage's queue.
CELERY_TASK_DEFAULT_QUEUE = "tokspeed"
# Background exports on their own queue (a worker of their own in `manage.py up`): a viewer's
# exports never delay the tick or an evaluation on the central queue.
CELERY_TASK_ROUTES = {
    "dashboard.build_export": {"queue": TOKSPEED_EXPORT_QUEUE},
    "dashboard.exports_housekeeping": {"queue": TOKSPEED_EXPORT_QUEUE},
}
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Each entry's "schedule" is a cron line (minute hour day-of-month month day-of-week, in
# CELERY_TIMEZONE): tokspeed/celery.py makes it Celery's crontab when the app is configured, so
# reading settings (speedtest, the web) never imports Celery.
CELERY_BEAT_SCHEDULE = {
    # The tick claims due slots; an unconsumed tick is useless a minute later, so it expires.
    "tick": {"task": "benchmarks.tasks.tick", "schedule": "* * * * *", "options": {"expires": 55}},
    "exports": {"task": "dashboard.exports_housekeeping", "schedule": "*/5 * * * *"},
    # The API throttle's counters of ended windows (without Redis, a row per client a window).
    "throttle-windows": {"task": "dashboard.forget_throttle_windows", "schedule": "*/10 * * * *"},
    # Off-peak: deletes samples past TOKSPEED_SAMPLE_RETENTION_DAYS in short batches.
    "expire-samples": {
        "task": "benchmarks.tasks.expire_samples",
        "schedule": "40 4 * * *",
    },
    # PostgreSQL: the sample partitions of this month and the next three exist before use.
    "sample-partitions": {
        "task": "benchmarks.tasks.ensure_sample_partitions",
        "schedule": "20 4 * * *",
    },
    # Long windows are read pre-merged through yesterday; until a day's are written (a few
    # seconds after midnight UTC) boards merge day and month rollups instead, slower.
    "window-rollups": {
        "task": "benchmarks.tasks.refresh_window_rollups",
        "schedule": "*/10 * * * *",
        "options": {"expires": 540},
    },
    # The 72 h / 7 d board rows whose oldest run left the window, computed again.
    "window-figures": {
        "task": "benchmarks.tasks.refresh_window_figures",
        "schedule": "*/2 * * * *",
        "options": {"expires": 110},
    },
}
# Runs: a worker heartbeats every LEASE/3 s; a run silent for LEASE s may be taken over by a
# redelivered task; silent for STALE s, the tick fails it; queued but not picked up for
# QUEUED_TIMEOUT s, the tick skips it. A run started more than MAX_ATTEMPTS times fails.
TOKSPEED_RUN_LEASE_S = envint("TOKSPEED_RUN_LEASE_S", 60)
TOKSPEED_RUN_STALE_S = envint("TOKSPEED_RUN_STALE_S", 900)
TOKSPEED_RUN_QUEUED_TIMEOUT_S = envint("TOKSPEED_RUN_QUEUED_TIMEOUT_S", 6 * 3600)
TOKSPEED_RUN_MAX_ATTEMPTS = envint("TOKSPEED_RUN_MAX_ATTEMPTS", 3)
# A run still queued REPUBLISH_S after it was published (its message was lost, e.g. a Redis
# restart without persistence) is published again by the tick; after MAX_PUBLISHES tries it is
# failed with a reason. The claim makes a duplicate message harmless.
TOKSPEED_RUN_REPUBLISH_S = envint("TOKSPEED_RUN_REPUBLISH_S", 300)
TOKSPEED_RUN_MAX_PUBLISHES = envint("TOKSPEED_RUN_MAX_PUBLISHES", 3)
# One run per endpoint and vantage in flight: a run of the same slot (another workload) waits
# and is retried after BUSY_RETRY_S; a run of a later slot waits too while it is less than
# LATE_S late, then is skipped with a reason. LATE_S is also how late a slot whose tick was
# missed (beat or database down) may still be caught up. Keep LATE_S above LEASE_S: a run whose
# worker died stops holding the next slot back once its lease runs out.
TOKSPEED_RUN_BUSY_RETRY_S = envint("TOKSPEED_RUN_BUSY_RETRY_S", 15)
TOKSPEED_RUN_LATE_S = envint("TOKSPEED_RUN_LATE_S", 90)
# Circuit breaker: after BREAKER_RUNS failed runs in a row whose errors were all timeouts, an
# endpoint gets one short request (max BREAKER_PROBE_TOKENS tokens, idle timeout
# BREAKER_PROBE_TIMEOUT_S) before a whole run is spent on it.
TOKSPEED_BREAKER_RUNS = envint("TOKSPEED_BREAKER_RUNS", 2)
TOKSPEED_BREAKER_PROBE_TOKENS = envint("TOKSPEED_BREAKER_PROBE_TOKENS", 16)
TOKSPEED_BREAKER_PROBE_TIMEOUT_S = envfloat("TOKSPEED_BREAKER_PROBE_TIMEOUT_S", 15.0)
# Workload ceiling: requests a run holds at once (concurrency) and the bytes their prompts and
# replies hold at once (concurrency × (prompt + context + max output) × ~4 bytes per token).
TOKSPEED_MAX_CONCURRENCY = envint("TOKSPEED_MAX_CONCURRENCY", 256)
TOKSPEED_MAX_REQUESTS_PER_RUN = envint("TOKSPEED_MAX_REQUESTS_PER_RUN", 5_000)
TOKSPEED_MAX_INFLIGHT_BYTES = envint("TOKSPEED_MAX_INFLIGHT_BYTES", 256 * 1024 * 1024)
# /health/: beat's tick must have run within TICK_S, the oldest due run must have waited less
# than QUEUED_S, a worker must have been seen within WORKER_S.
TOKSPEED_HEALTH_TICK_S = envint("TOKSPEED_HEALTH_TICK_S", 180)
TOKSPEED_HEALTH_QUEUED_S = envint("TOKSPEED_HEALTH_QUEUED_S", 900)
TOKSPEED_HEALTH_WORKER_S = envint("TOKSPEED_HEALTH_WORKER_S", 120)
# After downtime only the latest missed slot runs; older ones within this window are recorded.
TOKSPEED_MISSED_SLOTS_LOOKBACK_H = envint("TOKSPEED_MISSED_SLOTS_LOOKBACK_H", 24)

# --- Email ----------------------------------------------------------------------------------
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 20)
# The file backend's folder (`make run` writes alert emails there; /debug/mail/ lists them).
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "tokspeed <tokspeed@localhost>")
ALERT_EMAILS = envlist("ALERT_EMAILS")

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an unauthenticated call gets 401 with `WWW-Authenticate: Token`.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Reads follow TOKSPEED_PUBLIC_DASHBOARD; writes need staff (dashboard/api/permissions.py).
    "DEFAULT_PERMISSION_CLASSES": ["dashboard.api.permissions.ReadPublicOrAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "dashboard.api.pagination.Pages",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "dashboard.api.throttling.AnonThrottle",
        "dashboard.api.throttling.UserThrottle",
    ],
    # Anonymous readers are counted by address: the socket's, or behind AXES_PROXY_COUNT proxies
    # the one they saw (never a header the client wrote itself).
    "NUM_PROXIES": envint("AXES_PROXY_COUNT", 0),
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("TOKSPEED_THROTTLE_ANON", "120/min"),
        "user": os.environ.get("TOKSPEED_THROTTLE_USER", "1200/min"),
    },
    "EXCEPTION_HANDLER": "dashboard.api.errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        # JSON nested deeper than a few levels, or bodies past the limit, are a JSON 400.
        "dashboard.api.parsers.GuardedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
# Request bodies: Django refuses larger ones (the API answers a JSON 400 naming the limit).
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("TOKSPEED_MAX_REQUEST_BYTES", 256 * 1024)
TOKSPEED_MAX_JSON_DEPTH = envint("TOKSPEED_MAX_JSON_DEPTH", 10)
# Triggering runs (API): staff or the "operators" group, within a per-user budget in US dollars
# at the endpoints' list prices (output priced at the workload's max output tokens, an upper
# bound), over the last hour and the last 24 hours. 0 turns that limit off.
TOKSPEED_TRIGGER_QUOTA_HOUR_USD = envfloat("TOKSPEED_TRIGGER_QUOTA_HOUR_USD", 5.0)
TOKSPEED_TRIGGER_QUOTA_DAY_USD = envfloat("TOKSPEED_TRIGGER_QUOTA_DAY_USD", 20.0)
# A real endpoint without a list price counts at this price per million tokens (input and
# output) against the quotas above; the simulator is free.
TOKSPEED_TRIGGER_UNPRICED_PER_MTOK_USD = envfloat("TOKSPEED_TRIGGER_UNPRICED_PER_MTOK_USD", 15.0)
TOKSPEED_TRIGGER_MAX_REPETITIONS = envint("TOKSPEED_TRIGGER_MAX_REPETITIONS", 100)
# Email links expire: unsubscribe links after LINK_MAX_AGE days (an email's link keeps working
# for a month), subscription confirmation links after CONFIRM_MAX_AGE days.
ALERTS_LINK_MAX_AGE_DAYS = envint("ALERTS_LINK_MAX_AGE_DAYS", 30)
ALERTS_CONFIRM_MAX_AGE_DAYS = envint("ALERTS_CONFIRM_MAX_AGE_DAYS", 7)
SPECTACULAR_SETTINGS = {
    "TITLE": "tokspeed API",
    "DESCRIPTION": (
        "How fast each LLM provider really is: runs, samples, leaderboards, alerts. "
        "Authenticate with a session or a token (`Authorization: Token <key>`; create one with "
        "`manage.py drf_create_token USERNAME` or in the admin). Times are milliseconds, speeds "
        "tokens per second. decode_tps = (tokens − 1) / ((last_token_ms − start) / 1000) = "
        "1000 / tpot_ms: with reasoning_mode none or streamed, tokens = output_tokens and start "
        "= ttft_ms; with summarized or hidden, answer tokens only and start = ttfa_ms. ITL "
        "percentiles use only gaps between text events that arrived in network reads of their "
        "own (coalesced_events, saturated). Error categories: rate_limited, overloaded, auth, "
        "bad_request, not_found, quota_exhausted, unreachable, timeout, server_error, "
        "stream_broken; outcomes: truncated, content_filtered, refused (refused samples keep "
        "their timings and never enter speed statistics). API keys are never accepted or "
        "returned: only the name of the environment variable that holds one."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Assets from drf-spectacular-sidecar's static files: the docs page loads nothing from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No badge from validator.swagger.io: the page talks to this server only.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "dashboard.api.schema.add_error_responses",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}

# --- Alerts (regression detection and email; docs/design.md §7 defaults) -------------------
# The unit of evidence is the run (one value per run: the median of its samples), so every count
# here is in runs. Arms (alerts/detector.py): the last RECENT hours, the last LONG hours (small
# shifts; also one arm per time-of-day slot), a line through the last TREND hours (drift). The
# baseline is the BASELINE days before the long window (within the segment), modelled by time of
# day and, with MIN_WEEK_RUNS weekend and weekday runs, weekend vs weekday; its own noise per slot
# and autocorrelation set each series' bar. Defaults tuned with bench/detector.py (issue 9).
ALERTS_RECENT_HOURS = envint("ALERTS_RECENT_HOURS", 24)
ALERTS_LONG_HOURS = envint("ALERTS_LONG_HOURS", 72)
ALERTS_TREND_HOURS = envint("ALERTS_TREND_HOURS", 168)
ALERTS_BASELINE_DAYS = envint("ALERTS_BASELINE_DAYS", 28)
ALERTS_MIN_RECENT_RUNS = envint("ALERTS_MIN_RECENT_RUNS", 2)
ALERTS_MIN_BASELINE_RUNS = envint("ALERTS_MIN_BASELINE_RUNS", 12)
# ...spread over at least this many days (first to last run): an hourly series has its 12 runs
# in half a day, which shows neither every time of day nor how one day differs from the next.
ALERTS_MIN_BASELINE_DAYS = envfloat("ALERTS_MIN_BASELINE_DAYS", 3.0)
ALERTS_MIN_BUCKET_RUNS = envint("ALERTS_MIN_BUCKET_RUNS", 4)
ALERTS_MIN_WEEK_RUNS = envint("ALERTS_MIN_WEEK_RUNS", 6)
ALERTS_MIN_SLOT_RUNS = envint("ALERTS_MIN_SLOT_RUNS", 2)
# An arm is positive at one-sided p < P_VALUE, Benjamini–Hochberg q < FDR_Q across every arm of
# the series evaluated together, an estimate ≥ EFFECT_GATE × the minimum effect (SLOT_EFFECT_GATE ×
# for an arm of one time-of-day slot) and the floor.
# CI_LEVEL is the two-sided level of the interval shown with the shift.
ALERTS_P_VALUE = envfloat("ALERTS_P_VALUE", 0.0004)
ALERTS_FDR_Q = envfloat("ALERTS_FDR_Q", 0.05)
# The state-space arm's own bar (the runs since an onset against the series' own level: a
# local-level model of its drift in hours); 0 leaves the arm out
ALERTS_STEP_P_VALUE = envfloat("ALERTS_STEP_P_VALUE", 0.0004)
# A baseline that spans under YOUNG_DAYS cannot yet tell how far its provider's level wanders:
# its arms of the whole series (not one slot's) must show YOUNG_EFFECT_FACTOR times the
# effect they need otherwise (1: no such rule). On one of YOUNG_DAYS or more, a streak's
# first positive on an arm of several runs (72h, since the change, step since) is read at
# bars FIRST_P_FACTOR times looser; the positive that opens, at the bars themselves (1: no
# looser first positive)
ALERTS_YOUNG_DAYS = envfloat("ALERTS_YOUNG_DAYS", 14.0)
ALERTS_YOUNG_EFFECT_FACTOR = envfloat("ALERTS_YOUNG_EFFECT_FACTOR", 2.0)
ALERTS_FIRST_P_FACTOR = envfloat("ALERTS_FIRST_P_FACTOR", 4.0)
ALERTS_EFFECT_GATE = envfloat("ALERTS_EFFECT_GATE", 0.8)
ALERTS_SLOT_EFFECT_GATE = envfloat("ALERTS_SLOT_EFFECT_GATE", 1.5)  # × min effect, one slot
ALERTS_CI_LEVEL = envfloat("ALERTS_CI_LEVEL", 0.90)
ALERTS_DECODE_MIN_EFFECT = envfloat("ALERTS_DECODE_MIN_EFFECT", 0.10)  # 10 % slower
ALERTS_TTFT_MIN_EFFECT = envfloat("ALERTS_TTFT_MIN_EFFECT", 0.15)  # 15 % higher
# Absolute floors are small: the relative effect scales, so fast endpoints are protected too.
ALERTS_DECODE_FLOOR_TPS = envfloat("ALERTS_DECODE_FLOOR_TPS", 1.0)
ALERTS_TTFT_FLOOR_MS = envfloat("ALERTS_TTFT_FLOOR_MS", 10.0)
ALERTS_MAJOR_EFFECT = envfloat("ALERTS_MAJOR_EFFECT", 0.25)  # severity major above this
ALERTS_OPEN_AFTER = envint("ALERTS_OPEN_AFTER", 2)  # positive evaluations, no clear one between
ALERTS_EPISODE_HOURS = envfloat("ALERTS_EPISODE_HOURS", 6.0)  # positives this far apart to count
ALERTS_RESOLVE_AFTER = envint("ALERTS_RESOLVE_AFTER", 2)  # consecutive clear evaluations
# Resolving also needs the recent runs this many times likelier back at the baseline than still
# worse by the alert's effect
ALERTS_RECOVERY_ODDS = envfloat("ALERTS_RECOVERY_ODDS", 3000.0)
# An open alert whose series stayed at one level this long since it opened closes as the new
# normal (docs/alerts.md), and the series is armed again against that level
ALERTS_NEW_NORMAL_HOURS = envint("ALERTS_NEW_NORMAL_HOURS", 168)
# Confirmation runs (docs/alerts.md): a suspect series (a positive short of opening, or an
# in-between result with q under SUSPECT_Q) gets extra runs, one at a time while it stays
# suspect, each once its noise model's correlation with the run before is at most DECORRELATED
# and never sooner than MIN_SPACING_HOURS, at most MAX_PER_SERIES per suspicion (0: off) and
# BUDGET_SHARE of the scheduled runs a month.
ALERTS_CONFIRM_MAX_PER_SERIES = envint("ALERTS_CONFIRM_MAX_PER_SERIES", 12)
ALERTS_CONFIRM_BUDGET_SHARE = envfloat("ALERTS_CONFIRM_BUDGET_SHARE", 0.15)
ALERTS_CONFIRM_MIN_SPACING_HOURS = envfloat("ALERTS_CONFIRM_MIN_SPACING_HOURS", 2.0)
ALERTS_CONFIRM_DECORRELATED = envfloat("ALERTS_CONFIRM_DECORRELATED", 0.7)
ALERTS_CONFIRM_SUSPECT_Q = envfloat("ALERTS_CONFIRM_SUSPECT_Q", 0.5)
# Availability: an outage opens when each of the last OUTAGE_RUNS runs has ≥ this share of error
# samples, and resolves under half of it over those runs.
ALERTS_OUTAGE_ERROR_SHARE = envfloat("ALERTS_OUTAGE_ERROR_SHARE", 0.5)
ALERTS_OUTAGE_RUNS = envint("ALERTS_OUTAGE_RUNS", 2)
# Noise guards: a series whose alerts flip (open/resolve) more than FLAP_LIMIT times in 7 days is
# digest-only; when more than INFRA_SHARE of one vantage's series are alerting (and they span at
# least INFRA_MIN_ENDPOINTS endpoints), one "probe infrastructure" alert replaces them.
ALERTS_FLAP_LIMIT = envint("ALERTS_FLAP_LIMIT", 4)
ALERTS_INFRA_SHARE = envfloat("ALERTS_INFRA_SHARE", 0.30)
ALERTS_INFRA_MIN_ENDPOINTS = envint("ALERTS_INFRA_MIN_ENDPOINTS", 3)
# Email: the daily digest goes out at this UTC hour; a sender holds a claimed email for
# SEND_LEASE_S seconds (a crashed sender's emails are retried after it); SMTP failures retry
# with exponential backoff capped at an hour, and an email is given up only GIVE_UP_H hours
# after it was created (the every-minute sender keeps trying; SMTP_MAX_RETRIES bounds the
# task's own quick retries only). /health/ fails when an email has waited BACKLOG_S.
ALERTS_DIGEST_HOUR = envint("ALERTS_DIGEST_HOUR", 7)
ALERTS_SEND_LEASE_S = envint("ALERTS_SEND_LEASE_S", 300)
ALERTS_SMTP_MAX_RETRIES = envint("ALERTS_SMTP_MAX_RETRIES", 8)
ALERTS_SMTP_GIVE_UP_H = envfloat("ALERTS_SMTP_GIVE_UP_H", 48.0)
ALERTS_HEALTH_BACKLOG_S = envint("ALERTS_HEALTH_BACKLOG_S", 3600)
# Channels (alerts/channel_models.py): addresses are encrypted with CHANNELS_KEY (a Fernet key,
# `python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`);
# without it, a key derived from SECRET_KEY. A post waits TIMEOUT_S at most; a channel that failed
# BROKEN_AFTER attempts in a row is marked broken (it keeps being retried until GIVE_UP_H).
# A webhook receiver rejects a signature older than the replay window it chooses (docs/channels.md).
CHANNELS_KEY = os.environ.get("TOKSPEED_CHANNELS_KEY", "")
# /metrics answers a logged-in user, or a scraper sending "Authorization: Bearer <this>".
TOKSPEED_METRICS_TOKEN = os.environ.get("TOKSPEED_METRICS_TOKEN", "")
CHANNELS_TIMEOUT_S = envfloat("CHANNELS_TIMEOUT_S", 10.0)
CHANNELS_BROKEN_AFTER = envint("CHANNELS_BROKEN_AFTER", 5)
# Change points: the daily pass looks this many days back; it annotates charts, never emails.
ALERTS_CHANGEPOINT_DAYS = envint("ALERTS_CHANGEPOINT_DAYS", 30)
CELERY_BEAT_SCHEDULE.update(
    {
        # Safety net: events whose "send now" message was lost are still sent within a minute.
        "alerts-send": {
            "task": "alerts.send_pending",
            "schedule": "* * * * *",
            "options": {"expires": 55},
        },
        "alerts-digest": {
            "task": "alerts.send_digest",
            "schedule": f"0 {ALERTS_DIGEST_HOUR} * * *",
        },
        "alerts-change-points": {
            "task": "alerts.detect_change_points",
            "schedule": "30 3 * * *",
        },
        # The advice moves only when runs finish (3 a day by default): hourly is prompt enough,
        # and "changed" needs two evaluations in a row.
        # Safety net for the advisor's run digest: a run whose digest message was lost is in
        # the advice within the hour (each finish asks for its own day at once).
        "advisor-digest": {
            "task": "advisor.digest_recent",
            "schedule": "5 * * * *",
            "options": {"expires": 3000},
        },
        "alerts-advice": {
            "task": "alerts.evaluate_advice",
            "schedule": "15 * * * *",
            "options": {"expires": 3000},
        },
        # The last complete month (in TIME_ZONE) to the monthly report's subscribers, once each:
        # the 2nd is a second chance, and covers a TIME_ZONE still in the old month at 06:00 UTC.
        "alerts-monthly-report": {
            "task": "alerts.monthly_report",
            "schedule": "0 6 1,2 * *",
        },
    }
)
# Alert enums get their own names in the API schema (Run also has a "status", events a "kind").
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"] = {
    **SPECTACULAR_SETTINGS.get("ENUM_NAME_OVERRIDES", {}),
    "AlertKindEnum": "alerts.models.Kind",
    "AlertEventKindEnum": "alerts.models.EventKind",
    "AlertStatusEnum": "alerts.models.Status",
    "RunStatusEnum": "benchmarks.models.RunStatus",
    "AlertSeverityEnum": "alerts.models.Severity",
    "AlertMetricEnum": "alerts.models.Metric",
}
