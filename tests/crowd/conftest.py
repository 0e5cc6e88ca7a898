import boto3
import pytest
from botocore.stub import Stubber
from django.urls import reverse

from cfannotate.core.worker_tokens import entry_token
from cfannotate.crowd.models import MTurkHit, Platform, Publication
from cfannotate.crowd.providers import mturk
from tests.crowd import fake_prolific
from tests.factories import make_labeling_campaign

SUBMIT_SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture(autouse=True)
def public_url(settings):
    settings.CROWD_PUBLIC_URL = "https://labels.example.org"
    settings.CROWD_PROLIFIC_BLOCKLIST_GROUP = ""


@pytest.fixture
def mturk_stub(monkeypatch):
    """A real boto3 `mturk` client whose every call must be queued on this Stubber."""
    client = boto3.client(
        "mturk",
        region_name="us-east-1",
        endpoint_url="https://mturk-requester-sandbox.us-east-1.amazonaws.com",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    stubber = Stubber(client)
    stubber.environments = []
    monkeypatch.setattr(mturk, "mturk_credentials_found", lambda: True)
    monkeypatch.setattr(
        mturk,
        "mturk_client",
        lambda *, sandbox: stubber.environments.append(sandbox) or client,
    )
    with stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def prolific(settings):
    with fake_prolific.served(settings) as fake:
        yield fake


@pytest.fixture
def campaign(db):
    """Open for labeling: 4 units, 1 training round, 2 real rounds + 1 gold per assignment."""
    return make_labeling_campaign(
        units=4, gold=1, training=1, rounds_per_assignment=2, gold_rounds_per_assignment=1
    )


def make_mturk_publication(campaign, *, hit_ids=("HIT1",), sandbox=True) -> Publication:
    publication = Publication.objects.create(
        campaign=campaign,
        platform=Platform.MTURK,
        sandbox=sandbox,
        external_id="HITTYPE1",
        options={},
        status="Assignable",
    )
    for hit_id in hit_ids:
        MTurkHit.objects.create(publication=publication, hit_id=hit_id, max_assignments=9)
    return publication


def make_prolific_publication(campaign, *, study_id="a" * 24, code="C0DE1234") -> Publication:
    return Publication.objects.create(
        campaign=campaign,
        platform=Platform.PROLIFIC,
        external_id=study_id,
        completion_code=code,
        options={"places": 5},
        status="ACTIVE",
    )


def entry_path(publication, **params) -> str:
    path = reverse(
        "crowd-entry",
        kwargs={"platform": publication.platform, "token": entry_token(publication.id)},
    )
    if params:
        from urllib.parse import urlencode

        path += "?" + urlencode(params)
    return path


def mturk_params(assignment="ASSIGN1", worker="AWORKER1", hit="HIT1", submit=SUBMIT_SANDBOX):
    return {"assignmentId": assignment, "hitId": hit, "workerId": worker, "turkSubmitTo": submit}


def finish(assignment):
    """Answer and submit every round of an assignment, as its worker would."""
    from cfannotate.labeling import rounds

    label = assignment.campaign.labels.first().value
    for round_ in assignment.rounds.order_by("position"):
        view = rounds.round_serve(assignment=assignment, position=round_.position)
        answers = [rounds.Answer(index=i.index, is_valid=True, label=label) for i in view.items]
        rounds.round_submit(assignment=assignment, position=round_.position, answers=answers)
    assignment.refresh_from_db()
    return assignment


class Match:
    """An expected parameter that passes when `check(value)` does, and keeps the value."""

    def __init__(self, check):
        self.check, self.value = check, None

    def __eq__(self, other):
        self.value = other
        return bool(self.check(other))

    def __hash__(self):
        return id(self)
