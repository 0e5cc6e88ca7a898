"""Django settings for cfannotate, read from the environment.

Development and the demo need nothing set: SQLite in ./var, a generated secret
key, DEBUG on, localhost only. Production (CFANNOTATE_PRODUCTION=1) requires a
secret key and allowed hosts and turns on every protection `check --deploy`
asks for.
"""

import os
import sys
from pathlib import Path

from cfannotate import environment

BASE_DIR = Path(__file__).resolve().parent.parent
STATE_DIR = Path(os.environ.get("CFANNOTATE_STATE_DIR", BASE_DIR / "var"))

PRODUCTION = environment.env_bool("CFANNOTATE_PRODUCTION", False)
DEBUG = environment.env_bool("CFANNOTATE_DEBUG", not PRODUCTION)
SECRET_KEY = environment.secret_key(production=PRODUCTION, state_dir=STATE_DIR)
ALLOWED_HOSTS = environment.env_list(
    "CFANNOTATE_ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]"]
)
if PRODUCTION and not ALLOWED_HOSTS:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(
        "CFANNOTATE_ALLOWED_HOSTS is not set; production mode needs the host names the "
        "site is served under, comma-separated."
    )
CSRF_TRUSTED_ORIGINS = environment.env_list("CFANNOTATE_CSRF_TRUSTED_ORIGINS", [])
BEHIND_PROXY = environment.env_bool("CFANNOTATE_BEHIND_PROXY", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "django_tasks",
    "django_tasks_db",
    "cfannotate.core",
    "cfannotate.campaigns",
    "cfannotate.candidates",
    "cfannotate.labeling",
    "cfannotate.crowd",
    "cfannotate.quality",
    "cfannotate.exports",
    "cfannotate.evaluation",
    "cfannotate.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "cfannotate.core.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "cfannotate.core.middleware.HealthCheckMiddleware",  # before CommonMiddleware's host check
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "cfannotate.urls"
WSGI_APPLICATION = "cfannotate.wsgi.application"
ASGI_APPLICATION = "cfannotate.asgi.application"

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
    "default": environment.database(
        url=os.environ.get("DATABASE_URL"), sqlite_path=STATE_DIR / "cfannotate.sqlite3"
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The database cache: the one store every process (gunicorn workers, db_worker) shares,
# so rate limits hold for the whole site; `migrate` creates its table. "local" is each
# process's own, for anonymous API requests (cfannotate.core.throttles).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "cfannotate_cache",
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    },
    "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
}

# Background work: the database queue; GPU workers listen on "generation".
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "generation"],
    }
}
# While a campaign is open for labeling, quality control sweeps it this often (quality.md §4).
QUALITY_SWEEP_SECONDS = environment.env_int("CFANNOTATE_QUALITY_SWEEP_SECONDS", 120)

