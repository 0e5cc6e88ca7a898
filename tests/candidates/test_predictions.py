"""The classifier in the loop on a campaign: computed and uploaded predictions, the settings
that choose them, selection that weighs them, and where the researcher sees them."""

import html

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from cfannotate.campaigns.models import Campaign, FlipClassifier
from cfannotate.campaigns.services import campaign_update
from cfannotate.candidates.models import Candidate, CandidateSource
from cfannotate.candidates.predictions import (
    _model_classifier,
    baseline_training_rows,
    candidate_predictions_upload,
    candidates_predict,
    label_classifier,
)
from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling.models import LabelingUnit
from cfannotate.labeling.units import units_create_from_selection
from cfannotate.quality.models import AggregatedLabel
from generation.relationship import Relationship
from tests.factories import make_campaign, make_candidate, make_gold_round, make_original

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


def _voted(candidate, label, *, kept=True):
    return AggregatedLabel.objects.create(
        candidate=candidate,
        label=candidate.campaign.labels.get(value=label) if label else None,
        is_valid=kept,
        kept=kept,
        votes=3,
        qualified_votes=3,
        agreement=1.0 if kept else 0.34,
    )


def _label(campaign, value):
    return campaign.labels.get(value=value)


def test_the_baseline_learns_from_every_labeled_counterfactual_once(campaign):
    great = campaign.originals.get(text="A great film.")
    own = dict(source=CandidateSource.IMPORTED, intended_label=_label(campaign, "negative"))
    written = make_candidate(great, text="A great bore of a film.", **own)
    crowd = make_candidate(great, text="A great film, if you like naps.")
    _voted(crowd, "negative")
    rejected = make_candidate(great, text="A great great.", **own)
    _voted(rejected, None, kept=False)  # the crowd found it invalid: not learned from
    relabeled = make_candidate(great, text="A great film? Hardly.", **own)
    _voted(relabeled, "positive")  # the crowd's label beats the one it was written for
    waiting = make_candidate(great, text="A great film, for a nap.", **own)
    AggregatedLabel.objects.create(  # one qualified vote so far: no verdict yet
        candidate=waiting, is_valid=True, kept=False, votes=1, qualified_votes=1, agreement=1.0
    )
    make_candidate(  # generated: its intended label is only what the prompt asked for
        great, text="A grating film.", intended_label=_label(campaign, "negative")
    )
    gold = make_gold_round(campaign, items=2, label="negative")

    rows = baseline_training_rows(campaign)

    texts = [row.text for row in rows]
    originals = list(campaign.originals.order_by("pk").values_list("text", flat=True))
    assert texts[: len(originals)] == originals
    assert not any(row.counterfactual for row in rows[: len(originals)])
    labeled = {row.text: row.label for row in rows[len(originals) :]}
    assert all(row.counterfactual for row in rows[len(originals) :])
    groups = {row.text: row.group for row in rows}
    assert groups[crowd.text] == groups[written.text] == groups["A great film."] == str(great.pk)
    gold_texts = [item.candidate.text for item in gold.items.all()]
    assert labeled == {
        **dict.fromkeys(gold_texts, "negative"),
        crowd.text: "negative",
        relabeled.text: "positive",
        written.text: "negative",
        waiting.text: "negative",
    }
    assert len(texts) == len(set(texts))


def test_counterfactual_pairs_teach_the_baseline_what_flips_a_label(campaign):
    great = campaign.originals.get(text="A great film.")
    probe = "A great film, what a bore."

    def p_negative() -> float:
        return label_classifier(campaign).predict([probe])[0].probability("negative")

    alone = p_negative()  # "bore" is unknown; "great" says positive
    for text in ("What a bore.", "Such a bore of a film.", "A bore, really."):
        _voted(make_candidate(great, text=text), "negative")

    assert alone < 0.5
    assert p_negative() > alone + 0.05  # the pairs taught it that "bore" is negative


def test_an_edit_of_an_original_is_not_given_its_originals_label_back(campaign):
    # Fitted on every original, the baseline knows "The acting in this movie was ..." as
    # positive and labels its edit by the words they share: no edit would ever look like
    # a flip. Each candidate is predicted by a model that never saw its original.
    acting = make_original(campaign, text="The acting in this movie was great.", label="positive")
    edit = make_candidate(acting, text="The acting in this movie was awful.")
    copy = make_candidate(acting, text="The acting in this movie was great!")

    assert candidates_predict(campaign=campaign) == 2

    edit.refresh_from_db(), copy.refresh_from_db()
    assert edit.predicted_label.value == "negative"
    assert copy.predicted_label.value == "positive"


