"""Rate limits: the API's request throttles and the limits on failed logins and bad tokens.

Users' requests, failed logins and bad tokens are counted in the default cache, which
settings make the database cache: the one store that every gunicorn worker and
`db_worker` process shares, so those limits hold for the whole site. Anonymous requests
reach only the API's schema and docs, costly to build: their limit guards each process's
CPU and is counted in the process's own memory ("local"), so a visitor writes nothing to
the database. Rates are written as in `cfannotate.environment` (`600/minute`, `10/15m`)
and read per request, so a test may override them. The worker pages (/w/, /join/) are
plain Django views and pass none of this, but for the resume codes typed on /join/.
"""

import hashlib
import math
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache, caches
from django.http import HttpRequest
from django.utils.connection import ConnectionProxy
from rest_framework.exceptions import ErrorDetail, Throttled
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, BaseThrottle, UserRateThrottle

from cfannotate import environment


def retry_message(reason: str, wait: int | None) -> str:
    """`reason`, then when to try again, in the unit a person would use."""
    if not wait:
        return f"{reason}; try again later."
    if wait < 120:
        when = "1 second" if wait == 1 else f"{wait} seconds"
    else:
        when = f"{math.ceil(wait / 60)} minutes"
    return f"{reason}; try again in {when}."


class RateLimited(Throttled):
    """429 whose message says why and when to retry; DRF sends `wait` as Retry-After."""

    def __init__(self, wait: float | None, reason: str = "Too many requests") -> None:
        super().__init__(wait)
        self.detail = ErrorDetail(retry_message(reason, self.wait), code=self.default_code)


def client_address(request: HttpRequest) -> str:
    """The client's address as the API's throttles see it: REMOTE_ADDR, or behind a proxy
    (NUM_PROXIES) the address the proxy appended to X-Forwarded-For."""
    return BaseThrottle().get_ident(request) or "unknown"


def login_identities(request: HttpRequest) -> tuple[str, str]:
    """A login attempt's username, as the login form reads it, and its client address."""
    username = unicodedata.normalize("NFKC", request.POST.get("username", "").strip())
    return f"username:{username.casefold()}", f"address:{client_address(request)}"


class _RateFromSettings:
    """Reads the scope's rate per request (DRF reads it once at import) and accepts `10/15m`."""

    def get_rate(self) -> str:
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]

    def parse_rate(self, rate: str) -> tuple[int, int]:
        return environment.parse_rate(rate)


class UserThrottle(_RateFromSettings, UserRateThrottle):
    """API requests per signed-in user; anonymous ones are AnonymousThrottle's."""

    def get_cache_key(self, request, view) -> str | None:
        if not request.user.is_authenticated:
            return None
        return super().get_cache_key(request, view)


class AnonymousThrottle(_RateFromSettings, AnonRateThrottle):
    """API requests without credentials per address, per process: the schema and its docs."""

    cache = ConnectionProxy(caches, "local")


@dataclass(frozen=True)
class FailureLimit:
    """At most the rate's count of failures per period for each identity (a username, an
    address); past it the identity is refused until its oldest counted failure ages out.

    Only failures are counted, so a correct password or token costs one cache read.
    """

    scope: str
    rate_setting: str  # the Django setting that holds the rate
    clock: Callable[[], float] = time.time

    def _rate(self) -> tuple[int, int]:
        return environment.parse_rate(getattr(settings, self.rate_setting))

    def _key(self, identity: str) -> str:
        # Hashed: usernames may hold characters and lengths that cache keys must not.
        digest = hashlib.sha256(identity.encode()).hexdigest()[:32]
        return f"failures:{self.scope}:{digest}"

    def wait_seconds(self, *identities: str) -> int:
        """Seconds until every identity may try again; 0 when none is over the limit."""
        count, period = self._rate()
        now = self.clock()
        stored = cache.get_many([self._key(identity) for identity in identities])
        waits = [0.0]
        for times in stored.values():
            recent = sorted(t for t in times if t > now - period)
            if len(recent) >= count:
                waits.append(recent[-count] + period - now)
        return math.ceil(max(waits))

    def record_failure(self, *identities: str) -> None:
        count, period = self._rate()
        now = self.clock()
        keys = [self._key(identity) for identity in identities]
        stored = cache.get_many(keys)
        for key in keys:
            recent = [t for t in stored.get(key, []) if t > now - period][-count:]
            cache.set(key, [*recent, now], timeout=period)

    def forget(self, *identities: str) -> None:
        cache.delete_many([self._key(identity) for identity in identities])


# Failed logins, per username and per address; failed API tokens, per address.
LOGIN_FAILURES = FailureLimit("login", "LOGIN_FAILURE_RATE")
TOKEN_FAILURES = FailureLimit("token", "TOKEN_FAILURE_RATE")
# Wrong resume codes on a worker's entry page, per address, at the API tokens' rate.
RESUME_FAILURES = FailureLimit("resume", "TOKEN_FAILURE_RATE")
