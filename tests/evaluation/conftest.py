"""The exports' labeled campaign (tests/exports/conftest.py), plus positive originals to learn from.

`labeled`: originals A, B, C (negative, with units) and the gold-round originals, all
negative; contrast set a1 (of A) and b1 (of B), both positive; augmentation set A with
a1 and a2, B with b1. `evaluable` adds six positive originals, so the baseline sees
two labels and every split has originals of both.
"""

import pytest

from tests.exports.conftest import labeled  # noqa: F401  (the fixture, reused)
from tests.factories import make_original

POSITIVE_TEXTS = [
    "A wonderful, moving film.",
    "Great acting and a lovely story.",
    "I loved every minute of it.",
    "Brilliant and charming throughout.",
    "A superb cast at its best.",
    "Delightful music, great fun.",
]


@pytest.fixture
def evaluable(labeled):  # noqa: F811
    for text in POSITIVE_TEXTS:
        make_original(labeled.campaign, text=text, label="positive")
    return labeled


def exact_predictions(labeled) -> list[dict]:  # noqa: F811
    """Right on A and a1, wrong on B and b1: every Table 2 figure is one half."""
    return [
        {"id": labeled.originals["A"].external_id, "label": "negative"},
        {"id": labeled.originals["B"].external_id, "label": "positive"},
        {"candidate_id": labeled.candidates["a1"].id, "label": "positive"},
        {
            "candidate_id": labeled.candidates["b1"].id,
            "probabilities": {"negative": 0.8, "positive": 0.2},
        },
    ]
