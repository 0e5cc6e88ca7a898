import pytest
from django.core.cache import caches


@pytest.fixture
def rate_limits(db, settings):
    """Small limits counted from zero, so a test reaches them in a few requests.

    The default cache is the database's, so its counts also vanish with each test's
    transaction; "local" (anonymous requests) is the process's memory and must be cleared.
    """
    for name in ("default", "local"):
        caches[name].clear()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "5/minute", "anon": "3/minute"},
    }
    settings.LOGIN_FAILURE_RATE = "3/15m"
    settings.TOKEN_FAILURE_RATE = "3/15m"
    yield
    for name in ("default", "local"):
        caches[name].clear()
