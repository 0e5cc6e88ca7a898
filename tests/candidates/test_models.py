import pytest
from django.db import IntegrityError, transaction

from tests.factories import make_candidate, make_original


def test_duplicate_candidate_text_is_refused_per_original(campaign):
    original = make_original(campaign)
    make_candidate(original, text="The film was not great.")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_candidate(original, text="The film was not great.")
    # The same text under another original is a different candidate.
    make_candidate(make_original(campaign), text="The film was not great.")


def test_long_texts_are_deduplicated_too(campaign):
    """A long review must not overflow the unique index (PostgreSQL btree limit)."""
    original = make_original(campaign)
    long_text = "A very long review sentence. " * 400  # ~11,600 characters
    make_candidate(original, text=long_text)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_candidate(original, text=long_text)


def test_empty_candidate_text_is_refused(campaign):
    with pytest.raises(IntegrityError), transaction.atomic():
        make_candidate(make_original(campaign), text="")
