"""tokspeed settings, read from the environment (see README for every variable)."""

import os
from pathlib import Path

import dj_database_url
from celery.schedules import crontab

from .env import envbool, envfloat, envint, envlist, read_or_create_secret

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("TOKSPEED_VAR_DIR", BASE_DIR / "var"))

DEBUG = envbool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY") or read_or_create_secret(VAR_DIR / "secret_key")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
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
    "dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'tokspeed.sqlite3'}"),
        conn_max_age=envint("DB_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Workers, beat and the web server share one file: wait for locks instead of failing.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"

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

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://localhost//")
if CELERY_BROKER_URL.startswith("filesystem"):
    # The embedded broker: one folder of message files that every process shares.
    _BROKER_DIR = Path(os.environ.get("TOKSPEED_BROKER_DIR", VAR_DIR / "broker"))
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "control_folder": str(_BROKER_DIR / "control"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "store_processed": False,
    }
    for _folder in ("queue", "control", "processed"):
        (_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
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
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Central work (tick, evaluations, email); probes run on their vantage's queue.
CELERY_TASK_DEFAULT_QUEUE = "tokspeed"
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    # The tick claims due slots; an unconsumed tick is useless a minute later, so it expires.
    "tick": {"task": "benchmarks.tasks.tick", "schedule": crontab(), "options": {"expires": 55}},
}
# Runs: a worker heartbeats every LEASE/3 s; a run silent for LEASE s may be taken over by a
# redelivered task; silent for STALE s, the tick fails it; queued but not picked up for
# QUEUED_TIMEOUT s, the tick skips it. A run started more than MAX_ATTEMPTS times fails.
TOKSPEED_RUN_LEASE_S = envint("TOKSPEED_RUN_LEASE_S", 60)
TOKSPEED_RUN_STALE_S = envint("TOKSPEED_RUN_STALE_S", 900)
TOKSPEED_RUN_QUEUED_TIMEOUT_S = envint("TOKSPEED_RUN_QUEUED_TIMEOUT_S", 6 * 3600)
TOKSPEED_RUN_MAX_ATTEMPTS = envint("TOKSPEED_RUN_MAX_ATTEMPTS", 3)
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
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("TOKSPEED_THROTTLE_ANON", "120/min"),
        "user": os.environ.get("TOKSPEED_THROTTLE_USER", "1200/min"),
    },
    "EXCEPTION_HANDLER": "dashboard.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "tokspeed API",
    "DESCRIPTION": (
        "How fast each LLM provider really is: runs, samples, leaderboards, alerts. "
        "Authenticate with a session or a token (`Authorization: Token <key>`; create one with "
        "`manage.py drf_create_token USERNAME` or in the admin). Times are milliseconds, speeds "
        "tokens per second. API keys are never accepted or returned: only the name of the "
        "environment variable that holds one."
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

# --- Alerts (regression detection and email; docs/design.md §7 defaults) ------------------------
# Windows: the last RECENT hours against the BASELINE days before them (within the segment).
ALERTS_RECENT_HOURS = envint("ALERTS_RECENT_HOURS", 24)
ALERTS_BASELINE_DAYS = envint("ALERTS_BASELINE_DAYS", 14)
ALERTS_MIN_RECENT = envint("ALERTS_MIN_RECENT", 8)
ALERTS_MIN_BASELINE = envint("ALERTS_MIN_BASELINE", 30)
# A time-of-day bucket with fewer baseline samples is compared with the overall baseline median.
ALERTS_MIN_BUCKET_BASELINE = envint("ALERTS_MIN_BUCKET_BASELINE", 5)
# Test: one-sided Mann–Whitney U p < P_VALUE, Benjamini–Hochberg q < FDR_Q across the series
# evaluated together, Hodges–Lehmann shift ≥ the minimum effect with its CI_LEVEL interval's
# bound ≥ half of it. CI_LEVEL 0.85 (one-sided 92.5 %) is tuned with bench/detector.py: 0.90
# misses more 10 % steps; 0.80 and below exceed 0.05 false alert episodes per series-month.
ALERTS_P_VALUE = envfloat("ALERTS_P_VALUE", 0.01)
ALERTS_FDR_Q = envfloat("ALERTS_FDR_Q", 0.05)
ALERTS_CI_LEVEL = envfloat("ALERTS_CI_LEVEL", 0.85)
ALERTS_DECODE_MIN_EFFECT = envfloat("ALERTS_DECODE_MIN_EFFECT", 0.10)  # 10 % slower
ALERTS_TTFT_MIN_EFFECT = envfloat("ALERTS_TTFT_MIN_EFFECT", 0.15)  # 15 % higher
ALERTS_DECODE_FLOOR_TPS = envfloat("ALERTS_DECODE_FLOOR_TPS", 3.0)
ALERTS_TTFT_FLOOR_MS = envfloat("ALERTS_TTFT_FLOOR_MS", 100.0)
ALERTS_MAJOR_EFFECT = envfloat("ALERTS_MAJOR_EFFECT", 0.25)  # severity major above this
ALERTS_OPEN_AFTER = envint("ALERTS_OPEN_AFTER", 2)  # consecutive positive evaluations
ALERTS_RESOLVE_AFTER = envint("ALERTS_RESOLVE_AFTER", 2)  # consecutive clear evaluations
# Availability: an outage opens at ≥ this share of error samples over the last OUTAGE_RUNS runs,
# and resolves under half of it.
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
# with exponential backoff up to SMTP_MAX_RETRIES times.
ALERTS_DIGEST_HOUR = envint("ALERTS_DIGEST_HOUR", 7)
ALERTS_SEND_LEASE_S = envint("ALERTS_SEND_LEASE_S", 300)
ALERTS_SMTP_MAX_RETRIES = envint("ALERTS_SMTP_MAX_RETRIES", 8)
# Change points: the daily pass looks this many days back; it annotates charts, never emails.
ALERTS_CHANGEPOINT_DAYS = envint("ALERTS_CHANGEPOINT_DAYS", 30)
CELERY_BEAT_SCHEDULE.update(
    {
        # Safety net: events whose "send now" message was lost are still sent within a minute.
        "alerts-send": {
            "task": "alerts.send_pending",
            "schedule": crontab(),
            "options": {"expires": 55},
        },
        "alerts-digest": {
            "task": "alerts.send_digest",
            "schedule": crontab(minute=0, hour=ALERTS_DIGEST_HOUR),
        },
        "alerts-change-points": {
            "task": "alerts.detect_change_points",
            "schedule": crontab(minute=30, hour=3),
        },
    }
)
# Alert enums get their own names in the API schema (Run also has a "status", events a "kind").
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"] = {
    **SPECTACULAR_SETTINGS.get("ENUM_NAME_OVERRIDES", {}),
    "AlertKindEnum": "alerts.models.Kind",
    "AlertEventKindEnum": "alerts.models.EventKind",
    "AlertStatusEnum": "alerts.models.Status",
    "AlertSeverityEnum": "alerts.models.Severity",
    "AlertMetricEnum": "alerts.models.Metric",
}
