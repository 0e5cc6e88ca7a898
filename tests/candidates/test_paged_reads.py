"""The reads over all of a campaign's candidates, shaped to stay fast at 200,000 of them:
the generation overview counted in SQL, the generation status API and the review list
paginated on ids first. Each gives what the whole-list reads gave, in as many queries
for a large campaign as for a small one; on PostgreSQL an index answers them."""

import pytest
from django.core.paginator import Paginator
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.pagination import PageNumberPagination

from cfannotate.candidates import selectors
from cfannotate.candidates.apis import CandidateSerializer, OriginalGenerationSerializer
from cfannotate.candidates.models import (
    CandidateQuerySet,
    CandidateSource,
    CandidateStatus,
    ChunkState,
    ControlCode,
    GenerationChunk,
    GenerationRun,
)
from cfannotate.candidates.selectors import (
    CandidateFilters,
    GenerationOverview,
    GenerationState,
    candidates_filtered,
    candidates_paged,
    generation_overview,
    generation_status,
)
from tests.factories import make_campaign, make_candidate, make_original, make_unit
from tests.postgres_plans import index_plan, postgres_only, scans_of

S = CandidateStatus


@pytest.fixture
def campaign(researcher):
    return make_campaign(owner=researcher)


def chunk(campaign, originals, state=ChunkState.DONE):
    run = GenerationRun.objects.create(campaign=campaign, chunk_size=10, chunks_total=1)
    GenerationChunk.objects.create(
        run=run, index=0, original_ids=[o.pk for o in originals], state=state, outcomes={}
    )


def rewrite(original, **kwargs):
    return make_candidate(original, control_code=ControlCode.GLOBAL, **kwargs)


def every_case(campaign) -> None:
    """An original in each state the overview tells apart, in mixed id order."""
    o = [make_original(campaign) for _ in range(15)]
    # 0: never generated, no candidate: pending, not generated.
    make_candidate(o[1])  # generated, kept
    for status in (S.FILTERED, S.FILTERED):
        make_candidate(o[2], status=status, metadata={"dropped_by": "truncated"})  # all dropped
    make_candidate(o[3], status=S.REJECTED)  # generated, only rejected
    rewrite(o[4])  # generated, only a whole rewrite: nothing usable
    rewrite(o[5])  # never generated, only a whole rewrite: pending still
    make_candidate(o[6], status=S.GOLD, source=CandidateSource.AUTHORED)  # only gold answers
    make_candidate(o[7], status=S.GOLD, source=CandidateSource.AUTHORED)
    make_candidate(o[7])  # gold and kept, never generated
    # 8: running; 9: failed; 10: only in a cancelled chunk.
    make_candidate(o[11], status=S.FILTERED)  # never generated, dropped (an import, say)
    rewrite(o[12], source=CandidateSource.IMPORTED)  # a researcher's own rewrite is kept
    make_candidate(o[13], status=S.SELECTED)
    rewrite(o[13])
    make_candidate(o[14], status=S.GOLD, source=CandidateSource.AUTHORED)  # gold, generated
    chunk(campaign, [o[1], o[2], o[3], o[4], o[13], o[14], o[8]])
    chunk(campaign, [o[8]], ChunkState.RUNNING)
    chunk(campaign, [o[9]], ChunkState.FAILED)
    chunk(campaign, [o[10]], ChunkState.CANCELLED)


def overview_from_statuses(campaign) -> GenerationOverview:
    """The overview as it was made before: from every original's whole status."""
    statuses = generation_status(campaign)

    def touched(s):
        return bool(s.state != GenerationState.NOT_GENERATED or s.kept or s.dropped or s.rejected)

    def gold_only(s):
        return s.state == GenerationState.NOT_GENERATED and s.kept == s.gold > 0

    pending = [
        s
        for s in statuses
        if not s.kept and (s.state == GenerationState.GENERATING or not touched(s))
    ]
    return GenerationOverview(
        originals=len(statuses),
        with_kept=sum(1 for s in statuses if s.kept and not gold_only(s)),
        gold_only=sum(1 for s in statuses if gold_only(s)),
        without=tuple(s for s in statuses if not s.kept and s not in pending),
        pending=len(pending),
        begun=any(touched(s) for s in statuses),
        not_generated_ids=tuple(
            s.original.pk for s in pending if s.state == GenerationState.NOT_GENERATED
        ),
        generated_any=any(s.state != GenerationState.NOT_GENERATED for s in statuses)
        or campaign.candidates.exclude(status=S.GOLD).exists(),
    )


