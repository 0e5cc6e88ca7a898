"""Blocks: a researcher's keeps a worker out of their campaigns (or one), nobody else's;
an administrator's keeps them out of the whole site and says so. Through the pages."""

import itertools

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.core.worker_tokens import assignment_token_read
from cfannotate.crowd.models import (
    ActionOutcome,
    BlockScope,
    PlatformAction,
    Publication,
    Worker,
    WorkerBlock,
    WorkerStatus,
)
from cfannotate.labeling.models import Assignment, AssignmentState
from cfannotate.quality.models import DecisionAction, WorkerDecision
from tests.crowd.conftest import entry_path, finish, make_prolific_publication
from tests.factories import make_labeling_campaign, make_user

pytestmark = pytest.mark.django_db
PID = "5f" + "0" * 22
HTMX = {"HX-Request": "true"}
_sessions = itertools.count(1)
_studies = itertools.count(1)


def _campaign(owner):
    campaign = make_labeling_campaign(
        units=4, gold=0, training=0, rounds_per_assignment=2, gold_rounds_per_assignment=0
    )
    campaign.owner = owner
    campaign.save(update_fields=["owner"])
    make_prolific_publication(campaign, study_id=f"{next(_studies):024d}")
    return campaign


def _enter(client, campaign):
    """The participant opens the campaign's Prolific study in a new session."""
    publication = Publication.objects.get(campaign=campaign)
    params = {"PROLIFIC_PID": PID, "STUDY_ID": publication.external_id}
    return client.get(entry_path(publication, **params, SESSION_ID=f"S{next(_sessions)}"))


def _entered(client, campaign) -> tuple[Assignment, str]:
    """The assignment the entry started, and the address of its worker pages."""
    response = _enter(client, campaign)
    assert response.status_code == 302, response.content
    pages = response["Location"]
    token = pages.split("/w/")[1].split("/")[0]
    return Assignment.objects.get(id=assignment_token_read(token).assignment_id), pages


@pytest.fixture
def researchers(db):
    first, second = make_user("first"), make_user("second")
    return first, second


@pytest.fixture
def worlds(researchers):
    """Two campaigns of the first researcher (A, B) and one of the second (C)."""
    first, second = researchers
    return _campaign(first), _campaign(first), _campaign(second)


def _page_of(owner, campaign) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def _block(owner, campaign, worker, **form):
    url = reverse("crowd-block", args=[campaign.id, worker.id])
    return _page_of(owner, campaign).post(url, {"reason": "Random answers.", **form}, headers=HTMX)


def test_a_researchers_block_ends_their_work_only_and_other_researchers_keep_the_worker(
    worlds, researchers, prolific, settings
):
    settings.CROWD_PROLIFIC_BLOCKLIST_GROUP = "group1"  # where an administrator's block goes
    a, b, c = worlds
    first, second = researchers
    worker_client = Client()
    done_in_a, _ = _entered(worker_client, a)
    finish(done_in_a)
    in_b, b_pages = _entered(worker_client, b)
    in_c, c_pages = _entered(worker_client, c)

    blocked = _block(first, a, done_in_a.worker)
    assert blocked.status_code == 200
    assert "from all your campaigns" in blocked.text
    assert "blocked from your campaigns" in blocked.text

    # The first researcher's other campaign: the work ended, its pages and a new entry say why.
    in_b.refresh_from_db()
    assert in_b.state == AssignmentState.RETURNED
    for response in (worker_client.get(b_pages), _enter(worker_client, b)):
        assert response.status_code == 403
        assert "You cannot take this task" in response.text
        assert "blocked your worker account from their tasks" in response.text
        assert "Tasks of other researchers are not affected" in response.text
    assert _enter(worker_client, _campaign(first)).status_code == 403  # and any new one

    # The second researcher's campaign goes on, and a new one of theirs takes the worker.
    in_c.refresh_from_db()
    assert in_c.state == AssignmentState.ACTIVE
    assert worker_client.get(c_pages).status_code == 200
    finish(in_c)
    assert _enter(worker_client, _campaign(second)).status_code == 302
    queue = _page_of(second, c).get(reverse("crowd-platforms", args=[c.id]), headers=HTMX).text
    assert f'id="assignment-{in_c.id}"' in queue and "badge-failed" not in queue

    # Recorded here only: a platform block would cover every researcher on the site.
    worker = Worker.objects.get(external_id=PID)
    assert worker.status == WorkerStatus.ACTIVE
    block = WorkerBlock.objects.get()
    assert (block.scope, block.researcher, block.created_by) == ("researcher", first, first)
    action = PlatformAction.objects.get(action="block")
    assert (action.outcome, action.campaign, action.response) == (
        ActionOutcome.LOCAL,
        a,
        {"scope": "researcher"},
    )
    assert prolific.requests == [] and prolific.groups == {}


