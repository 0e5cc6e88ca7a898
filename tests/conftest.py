import pytest
from rest_framework.test import APIClient

from cfannotate.labeling.rounds import clear_caches
from tests.factories import make_campaign, make_user


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
def api_client(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.fixture
def campaign(researcher):
    return make_campaign(owner=researcher, name="Reviews")
