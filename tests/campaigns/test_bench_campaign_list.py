"""bench/campaign_list.py at a tiny size: both queries give the same counts and the script
prints its RESULT line."""

from bench.campaign_list import baseline_list, populate
from cfannotate.campaigns.selectors import campaigns_for_owner
from tests.support import run_bench


def test_the_baseline_counts_what_ours_counts(researcher):
    rows = populate(researcher, campaigns=2, originals=3, candidates=2)
    assert rows == 2 * 3 * 3 * 2
    ours = [(c.original_count, c.candidate_count) for c in campaigns_for_owner(researcher)]
    base = [(c.original_count, c.candidate_count) for c in baseline_list(researcher)]
    assert ours == base == [(3, 6), (3, 6)]


def test_the_script_prints_its_result_line():
    finished = run_bench(
        "campaign_list.py", "--campaigns", "1", "--originals", "5", "--candidates", "2"
    )
    assert finished.returncode == 0, finished.stderr
    last = finished.stdout.strip().splitlines()[-1]
    assert last.startswith("RESULT campaign_list ours_ms=") and " ratio=" in last
    assert last.endswith(" rows=50") and "same counts: yes" in finished.stdout