def test_a_block_from_one_campaign_leaves_the_researchers_other_campaigns(worlds, researchers):
    a, b, _ = worlds
    first, _ = researchers
    worker_client = Client()
    done_in_a, _ = _entered(worker_client, a)
    finish(done_in_a)
    in_b, b_pages = _entered(worker_client, b)
    blocked = _block(first, a, done_in_a.worker, scope="campaign")
    assert blocked.status_code == 200 and "from this campaign" in blocked.text
    assert "blocked from this campaign" in blocked.text
    refused = _enter(worker_client, a)
    assert refused.status_code == 403 and "blocked your worker account from it" in refused.text
    in_b.refresh_from_db()
    assert in_b.state == AssignmentState.ACTIVE
    assert worker_client.get(b_pages).status_code == 200
    assert WorkerBlock.objects.get().campaign == a


def test_a_block_decision_sent_through_the_api_is_the_researchers_only(
    worlds, researchers, api_client, researcher
):
    a, b, c = worlds
    for campaign in (a, b):
        campaign.owner = researcher  # the API client's researcher
        campaign.save(update_fields=["owner"])
    worker_client = Client()
    done_in_a, _ = _entered(worker_client, a)
    finish(done_in_a)
    decision = WorkerDecision.objects.create(
        campaign=a, worker=done_in_a.worker, action=DecisionAction.BLOCK, reason="Guessing."
    )
    confirmed = api_client.post(
        f"/api/campaigns/{a.id}/decisions/{decision.id}/", {"state": "confirmed"}, format="json"
    )
    assert confirmed.status_code == 200
    applied = api_client.post(f"/api/campaigns/{a.id}/decisions/apply/")
    assert applied.json() == {"applied": 1, "failed": 0}
    assert _enter(worker_client, b).status_code == 403
    assert _enter(worker_client, c).status_code == 302  # another researcher's campaign
    block = WorkerBlock.objects.get()
    assert (block.scope, block.researcher_id) == ("researcher", researcher.id)
    assert block.created_by == researcher


def test_an_administrators_block_is_global_and_says_so(worlds, researchers):
    a, _, c = worlds
    first, _ = researchers
    worker_client = Client()
    done_in_a, _ = _entered(worker_client, a)
    finish(done_in_a)
    in_c, c_pages = _entered(worker_client, c)
    admin = Client()
    admin.force_login(make_user("root", is_staff=True, is_superuser=True))
    response = admin.post(
        reverse("admin:crowd_worker_changelist"),
        {"action": "block_workers", "_selected_action": [done_in_a.worker_id]},
        follow=True,
    )
    assert "everywhere: in every researcher&#x27;s campaigns and on their platform" in (
        response.content.decode()
    )
    listed = admin.get(reverse("admin:crowd_worker_changelist")).content.decode()
    assert "Blocked everywhere (administrator)" in listed
    # Every researcher's campaigns, with a page that says who blocked.
    for response in (worker_client.get(c_pages), _enter(worker_client, c)):
        assert response.status_code == 403
        assert "an administrator of this site blocked it" in response.text
    in_c.refresh_from_db()
    assert in_c.state == AssignmentState.RETURNED
    queue = _page_of(first, a).get(reverse("crowd-platforms", args=[a.id]), headers=HTMX).text
    assert "blocked everywhere (administrator)" in queue
    assert Worker.objects.get(pk=done_in_a.worker_id).status == WorkerStatus.BLOCKED
    assert not WorkerBlock.objects.exists()


def test_a_researcher_blocks_only_their_own_workers_and_never_everywhere(worlds, researchers):
    a, _, c = worlds
    first, _ = researchers
    theirs, _ = _entered(Client(), c)
    assert _block(first, a, theirs.worker).status_code == 404  # never worked on A
    mine, _ = _entered(Client(), a)
    finish(mine)
    everywhere = _block(first, a, mine.worker, scope=BlockScope.EVERYWHERE)
    assert everywhere.status_code == 400 and "Please correct" in everywhere.text
    assert Worker.objects.get(pk=mine.worker_id).status == WorkerStatus.ACTIVE
    assert not WorkerBlock.objects.exists() and not PlatformAction.objects.exists()
