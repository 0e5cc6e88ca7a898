"""More places on a Prolific study when re-queues and replaced rounds need more assignments
than it was made for, by hand or by the labeling sweep up to a cap: the services against
the fake Prolific, the campaign page's notice and forms, the API and the command."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from cfannotate.core.exceptions import Conflict, InvalidInput
from cfannotate.crowd.models import ActionKind, ActionOutcome, PlatformAction, Publication
from cfannotate.crowd.places import (
    places_top_up,
    publication_places_add,
    publication_places_cap_set,
)
from cfannotate.crowd.providers import PlatformError
from cfannotate.crowd.publishing import prolific_study_create
from cfannotate.crowd.selectors import places_short, study_places
from cfannotate.labeling.models import AssignmentState, LabelingUnit
from cfannotate.quality.tasks import sweep_labeling
from tests.crowd.conftest import make_mturk_publication, make_prolific_publication
from tests.crowd.test_prolific import _options
from tests.factories import make_assignment, make_labeling_campaign, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(campaign, prolific):
    return prolific_study_create(
        campaign=campaign, options=_options(places=2), base_url="https://labels.example.org"
    )


def test_places_are_added_as_prolifics_new_total(study, prolific):
    publication_places_add(publication=study, places=3)
    (request,) = prolific.calls("PATCH", f"studies/{study.external_id}")
    assert request[2] == {"total_available_places": 5}  # Prolific takes the new total
    assert prolific.studies[study.external_id]["total_available_places"] == 5
    study.refresh_from_db()
    assert study.options["places"] == 5
    action = PlatformAction.objects.get(action=ActionKind.PLACES)
    assert (action.outcome, action.request_id) == (ActionOutcome.SUCCEEDED, study.external_id)


def test_a_completed_study_takes_workers_again(study, prolific):
    prolific.studies[study.external_id]["status"] = "COMPLETED"
    publication_places_add(publication=study, places=1)
    study.refresh_from_db()
    assert study.status == "ACTIVE"


@pytest.mark.parametrize("places", [0, -2, "3", 2.5, True, None, 100_001])
def test_a_bad_number_of_places_is_refused_before_prolific_is_asked(study, prolific, places):
    before = len(prolific.requests)
    with pytest.raises(InvalidInput, match="Add 1 to 100000 places"):
        publication_places_add(publication=study, places=places)
    assert len(prolific.requests) == before
    assert not PlatformAction.objects.filter(action=ActionKind.PLACES).exists()


def test_more_than_prolifics_limit_in_all_is_refused(study):
    Publication.objects.filter(pk=study.pk).update(options={**study.options, "places": 99_999})
    study.refresh_from_db()
    with pytest.raises(InvalidInput, match="100001 places, more than 100000"):
        publication_places_add(publication=study, places=2)


def test_a_refusal_from_prolific_is_said_and_logged_and_changes_nothing(study, prolific):
    prolific.refuse["studies/"] = (
        400,
        {"error": {"detail": "Insufficient funds in the workspace balance."}},
    )
    with pytest.raises(PlatformError, match="Insufficient funds"):
        publication_places_add(publication=study, places=3)
    study.refresh_from_db()
    assert study.options["places"] == 2
    assert PlatformAction.objects.get(action=ActionKind.PLACES).outcome == ActionOutcome.FAILED


def test_other_platforms_and_studies_never_created_are_refused(campaign, prolific):
    with pytest.raises(PlatformError, match="cannot take more workers from here"):
        publication_places_add(publication=make_mturk_publication(campaign), places=2)
    never = Publication.objects.create(
        campaign=campaign, platform="prolific", options={"places": 2}, status="failed"
    )
    with pytest.raises(Conflict, match="was not created on the platform"):
        publication_places_add(publication=never, places=2)


def _taken(campaign, publication, n, state=AssignmentState.ACTIVE):
    for _ in range(n):
        make_assignment(campaign, platform_task_id=publication.external_id, state=state)


def test_the_shortfall_counts_taken_places_against_what_the_units_lack(campaign):
    # 4 units of K = 2 and 2 real rounds an assignment: 4 new assignments lack.
    publication = make_prolific_publication(campaign)  # 5 places
    _taken(campaign, publication, 1)
    _taken(campaign, publication, 1, AssignmentState.SUBMITTED)
    _taken(campaign, publication, 3, AssignmentState.RETURNED)  # places freed on Prolific
    (places,) = study_places(campaign)
    assert (places.places, places.taken, places.left) == (5, 2, 3)
    short = places_short(campaign, [places])
    assert (short.needed, short.left, short.short) == (4, 3, 1)
    # A re-queue needs more: the shortfall grows with it.
    LabelingUnit.objects.filter(campaign=campaign).update(judgments_needed=4)
    assert places_short(campaign, study_places(campaign)).needed == 8
    # Enough places: nothing to say.
    Publication.objects.filter(pk=publication.pk).update(options={"places": 20})
    assert places_short(campaign, study_places(campaign)) is None
    assert places_short(campaign, []) is None  # no Prolific study, no notice


def _owned_study(client, *, units: int, places: int):
    """A labeling campaign (K = 2, 2 real rounds an assignment) of a logged-in researcher,
    with one Prolific study of `places` places."""
    researcher = make_user()
    campaign = make_labeling_campaign(units=units, gold=1, rounds_per_assignment=2)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    study = prolific_study_create(
        campaign=campaign, options=_options(places=places), base_url="https://labels.example.org"
    )
    client.force_login(researcher)
    return campaign, study


def test_the_page_says_how_many_places_to_add_and_adds_them(client, prolific):
    campaign, study = _owned_study(client, units=4, places=1)
    page = reverse("crowd-platforms", args=[campaign.id])
    html = client.get(page).content.decode()
    assert 'id="places-short"' in html
    assert "The units still need about 4 new assignments" in html
    assert "have\n      1 place left: add 3 to study" in html
    assert f'id="places-{study.id}" type="number" name="places" min="1"' in html
    assert 'value="3"' in html  # the shortfall, ready to send

    url = reverse("crowd-places-add", args=[campaign.id, study.id])
    response = client.post(url, {"places": "3"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert f"Prolific study {study.external_id} now lets 4 workers in." in html
    assert 'id="places-short"' not in html
    assert prolific.studies[study.external_id]["total_available_places"] == 4

    refused = client.post(url, {"places": "0"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 400 and "greater than or equal to 1" in refused.content.decode()
    assert 'max="100000" required\n                   value="0">' in refused.content.decode()
    elsewhere = reverse("crowd-places-add", args=[campaign.id, study.id + 999])
    assert client.post(elsewhere, {"places": "1"}, HTTP_HX_REQUEST="true").status_code == 404


def test_the_api_adds_places_and_refuses_bad_input(client, prolific):
    campaign, study = _owned_study(client, units=2, places=2)
    url = f"/api/campaigns/{campaign.id}/platforms/publications/{study.id}/places/"
    response = client.post(url, {"places": 5}, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["places"] == 7 and response.json()["external_id"] == study.external_id
    bad = client.post(url, {"places": "many"}, content_type="application/json")
    assert bad.status_code == 400 and "places" in bad.json()["fields"]
    listed = client.get(f"/api/campaigns/{campaign.id}/platforms/publications/").json()
    assert listed["results"][0]["places"] == 7
    other = make_user("olga")
    client.force_login(other)
    assert client.post(url, {"places": 1}, content_type="application/json").status_code == 404


def _command(*args) -> str:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("prolific_places", *args, stdout=out)
    return out.getvalue()


def test_the_command_lists_places_and_adds_the_shortfall(prolific):
    from django.core.management.base import CommandError

    campaign = make_labeling_campaign(units=4, gold=1, rounds_per_assignment=2)
    with pytest.raises(CommandError, match=f"Campaign {campaign.id} has no Prolific study"):
        _command(str(campaign.id))
    study = prolific_study_create(
        campaign=campaign, options=_options(places=1), base_url="https://labels.example.org"
    )
    out = _command(str(campaign.id))
    assert f"Study {study.external_id} (UNPUBLISHED): 1 place, 0 taken, 1 left." in out
    assert "need about 4 new assignments and the studies have 1 place left: 3 short." in out
    assert not prolific.calls("PATCH", "studies/")  # listing changes nothing

    out = _command(str(campaign.id), "--add", "short")
    assert f"Prolific study {study.external_id} now lets 4 workers in." in out
    assert prolific.studies[study.external_id]["total_available_places"] == 4
    out = _command(str(campaign.id), "--add", "short")
    assert "places enough: none added" in out
    assert _command(str(campaign.id), "--add", "2", "--study", study.external_id).endswith(
        "now lets 6 workers in.\n"
    )

    for args, message in [
        (["--add", "many"], "--add takes a number of places or 'short', not 'many'"),
        (["--add", "0"], "--add takes 1 to 100000 places or 'short', not 0."),
        (["--add", "1", "--study", "nope"], "No Prolific study 'nope' in this campaign"),
        (["99999"], "No campaign with id 99999"),
    ]:
        target = [] if args == ["99999"] else [str(campaign.id)]
        with pytest.raises(CommandError, match=message):
            _command(*(target + args))
    assert prolific.studies[study.external_id]["total_available_places"] == 6


# --- The cap: places added by the labeling sweep -------------------------------------------


def test_a_cap_is_kept_in_the_study_and_refused_below_its_places(study, prolific):
    publication_places_cap_set(publication=study, up_to=10)
    study.refresh_from_db()
    assert study.options["places_up_to"] == 10 and study.options["places"] == 2
    assert not prolific.calls("PATCH", "studies/")  # nothing asked of Prolific
    for bad in [1, 0, 100_001, "10", 2.0, True]:
        with pytest.raises(InvalidInput, match="Cap the study at 2 to 100000 places: it has 2"):
            publication_places_cap_set(publication=study, up_to=bad)
    publication_places_cap_set(publication=study, up_to=None)
    study.refresh_from_db()
    assert "places_up_to" not in study.options


def test_only_the_newest_prolific_study_made_there_takes_a_cap(campaign, client):
    with pytest.raises(Conflict, match="Only Prolific studies take more places by themselves"):
        publication_places_cap_set(publication=make_mturk_publication(campaign), up_to=9)
    never = Publication.objects.create(campaign=campaign, platform="prolific", options={})
    with pytest.raises(Conflict, match="was not created on the platform"):
        publication_places_cap_set(publication=never, up_to=9)
    older = make_prolific_publication(campaign, study_id="a" * 24)
    newer = make_prolific_publication(campaign, study_id="b" * 24)
    with pytest.raises(Conflict, match=f"Only the campaign's newest Prolific study, {'b' * 24}"):
        publication_places_cap_set(publication=older, up_to=9)
    publication_places_cap_set(publication=newer, up_to=9)
    client.force_login(campaign.owner)
    html = client.get(reverse("crowd-platforms", args=[campaign.id])).content.decode()
    assert f'id="places-cap-{newer.id}"' in html and f'id="places-cap-{older.id}"' not in html


def test_the_sweep_adds_what_the_units_lack_as_far_as_the_cap_allows(study, prolific):
    campaign = study.campaign  # 4 units of K = 2, 2 real rounds an assignment: 4 lack
    assert places_top_up(campaign=campaign) == 0  # no cap: only by hand
    publication_places_cap_set(publication=study, up_to=5)
    assert places_top_up(campaign=campaign) == 2  # 2 short, and room for 3
    assert prolific.studies[study.external_id]["total_available_places"] == 4
    assert places_top_up(campaign=campaign) == 0  # nothing short any more
    LabelingUnit.objects.filter(campaign=campaign).update(judgments_needed=4)  # re-queues
    assert places_top_up(campaign=campaign) == 1  # 4 short, the cap leaves room for 1
    study.refresh_from_db()
    assert study.options["places"] == 5
    assert places_top_up(campaign=campaign) == 0  # at the cap
    added = PlatformAction.objects.filter(action=ActionKind.PLACES, outcome="succeeded")
    assert added.count() == 2


def test_a_refusal_stops_the_sweep_adding_for_a_while_not_the_sweep(study, prolific, caplog):
    from datetime import timedelta

    publication_places_cap_set(publication=study, up_to=50)
    prolific.refuse["studies/"] = (400, {"error": {"detail": "Insufficient funds."}})
    assert places_top_up(campaign=study.campaign) == 0
    assert "Insufficient funds" in caplog.text
    asked = len(prolific.calls("PATCH", "studies/"))
    assert places_top_up(campaign=study.campaign) == 0  # not asked again at once
    assert len(prolific.calls("PATCH", "studies/")) == asked
    PlatformAction.objects.filter(action=ActionKind.PLACES).update(
        created_at=timezone.now() - timedelta(hours=2)
    )
    assert places_top_up(campaign=study.campaign) == 2  # an hour later it asks again


def test_the_labeling_sweep_tops_up(study, prolific):
    publication_places_cap_set(publication=study, up_to=40)
    sweep_labeling.call(study.campaign.id)
    assert prolific.studies[study.external_id]["total_available_places"] == 4


def test_the_page_and_the_api_set_the_cap(client, prolific):
    campaign, study = _owned_study(client, units=4, places=1)
    url = reverse("crowd-places-cap", args=[campaign.id, study.id])
    html = client.post(url, {"up_to": "12"}, HTTP_HX_REQUEST="true").content.decode()
    assert "takes more places by itself as the units need them, up to 12 in all." in html
    assert f'id="places-cap-{study.id}" type="number" name="up_to"' in html
    assert 'value="12"' in html
    assert "the labeling sweep adds\n      them to study" in html  # the notice says who adds
    refused = client.post(url, {"up_to": "0"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 400 and 'value="0"' in refused.content.decode()
    html = client.post(url, {"up_to": ""}, HTTP_HX_REQUEST="true").content.decode()
    assert "takes more places only when you add them." in html
    assert f"add 3 to study\n      <code>{study.external_id}</code>" in html

    api = f"/api/campaigns/{campaign.id}/platforms/publications/{study.id}/places/cap/"
    answer = client.post(api, {"up_to": 30}, content_type="application/json")
    assert answer.status_code == 200 and answer.json()["places_up_to"] == 30
    bad = client.post(api, {"up_to": 0}, content_type="application/json")
    assert bad.status_code == 400 and "up_to" in bad.json()["fields"]
    off = client.post(api, {"up_to": None}, content_type="application/json")
    assert off.status_code == 200 and off.json()["places_up_to"] is None


def test_the_command_sets_and_clears_the_cap(prolific):
    from django.core.management.base import CommandError

    campaign = make_labeling_campaign(units=4, gold=1, rounds_per_assignment=2)
    study = prolific_study_create(
        campaign=campaign, options=_options(places=2), base_url="https://labels.example.org"
    )
    out = _command(str(campaign.id), "--up-to", "20")
    assert "up to 20 in all." in out
    assert ", added by itself up to 20." in _command(str(campaign.id))
    assert "only when you add them" in _command(str(campaign.id), "--up-to", "off")
    with pytest.raises(CommandError, match="--up-to takes a number of places or 'off'"):
        _command(str(campaign.id), "--up-to", "lots")
    with pytest.raises(CommandError, match="Cap the study at 2 to 100000 places"):
        _command(str(campaign.id), "--up-to", "1", "--study", study.external_id)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--up-to", "off", "--add", "-1"], "--add takes 1 to 100000 places or 'short', not -1."),
        (["--up-to", "off", "--add", "100001"], "--add takes 1 to 100000 places or 'short'"),
        (["--up-to", "off", "--study", "nope"], "No Prolific study 'nope' in this campaign"),
        (["--study", "nope"], "No Prolific study 'nope' in this campaign"),
    ],
)
def test_the_command_refuses_bad_input_before_it_changes_anything(prolific, args, message):
    from django.core.management.base import CommandError

    campaign = make_labeling_campaign(units=4, gold=1, rounds_per_assignment=2)
    study = prolific_study_create(
        campaign=campaign, options=_options(places=2), base_url="https://labels.example.org"
    )
    _command(str(campaign.id), "--up-to", "20")
    with pytest.raises(CommandError, match=re.escape(message)):
        _command(str(campaign.id), *args)
    study.refresh_from_db()
    assert study.options["places_up_to"] == 20 and study.options["places"] == 2
    assert not prolific.calls("PATCH", "studies/")


def test_the_overview_asks_for_places_only_when_the_sweep_will_not_add_them(study):
    from cfannotate.campaigns.stages import stage_facts

    assert stage_facts(study.campaign).places_short == 2  # 4 assignments lack, 2 places
    publication_places_cap_set(publication=study, up_to=3)  # room for 1: the sweep adds it
    assert stage_facts(study.campaign).places_short == 0
