"""Every number README.md states about the demo and the default campaign is the truth.

Each claim is a pattern around the number(s) in README.md (a space in it matches any
line break) and a function that reads the real value from the fixtures, the demo
builder or the model defaults; rewording the rest of the README does not matter, but a
claim's pattern must still be found, once.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

README = Path(settings.BASE_DIR) / "README.md"
FIXTURES = Path(settings.BASE_DIR) / "fixtures"
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
WORDS += ["ten", "eleven", "twelve"]
ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth"]


def _number(text: str) -> int | float:
    text = text.lower()
    if text in WORDS:
        return WORDS.index(text)
    if text in ORDINALS:
        return ORDINALS.index(text)
    return float(text) if "." in text else int(text)


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line]


def _example_crowd() -> tuple[int, int]:
    """(workers listed on the example's quality page, of them spammers), by building it."""
    from cfannotate.demo.setup import demo_setup
    from cfannotate.quality.models import WorkerQuality

    example = demo_setup().example
    kinds = [
        external_id.split("-")[1]  # demo-<behaviour>-<number>
        for external_id in WorkerQuality.objects.filter(campaign=example).values_list(
            "worker__external_id", flat=True
        )
    ]
    return len(kinds), sum(kind != "careful" for kind in kinds)


def _example_reviews() -> tuple[int]:
    from cfannotate.demo.setup import EXAMPLE_COUNTERFACTUALS

    return (len({row["original_id"] for row in _lines(EXAMPLE_COUNTERFACTUALS)}),)


def _demo_campaigns() -> tuple[int]:
    from cfannotate.demo.setup import DEMO_CAMPAIGNS

    return (len(DEMO_CAMPAIGNS) + 1,)  # the labeled example is the one after them


def _fixture_sizes() -> tuple[int, int]:
    return len(_lines("sentiment_reviews.jsonl")), len(_lines("nli_pairs.jsonl"))


def _default(*names: str) -> Callable[[], tuple]:
    def read() -> tuple:
        from cfannotate.campaigns.models import Campaign

        return tuple(Campaign._meta.get_field(name).get_default() for name in names)

    return read


def _round_size() -> tuple[int]:
    from cfannotate.labeling.units import ROUND_SIZE

    return (ROUND_SIZE,)


def _gold_rule(gold_rounds: int | None = None) -> Callable[[], tuple[int, int]]:
    """(gold right needed, gold shown) with the default share and round size."""

    def read() -> tuple[int, int]:
        from cfannotate.campaigns.models import Campaign
        from cfannotate.labeling.units import ROUND_SIZE

        field = Campaign._meta.get_field
        rounds = gold_rounds or field("gold_rounds_per_assignment").get_default()
        gold = rounds * ROUND_SIZE
        return round(field("min_gold_share").get_default() * gold), gold

    return read


@dataclass(frozen=True)
class Claim:
    pattern: str  # one group per number
    truth: Callable[[], tuple]


CLAIMS = {
    "example reviews": Claim(r"hand-written counterfactuals of (\w+) reviews", _example_reviews),
    "example workers": Claim(r"(\w+) simulated workers \((\w+) of them spammers\)", _example_crowd),
    "demo campaigns": Claim(r"A (\w+) campaign, \*labeled example", _demo_campaigns),
    "fixture sizes": Claim(
        r"the demo datasets \((\d+) movie-review sentences, (\d+) NLI pairs\)", _fixture_sizes
    ),
    "rounds": Claim(
        r"then (\d+) real rounds with (\d+) hidden gold rounds",
        _default("rounds_per_assignment", "gold_rounds_per_assignment"),
    ),
    "K on claiming": Claim(
        r"never beyond K = (\d+) judgments", _default("judgments_per_candidate")
    ),
    "K on the vote": Claim(
        r"and K = (\d+) qualified votes agree", _default("judgments_per_candidate")
    ),
    "time rule": Claim(r"\(server\s+time\) is above (\d+) s", _default("min_median_seconds")),
    "gold rule": Claim(r"at least (\d+) of (\d+) hidden gold counterfactuals", _gold_rule()),
    "gold rule, one round": Claim(r"(\d+) of (\d+) with one gold round", _gold_rule(1)),
    "round size": Claim(r"shows (\w+) per round", _round_size),
    "round size, labeling": Claim(r"with its label and (\w+) counterfactuals", _round_size),
    "distribution rule": Claim(
        r"total-variation distance of ([\d.]+)", _default("label_distribution_threshold")
    ),
    "re-queues": Claim(r"get up to (\d+) more judgments", _default("max_requeues")),
}


@pytest.mark.parametrize("name", CLAIMS)
def test_the_readme_states_the_true_number(db, name):
    claim = CLAIMS[name]
    pattern = claim.pattern.replace(" ", r"\s+")  # however the paragraph is wrapped
    found = re.findall(pattern, README.read_text())
    assert len(found) == 1, f"README.md: {claim.pattern!r} found {len(found)} times, not once"
    stated = found[0] if isinstance(found[0], tuple) else (found[0],)
    assert tuple(_number(number) for number in stated) == pytest.approx(claim.truth()), name
