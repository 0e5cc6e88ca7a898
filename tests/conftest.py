import os

import pytest
from django.test.utils import override_settings
from rest_framework.test import APIClient

from cfannotate.labeling.rounds import clear_caches
from tests.factories import make_campaign, make_user

# Models load in fp32 in the tests, whatever the CPU: "auto" means bf16 on a CPU with bf16
# instructions (generation.models.resolve_dtype), and the numeric references here (batched
# against unbatched log-probs, a prefix scorer against full forwards) are exact to fp32's
# tolerances. The bf16 path has tests of its own that name the dtype. Set before any test
# module loads a model, and inherited by the benchmarks and commands the tests start.
os.environ.setdefault("CFANNOTATE_DTYPE", "float32")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """SQLite's test database is a file: each pytest process gets its own (pytest-xdist
    names one per worker; the process id keeps two runs at once apart too)."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        database["TEST"]["NAME"] = f"{database['TEST']['NAME']}-{os.getpid()}"


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    """Every test user gets a password; production's PBKDF2 (a million rounds) costs a
    quarter of a second each. Hashing itself is Django's, not ours to test."""
    fast = override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
    fast.enable()
    yield
    fast.disable()


@pytest.fixture(autouse=True)
def _fresh_round_caches():
    """Round contents and labels are cached per process by id; SQLite hands out the ids
    of rolled-back rows again, so every test starts with empty caches."""
    clear_caches()


@pytest.fixture
def researcher(db):
    return make_user("alice")


@pytest.fixture
def other_researcher(db):
    return make_user("bob")


@pytest.fixture
def logged_in(client, researcher):
    """The test client, signed in as `researcher`."""
    client.force_login(researcher)
    return client


@pytest.fixture
def api_client(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.fixture
def campaign(researcher):
    return make_campaign(owner=researcher, name="Reviews")


class FakeInferenceServer:
    """Stands in for `generation.engines.server.probe`: records every server it is asked
    about, and refuses with `refusal` (the server's message) when that is set."""

    def __init__(self) -> None:
        self.probed = []
        self.refusal = ""

    def probe(self, config) -> str:
        from generation.engines.server import InferenceServerError

        self.probed.append(config)
        if self.refusal:
            raise InferenceServerError(self.refusal)
        return f"fake server at {config.base_url}: model {config.model}"


@pytest.fixture
def inference_server(monkeypatch, settings):
    """A fake inference server for saving settings; the site allows the key variable LAB_KEY."""
    fake = FakeInferenceServer()
    monkeypatch.setattr("generation.engines.server.probe", fake.probe)
    settings.INFERENCE_SERVER_API_KEY_ENVS = ["LAB_KEY"]
    return fake