def test_predicting_a_page_at_a_time_is_one_prediction_over_every_candidate(campaign, monkeypatch):
    """Read two originals at a time and stored three candidates a page, the predictions
    are those of one out-of-fold call over every candidate in (original, id) order."""
    from cfannotate.candidates import predictions
    from generation.label_classifiers import predict_out_of_fold

    words = ("dull", "great", "boring", "fine")
    for number, original in enumerate(campaign.originals.order_by("-pk")):
        for word in words[: 1 + number % 3]:
            make_candidate(original, text=f"{original.text} Quite {word}.")
    wanted = list(
        Candidate.objects.filter(campaign=campaign)
        .order_by("original_id", "id")
        .select_related("original")
    )
    expected = predict_out_of_fold(
        baseline_training_rows(campaign),
        [c.text for c in wanted],
        None,
        [str(c.original_id) for c in wanted],
        sentiment_lexicon=True,
    )
    monkeypatch.setattr(predictions, "ORIGINALS_PER_READ", 2)
    monkeypatch.setattr(predictions, "PREDICTION_PAGE", 3)

    assert candidates_predict(campaign=campaign) == len(wanted) == 12

    stored = Candidate.objects.filter(campaign=campaign).order_by("original_id", "id")
    assert [
        (c.predicted_label.value, c.predicted_confidence, c.prediction_source) for c in stored
    ] == [(p.label, min(1.0, max(0.0, p.confidence)), "baseline") for p in expected]


class _BatchedModel:
    """Stands in for a model directory: records the size of every call."""

    source, batch_size = "model", 4

    def __init__(self):
        self.calls = []

    def predict(self, texts, contexts=None):
        from generation.label_classifiers import LabelPrediction

        self.calls.append(len(texts))
        return [LabelPrediction("negative", 0.75) for _ in texts]


def test_a_model_is_given_pages_of_whole_batches(campaign, monkeypatch):
    """A model pads each batch to its longest text: pages of whole batches give it the
    batches one call over every candidate would, so its predictions do not change."""
    from cfannotate.candidates import predictions

    model = _BatchedModel()
    monkeypatch.setattr(predictions, "label_classifier", lambda campaign: model)
    monkeypatch.setattr(predictions, "PREDICTION_PAGE", 10)  # 2 batches of 4 a page
    Campaign.objects.filter(pk=campaign.pk).update(flip_classifier="model", flip_model="/m")
    campaign.refresh_from_db()
    for original in campaign.originals.all():
        make_candidate(original), make_candidate(original)

    assert candidates_predict(campaign=campaign) == 12
    assert model.calls == [8, 4]
    assert set(Candidate.objects.values_list("prediction_source", "predicted_confidence")) == {
        ("model", 0.75)
    }


def test_predicting_takes_the_same_queries_for_any_number_of_candidates(campaign):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(per_original: int) -> int:
        for original in campaign.originals.all():
            for _ in range(per_original):
                make_candidate(original)
        with CaptureQueriesContext(connection) as captured:
            assert candidates_predict(campaign=campaign) == 6 * per_original
        writes = [q["sql"] for q in captured.captured_queries if "UPDATE" in q["sql"]]
        # The campaign's check, then the predictions: one UPDATE from a VALUES list, not
        # an expression per row (`bulk_update`'s CASE WHEN).
        assert len(writes) == 2 and "CASE" not in writes[1]
        return len(captured.captured_queries)

    assert queries(1) == queries(5)


def test_no_classifier_or_originals_of_one_label_predict_nothing(researcher, campaign):
    make_candidate(campaign.originals.first(), text="Something else.")
    Campaign.objects.filter(pk=campaign.pk).update(flip_classifier=FlipClassifier.NONE)
    campaign.refresh_from_db()
    assert candidates_predict(campaign=campaign) == 0

    one_label = make_campaign(owner=researcher)
    make_candidate(make_original(one_label, text="A great film.", label="positive"), text="A film.")
    assert candidates_predict(campaign=one_label) == 0
    assert not Candidate.objects.filter(campaign=one_label).exclude(prediction_source="").exists()


