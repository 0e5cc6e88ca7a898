"""The classifier in the loop on a campaign: computed and uploaded predictions, the settings
that choose them, selection that weighs them, and where the researcher sees them."""

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from cfannotate.campaigns.models import Campaign, FlipClassifier
from cfannotate.campaigns.services import campaign_update
from cfannotate.candidates.models import Candidate
from cfannotate.candidates.predictions import candidate_predictions_upload, candidates_predict
from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling.models import LabelingUnit
from cfannotate.labeling.units import units_create_from_selection
from generation.relationship import Relationship
from tests.factories import make_campaign, make_candidate, make_original

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(researcher) -> Campaign:
    """Originals of both labels, so that the baseline has something to learn."""
    campaign = make_campaign(owner=researcher)
    for text in ("A great film.", "A wonderful great story.", "Great acting."):
        make_original(campaign, text=text, label="positive")
    for text in ("A terrible film.", "A dull terrible story.", "Terrible acting."):
        make_original(campaign, text=text, label="negative")
    return campaign


def _candidate(original, text, removed=(), added=(), code="lexical", **kwargs):
    relationship = Relationship(
        base=str(original.pk),
        removed=frozenset(removed),
        added=frozenset(added),
        tree=frozenset(),
        code=code,
    )
    return make_candidate(
        original,
        text=text,
        control_code=code,
        edit={"relationship": relationship.to_dict()},
        **kwargs,
    )


def _upload(campaign, content: str, name: str = "predictions.csv") -> int:
    return candidate_predictions_upload(
        campaign=campaign, file_name=name, content=content.encode("utf-8")
    )


def test_the_baseline_predicts_each_new_candidate_and_never_overwrites_an_upload(campaign):
    great = campaign.originals.get(text="A great film.")
    flipped = make_candidate(great, text="A terrible dull film.")
    kept = make_candidate(great, text="A great great film.")
    uploaded = make_candidate(great, text="A film.")
    _upload(campaign, f"id,label,confidence\n{uploaded.pk},positive,0.6\n")

    assert candidates_predict(campaign=campaign) == 2

    flipped.refresh_from_db(), kept.refresh_from_db(), uploaded.refresh_from_db()
    assert (flipped.predicted_label.value, flipped.prediction_source) == ("negative", "baseline")
    assert kept.predicted_label.value == "positive"
    assert 0.5 < flipped.predicted_confidence <= 1.0
    assert (uploaded.prediction_source, uploaded.predicted_confidence) == ("uploaded", 0.6)
    assert candidates_predict(campaign=campaign) == 0  # nothing left without a prediction


def test_no_classifier_or_originals_of_one_label_predict_nothing(researcher, campaign):
    make_candidate(campaign.originals.first(), text="Something else.")
    Campaign.objects.filter(pk=campaign.pk).update(flip_classifier=FlipClassifier.NONE)
    campaign.refresh_from_db()
    assert candidates_predict(campaign=campaign) == 0

    one_label = make_campaign(owner=researcher)
    make_candidate(make_original(one_label, text="A great film.", label="positive"), text="A film.")
    assert candidates_predict(campaign=one_label) == 0
    assert not Candidate.objects.filter(campaign=one_label).exclude(prediction_source="").exists()


def test_a_model_classifier_needs_its_directory_named(campaign):
    with pytest.raises(ValidationError) as caught:
        campaign_update(campaign=campaign, settings={"flip_classifier": "model"})
    assert "flip_model" in caught.value.message_dict
    with pytest.raises(ValidationError) as caught:
        campaign_update(campaign=campaign, settings={"flip_weight": -0.5})
    assert "flip_weight" in caught.value.message_dict
    campaign.refresh_from_db()
    assert (campaign.flip_classifier, campaign.flip_weight) == ("baseline", 0.5)  # defaults


def test_a_model_directory_that_does_not_load_is_named_and_selection_still_runs(campaign, tmp_path):
    campaign = campaign_update(
        campaign=campaign,
        settings={"flip_classifier": "model", "flip_model": str(tmp_path / "nowhere")},
    )
    original = campaign.originals.first()
    _candidate(original, "A fine film.", {"great"}, {"fine"})
    with pytest.raises(InvalidInput) as caught:
        candidates_predict(campaign=campaign)
    assert "No model directory" in caught.value.fields["flip_model"][0]

    assert units_create_from_selection(campaign=campaign).candidates == 1


def test_selection_favours_predicted_flips_by_the_campaigns_weight(campaign):
    original = campaign.originals.get(text="A great film.")
    copies = [_candidate(original, f"A good film {i}.", {"great"}, {"good"}) for i in range(3)]
    flip = _candidate(original, "A great film, not.", set(), {"not"}, code="negation")
    rows = "\n".join([f"{c.pk},positive,0.9" for c in copies] + [f"{flip.pk},negative,0.9", ""])
    _upload(campaign, "id,label,confidence\n" + rows)

    def chosen(weight: float) -> set[int]:
        LabelingUnit.objects.filter(campaign=campaign).delete()
        Candidate.objects.filter(campaign=campaign).update(status="generated")
        updated = campaign_update(
            campaign=campaign,
            settings={
                "flip_classifier": "uploaded",
                "flip_weight": weight,
                "selected_per_original": 1,
            },
        )
        units_create_from_selection(campaign=updated)
        return set(Candidate.objects.filter(status="selected").values_list("pk", flat=True))

    assert chosen(0.0) == {copies[0].pk}  # diversity alone: the most central candidate
    assert chosen(1.0) == {flip.pk}  # the predicted flip