def test_the_overview_counts_what_every_originals_status_says(campaign, researcher):
    every_case(campaign)
    overview = generation_overview(campaign)
    assert overview == overview_from_statuses(campaign)
    assert (overview.originals, overview.with_kept, overview.gold_only) == (15, 5, 1)
    assert (len(overview.without), overview.pending) == (5, 4)
    # Only gold answers, nothing generated: nothing begun; then an original's candidates.
    fresh = make_campaign(owner=researcher)
    make_candidate(make_original(fresh), status=S.GOLD, source=CandidateSource.AUTHORED)
    make_original(fresh)
    assert generation_overview(fresh) == overview_from_statuses(fresh)
    assert not generation_overview(fresh).generated_any
    empty = make_campaign(owner=researcher)
    assert generation_overview(empty) == overview_from_statuses(empty)


def test_the_overview_builds_a_status_only_for_the_originals_it_lists(campaign, monkeypatch):
    """Not one per original (20,000 with their texts took 1.3 s and 100 MB a load)."""
    every_case(campaign)
    read = []
    whole = selectors._statuses

    def spy(campaign, chunks, original_ids):
        read.append(original_ids)
        return whole(campaign, chunks, original_ids)

    monkeypatch.setattr(selectors, "_statuses", spy)
    overview = generation_overview(campaign)
    assert read == [overview.without_ids]


def many(campaign, originals: int) -> None:
    for number in range(originals):
        original = make_original(campaign)
        make_candidate(original, status=S.SELECTED if number % 2 else S.GENERATED)
        if number % 3 == 0:
            make_candidate(original, status=S.FILTERED)  # nothing kept but this one: below
        if number % 5 == 0:
            rewrite(original)