def test_the_review_page_says_why_there_are_no_predictions(client, researcher, campaign):
    one_label = make_campaign(owner=researcher)
    film = make_original(one_label, text="A great film.", label="positive")
    make_candidate(film, text="A film.")
    client.force_login(researcher)
    review = reverse("candidate-review", args=[one_label.id])
    page = html.unescape(client.get(review).content.decode())
    assert "No label predictions" in page and "the same label (Positive)" in page
    # A counterfactual labeled negative (a gold answer, say) is the second label it needs.
    negative = one_label.labels.get(value="negative")
    make_candidate(
        film, text="An awful film.", source=CandidateSource.IMPORTED, intended_label=negative
    )
    assert "No label predictions" not in client.get(review).content.decode()
    # Originals of two labels, or another classifier: nothing to say.
    assert (
        "No label predictions"
        not in client.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    )
    Campaign.objects.filter(pk=one_label.pk).update(flip_classifier=FlipClassifier.UPLOADED)
    make_original(one_label, text="Nice.", label="positive")
    assert "No label predictions" not in client.get(review).content.decode()


def test_the_review_page_says_how_well_the_baseline_labels_unseen_originals(
    client, researcher, campaign
):
    """Each prediction stores the baseline's out-of-fold check on the originals; the review
    page reads it, and warns where the baseline is no better than the most common label."""
    review = reverse("candidate-review", args=[campaign.id])
    client.force_login(researcher)
    assert 'id="classifier-check"' not in client.get(review).content.decode()  # never checked
    make_candidate(campaign.originals.get(text="A great film."), text="A dull film.")
    candidates_predict(campaign=campaign)
    campaign.refresh_from_db()
    check = campaign.flip_classifier_check
    assert check["of"] == 6 and check["majority"] == 3 and 0 <= check["right"] <= 6
    page = " ".join(html.unescape(client.get(review).content.decode()).split())
    assert f"gives {check['right']} of 6 originals" in page
    assert "the most common label alone is right on 3 (50%)" in page
    # Stated for a weak baseline: a warning naming what to do.
    Campaign.objects.filter(pk=campaign.pk).update(
        flip_classifier_check={"right": 2, "of": 8, "majority": 3}
    )
    page = " ".join(html.unescape(client.get(review).content.decode()).split())
    assert '<p class="notice" id="classifier-check">' in page
    assert "gives 2 of 8 originals (25%)" in page and "for diversity alone" in page
    Campaign.objects.filter(pk=campaign.pk).update(
        flip_classifier_check={"right": 7, "of": 8, "majority": 4}
    )
    page = " ".join(html.unescape(client.get(review).content.decode()).split())
    assert '<p class="meta" id="classifier-check">' in page and "diversity alone" not in page
    # Another classifier: the baseline's check says nothing about it.
    Campaign.objects.filter(pk=campaign.pk).update(flip_classifier=FlipClassifier.UPLOADED)
    assert 'id="classifier-check"' not in client.get(review).content.decode()


def test_the_settings_page_shows_the_check_beside_the_flip_weight(client, researcher, campaign):
    settings = reverse("campaign-settings", args=[campaign.id])
    client.force_login(researcher)
    assert 'id="classifier-check"' not in client.get(settings).content.decode()
    Campaign.objects.filter(pk=campaign.pk).update(
        flip_classifier_check={"right": 2, "of": 8, "majority": 3}
    )
    page = " ".join(html.unescape(client.get(settings).content.decode()).split())
    selection = page[page.index("<legend>Selection</legend>") :]
    assert selection.index('<p class="notice" id="classifier-check">') < selection.index(
        "Flip weight"
    )
    assert "gives 2 of 8 originals (25%)" in selection


def test_the_api_gives_the_baseline_check_read_only(api_client, campaign):
    Campaign.objects.filter(pk=campaign.pk).update(
        flip_classifier_check={"right": 5, "of": 6, "majority": 3}
    )
    url = f"/api/campaigns/{campaign.id}/"
    assert api_client.get(url).json()["flip_classifier_check"] == {
        "right": 5,
        "of": 6,
        "majority": 3,
    }
    patched = api_client.patch(
        f"/api/campaigns/{campaign.id}/update/",
        {"settings": {"flip_classifier_check": {"right": 6}}},
        format="json",
    )
    assert patched.status_code == 400 and "flip_classifier_check" in patched.json()["fields"]


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


