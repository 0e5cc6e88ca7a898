import pytest
from rest_framework.test import APIClient

from tests.factories import make_campaign, make_user


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