def test_uploading_predictions_through_the_api_shows_them_in_the_candidate_list(
    api_client, campaign
):
    original = campaign.originals.get(text="A great film.")
    first, second = make_candidate(original, text="A bad film."), make_candidate(original)
    content = (
        f'{{"candidate_id": {first.pk}, "label": "Negative", "confidence": 0.8}}\n'
        f'{{"candidate_id": {second.pk}, "label": "positive"}}\n'
    ).encode()
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/candidates/predictions/",
        {"file": SimpleUploadedFile("predictions.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {"updated": 2}

    rows = api_client.get(f"/api/campaigns/{campaign.id}/candidates/").json()["results"]
    row = next(r for r in rows if r["id"] == first.pk)
    assert (row["predicted_label"], row["predicted_confidence"], row["prediction_source"]) == (
        "negative",
        0.8,
        "uploaded",
    )


def test_bad_rows_of_an_upload_are_each_named_and_nothing_is_stored(api_client, campaign):
    original = campaign.originals.first()
    candidate = make_candidate(original, text="A bad film.")
    content = (
        f"id,label,confidence\n{candidate.pk},negative,0.8\n999999,negative,\n"
        f"{candidate.pk},sarcastic,2\n"
    ).encode()
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/candidates/predictions/",
        {"file": SimpleUploadedFile("predictions.csv", content)},
        format="multipart",
    )
    assert response.status_code == 400
    body = response.json()
    assert "2 row(s) are invalid" in body["message"]
    assert body["fields"] == {
        "row 3": ["id: No candidate '999999' in this campaign."],
        "row 4": [
            "confidence: '2' is not between 0 and 1.",
            f"id: '{candidate.pk}' is also in row 2.",
            "label: Unknown label 'sarcastic'; expected one of negative, positive.",
        ],
    }
    candidate.refresh_from_db()
    assert candidate.prediction_source == ""


def test_an_upload_without_a_label_column_is_refused_whole(campaign):
    with pytest.raises(InvalidInput, match="no label column"):
        _upload(campaign, "id,score\n1,0.5\n")


def test_another_researchers_campaign_takes_no_predictions(other_researcher, campaign):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(other_researcher)
    response = client.post(
        f"/api/campaigns/{campaign.id}/candidates/predictions/",
        {"file": SimpleUploadedFile("p.csv", b"id,label\n1,negative\n")},
        format="multipart",
    )
    assert response.status_code == 404


def test_the_review_page_shows_the_prediction_and_whether_it_flips(client, researcher, campaign):
    original = campaign.originals.get(text="A great film.")
    candidate = make_candidate(original, text="A dreadful film.")
    _upload(campaign, f"id,label,confidence\n{candidate.pk},negative,0.75\n")
    client.force_login(researcher)
    html = client.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert "predicted:" in html and "Negative (0.75) · flips the label" in html


def test_generation_asks_for_the_other_label_with_the_campaigns_own_pairs(
    researcher, monkeypatch, tiny_lm
):
    from cfannotate.candidates.services import candidates_generate

    campaign = make_campaign(
        owner=researcher,
        settings={
            "generators": [
                {"name": "polyjuice", "strategy": "fewshot", "codes": ["lexical"], "blank_sets": 0}
            ],
            "fluency_threshold": 1000.0,  # the tiny random model is no judge of fluency
        },
    )
    great = make_original(campaign, text="The film is great.", label="positive")
    make_original(campaign, text="The film is terrible.", label="negative")
    make_candidate(
        great,
        text="The film is dreadful.",
        source="imported",
        intended_label=campaign.labels.get(value="negative"),
    )
    prompts = []

    def fake(lm, parts, budgets, config, **kwargs):
        prompts.extend(parts)
        return [[" film is terrible."] * config.per_prompt for _ in parts]

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)
    candidates_generate(campaign=campaign, originals=[great], lm=tiny_lm, fluency_lm=tiny_lm)

    # The researcher's own pair is the first worked example (its code detected); x is asked
    # for the other label.
    first = "positive: The film is great.\nnegative [lexical]: The film is dreadful.\n"
    assert prompts and all(p.shared.startswith(first) for p in prompts)
    assert {p.own for p in prompts} == {"negative [lexical]: The"}
    (made,) = Candidate.objects.filter(original=great, source="generated")
    assert (made.text, made.intended_label.value) == ("The film is terrible.", "negative")
    # The classifier in the loop labeled it as soon as it was stored.
    assert made.prediction_source == "baseline" and made.predicted_label is not None
