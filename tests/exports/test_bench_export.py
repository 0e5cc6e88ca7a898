"""bench/export.py at a tiny size: the streamed export and the listed baseline write the
same bytes, and the script prints its RESULT line."""

import subprocess
import sys
from pathlib import Path

from bench.export import populate, run_exports
from cfannotate.exports.selectors import contrast_rows
from cfannotate.quality.models import AggregatedLabel

REPO = Path(__file__).resolve().parents[2]


def test_populate_and_measure_both_exports(researcher):
    campaign = populate(owner=researcher, counterfactuals=50, progress=False)
    assert AggregatedLabel.objects.filter(candidate__campaign=campaign).count() == 50
    assert campaign.originals.count() == 17  # three counterfactuals each, the last has two
    result = run_exports(campaign, 50)
    flips = sum(1 for _ in contrast_rows(campaign))
    assert 0 < flips < 50
    assert result.jsonl.rows == result.csv.rows == result.baseline.rows == flips
    assert result.identical  # the baseline is a fair one: the same output
    assert result.jsonl.peak_mb > 0 and result.jsonl.rows_per_s > 0
    line = result.result_line()
    assert line.startswith("RESULT export rows_per_s=") and " peak_mb=" in line
    assert " ratio=" in line and "judgments=150" in line


def test_the_script_runs_quick_and_prints_its_result(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(REPO / "bench" / "export.py"), "--quick", "--counterfactuals", "300"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OMP_NUM_THREADS": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.strip().splitlines()
    assert "same bytes as the baseline: yes" in lines
    assert any(line.startswith("extrapolated to 1,000,000 judgments") for line in lines)
    assert lines[-1].startswith("RESULT export rows_per_s=")
