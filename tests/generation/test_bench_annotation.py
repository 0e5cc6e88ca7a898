"""bench/annotation.py: its candidates look like a decoder's, its baseline annotates what
ours annotates, and the script runs quick and prints its RESULT line."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.annotation import baseline_annotate, original_texts, word_edit_candidates
from generation.parsing import ParseCache
from generation.postprocess import annotate

REPO = Path(__file__).resolve().parents[2]


def test_candidates_are_small_edits_with_repeats_and_copies():
    texts = ["The movie was great and the cast was funny.", "A man is riding a bike."]

    originals, records = word_edit_candidates(texts, 40, seed=1)

    assert word_edit_candidates(texts, 40, seed=1) == (originals, records)
    assert len(records) == 80 and set(originals) == {"x0", "x1"}
    texts_of = {key: [r.text for r in records if r.original_key == key] for key in originals}
    for key, candidates in texts_of.items():
        original = originals[key].text
        assert original in candidates  # copies of x
        assert len(set(candidates)) < len(candidates)  # repeats
        assert all(abs(len(c.split()) - len(original.split())) <= 4 for c in candidates)


def test_the_baseline_annotates_what_ours_annotates():
    texts, _ = original_texts(6)
    originals, records = word_edit_candidates(texts, 8, seed=2)

    # The baseline predates the sanity filters: it keeps every candidate it annotates.
    ours = annotate(records, originals, parses=ParseCache(), workers=0, sanity=False)
    base = baseline_annotate(records, originals, parses=ParseCache())

    assert [(c.record, c.code, c.edit, c.relationship) for c in ours.candidates] == [
        (c.record, c.code, c.edit, c.relationship) for c in base.candidates
    ]
    assert ours.stats == base.stats


def test_the_script_runs_quick_and_prints_its_result(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(REPO / "bench" / "annotation.py"), "--quick", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    lines = completed.stdout.strip().splitlines()
    assert "same annotations as the baseline: yes" in lines
    last = lines[-1]
    assert last.startswith("RESULT annotation ratio=")
    fields = dict(re.findall(r"(\w+)=([\d.]+)", last))
    ours, baseline = float(fields["per_candidate_ms"]), float(fields["baseline_per_candidate_ms"])
    assert float(fields["ratio"]) == pytest.approx(baseline / ours, rel=0.05)
    assert float(fields["workers_speedup"]) == float(fields["workers_speedup_2"]) > 0
    assert fields["same"] == "1"