def test_the_overview_reads_as_much_for_ten_times_the_originals(researcher):
    def queries(originals: int) -> int:
        campaign = make_campaign(owner=researcher)
        many(campaign, originals)
        without = [make_original(campaign) for _ in range(originals // 3)]
        for original in without:
            make_candidate(original, status=S.REJECTED)
        chunk(campaign, without, ChunkState.FAILED)
        with CaptureQueriesContext(connection) as captured:
            overview = generation_overview(campaign)
        assert len(overview.without) == originals // 3
        return len(captured)

    assert queries(6) == queries(60)


def test_many_ids_are_read_in_batches_in_id_order(campaign, monkeypatch):
    every_case(campaign)
    whole = generation_status(campaign)
    ids = [status.original.pk for status in whole]
    monkeypatch.setattr(selectors, "IDS_PER_QUERY", 4)
    assert generation_status(campaign, original_ids=reversed(ids)) == whole
    assert generation_status(campaign, original_ids=ids[3:9] + ids[3:5]) == whole[3:9]
    assert generation_status(campaign, original_ids=[]) == []


def test_the_status_api_pages_originals_then_reads_that_page(api_client, researcher, monkeypatch):
    campaign = make_campaign(owner=researcher)
    many(campaign, 55)
    every_case(campaign)
    whole = generation_status(campaign)
    whole_statuses = selectors._statuses
    url = reverse("api-generation-status", args=[campaign.id])
    for page, expected in ((1, whole[:50]), (2, whole[50:])):
        body = api_client.get(url, {"page": page}).json()
        assert body["count"] == len(whole) == 70
        assert body["results"] == OriginalGenerationSerializer(expected, many=True).data
    # Statuses are built for the page's originals alone, not for all then sliced.
    read = []
    monkeypatch.setattr(
        selectors, "_statuses", lambda *args: read.append(args[2]) or whole_statuses(*args)
    )
    api_client.get(url, {"page": 2})
    assert read == [[status.original.pk for status in whole[50:]]]
    empty = [status for status in whole if not status.kept]
    body = api_client.get(url, {"empty": "true"}).json()
    assert body["count"] == len(empty) == 9
    assert body["results"] == OriginalGenerationSerializer(empty, many=True).data
    assert api_client.get(url, {"page": 3}).status_code == 404  # past the end, as before


def test_the_status_api_reads_as_much_for_ten_times_the_originals(api_client, researcher):
    def queries(originals: int, **query) -> int:
        campaign = make_campaign(owner=researcher)
        many(campaign, originals)
        url = reverse("api-generation-status", args=[campaign.id])
        with CaptureQueriesContext(connection) as captured:
            assert api_client.get(url, query).status_code == 200
        return len(captured)

    assert queries(6) == queries(60)
    assert queries(6, empty="true") == queries(60, empty="true")


# --------------------------------------------------------------------------- review list


@pytest.fixture
def reviewed(campaign):
    """Candidates of every SHOWN_FIRST group, fluency tied and unknown, some in a unit."""
    fluencies = [None, -1.0, -1.0, 0.5, None, -3.0, 0.5]
    statuses = [S.GENERATED, S.SELECTED, S.FILTERED, S.GENERATED, S.REJECTED, S.GOLD, S.GENERATED]
    for number in range(4):
        original = make_original(campaign, text=f"Original {number} is superb." * (number % 2))
        for index, (fluency, status) in enumerate(zip(fluencies, statuses, strict=True)):
            code = ControlCode.GLOBAL if index == 6 else ControlCode.NEGATION
            make_candidate(original, status=status, fluency_full=fluency, control_code=code)
    make_unit(make_original(campaign), candidates=3)
    return campaign


FILTERS = [
    CandidateFilters(ordering=ordering) for ordering in [None, *CandidateQuerySet.ORDERINGS]
] + [
    CandidateFilters(status=S.GENERATED),
    CandidateFilters(search="superb", ordering="-fluency"),
    CandidateFilters(min_fluency=-1.0, ordering="created"),
]


@pytest.mark.parametrize("filters", FILTERS)
def test_every_review_page_is_the_page_of_the_whole_query(reviewed, filters):
    whole = candidates_filtered(reviewed, filters)
    columns = ("id", "unit_id", "unit_claimed", "gold_round_id", "judged", "original_id")
    for per_page in (3, 7):
        plain, paged = (
            Paginator(whole, per_page),
            Paginator(candidates_paged(reviewed, filters), per_page),
        )
        assert paged.count == plain.count and paged.num_pages == plain.num_pages
        for number in plain.page_range:
            ours, theirs = list(paged.page(number)), list(plain.page(number))
            assert [[getattr(c, name) for name in columns] for c in ours] == [
                [getattr(c, name) for name in columns] for c in theirs
            ]
            # select_related as before: the row reads its original and labels without a query.
            assert [c.original.label.value for c in ours] == [
                c.original.label.value for c in theirs
            ]


def _wide_queries(captured) -> list[str]:
    """The queries that read candidates with the review row's joins and annotations."""
    return [q["sql"] for q in captured.captured_queries if '"unit_claimed"' in q["sql"]]


@pytest.mark.parametrize("api", [False, True], ids=["page", "api"])
def test_a_deep_review_page_reads_no_more_than_the_first(
    reviewed, logged_in, api_client, monkeypatch, api
):
    """Sorting and skipping happen on the ids; the joined rows are read for the page alone."""
    monkeypatch.setattr("cfannotate.candidates.views.REVIEW_PER_PAGE", 4)
    monkeypatch.setattr(PageNumberPagination, "page_size", 4)
    client, name = (api_client, "api-candidate-list") if api else (logged_in, "candidate-review")
    url = reverse(name, args=[reviewed.id])
    queries = []
    for page in (1, 8):  # 31 candidates: page 8 is the last
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url, {"page": page}).status_code == 200
        queries.append(len(captured))
        (wide,) = _wide_queries(captured)
        assert "OFFSET" not in wide and " IN (" in wide
    assert queries[0] == queries[1]


def test_the_api_lists_what_it_listed(reviewed, api_client):
    url = reverse("api-candidate-list", args=[reviewed.id])
    for query in ({}, {"ordering": "fluency"}, {"search": "superb", "status": "generated"}):
        body = api_client.get(url, query).json()
        filters = CandidateFilters(
            ordering=query.get("ordering"), search=query.get("search"), status=query.get("status")
        )
        expected = list(candidates_filtered(reviewed, filters)[:50])
        assert body["results"] == CandidateSerializer(expected, many=True).data


# --------------------------------------------------------------------------- PostgreSQL plans


@postgres_only
def test_the_whole_campaign_reads_need_only_the_candidates_index(reviewed, logged_in):
    """The overview's counts and a review page's ids read `candidate_campaign_original`,
    never the wide candidate rows (text, prompt, edit, metadata): 600 MB at 200,000."""
    with CaptureQueriesContext(connection) as captured:
        generation_overview(reviewed)
    grouped = next(q["sql"] for q in captured.captured_queries if "GROUP BY" in q["sql"])
    reads = {"overview": (grouped, ())}
    for ordering in ("original", "fluency", "-fluency"):
        ids = candidates_paged(reviewed, CandidateFilters(ordering=ordering)).ids
        reads[ordering] = ids[10:20].query.sql_with_params()
    for name, (sql, params) in reads.items():
        plan = index_plan(
            sql, params, only_index=("candidates_candidate", "candidate_campaign_original")
        )
        scans = scans_of(plan, "candidates_candidate")
        assert scans == ["Index Only Scan using candidate_campaign_original"], name
