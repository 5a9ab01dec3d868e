"""Weft settings: one file, driven by environment variables.

With no variables set Weft runs on the embedded default: a SQLite file, an in-memory
channel layer, eager Celery and console email; `make run` turns debug on. Production is selected by
DATABASE_URL, REDIS_URL, SECRET_KEY and friends (see .env.example).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


class ConfigError(Exception):
    """A bad environment value; start-up stops with a message naming the variable."""


def _fail(name: str, value: str, expected: str) -> None:
    message = f"Weft configuration error: {name}={value!r} is not valid ({expected})."
    raise ConfigError(message)


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    _fail(name, raw, "expected one of true/false, yes/no, on/off, 1/0")
    return default  # unreachable


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        _fail(name, raw, "expected a whole number")
    return default  # unreachable


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str, schemes: set[str]) -> str:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    parts = urlsplit(raw)
    if parts.scheme not in schemes or not (parts.hostname or parts.path.strip("/")):
        _fail(name, raw, f"expected a URL with scheme {' or '.join(sorted(schemes))}")
    return raw


# Off unless asked for: `make run` (the embedded default) and the test suite turn it on.
DEBUG = env_bool("WEFT_DEBUG", False)
TESTING = "pytest" in sys.modules or env_bool("WEFT_TESTING", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    # The test suite (debug off, as in production) and mypy's Django plugin import these
    # settings without serving anything: they run on the development key.
    if not DEBUG and not TESTING and "mypy" not in sys.modules:
        raise ConfigError("Weft configuration error: SECRET_KEY is required when WEFT_DEBUG is off.")
    SECRET_KEY = "weft-insecure-development-key-do-not-use-in-production"

WEFT_BASE_URL = env_url("WEFT_BASE_URL", "http://127.0.0.1:8000", {"http", "https"}).rstrip("/")
_base = urlsplit(WEFT_BASE_URL)

ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver", _base.hostname or "127.0.0.1"]
)
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [f"{_base.scheme}://{_base.netloc}"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "corsheaders",
    "django_htmx",
    "channels",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "oauth2_provider",
    "allauth",
    "allauth.account",
    "weft",
    "accounts",
    "boards",
    "issues",
    "hooks",
    "api",
    "notify",
]

MIDDLEWARE = [
    "corsheaders.middleware.CorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "weft.urls"
WSGI_APPLICATION = "weft.wsgi.application"
ASGI_APPLICATION = "weft.asgi.application"

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
                "django.template.context_processors.csp",
                "accounts.context_processors.workspace_nav",
                "boards.context_processors.attention_nav",
            ],
        },
    },
]

# Database: the embedded default is a SQLite file; DATABASE_URL selects PostgreSQL.
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    _db = urlsplit(DATABASE_URL)
    if _db.scheme not in {"postgres", "postgresql"} or not _db.path.strip("/"):
        _fail("DATABASE_URL", DATABASE_URL, "expected postgresql://USER:PASSWORD@HOST:PORT/NAME")
    import dj_database_url

    # Health checks: with the pool, Django passes psycopg_pool's ConnectionPool.check_connection
    # as its `check`, so a connection broken by a database restart is discarded on checkout
    # instead of failing the request that drew it.
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=True)}
    DATABASES["default"]["ENGINE"] = "django.db.backends.postgresql"
    # psycopg 3's pool instead of CONN_MAX_AGE, which misbehaves under ASGI.
    # The test runner creates its own test database and cannot share a pool with it.
    if not TESTING:
        DATABASES["default"]["OPTIONS"] = {
            "pool": {
                "min_size": env_int("DATABASE_POOL_MIN", 2),
                "max_size": env_int("DATABASE_POOL_MAX", 20),
                "timeout": 10,
            }
        }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("WEFT_SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }

# The MCP gate's own async pool (weft/apool.py; PostgreSQL only), on top of DATABASE_POOL_MAX.
WEFT_MCP_GATE_POOL = {
    "enabled": env_bool("WEFT_MCP_GATE_POOL", True),
    "min_size": env_int("WEFT_MCP_GATE_POOL_MIN", 1),
    "max_size": env_int("WEFT_MCP_GATE_POOL_MAX", 4),
    "timeout": 10,
}
# tools/call as one exchange in the request's task (weft/mcp/exchange.py); off: the SDK's transport.
WEFT_MCP_SINGLE_EXCHANGE = env_bool("WEFT_MCP_SINGLE_EXCHANGE", True)
WEFT_MCP_TRACING = env_bool("WEFT_MCP_TRACING", False)  # the SDK's OpenTelemetry span per message

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if TESTING:
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "home"

# Accounts (django-allauth): email is the login.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = env_str("ACCOUNT_EMAIL_VERIFICATION", "mandatory")
if ACCOUNT_EMAIL_VERIFICATION not in {"none", "optional", "mandatory"}:
    _fail("ACCOUNT_EMAIL_VERIFICATION", ACCOUNT_EMAIL_VERIFICATION, "expected none, optional or mandatory")
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[Weft] "
ACCOUNT_DEFAULT_HTTP_PROTOCOL = _base.scheme

# Email: console in the embedded default, SMTP when EMAIL_HOST is set.
EMAIL_HOST = env_str("EMAIL_HOST")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env_int("EMAIL_PORT", 587)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
else:
    EMAIL_BACKEND = "weft.mail.ConsoleEmailBackend"
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Weft <weft@localhost>")

# Content-Security-Policy on every response: scripts only from our static files (or a
# template's nonce), web sockets and fetches to this origin. Inline style attributes are
# used by templates (meters, spacing), so styles allow 'unsafe-inline'. No form-action:
# OAuth consent ends in a redirect to the agent's own callback URL.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# Redis: the channel layer and the Celery broker in production.
REDIS_URL = env_url("REDIS_URL", "", {"redis", "rediss"})
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
# A live push waits at most this long for the channel layer; a slow or frozen Redis drops
# the push (pages re-fetch on reconnect) instead of slowing the write that made it.
try:
    WEFT_PUSH_TIMEOUT_SECONDS = float(env_str("WEFT_PUSH_TIMEOUT_SECONDS") or "0.5")
except ValueError:
    _fail("WEFT_PUSH_TIMEOUT_SECONDS", env_str("WEFT_PUSH_TIMEOUT_SECONDS"), "expected a number of seconds")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "lease-sweep": {"task": "boards.tasks.sweep_leases", "schedule": 30.0},
    "inbox-reminders": {"task": "boards.tasks.send_inbox_reminders", "schedule": 60.0},
    "trash-purge": {"task": "boards.tasks.purge_trash", "schedule": 3600.0},
    "webhook-deliveries": {"task": "hooks.deliver_due", "schedule": 5.0},
    "push-messages": {"task": "notify.push_due", "schedule": 5.0},
    "push-trim": {"task": "notify.push_trim", "schedule": 86400.0},
    "idempotency-keys": {"task": "api.purge_idempotency_keys", "schedule": 3600.0},
}
# In the embedded default the server process runs the periodic work on a timer.
WEFT_EMBEDDED_TIMER = env_bool("WEFT_EMBEDDED_TIMER", not REDIS_URL and not TESTING)

# OAuth 2.1 for agents (django-oauth-toolkit).
WEFT_MCP_URL = f"{WEFT_BASE_URL}/api/mcp"
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER = {
    "PKCE_REQUIRED": True,
    "SCOPES": {"mcp": "Work on your Weft board", "offline_access": "Stay signed in"},
    "DEFAULT_SCOPES": ["mcp"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": env_int("OAUTH_ACCESS_TOKEN_SECONDS", 3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env_int("OAUTH_REFRESH_TOKEN_SECONDS", 60 * 60 * 24 * 30),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 120,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # Agents refresh concurrently; a replay inside this window gets the same new pair.
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": env_int("OAUTH_REFRESH_GRACE_SECONDS", 90),
    # Tokens at rest are their SHA-256 only; the grace window above still answers a replay
    # with the same pair because a refresh grant derives it (accounts.oauth_tokens).
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "OAUTH2_VALIDATOR_CLASS": "accounts.oauth_tokens.WeftOAuth2Validator",
    "ACCESS_TOKEN_GENERATOR": "accounts.oauth_tokens.access_token_generator",
    "REFRESH_TOKEN_GENERATOR": "accounts.oauth_tokens.refresh_token_generator",
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https", "cursor"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "OIDC_ISS_ENDPOINT": WEFT_BASE_URL,
    "REQUEST_APPROVAL_PROMPT": "force",
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": [
        "authorization_code",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:device_code",
    ],
    # RFC 8628 for `weft login` (accounts/device_views.py): the person enters the code here.
    "OAUTH_DEVICE_VERIFICATION_URI": f"{WEFT_BASE_URL}/o/device/",
    "DEVICE_FLOW_INTERVAL": env_int("WEFT_DEVICE_INTERVAL_SECONDS", 5),
    # The device code's user and scopes come from WeftOAuth2Validator.validate_device_code.
    "OAUTH_PRE_TOKEN_VALIDATION": [],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "OIDC_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    # Redirect URIs per OAuth 2.1 in fetched client metadata and in the admin (accounts.oauth_redirects).
    "CIMD_METADATA_FETCHER": "accounts.oauth_redirects.RedirectCheckingMetadataFetcher",
    "APPLICATION_ADMIN_CLASS": "accounts.oauth_admin.WeftApplicationAdmin",
    "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": WEFT_MCP_URL,
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Weft",
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
}
# DOT's E001 forbids hashed token storage with a refresh grace period because its grace path
# reads the stored pair back; Weft's validator derives that pair instead (accounts.oauth_tokens).
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.E001"]
# Open dynamic client registration, limited per client IP (count per hour).
WEFT_DCR_RATE_PER_HOUR = env_int("WEFT_DCR_RATE_PER_HOUR", 30)
# Device authorization requests (`weft login`) per client address an hour.
WEFT_DEVICE_RATE_PER_HOUR = env_int("WEFT_DEVICE_RATE_PER_HOUR", 30)
# REST calls per minute a personal access token may make (each token counts on its own).
WEFT_PAT_RATE_PER_MINUTE = env_int("WEFT_PAT_RATE_PER_MINUTE", 120)
# Fault runs only: every lease lasts this many seconds instead of the contract's 20 minutes
# (bench/faults, docs/guarantees.md); 0, the default, keeps the 20 minutes.
WEFT_LEASE_SECONDS = env_int("WEFT_LEASE_SECONDS", 0)
if WEFT_LEASE_SECONDS < 0:
    _fail("WEFT_LEASE_SECONDS", str(WEFT_LEASE_SECONDS), "expected 0 or a positive number of seconds")
# Test-only: a fixed bearer token accepted by the MCP endpoint (the conformance suite
# cannot sign in). Refused outside debug mode.
WEFT_MCP_TEST_TOKEN = env_str("WEFT_MCP_TEST_TOKEN")
if WEFT_MCP_TEST_TOKEN and not DEBUG:
    raise ConfigError("Weft configuration error: WEFT_MCP_TEST_TOKEN is for tests and needs WEFT_DEBUG on.")

# Agent-filed issues: the operators' own feedback workspace (a slug). A submit_issue without
# `workspace` goes there; when it is empty, to the reporter's own workspace (issues/intake.py).
WEFT_FEEDBACK_WORKSPACE = env_str("WEFT_FEEDBACK_WORKSPACE")

CORS_URLS_REGEX = r"^/(o/|\.well-known/|api/mcp).*$"
CORS_ALLOW_ALL_ORIGINS = True

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Weft API",
    "DESCRIPTION": "The agents' loop over REST: the same operations, errors and hints as /api/mcp.",
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": False,
    # The docs pages load Swagger UI and Redoc from the installed sidecar package, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Transport security for the MCP endpoint (Host and Origin allow-lists).
WEFT_MCP_ALLOWED_HOSTS = env_list("WEFT_MCP_ALLOWED_HOSTS", [_base.netloc, "127.0.0.1:*", "localhost:*"])
WEFT_MCP_ALLOWED_ORIGINS = env_list(
    "WEFT_MCP_ALLOWED_ORIGINS",
    [f"{_base.scheme}://{_base.netloc}", "http://127.0.0.1:*", "http://localhost:*"],
)

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", _base.scheme == "https")
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # The MCP SDK logs "Terminating session: None" at INFO for every stateless request.
    "loggers": {"mcp.server.streamable_http": {"level": "WARNING"}},
}

# Plan changes (accounts/payments.py): "recorded" (the operators invoice from the admin) or "stripe".
WEFT_PAYMENTS = env_str("WEFT_PAYMENTS", "recorded")
if WEFT_PAYMENTS not in {"recorded", "stripe"}:
    raise ConfigError(
        f"Weft configuration error: WEFT_PAYMENTS must be recorded or stripe, not {WEFT_PAYMENTS!r}."
    )
STRIPE_SECRET_KEY = env_str("STRIPE_SECRET_KEY", "")
if WEFT_PAYMENTS == "stripe" and not STRIPE_SECRET_KEY:
    raise ConfigError("Weft configuration error: STRIPE_SECRET_KEY is required when WEFT_PAYMENTS is stripe.")

# Web Push to people's phones (notify/): the VAPID key pair (base64url, as `vapid --gen` and
# `notify.keys` print them) and the contact the push services see. Without a key, push is off.
WEFT_VAPID_PRIVATE_KEY = env_str("WEFT_VAPID_PRIVATE_KEY", "")
WEFT_VAPID_PUBLIC_KEY = env_str("WEFT_VAPID_PUBLIC_KEY", "")
WEFT_VAPID_SUBJECT = env_str("WEFT_VAPID_SUBJECT", "mailto:operators@weft.invalid")
if bool(WEFT_VAPID_PRIVATE_KEY) != bool(WEFT_VAPID_PUBLIC_KEY):
    raise ConfigError(
        "Weft configuration error: set both WEFT_VAPID_PRIVATE_KEY and WEFT_VAPID_PUBLIC_KEY, or neither."
    )
# The push services a browser's subscription may point at (notify.services.allowed_endpoint).
WEFT_PUSH_HOSTS = env_list(
    "WEFT_PUSH_HOSTS",
    ["fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com", "*.notify.windows.com"],
)
