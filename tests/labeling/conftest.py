import random

import pytest

from cfannotate.labeling.assignments import assignment_start
from tests.factories import make_labeling_campaign, make_worker


@pytest.fixture
def assignment(db):
    """A started assignment: 1 training round, then 3 real rounds and 1 hidden gold round."""
    campaign = make_labeling_campaign(
        units=4, gold=1, rounds_per_assignment=3, gold_rounds_per_assignment=1
    )
    return assignment_start(campaign=campaign, worker=make_worker())


class GoldLast(random.Random):
    """Places every hidden gold round after the real ones, for tests that need to
    know which kind each position holds."""

    def randint(self, a, b):
        return b


@pytest.fixture
def assignment_gold_last(db):
    """As `assignment`, with the gold round at position 5: rounds 2 to 4 are real."""
    campaign = make_labeling_campaign(
        units=4, gold=1, rounds_per_assignment=3, gold_rounds_per_assignment=1
    )
    return assignment_start(campaign=campaign, worker=make_worker(), rng=GoldLast())
