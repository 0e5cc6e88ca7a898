"""The review and gold API: filters validated, owner-scoped, {"message", "fields"} errors."""

import pytest
from rest_framework.test import APIClient

from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.labeling.models import GoldRound, LabelingUnit, Round, RoundKind
from tests.factories import (
    make_assignment,
    make_campaign,
    make_candidate,
    make_gold_round,
    make_original,
    make_unit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(owner=researcher)
    original = make_original(campaign, text="It is great for kids.", label="positive")
    make_candidate(
        original, text="It is not great for kids.", control_code="negation", fluency_full=-1.0
    )
    make_candidate(
        original, text="It is great for adults.", control_code="lexical", fluency_full=-6.0
    )
    make_candidate(
        make_original(campaign, text="A dull film."),
        text="A fine film.",
        generator="lexicon-replace",
        control_code="lexical",
        status=CandidateStatus.FILTERED,
    )
    return campaign


def _base(campaign):
    return f"/api/campaigns/{campaign.id}/candidates/"


def test_list_filters_orders_and_paginates(api_client, campaign):
    body = api_client.get(_base(campaign)).json()
    assert body["count"] == 3 and "next" in body
    row = body["results"][0]
    assert (row["unit"], row["unit_claimed"], row["judged"]) == (None, False, False)
    assert {
        "id",
        "text",
        "original",
        "control_code",
        "fluency_full",
        "unit",
        "unit_claimed",
    } <= set(row)

    def texts(**params):
        return [r["text"] for r in api_client.get(_base(campaign), params).json()["results"]]

    assert texts(control_code="negation") == ["It is not great for kids."]
    assert texts(generator="lexicon-replace") == ["A fine film."]
    assert texts(status="filtered", source="generated") == ["A fine film."]
    assert texts(min_fluency=-5, max_fluency=0) == ["It is not great for kids."]
    assert texts(search="ADULTS") == ["It is great for adults."]
    assert texts(ordering="-fluency", min_fluency=-10) == [
        "It is great for adults.",
        "It is not great for kids.",
    ]
    original = Candidate.objects.get(text="A fine film.").original
    assert texts(original=original.id) == ["A fine film."]
    assert len(api_client.get(_base(campaign), {"page_size": 1}).json()["results"]) == 3


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"control_code": "teleport"}, "control_code"),
        ({"status": "done"}, "status"),
        ({"min_fluency": "lots"}, "min_fluency"),
        ({"min_fluency": "nan"}, "min_fluency"),
        ({"min_fluency": 3, "max_fluency": 1}, "max_fluency"),
        ({"original": "abc"}, "original"),
        ({"original": "99999999999999999999"}, "original"),
        ({"ordering": "random"}, "ordering"),
        ({"search": "x" * 201}, "search"),
    ],
)
def test_bad_filters_are_400_with_the_field(api_client, campaign, params, field):
    response = api_client.get(_base(campaign), params)
    assert response.status_code == 400
    assert field in response.json()["fields"]


def test_each_candidate_says_which_engine_and_model_made_it(api_client, campaign):
    Candidate.objects.filter(text="It is not great for kids.").update(
        metadata={"engine": "server", "model": "org/m-7b"}
    )
    rows = api_client.get(f"/api/campaigns/{campaign.id}/candidates/").json()["results"]
    made = {row["text"]: (row["engine"], row["model"]) for row in rows}
    assert made["It is not great for kids."] == ("server", "org/m-7b")
    assert made["A fine film."] == (None, None)  # nothing recorded


def test_detail_accept_reject_and_edit(api_client, campaign):
    candidate = Candidate.objects.get(text="It is great for adults.")
    url = f"{_base(campaign)}{candidate.id}/"
    assert api_client.get(url).json()["text"] == "It is great for adults."
    accepted = api_client.post(url + "accept/").json()
    assert accepted["status"] == "selected" and accepted["unit"] is not None
    rejected = api_client.post(url + "reject/").json()
    assert rejected["status"] == "rejected" and rejected["unit"] is None

    edited = api_client.patch(url, {"text": "It is bad for kids."}, format="json")
    assert edited.status_code == 200
    assert edited.json()["fluency_full"] is None and edited.json()["text"] == "It is bad for kids."
    dup = api_client.patch(url, {"text": "It is not great for kids."}, format="json")
    assert dup.status_code == 400
    assert dup.json()["fields"]["text"][0].startswith("Already a candidate of this original")
    assert api_client.patch(url, {}, format="json").json()["fields"] == {
        "text": ["This field is required."]
    }
    assert api_client.get(f"{_base(campaign)}999999/").status_code == 404
    assert api_client.post(f"{_base(campaign)}999999/accept/").status_code == 404


def test_reject_refused_once_a_worker_has_the_unit(api_client, campaign):
    unit = make_unit(make_original(campaign), candidates=1)
    assignment = make_assignment(campaign)
    Round.objects.create(
        assignment=assignment, worker=assignment.worker, kind=RoundKind.REAL, position=1, unit=unit
    )
    candidate = unit.items.get().candidate
    response = api_client.post(f"{_base(campaign)}{candidate.id}/reject/")
    assert response.status_code == 409
    assert "already given" in response.json()["message"]
    assert api_client.get(f"{_base(campaign)}{candidate.id}/").json()["unit_claimed"] is True


