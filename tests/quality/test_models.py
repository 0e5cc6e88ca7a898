import pytest
from django.db import IntegrityError, transaction

from cfannotate.quality.models import AggregatedLabel
from tests.factories import make_candidate, make_original


def test_a_kept_counterfactual_needs_a_valid_label(campaign):
    candidate = make_candidate(make_original(campaign))
    with pytest.raises(IntegrityError), transaction.atomic():
        AggregatedLabel.objects.create(
            candidate=candidate,
            label=None,
            is_valid=True,
            kept=True,
            votes=2,
            qualified_votes=2,
            agreement=1.0,
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        AggregatedLabel.objects.create(
            candidate=candidate,
            label=campaign.labels.first(),
            is_valid=False,
            kept=True,
            votes=2,
            qualified_votes=2,
            agreement=1.0,
        )
    AggregatedLabel.objects.create(
        candidate=candidate,
        label=campaign.labels.first(),
        is_valid=True,
        kept=True,
        votes=2,
        qualified_votes=2,
        agreement=1.0,
    )


def test_qualified_votes_never_exceed_votes(campaign):
    candidate = make_candidate(make_original(campaign))
    with pytest.raises(IntegrityError), transaction.atomic():
        AggregatedLabel.objects.create(
            candidate=candidate,
            is_valid=False,
            kept=False,
            votes=1,
            qualified_votes=2,
            agreement=0.5,
        )