def test_selection_leaves_out_the_flips_of_a_baseline_no_better_than_the_majority(campaign):
    """The baseline's predictions (stored, as generation stores them) favour the flip while
    its last check beat the most common label, and count for nothing once it did not."""
    original = campaign.originals.get(text="A great film.")
    positive, negative = (campaign.labels.get(value=v) for v in ("positive", "negative"))
    copies = [_candidate(original, f"A good film {i}.", {"great"}, {"good"}) for i in range(3)]
    flip = _candidate(original, "A great film, not.", set(), {"not"}, code="negation")
    for candidate, label in [*((c, positive) for c in copies), (flip, negative)]:
        candidate.predicted_label, candidate.predicted_confidence = label, 0.9
        candidate.prediction_source = "baseline"
        candidate.save()

    def chosen(check: dict) -> set[int]:
        LabelingUnit.objects.filter(campaign=campaign).delete()
        Candidate.objects.filter(campaign=campaign).update(status="generated")
        Campaign.objects.filter(pk=campaign.pk).update(
            flip_weight=1.0, selected_per_original=1, flip_classifier_check=check
        )
        campaign.refresh_from_db()
        units_create_from_selection(campaign=campaign)
        return set(Candidate.objects.filter(status="selected").values_list("pk", flat=True))

    assert chosen({"right": 5, "of": 6, "majority": 3}) == {flip.pk}
    assert chosen({"right": 3, "of": 6, "majority": 3}) == {copies[0].pk}  # diversity alone
    assert chosen({}) == {flip.pk}  # never checked: the campaign's weight, as before


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
    assert "2 rows are invalid" in body["message"]
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


def test_an_upload_naming_a_column_twice_is_refused_naming_both(campaign):
    with pytest.raises(InvalidInput, match="'label' and 'prediction' both name the label"):
        _upload(campaign, "id,label,prediction\n1,negative,positive\n")
    candidate = make_candidate(campaign.originals.first(), text="A bad film.")
    with pytest.raises(InvalidInput) as caught:
        _upload(
            campaign,
            f'{{"id": {candidate.pk}, "label": "negative", "score": 1, "confidence": 0.5}}\n',
            "predictions.jsonl",
        )
    assert caught.value.fields == {
        "line 1": ["'score' and 'confidence' both name the confidence column; keep one of them."]
    }
    candidate.refresh_from_db()
    assert candidate.prediction_source == ""


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
    assert "a guess" not in html


