"""`bench/crowd_http.py --tiny` runs a crowd through the live server over HTTP and reports.

It checks the harness, not the quality goals: the run ends, workers made judgments that
the export counts, the figures are shares, and nobody asked for a quality refresh.
"""

import re

from tests.reliability.conftest import needs_postgresql, run_bench

pytestmark = needs_postgresql

RESULT = re.compile(
    r"RESULT crowd_http coverage=(?P<coverage>\d\.\d{3}) kept_accuracy=(?P<accuracy>\d\.\d{3}) "
    r"spammer_share=(?P<share>\d\.\d{3}) manual_steps=(?P<manual>\d+)"
)


def test_the_crowd_benchmark_labels_over_http_and_reports_shares():
    finished = run_bench(
        "crowd_http.py", "--tiny", "--processes", "1", "--threads", "8", database_suffix="_crowd"
    )
    output = finished.stdout[-3000:] + finished.stderr[-3000:]
    lines = finished.stdout.strip().splitlines()
    result = RESULT.fullmatch(lines[-1])
    assert result, lines[-1]
    for name in ("coverage", "accuracy", "share"):
        assert 0.0 <= float(result[name]) <= 1.0, lines[-1]
    assert result["manual"] == "0"
    assert "manual quality refreshes: 0;" in finished.stdout
    judged = re.search(r"judgments in real rounds: (\d+) \(careful (\d+), spammers (\d+)\)", output)
    assert judged, output
    total, careful, spammers = map(int, judged.groups())
    assert total > 0 and careful + spammers == total, judged[0]
    assert "PostgreSQL, gunicorn 1x8" in lines[0], lines[0]
    assert "4 workers (3 careful" in finished.stdout
    assert "s: " in finished.stderr and "workers active" in finished.stderr  # progress lines