# Generation (docs/configuration.md): where Polyjuice's model runs unless a campaign says
# otherwise. "auto" lets each worker choose by its device; the names are checked by
# cfannotate.candidates.checks (generation.engines loads torch, settings must not).
GENERATION_ENGINE = os.environ.get("CFANNOTATE_GENERATION_ENGINE", "").strip() or "auto"
# Defaults of the "server" engine, for a campaign entry that leaves an option out; None or
# "" leaves the generator's own default. `api_key_env` is the NAME of the variable that
# holds the key: the key itself stays in the environment of the web and worker processes.
INFERENCE_SERVER = {
    "url": os.environ.get("CFANNOTATE_INFERENCE_SERVER_URL", "").strip(),
    "model": os.environ.get("CFANNOTATE_INFERENCE_SERVER_MODEL", "").strip(),
    "api": os.environ.get("CFANNOTATE_INFERENCE_SERVER_API", "").strip(),
    "api_key_env": os.environ.get("CFANNOTATE_INFERENCE_SERVER_API_KEY_ENV", "").strip(),
    "concurrency": environment.env_int("CFANNOTATE_INFERENCE_SERVER_CONCURRENCY", None),
    "timeout": environment.env_float("CFANNOTATE_INFERENCE_SERVER_TIMEOUT", None),
    "retries": environment.env_int("CFANNOTATE_INFERENCE_SERVER_RETRIES", None),
}
# The variables a campaign may name as its server's API key: a key goes to the URL the
# campaign names, so which secrets may travel is the operator's choice, not a researcher's.
INFERENCE_SERVER_API_KEY_ENVS = list(
    dict.fromkeys(
        [
            *([INFERENCE_SERVER["api_key_env"]] if INFERENCE_SERVER["api_key_env"] else []),
            *environment.env_list("CFANNOTATE_INFERENCE_SERVER_API_KEY_ENVS", []),
        ]
    )
)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("CFANNOTATE_STATIC_ROOT", STATE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Serve static files straight from the finders when nobody ran collectstatic.
WHITENOISE_USE_FINDERS = not PRODUCTION

# Dataset uploads (docs/configuration.md): the largest file and the most rows one upload
# may hold. A file waits under UPLOAD_DIR for the researcher to confirm its preview.
UPLOAD_MAX_BYTES = environment.env_int("CFANNOTATE_UPLOAD_MAX_BYTES", 50 * 1024 * 1024)
UPLOAD_MAX_ROWS = environment.env_int("CFANNOTATE_UPLOAD_MAX_ROWS", 100_000)
UPLOAD_DIR = STATE_DIR / "uploads"

REST_FRAMEWORK = {
    # Token first: a request without credentials gets 401 with `WWW-Authenticate: Token`.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "cfannotate.core.authentication.RateLimitedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Signed in, then (under campaigns/<campaign_id>/) the campaign's owner: 404 otherwise.
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "cfannotate.campaigns.access.OwnsCampaign",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "cfannotate.core.pagination.PageNumbers",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "cfannotate.core.api_errors.exception_handler",
    # JSON nested past 64 levels, or holding NaN/Infinity, is a 400 (cfannotate.core.json_input).
    "DEFAULT_PARSER_CLASSES": [
        "cfannotate.core.json_input.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Rate limits (cfannotate.core.throttles): past them 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": [
        "cfannotate.core.throttles.UserThrottle",
        "cfannotate.core.throttles.AnonymousThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": environment.env_rate("CFANNOTATE_API_RATE", "600/minute"),
        "anon": environment.env_rate("CFANNOTATE_API_RATE_ANONYMOUS", "60/minute"),
    },
    # The client's address: REMOTE_ADDR, or behind a proxy the one it appended to X-Forwarded-For.
    "NUM_PROXIES": 1 if BEHIND_PROXY else 0,
}
# Failed logins per username and per address; bad API tokens per address.
LOGIN_FAILURE_RATE = environment.env_rate("CFANNOTATE_LOGIN_FAILURE_RATE", "10/15m")
TOKEN_FAILURE_RATE = environment.env_rate("CFANNOTATE_TOKEN_FAILURE_RATE", "10/15m")
SPECTACULAR_SETTINGS = {
    "TITLE": "cfannotate API",
    "DESCRIPTION": "Campaigns, candidates, labeling and exports for counterfactual datasets.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "EvaluationKindEnum": "cfannotate.evaluation.models.EvaluationKind",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "cfannotate.core.api_schema.add_error_responses",
    ],
}

# Security. Everything denies framing; worker pages relax frame-ancestors to the
# crowd platforms' origins only (see cfannotate.core.middleware).
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
# The load balancer probes over plain HTTP: /healthz answers it instead of redirecting.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
if PRODUCTION:
    SECURE_SSL_REDIRECT = environment.env_bool("CFANNOTATE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = environment.env_int("CFANNOTATE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if BEHIND_PROXY:
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Crowd platforms (docs/platforms.md). MTurk credentials come from the standard AWS
# variables (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE); the
# Prolific API token from CFANNOTATE_PROLIFIC_TOKEN. Nothing here is needed for links.
CROWD_PUBLIC_URL = os.environ.get("CFANNOTATE_PUBLIC_URL", "").strip()
CROWD_MTURK_REGION = "us-east-1"
CROWD_MTURK_ENDPOINTS = {
    "live": "https://mturk-requester.us-east-1.amazonaws.com",
    "sandbox": "https://mturk-requester-sandbox.us-east-1.amazonaws.com",
}
# turkSubmitTo as MTurk sends it; the completion form posts to it + /mturk/externalSubmit.
CROWD_MTURK_SUBMIT_ORIGINS = {
    "live": "https://www.mturk.com",
    "sandbox": "https://workersandbox.mturk.com",
}
# The only origins that may frame an MTurk worker's pages (CSP frame-ancestors).
CROWD_MTURK_FRAME_ORIGINS = environment.env_list(
    "CFANNOTATE_MTURK_FRAME_ORIGINS",
    ["https://www.mturk.com", "https://worker.mturk.com", "https://workersandbox.mturk.com"],
)
CROWD_PROLIFIC_API_URL = os.environ.get(
    "CFANNOTATE_PROLIFIC_API_URL", "https://api.prolific.com/api/v1/"
)
CROWD_PROLIFIC_TOKEN = os.environ.get("CFANNOTATE_PROLIFIC_TOKEN", "").strip()
CROWD_PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
# A Prolific participant group that blocked workers are added to (exclude it in studies).
CROWD_PROLIFIC_BLOCKLIST_GROUP = os.environ.get("CFANNOTATE_PROLIFIC_BLOCKLIST_GROUP", "").strip()
CROWD_PROLIFIC_REJECTION_CATEGORY = os.environ.get(
    "CFANNOTATE_PROLIFIC_REJECTION_CATEGORY", "FAILED_CHECK"
)
CROWD_MAX_BONUS = os.environ.get("CFANNOTATE_MAX_BONUS", "20.00")
CROWD_API_TIMEOUT_SECONDS = environment.env_int("CFANNOTATE_CROWD_TIMEOUT_SECONDS", 20)

# Loading a model in the web or task process drew transformers' and the hub's progress
# bars ("Loading weights") into the log, beside the log's own line saying what loaded and
# how long it took; read at their import, so set before any model code is imported.
# The app's own long work has its own progress: the generate command's bar, the campaign
# page's. Set HF_HUB_DISABLE_PROGRESS_BARS=0 to see them.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "filters": {
        # The task worker logs two lines per task it runs (every submitted assignment is
        # assessed in one); failures stay, at ERROR, with their traceback.
        "task_worker": {
            "()": "cfannotate.core.log_filters.QuietBelow",
            "logger": "django_tasks",
            "level": environment.env_log_level("CFANNOTATE_TASK_LOG_LEVEL", "WARNING"),
        },
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": sys.stderr,
            "formatter": "plain",
            "filters": ["task_worker"],
        },
    },
    "root": {
        "handlers": ["stderr"],
        "level": environment.env_log_level("CFANNOTATE_LOG_LEVEL", "INFO"),
    },
    "loggers": {
        # Django's own console handler (DEBUG only) printed every django.* line a second
        # time beside ours; its lines reach the handler above through the root alone.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.db.backends": {"level": "WARNING"},
    },
}