def test_a_guessing_baselines_flips_are_marked_as_guesses(client, researcher, campaign):
    """On the page and on a row sent back after a review action; uploaded predictions are
    the researcher's own and never called guesses."""
    original = campaign.originals.get(text="A great film.")
    guessed = make_candidate(original, text="A dreadful film.")
    guessed.predicted_label = campaign.labels.get(value="negative")
    guessed.prediction_source = "baseline"
    guessed.save()
    Campaign.objects.filter(pk=campaign.pk).update(
        flip_classifier_check={"right": 2, "of": 6, "majority": 3}
    )
    client.force_login(researcher)
    page = client.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert "Negative · flips the label (a guess: see the note above)" in " ".join(page.split())
    row = client.post(
        reverse("candidate-accept", args=[campaign.id, guessed.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "(a guess: see the note above)" in row
    _upload(campaign, f"id,label\n{guessed.pk},negative\n")
    page = client.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert "flips the label" in page and "a guess" not in page


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
    fine = make_original(campaign, text="The play is fine.", label="positive")
    make_original(campaign, text="The film is terrible.", label="negative")
    negative = campaign.labels.get(value="negative")
    make_candidate(fine, text="The play is dreadful.", source="imported", intended_label=negative)
    # A pair of x itself is never shown with x: the model would hand it back.
    make_candidate(great, text="The film is awful.", source="imported", intended_label=negative)
    prompts = []

    def fake(lm, parts, budgets, config, **kwargs):
        prompts.extend(parts)
        return [[" film is terrible."] * config.per_prompt for _ in parts]

    monkeypatch.setattr("generation.engines.loop.generate_continuations", fake)
    candidates_generate(campaign=campaign, originals=[great, fine], lm=tiny_lm, fluency_lm=tiny_lm)

    # The researcher's own pairs are the first worked examples (codes detected), but never
    # x's own; x is asked for the other label.
    of_great = [p for p in prompts if p.context == "positive: The film is great.\n"]
    of_fine = [p for p in prompts if p.context == "positive: The play is fine.\n"]
    assert of_great and of_fine and len(of_great) + len(of_fine) == len(prompts)
    first = "positive: The play is fine.\nnegative [lexical]: The play is dreadful.\n"
    assert all(p.shared.startswith(first) for p in of_great)
    assert not any("The film is awful." in p.shared for p in of_great)
    first = "positive: The film is great.\nnegative [lexical]: The film is awful.\n"
    assert all(p.shared.startswith(first) for p in of_fine)
    assert not any("The play is dreadful." in p.shared for p in of_fine)
    assert {p.own for p in prompts} == {"negative [lexical]: The"}
    (made,) = Candidate.objects.filter(original=great, source="generated")
    assert (made.text, made.intended_label.value) == ("The film is terrible.", "negative")
    # The classifier in the loop labeled it as soon as it was stored.
    assert made.prediction_source == "baseline" and made.predicted_label is not None


# ------------------------------------------------------------ the review page's upload form

HTMX = {"HTTP_HX_REQUEST": "true"}


def _page_upload(client, campaign, content: bytes, name: str = "predictions.csv", **headers):
    url = reverse("candidate-predictions", args=[campaign.id])
    return client.post(url, {"file": SimpleUploadedFile(name, content)}, **headers)


def _text(response) -> str:
    """The page as read: entities unescaped, whitespace runs as one space."""
    return " ".join(html.unescape(response.content.decode()).split())


def test_the_review_page_takes_predictions_without_javascript(client, researcher, campaign):
    campaign = campaign_update(campaign=campaign, settings={"flip_classifier": "uploaded"})
    original = campaign.originals.get(text="A great film.")
    first, second = make_candidate(original, text="A bad film."), make_candidate(original)
    review_url = reverse("candidate-review", args=[campaign.id])
    client.force_login(researcher)
    page = client.get(review_url).content.decode()
    # Open, as the campaign's classifier is "uploaded": a plain form that posts the file.
    assert "<details open>" in page and "the classifier setting is “uploaded”" in page
    assert f'action="/campaigns/{campaign.id}/candidates/predictions/"' in page
    assert 'enctype="multipart/form-data"' in page and "csrfmiddlewaretoken" in page

    content = f"id,label,confidence\n{first.pk},negative,0.8\n{second.pk},Positive,\n"
    response = _page_upload(client, campaign, content.encode())

    assert response.status_code == 302 and response["Location"] == review_url
    assert (
        "Stored your predicted label for 2 candidates." in client.get(review_url).content.decode()
    )
    first.refresh_from_db(), second.refresh_from_db()
    assert (first.predicted_label.value, first.predicted_confidence) == ("negative", 0.8)
    assert (second.predicted_label.value, second.predicted_confidence) == ("positive", 1.0)
    assert first.prediction_source == second.prediction_source == "uploaded"


def test_with_htmx_a_stored_upload_reloads_the_page(client, researcher, campaign):
    candidate = make_candidate(campaign.originals.first(), text="A bad film.")
    client.force_login(researcher)
    response = _page_upload(
        client, campaign, f"id,label\n{candidate.pk},negative\n".encode(), **HTMX
    )
    assert response.status_code == 200 and response["HX-Refresh"] == "true"
    page = client.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert "Stored your predicted label for 1 candidate." in page


def test_every_bad_row_is_shown_in_the_page_and_nothing_is_stored(client, researcher, campaign):
    candidate = make_candidate(campaign.originals.first(), text="A bad film.")
    client.force_login(researcher)
    content = f"id,label\n{candidate.pk},negative\n999999,negative\n{candidate.pk}0,sarcastic\n"

    response = _page_upload(client, campaign, content.encode())

    page = _text(response)
    assert response.status_code == 400
    assert "<html" in page and "<details open>" in page  # the whole page, the block open
    assert "2 rows are invalid" in page
    assert "row 3</strong>: id: No candidate '999999' in this campaign." in page
    assert (
        "row 4</strong>: label: Unknown label 'sarcastic'; expected one of negative, positive."
        in page
    )
    assert f"No candidate '{candidate.pk}0'" in page
    candidate.refresh_from_db()
    assert candidate.prediction_source == ""

    fragment = _text(_page_upload(client, campaign, content.encode(), **HTMX))
    assert "<html" not in fragment and fragment.lstrip().startswith("<section")
    assert 'id="candidate-predictions"' in fragment and "No candidate '999999'" in fragment


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "predictions.xlsx",
            b"PK\x03\x04\x14\x00\x06\x00\xff\xfe\x00\x9c",
            "The file is an Excel workbook or another zip archive, not text; save it as CSV",
        ),
        ("predictions.csv", b"id,score\n1,0.5\n", "The file has no label column"),
        ("predictions.csv", b"", "Choose a CSV or JSONL file of predictions."),
    ],
)
def test_a_file_that_is_no_predictions_file_is_refused_in_the_page(
    client, researcher, campaign, name, content, message
):
    client.force_login(researcher)
    response = _page_upload(client, campaign, content, name=name)
    assert response.status_code == 400
    assert message in _text(response)
    assert not Candidate.objects.filter(campaign=campaign).exclude(prediction_source="").exists()