def test_bulk_review(api_client, campaign):
    ids = list(Candidate.objects.filter(campaign=campaign).values_list("id", flat=True))
    url = _base(campaign) + "review/"
    bad = api_client.post(url, {"accept": [ids[0], 999_999], "reject": [ids[1]]}, format="json")
    assert bad.status_code == 400
    assert set(bad.json()["fields"]) == {"accept.999999"}
    assert not LabelingUnit.objects.exists()
    assert api_client.post(url, {"accept": ["x"]}, format="json").status_code == 400
    assert api_client.post(url, {}, format="json").status_code == 400
    ok = api_client.post(url, {"accept": ids[:2], "reject": ids[2:]}, format="json")
    assert ok.json() == {"accepted": 2, "rejected": 1}


def test_everything_is_owner_scoped(campaign, other_researcher):
    client = APIClient()
    client.force_authenticate(other_researcher)
    candidate = Candidate.objects.filter(campaign=campaign).first()
    gold_round = make_gold_round(campaign)
    base = _base(campaign)
    assert client.get(base).status_code == 404
    assert client.get(f"{base}{candidate.id}/").status_code == 404
    assert client.post(f"{base}{candidate.id}/accept/").status_code == 404
    assert client.patch(f"{base}{candidate.id}/", {"text": "x y"}, format="json").status_code == 404
    assert (
        client.post(base + "review/", {"accept": [candidate.id]}, format="json").status_code == 404
    )
    gold = f"/api/campaigns/{campaign.id}/gold/"
    assert client.get(gold).status_code == 404
    assert (
        client.patch(f"{gold}{gold_round.id}/", {"is_active": False}, format="json").status_code
        == 404
    )
    # Another researcher's own campaign does not reach these candidates either.
    theirs = make_campaign(owner=other_researcher)
    response = client.post(f"/api/campaigns/{theirs.id}/candidates/{candidate.id}/accept/")
    assert response.status_code == 404
    assert APIClient().get(base).status_code in (401, 403)
    assert Candidate.objects.get(pk=candidate.pk).status == CandidateStatus.GENERATED


def test_gold_list_author_promote_and_update(api_client, campaign):
    gold = f"/api/campaigns/{campaign.id}/gold/"
    original = Candidate.objects.get(text="A fine film.").original
    promoted = api_client.post(
        gold,
        {
            "original": original.id,
            "kind": "training",
            "items": [
                {
                    "candidate_id": original.candidates.get().id,
                    "valid": True,
                    "label": "positive",
                    "explanation": "Fine is positive.",
                }
            ],
        },
        format="json",
    )
    assert promoted.status_code == 201, promoted.json()
    body = promoted.json()
    assert body["kind"] == "training" and body["items"][0]["expected_label"] == "positive"

    fresh = make_original(campaign, text="The ending works.")
    authored = api_client.post(
        gold,
        {"original": fresh.id, "items": [{"text": "The ending fails.", "label": "negative"}]},
        format="json",
    )
    assert authored.status_code == 201 and authored.json()["kind"] == "gold"
    listed = api_client.get(gold, {"kind": "gold"}).json()
    assert [r["id"] for r in listed["results"]] == [authored.json()["id"]]
    assert api_client.get(gold, {"kind": "platinum"}).status_code == 400

    item_id = authored.json()["items"][0]["id"]
    url = f"{gold}{authored.json()['id']}/"
    patched = api_client.patch(
        url,
        {"is_active": False, "items": [{"id": item_id, "valid": False, "label": "positive"}]},
        format="json",
    )
    assert patched.status_code == 200
    assert patched.json()["is_active"] is False
    assert patched.json()["items"][0]["expected_valid"] is False
    assert api_client.patch(url, {}, format="json").status_code == 400
    assert api_client.get(f"{gold}999999/").status_code == 404


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"items": [{"text": "x", "label": "negative"}]}, "original"),
        ({"original": 999_999, "items": [{"text": "x", "label": "negative"}]}, "original"),
        ({"original": "ORIGINAL", "items": []}, "items.non_field_errors"),
        ({"original": "ORIGINAL", "items": [{"label": "negative"}]}, "items.0.non_field_errors"),
        ({"original": "ORIGINAL", "items": [{"text": "x", "label": "meh"}]}, "items[1].label"),
        (
            {
                "original": "ORIGINAL",
                "kind": "bronze",
                "items": [{"text": "x", "label": "negative"}],
            },
            "kind",
        ),
        (
            {
                "original": "ORIGINAL",
                "items": [
                    {"text": "x", "label": "negative"},
                    {"candidate_id": 1, "label": "negative"},
                ],
            },
            "items",
        ),
    ],
)
def test_gold_create_errors(api_client, campaign, payload, field):
    original = make_original(campaign)
    if payload.get("original") == "ORIGINAL":
        payload = {**payload, "original": original.id}
    response = api_client.post(f"/api/campaigns/{campaign.id}/gold/", payload, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert not GoldRound.objects.exists()


def test_gold_answers_fixed_once_a_worker_had_the_round(api_client, campaign):
    gold_round = make_gold_round(campaign)
    assignment = make_assignment(campaign)
    Round.objects.create(
        assignment=assignment,
        worker=assignment.worker,
        kind=RoundKind.GOLD,
        position=1,
        gold_round=gold_round,
    )
    item = gold_round.items.first()
    url = f"/api/campaigns/{campaign.id}/gold/{gold_round.id}/"
    response = api_client.patch(
        url, {"items": [{"id": item.id, "label": "positive"}]}, format="json"
    )
    assert response.status_code == 409 and "already given" in response.json()["message"]
    assert api_client.get(url).json()["times_given"] == 1
    assert api_client.patch(url, {"is_active": False}, format="json").json()["is_active"] is False
