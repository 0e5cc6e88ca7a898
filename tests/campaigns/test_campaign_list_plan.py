"""The campaign list's counts are answered from indexes: reading every candidate row of
the owner's campaigns on each load took 1.5 s for 270,000 candidates."""

from cfannotate.campaigns.selectors import campaigns_for_owner
from cfannotate.quality.models import AggregatedLabel
from tests.factories import make_campaign, make_candidate, make_original
from tests.postgres_plans import index_plan, postgres_only, scans_of


def _listed(researcher):
    campaign = make_campaign(owner=researcher)
    for _ in range(3):
        original = make_original(campaign)
        for _ in range(2):
            make_candidate(original)
    AggregatedLabel.objects.create(
        candidate=campaign.candidates.first(),
        label=campaign.labels.first(),
        is_valid=True,
        kept=True,
        votes=2,
        qualified_votes=2,
        agreement=1,
    )
    return campaigns_for_owner(researcher)


def test_the_counts_count_rows_not_a_column(researcher):
    """COUNT(*): a column counted (COUNT(id)) must be read from each row, or an index
    holding it; rows are counted from any index on the campaign."""
    listed = _listed(researcher)
    sql = str(listed.query)
    assert sql.count("COUNT(*)") == 3 and "COUNT(" not in sql.replace("COUNT(*)", "")
    assert [(c.original_count, c.candidate_count, c.kept_count) for c in listed] == [(3, 6, 1)]


@postgres_only
def test_the_counts_read_no_candidate_or_original_row(researcher):
    sql, params = _listed(researcher).query.sql_with_params()
    plan = index_plan(
        sql, params, only_index=("candidates_candidate", "candidate_campaign_original")
    )
    for table in ("candidates_candidate", "campaigns_original"):
        scans = scans_of(plan, table)
        assert scans and all(scan.startswith("Index Only Scan") for scan in scans), plan