def test_the_upload_is_csrf_protected_and_only_for_the_campaigns_owner(
    researcher, other_researcher, campaign
):
    candidate = make_candidate(campaign.originals.first(), text="A bad film.")
    content = f"id,label\n{candidate.pk},negative\n".encode()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(researcher)
    assert _page_upload(strict, campaign, content).status_code == 403

    other = Client()
    other.force_login(other_researcher)
    assert _page_upload(other, campaign, content).status_code == 404
    candidate.refresh_from_db()
    assert candidate.prediction_source == ""


def test_the_block_says_when_uploads_count_and_where_the_ids_come_from(
    client, researcher, campaign
):
    original = campaign.originals.get(text="A great film.")
    candidate = make_candidate(original, text="A dull film.")
    client.force_login(researcher)
    page = _text(client.get(reverse("candidate-review", args=[campaign.id])))
    # The baseline is the default: the block is a click away, and says what an upload does.
    assert "<details open>" not in page
    assert "it is now “Built-in baseline (trained on the originals and labeled pairs)”" in page
    assert "an uploaded prediction replaces the computed one of its candidate" in page
    download = reverse("export-download", args=[campaign.id, "candidates"])
    assert f'href="{download}?format=csv"' in page

    # The download names each candidate by the id the upload takes: add a label, send it back.
    response = client.get(download, {"format": "csv"})
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert lines == ["id,text,original_id", f"{candidate.pk},A dull film.,{original.external_id}"]
    returned = "\n".join(
        f"{line},label" if i == 0 else f"{line},negative" for i, line in enumerate(lines)
    )
    assert _page_upload(client, campaign, returned.encode()).status_code == 302
    candidate.refresh_from_db()
    assert (candidate.predicted_label.value, candidate.prediction_source) == (
        "negative",
        "uploaded",
    )


# ---------------------------------------------------- a model's label names, mapped


@pytest.fixture(scope="module")
def label_model_directory(tmp_path_factory):
    """A tiny random GPT-2 text classifier saved with transformers' default label names,
    LABEL_0 and LABEL_1, as a model fine-tuned without names is."""
    from tests.generation.tiny_models import build_tiny_classifier

    return build_tiny_classifier(tmp_path_factory.mktemp("label-model"), ("LABEL_0", "LABEL_1"))


def test_a_model_labeled_label_0_and_label_1_predicts_once_its_labels_are_mapped(
    campaign, label_model_directory
):
    campaign = campaign_update(
        campaign=campaign,
        settings={"flip_classifier": "model", "flip_model": str(label_model_directory)},
    )
    candidate = make_candidate(campaign.originals.first(), text="A dull film.")

    with pytest.raises(InvalidInput) as caught:
        candidates_predict(campaign=campaign)
    # The error names the setting to fill, by the label the settings page gives it.
    assert "The model's labels LABEL_0, LABEL_1 are not the campaign's." in caught.value.message
    assert caught.value.fields["flip_label_map"] == [
        "Map each to one of the campaign's labels (negative, positive) in “Model label map” "
        "under Settings → Selection, one per line, e.g. “LABEL_0 = negative”."
    ]

    half = campaign_update(campaign=campaign, settings={"flip_label_map": {"LABEL_0": "negative"}})
    with pytest.raises(InvalidInput, match="The model's labels LABEL_1 are not"):
        label_classifier(half)

    mapped = campaign_update(
        campaign=campaign,
        settings={"flip_label_map": {"label_0": "negative", "LABEL_1": "positive"}},
    )
    _model_classifier.cache_clear()
    assert candidates_predict(campaign=mapped) == 1
    candidate.refresh_from_db()
    assert candidate.prediction_source == "model"
    assert candidate.predicted_label.value in {"negative", "positive"}
    assert 0.5 <= candidate.predicted_confidence <= 1.0
    # Loaded once per process for the directory and its map (the map is part of the key).
    label_classifier(mapped)
    assert (_model_classifier.cache_info().misses, _model_classifier.cache_info().hits) == (1, 1)
