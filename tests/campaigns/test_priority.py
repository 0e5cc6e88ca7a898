"""Model-in-the-loop priority: originals the model gets wrong or is unsure about come first."""

import pytest

from cfannotate.campaigns.priority import originals_prioritize
from cfannotate.core.exceptions import InvalidInput
from tests.factories import make_original, make_unit

POSITIVE = [
    "A wonderful, moving film.",
    "Great acting and a great story.",
    "I loved it.",
    "A delightful and funny movie.",
    "Superb from start to finish.",
]
NEGATIVE = [
    "A dull, boring film.",
    "Terrible acting and a weak story.",
    "I hated it.",
    "A tedious and lifeless movie.",
    "Awful from start to finish.",
]


@pytest.fixture
def originals(campaign):
    rows = [make_original(campaign, text=t, label="positive") for t in POSITIVE]
    rows += [make_original(campaign, text=t, label="negative") for t in NEGATIVE]
    return rows


def test_uploaded_predictions_rank_mistakes_first(campaign, originals):
    confident_right = originals[0]
    wrong = originals[5]
    unsure = originals[1]
    predictions = [{"id": o.external_id, "label": o.label.value} for o in originals]
    predictions[5] = {"id": wrong.external_id, "label": "positive"}
    predictions[1] = {
        "id": unsure.external_id,
        "probabilities": {"positive": 0.55, "negative": 0.45},
    }
    unit = make_unit(wrong)
    summary = originals_prioritize(campaign=campaign, predictions=predictions)
    assert (summary.source, summary.wrong, summary.originals) == ("uploaded", 1, 10)
    for row in (confident_right, wrong, unsure, unit):
        row.refresh_from_db()
    assert wrong.priority > unsure.priority > confident_right.priority
    assert unit.priority == wrong.priority  # unclaimed units follow their original


def test_the_baseline_scores_out_of_fold(campaign, originals):
    summary = originals_prioritize(campaign=campaign)
    assert summary.source == "baseline" and summary.originals == 10
    priorities = [o.priority for o in campaign.originals.all()]
    assert all(0.0 <= p <= 1.0 for p in priorities) and len(set(priorities)) > 1


def test_bad_predictions_are_refused_and_nothing_changes(campaign, originals):
    with pytest.raises(InvalidInput, match="missing for 9"):
        originals_prioritize(
            campaign=campaign, predictions=[{"id": originals[0].external_id, "label": "positive"}]
        )
    with pytest.raises(InvalidInput, match="invalid"):
        originals_prioritize(campaign=campaign, predictions=[{"id": "nope", "label": "x"}])
    assert set(campaign.originals.values_list("priority", flat=True)) == {0.0}


def test_api(api_client, campaign, originals):
    url = f"/api/campaigns/{campaign.id}/originals/priority/"
    response = api_client.post(url, {}, format="json")
    assert response.status_code == 200 and response.json()["source"] == "baseline"
    bad = api_client.post(url, {"predictions": [{"id": "nope"}]}, format="json")
    assert bad.status_code == 400 and "predictions" in bad.json()["fields"]


def test_a_campaign_without_originals(campaign):
    with pytest.raises(InvalidInput, match="no originals"):
        originals_prioritize(campaign=campaign)


def test_units_no_worker_holds_follow_their_original_and_others_keep_theirs(
    researcher, campaign, originals
):
    """Every unclaimed unit takes its original's new priority, a budget order's too; a
    claimed unit, and another campaign's, keep theirs."""
    from cfannotate.labeling.models import LabelingUnit
    from tests.factories import make_campaign

    wrong = originals[5]
    plain, ordered, claimed = make_unit(wrong), make_unit(wrong), make_unit(originals[0])
    LabelingUnit.objects.filter(pk=ordered.pk).update(priority=1003.0)  # a budget order
    LabelingUnit.objects.filter(pk=claimed.pk).update(priority=7.0, claims=1)
    other = make_unit(make_original(make_campaign(owner=researcher)))
    LabelingUnit.objects.filter(pk=other.pk).update(priority=5.0)
    predictions = [{"id": o.external_id, "label": o.label.value} for o in originals]
    predictions[5] = {"id": wrong.external_id, "label": "positive"}

    originals_prioritize(campaign=campaign, predictions=predictions)

    wrong.refresh_from_db()
    assert wrong.priority > 0
    priorities = dict(LabelingUnit.objects.values_list("pk", "priority"))
    assert priorities[plain.pk] == priorities[ordered.pk] == wrong.priority
    assert (priorities[claimed.pk], priorities[other.pk]) == (7.0, 5.0)


def test_prioritizing_takes_the_same_queries_for_any_number_of_originals(researcher):
    """The originals' priorities are one UPDATE a batch and the units' one UPDATE, not one
    statement per original."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import make_campaign

    def queries(size: int) -> int:
        campaign = make_campaign(owner=researcher)
        rows = [
            make_original(campaign, text=f"Film {n}.", label=("positive", "negative")[n % 2])
            for n in range(size)
        ]
        for original in rows:
            make_unit(original, candidates=1)
        predictions = [{"id": o.external_id, "label": "positive"} for o in rows]
        with CaptureQueriesContext(connection) as captured:
            summary = originals_prioritize(campaign=campaign, predictions=predictions)
        assert summary.wrong == size // 2
        return len(captured.captured_queries)

    assert queries(4) == queries(16)
