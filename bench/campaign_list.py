"""Benchmark: the campaign list (home page, `GET /api/campaigns/`) on generated campaigns.

The list counts each campaign's originals, candidates and kept labels. Ours
(`campaigns.selectors.campaigns_for_owner`) counts each by its own subquery; the baseline
is the query the list ran before 2026-11-28: two `COUNT(DISTINCT)`s over one join of
originals and candidates, which scans their product. Both run in the same process on the
same fresh SQLite database in a temporary directory (`DATABASE_URL` is ignored: the
benchmark migrates and fills its own database), must give the same counts, and are timed
as the median of `--repeats` runs after one unmeasured run.

    python bench/campaign_list.py            # 3 campaigns of 400 originals x 20 candidates
    python bench/campaign_list.py --quick    # 3 campaigns of 100 originals x 10 candidates

The last line reads `RESULT campaign_list ours_ms=... baseline_ms=... ratio=... rows=...`
(ratio: baseline / ours; rows: originals x candidates the baseline's join scans).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _django_setup(state_dir: str) -> None:
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
    os.environ["CFANNOTATE_STATE_DIR"] = state_dir
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def populate(owner, *, campaigns: int, originals: int, candidates: int) -> int:
    """`campaigns` campaigns of `originals` originals with `candidates` candidates each;
    returns the rows the baseline's join scans (originals x candidates, summed)."""
    from cfannotate.campaigns.models import Original
    from cfannotate.campaigns.services import campaign_create
    from cfannotate.candidates.models import Candidate

    for number in range(campaigns):
        campaign = campaign_create(owner=owner, name=f"Bench {number}", task_type="sentiment")
        label = campaign.labels.first()
        made = Original.objects.bulk_create(
            Original(campaign=campaign, external_id=f"o{i}", text=f"Review {i}.", label=label)
            for i in range(originals)
        )
        Candidate.objects.bulk_create(
            (
                Candidate(
                    campaign=campaign,
                    original=original,
                    text=f"{original.text} variant {j}",
                    generator="polyjuice",
                )
                for original in made
                for j in range(candidates)
            ),
            batch_size=2000,
        )
    return campaigns * originals * originals * candidates


def baseline_list(owner):
    """The list as it was counted before: one join, two COUNT(DISTINCT)s."""
    from django.db.models import Count

    from cfannotate.campaigns.models import Campaign

    return (
        Campaign.objects.filter(owner=owner)
        .annotate(
            original_count=Count("originals", distinct=True),
            candidate_count=Count("candidates", distinct=True),
        )
        .order_by("-created_at")
    )


def _timed(query, repeats: int) -> tuple[float, list[tuple[int, int]]]:
    def counts():
        return [(c.original_count, c.candidate_count) for c in query()]

    found = counts()  # unmeasured: the first run warms the database's caches
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        counts()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 originals x 10 candidates")
    parser.add_argument("--campaigns", type=int, default=3)
    parser.add_argument("--originals", type=int, default=None)
    parser.add_argument("--candidates", type=int, default=None, help="per original")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    originals = args.originals or (100 if args.quick else 400)
    candidates = args.candidates or (10 if args.quick else 20)

    with tempfile.TemporaryDirectory(prefix="cfannotate-list-bench-") as state_dir:
        _django_setup(state_dir)
        from django.conf import settings
        from django.contrib.auth import get_user_model

        from cfannotate.campaigns.selectors import campaigns_for_owner

        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        owner = get_user_model().objects.create_user(f"list-bench-{os.getpid()}")
        rows = populate(owner, campaigns=args.campaigns, originals=originals, candidates=candidates)
        print(
            f"database: {engine}; {args.campaigns} campaigns of {originals:,} originals "
            f"x {candidates} candidates; the baseline's join scans {rows:,} rows"
        )
        ours_ms, ours = _timed(lambda: campaigns_for_owner(owner), args.repeats)
        base_ms, base = _timed(lambda: baseline_list(owner), args.repeats)

    if ours != base:
        raise SystemExit(f"campaign list benchmark: counts differ: ours {ours}, baseline {base}")
    print(f"ours (subqueries)           {ours_ms:10.2f} ms")
    print(f"baseline (join, DISTINCT)   {base_ms:10.2f} ms")
    print(f"same counts: yes {ours}")
    ratio = base_ms / ours_ms if ours_ms else float("inf")
    print(
        f"RESULT campaign_list ours_ms={ours_ms:.2f} baseline_ms={base_ms:.2f} "
        f"ratio={ratio:.1f} rows={rows}"
    )


if __name__ == "__main__":
    main()
