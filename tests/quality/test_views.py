"""The quality page and its htmx fragments, and the quality API."""

import re

import pytest
from django.urls import reverse

from cfannotate.quality.models import DecisionState, WorkerDecision
from cfannotate.quality.services import quality_refresh
from tests.factories import make_gold_round, make_labeling_campaign, make_user
from tests.quality.conftest import work


@pytest.fixture
def labeled(researcher):
    campaign = make_labeling_campaign(
        units=6, gold=2, rounds_per_assignment=3, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    work(campaign, seconds=30, real=lambda _: (True, "negative"))
    work(campaign, seconds=9, gold_right=3, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    return campaign


@pytest.fixture
def browser_client(client, researcher):
    client.force_login(researcher)
    return client


def test_the_quality_page_shows_verdicts_agreement_and_charts(browser_client, labeled):
    response = browser_client.get(reverse("quality-page", args=[labeled.id]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Quality control" in html
    assert "1 / 2" in html  # workers qualified
    assert "Fleiss" in html and "Cohen" in html
    # Workers against C.2, time per round, gold right, labels, labels by position, agreement.
    assert html.count("<svg") == 6
    assert html.count('<details class="chart-table" id="table-') == 6  # each as a table
    assert "3 of 6 gold counterfactuals right" in html
    assert 'hx-trigger="every 20s"' in html  # live while labeling
    assert "Send confirmed decisions" in html


def test_the_report_fragment_and_refresh(browser_client, labeled):
    fragment = browser_client.get(
        reverse("quality-report", args=[labeled.id]), HTTP_HX_REQUEST="true"
    )
    assert fragment.status_code == 200
    assert fragment.content.decode().lstrip().startswith("{#") is False
    assert 'id="quality-report"' in fragment.content.decode()
    refreshed = browser_client.post(
        reverse("quality-refresh", args=[labeled.id]), HTTP_HX_REQUEST="true"
    )
    assert refreshed.status_code == 200
    assert "Quality control ran: 1 of 2 workers qualified" in refreshed.content.decode()
    # The decisions and the worker table (blocks of their own) follow the run.
    assert refreshed["HX-Trigger"] == "decisions-changed, workers-changed"


CONTROL = re.compile(r"<(a|button|summary|input|select|textarea)\b([^>]*)>")


def test_the_refreshing_report_is_no_live_region_and_keeps_the_focus(browser_client, labeled):
    """The report swapped every 20 s was one polite live region (read whole, or not at all)
    and took the focus with it: now a line outside it is the status, a box pauses the
    refresh (shown by report_refresh.js: without script nothing refreshes), and every
    control in the report has an id, by which htmx focuses it again in the new report."""
    page = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    report = page.split('<div id="quality-report"', 1)[1].split("<section", 1)[0]
    assert "aria-live" not in report.split(">", 1)[0]
    assert '<p id="report-status" role="status"></p>' in page
    # Hidden until report_refresh.js shows it.
    box = r'id="auto-refresh-control" hidden>\s*<input type="checkbox" id="auto-refresh" checked>'
    assert re.search(box, page)
    assert '<label for="auto-refresh">Auto-refresh every 20 seconds</label>' in page
    assert "js/report_refresh.js" in page
    controls = [
        (tag, attributes)
        for tag, attributes in CONTROL.findall(report)
        if 'type="hidden"' not in attributes
    ]
    assert len(controls) >= 7  # six charts' tables and the run button
    assert [tag for tag, attributes in controls if ' id="' not in attributes] == []
    ran = browser_client.post(
        reverse("quality-refresh", args=[labeled.id]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'data-message="Quality control ran: 1 of 2 workers qualified' in ran
    # Not labeling: nothing refreshes, so there is nothing to pause.
    labeled.status = "paused"
    labeled.save(update_fields=["status"])
    closed = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    assert 'hx-trigger="every 20s"' not in closed and 'id="auto-refresh"' not in closed


def test_worker_ids_are_escaped(browser_client, labeled):
    from cfannotate.crowd.models import Worker

    worker = Worker.objects.filter(qualities__campaign=labeled).first()
    Worker.objects.filter(pk=worker.pk).update(external_id="<script>x</script>")
    html = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    assert "<script>x</script>" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html


def test_the_charts_place_workers_against_the_c2_thresholds_and_tabulate_them(
    browser_client, labeled
):
    """The careful worker (30 s, 6 of 6) sits in the kept corner, the fast one (9 s, 3 of 6)
    outside it; the tables under the charts give the same numbers without the picture."""
    from cfannotate.crowd.models import Worker

    html = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    assert 'aria-labelledby="chart-1-title chart-1-desc"' in html
    assert '<title id="chart-1-title">Workers against the C.2 thresholds</title>' in html
    assert 'class="region"' in html and html.count('class="point series-') == 2
    fast, careful = (
        Worker.objects.filter(qualities__campaign=labeled)
        .order_by("qualities__median_seconds")
        .values_list("external_id", flat=True)
    )
    assert f"{fast}: 9.0 s median, 3/6 gold right, filtered out" in html
    assert f"{careful}: 30.0 s median, 6/6 gold right, kept" in html
    assert "18 s" in html and "67%" in html  # both thresholds drawn and named
    row = re.search(rf"<th scope=\"row\">{fast}</th>(.*?)</tr>", html, re.S).group(1)
    assert [cell.strip() for cell in re.findall(r"<td>(.*?)</td>", row)] == [
        "1",
        "9.0",
        "3/6",
        "50%",
        "filtered out",
    ]
    assert "Labels by round position as a table" in html
    assert "Share of each label by round position (real rounds)" in html
    assert "Agreement as a table" in html


def test_generated_names_in_the_charts_and_their_tables_are_escaped(browser_client, labeled):
    from cfannotate.crowd.models import Worker

    for number, worker in enumerate(Worker.objects.filter(qualities__campaign=labeled)):
        Worker.objects.filter(pk=worker.pk).update(external_id=f'<b x="1">&{number}')
    labeled.labels.filter(value="negative").update(value="<i>neg</i>")
    html = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    assert "<b x=" not in html and "<i>neg</i>" not in html
    assert "&lt;b x=&quot;1&quot;&gt;&amp;" in html


def test_decisions_change_through_the_page(browser_client, labeled):
    decision = WorkerDecision.objects.filter(campaign=labeled, action="approve").first()
    url = reverse("quality-decision-update", args=[labeled.id, decision.id])
    bad = browser_client.post(
        url, {"state": "confirmed", "action": "reject"}, HTTP_HX_REQUEST="true"
    )
    assert bad.status_code == 400
    assert "Say why you reject this assignment." in bad.content.decode()
    assert '<option value="reject" selected>' in bad.content.decode()  # as it was chosen
    good = browser_client.post(
        url, {"state": "confirmed", "reason": "Good work, thanks."}, HTTP_HX_REQUEST="true"
    )
    assert good.status_code == 200
    decision.refresh_from_db()
    assert decision.state == DecisionState.CONFIRMED and decision.reason == "Good work, thanks."
    bad_amount = browser_client.post(
        url, {"state": "confirmed", "amount": "lots"}, HTTP_HX_REQUEST="true"
    )
    assert bad_amount.status_code == 400
    apply = reverse("quality-decisions-apply", args=[labeled.id])
    sent = browser_client.post(apply, {"confirmed": "yes"}, HTTP_HX_REQUEST="true")
    assert "1 decision sent to the platforms." in sent.content.decode()


@pytest.fixture
def bonus(labeled):
    from decimal import Decimal

    from cfannotate.campaigns.models import Campaign
    from cfannotate.quality.decisions import decisions_propose

    Campaign.objects.filter(pk=labeled.pk).update(bonus_amount=Decimal("0.50"))
    labeled.refresh_from_db()
    decisions_propose(campaign=labeled)
    return WorkerDecision.objects.get(campaign=labeled, action="bonus")


@pytest.mark.parametrize("htmx", [True, False])
@pytest.mark.parametrize(
    "amount",
    ["NaN", "sNaN", "Infinity", "1e400", "99999999999", "0.001", "0", "lots", "1_0", "١٢"],
)
def test_a_bad_bonus_amount_is_refused_and_kept_in_its_row(
    browser_client, labeled, bonus, amount, htmx
):
    """No 500, nothing stored that the page cannot read back, and the failed row shows what
    was typed (amount and reason), not the stored values."""
    from decimal import Decimal

    url = reverse("quality-decision-update", args=[labeled.id, bonus.id])
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    typed = {"state": "confirmed", "amount": amount, "reason": "Typed <b>reason</b>"}
    refused = browser_client.post(url, typed, **headers)
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "amount: " in html and 'role="alert"' in html
    row = re.search(rf'<tr id="decision-{bonus.id}">(.*?)</tr>', html, re.S).group(1)
    form = row.split("<form", 1)[1]
    assert f'name="amount" type="number" step="0.01" min="0.01" value="{amount}"' in form
    assert 'value="Typed &lt;b&gt;reason&lt;/b&gt;"' in form
    bonus.refresh_from_db()
    assert bonus.amount == Decimal("0.50") and bonus.state == DecisionState.PROPOSED
    assert browser_client.get(reverse("quality-page", args=[labeled.id])).status_code == 200


def test_a_good_bonus_amount_is_saved(browser_client, labeled, bonus):
    from decimal import Decimal

    url = reverse("quality-decision-update", args=[labeled.id, bonus.id])
    done = browser_client.post(url, {"state": "confirmed", "amount": "1.25", "reason": "Thanks."})
    assert done.status_code == 303
    bonus.refresh_from_db()
    assert bonus.amount == Decimal("1.25") and bonus.state == DecisionState.CONFIRMED


def test_sending_decisions_without_the_confirmation_asks_first(browser_client, labeled):
    """A plain post (htmx not loaded: no confirm dialog) is asked in the page; yes sends."""
    decision = WorkerDecision.objects.filter(campaign=labeled, action="approve").first()
    update = reverse("quality-decision-update", args=[labeled.id, decision.id])
    browser_client.post(update, {"state": "confirmed", "reason": "Thanks."}, HTTP_HX_REQUEST="true")
    apply = reverse("quality-decisions-apply", args=[labeled.id])
    page = reverse("quality-page", args=[labeled.id])

    asked = browser_client.post(apply, HTTP_REFERER=f"http://testserver{page}")
    html = asked.content.decode()
    assert asked.status_code == 200 and "<h1>Quality</h1>" in html
    assert "Send 1 confirmed decision to the workers' platforms?" in html
    assert '<input type="hidden" name="confirmed" value="yes">' in html
    decision.refresh_from_db()
    assert decision.state == DecisionState.CONFIRMED  # nothing sent yet

    sent = browser_client.post(apply, {"confirmed": "yes"}, HTTP_REFERER=f"http://testserver{page}")
    assert sent.status_code == 303 and sent["Location"] == f"http://testserver{page}"
    decision.refresh_from_db()
    assert decision.state == DecisionState.APPLIED
    # htmx without the confirmation (its hx-vals) asks too, in the block.
    again = browser_client.post(apply, HTTP_HX_REQUEST="true")
    assert "No decision is confirmed yet" in again.content.decode()


def test_pages_are_for_the_owner_only(client, labeled):
    client.force_login(make_user("mallory"))
    assert client.get(reverse("quality-page", args=[labeled.id])).status_code == 404
    assert client.post(reverse("quality-refresh", args=[labeled.id])).status_code == 404
    decision = WorkerDecision.objects.filter(campaign=labeled).first()
    url = reverse("quality-decision-update", args=[labeled.id, decision.id])
    assert client.post(url, {"state": "dismissed"}).status_code == 404
    client.logout()
    assert client.get(reverse("quality-page", args=[labeled.id])).status_code == 302


def test_the_api_reports_the_same_numbers(api_client, labeled):
    report = api_client.get(f"/api/campaigns/{labeled.id}/quality/").json()
    assert report["summary"]["workers"] == 2 and report["summary"]["qualified"] == 1
    assert report["label_agreement"]["items"] > 0
    by_quality = {row["qualified"]: row for row in report["workers"]}
    assert by_quality[False]["gold_correct"] == 3 and by_quality[False]["gold_total"] == 6
    assert by_quality[True]["median_seconds"] == 30.0

    refreshed = api_client.post(f"/api/campaigns/{labeled.id}/quality/refresh/")
    assert refreshed.status_code == 200 and refreshed.json()["workers"] == 2

    listed = api_client.get(f"/api/campaigns/{labeled.id}/decisions/?state=proposed").json()
    assert listed["count"] == WorkerDecision.objects.filter(campaign=labeled).count()
    decision_id = listed["results"][0]["id"]
    bad = api_client.post(f"/api/campaigns/{labeled.id}/decisions/{decision_id}/", {})
    assert bad.status_code == 400 and "state" in bad.json()["fields"]
    bad_state = api_client.get(f"/api/campaigns/{labeled.id}/decisions/?state=nope")
    assert bad_state.status_code == 400
    missing = api_client.post(f"/api/campaigns/{labeled.id}/decisions/999999/", {"state": "x"})
    assert missing.status_code == 404
    ok = api_client.post(
        f"/api/campaigns/{labeled.id}/decisions/{decision_id}/",
        {"state": "confirmed"},
        format="json",
    )
    assert ok.status_code == 200 and ok.json()["state"] == "confirmed"
    applied = api_client.post(f"/api/campaigns/{labeled.id}/decisions/apply/").json()
    assert applied == {"applied": 1, "failed": 0}


def test_the_api_is_scoped_to_the_owner(api_client, other_researcher):
    campaign = make_labeling_campaign(units=1, gold=0)
    campaign.owner = other_researcher
    campaign.save(update_fields=["owner"])
    assert api_client.get(f"/api/campaigns/{campaign.id}/quality/").status_code == 404
    assert api_client.post(f"/api/campaigns/{campaign.id}/decisions/apply/").status_code == 404


def test_the_api_lists_each_candidates_kept_label_and_votes(api_client, db, researcher):
    campaign = make_labeling_campaign(
        units=4, gold=2, rounds_per_assignment=2, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    answers = iter([(True, "negative")] * 6 + [(True, "positive")] * 6)
    work(campaign, real=lambda _: (True, "negative"))
    work(campaign, real=lambda _: next(answers))
    quality_refresh(campaign=campaign)
    url = f"/api/campaigns/{campaign.id}/labels/"

    everything = api_client.get(url).json()
    assert everything["count"] == 6  # two units of three, both workers on each
    row = everything["results"][0]
    assert set(row) >= {"candidate", "original_id", "text", "kept", "label", "votes"}
    assert (row["votes"], row["qualified_votes"]) == (2, 2)
    assert sum(row["label_votes"].values()) == 2 and row["valid_votes"] == 2
    assert set(row["label_votes"]) == set(campaign.labels.values_list("value", flat=True))
    kept = api_client.get(url + "?state=kept").json()
    needs_more = api_client.get(url + "?state=needs_more").json()
    assert kept["count"] + needs_more["count"] == 6
    assert {r["label"] for r in kept["results"]} == {"negative"}
    assert all(r["agreement"] == 1.0 for r in kept["results"])
    assert all(r["label"] is None for r in needs_more["results"])
    assert everything["next"] is None and api_client.get(url + "?page=1").status_code == 200

    bad = api_client.get(url + "?state=maybe")
    assert bad.status_code == 400 and "state" in bad.json()["fields"]
    other = make_labeling_campaign(units=1, gold=0)
    assert api_client.get(f"/api/campaigns/{other.id}/labels/").status_code == 404


def test_gold_coverage_is_said_before_and_while_labeling(api_client, browser_client, researcher):
    from cfannotate.labeling.selectors import gold_coverage

    campaign = make_labeling_campaign(
        units=12, gold=2, rounds_per_assignment=2, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    coverage = gold_coverage(campaign)
    # 2 gold rounds, 2 per assignment: one assignment each with gold; 12 units x K=2 / 2.
    assert (coverage.assignments_per_worker, coverage.assignments_needed) == (1, 12)
    assert coverage.runs_short and "without gold" in coverage.message
    assert "each worker's first assignment carries a full set" in coverage.message
    assert "need about 12 more assignments in all" in coverage.message
    work(campaign, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    report = api_client.get(f"/api/campaigns/{campaign.id}/quality/").json()
    assert report["gold_coverage"]["workers_out_of_gold"] == 1
    assert "1 worker has seen every gold round" in report["gold_coverage"]["message"]
    page = browser_client.get(reverse("quality-page", args=[campaign.id])).content.decode()
    assert 'id="gold-coverage"' in page and "1 worker has seen every gold round" in page


def test_the_report_says_what_each_filter_removed_and_which_setting_to_look_at(
    api_client, browser_client, researcher
):
    campaign = make_labeling_campaign(
        units=8, gold=4, rounds_per_assignment=2, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    work(campaign, seconds=30, gold_right=6)  # passes
    work(campaign, seconds=12, gold_right=5)  # careful-looking, removed by time alone
    work(campaign, seconds=4, gold_right=1)  # removed by time and gold
    quality_refresh(campaign=campaign)

    effects = api_client.get(f"/api/campaigns/{campaign.id}/quality/").json()["effects"]
    rules = {row["rule"]: row for row in effects["rules"]}
    assert (rules["time"]["workers"], rules["time"]["alone"]) == (2, 1)
    assert rules["time"]["careful_alone"] == 1 and rules["time"]["judgments"] == 12
    assert (rules["gold"]["workers"], rules["gold"]["alone"]) == (1, 0)
    assert rules["distribution"]["workers"] == 0
    assert len(effects["hints"]) == 1 and "Min median seconds" in effects["hints"][0]
    assert effects["decided"] + effects["waiting"] + effects["capped"] > 0
    page = browser_client.get(reverse("quality-page", args=[campaign.id])).content.decode()
    assert 'id="filter-effects"' in page and "removed by the time rule alone" in page


def test_the_page_and_the_api_say_what_agreement_is_computed_on(
    browser_client, api_client, labeled
):
    html = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    report = api_client.get(f"/api/campaigns/{labeled.id}/quality/").json()
    labels = report["label_agreement"]
    basis = labels["basis"]
    assert basis["items"] == labels["items"] > 0
    assert basis["fewest"] == basis["most"] == 2  # K = 2
    note = (
        f"computed on {basis['items']} items with 2 judgments each ({basis['judgments']} judgments)"
    )
    assert labels["raw_note"] == note
    # Both workers answered "negative" everywhere: chance agreement is total, so the
    # kappas are undefined and say so instead of showing a blank.
    assert labels["fleiss_kappa"] is None and labels["cohen_kappa"] is None
    assert labels["fleiss_kappa_note"] == (
        f"undefined, as all {basis['judgments']} judgments chose the same category"
    )
    assert note in html and "undefined, as all" in html
    assert "NaN" not in html and "nan" not in report.__repr__()


@pytest.fixture
def flipped(researcher):
    """Two careful workers agree on every candidate: each keeps the label x does not have."""
    campaign = make_labeling_campaign(
        units=4, gold=2, rounds_per_assignment=2, gold_rounds_per_assignment=2
    )
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    x_label = campaign.labels.first()  # every original's (tests.factories.make_original)
    other = campaign.labels.exclude(pk=x_label.pk).first()
    work(campaign, real=lambda _: (True, other.value))
    work(campaign, real=lambda _: (True, other.value))
    quality_refresh(campaign=campaign)
    return campaign


def test_the_page_and_the_api_check_the_classifier_in_the_loop_against_the_crowd(
    api_client, browser_client, flipped
):
    from cfannotate.candidates.models import Candidate
    from cfannotate.quality.models import AggregatedLabel

    labeled = flipped
    x_label = labeled.labels.first()
    other = labeled.labels.exclude(pk=x_label.pk).first()
    kept = list(
        AggregatedLabel.objects.filter(candidate__campaign=labeled, kept=True)
        .select_related("label", "candidate__original__label")
        .order_by("id")
    )
    assert len(kept) >= 4
    # The crowd kept the other label everywhere: every kept counterfactual flips.
    assert {aggregate.label for aggregate in kept} == {other}
    assert {aggregate.candidate.original.label for aggregate in kept} == {x_label}
    said = [other if index % 2 == 0 else x_label for index in range(len(kept))]
    for aggregate, label in zip(kept, said, strict=True):
        Candidate.objects.filter(pk=aggregate.candidate_id).update(
            predicted_label=label, predicted_confidence=0.8, prediction_source="baseline"
        )
    right = sum(label == other for label in said)

    (check,) = api_client.get(f"/api/campaigns/{labeled.id}/quality/").json()["classifier"]

    assert check["source"] == "baseline" and check["judged"] == len(kept)
    assert check["agrees"] == check["found_flips"] == check["confirmed_flips"] == right
    assert check["crowd_flips"] == len(kept)
    # Every other prediction kept the original's label: no predicted flip.
    assert check["predicted_flips"] == right and check["flip_precision"] == 1.0
    assert check["flip_recall"] == pytest.approx(right / len(kept))
    page = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    assert 'id="classifier-check"' in page
    assert f"{right} / {len(kept)}" in page and "Built-in baseline" in page


def test_no_prediction_no_classifier_check(api_client, browser_client, labeled):
    assert api_client.get(f"/api/campaigns/{labeled.id}/quality/").json()["classifier"] == []
    page = browser_client.get(reverse("quality-page", args=[labeled.id])).content.decode()
    assert 'id="classifier-check"' not in page


def test_the_classifier_check_leaves_the_researchers_own_candidates_out(api_client, flipped):
    from cfannotate.candidates.models import Candidate, CandidateSource
    from cfannotate.quality.models import AggregatedLabel

    kept = AggregatedLabel.objects.filter(candidate__campaign=flipped, kept=True)
    voted = Candidate.objects.filter(pk__in=kept.values("candidate_id"))
    voted.update(predicted_label=flipped.labels.first(), prediction_source="baseline")
    url = f"/api/campaigns/{flipped.id}/quality/"
    assert api_client.get(url).json()["classifier"][0]["judged"] == kept.count() > 0

    voted.update(source=CandidateSource.IMPORTED)

    assert api_client.get(url).json()["classifier"] == []


def test_a_worker_on_hold_for_more_gold_is_shown_apart_from_the_filtered(
    browser_client, researcher
):
    campaign = make_labeling_campaign(
        units=6, gold=0, training=0, rounds_per_assignment=3, gold_rounds_per_assignment=2
    )
    for _ in range(4):
        make_gold_round(campaign, items=2)  # CAD's pairs: 4 gold an assignment
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    work(campaign, seconds=30, gold_right=2, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)

    html = browser_client.get(reverse("quality-page", args=[campaign.id])).content.decode()
    assert "On hold for more gold" in html
    assert (
        ">on hold</span> 2 of 4 gold counterfactuals right, fewer than 3: on hold until 6" in html
    )
    removed = re.search(r'<th scope="row">Gold</th><td class="num">(\d+)</td>', html)
    assert removed.group(1) == "0"  # not counted among the workers the gold rule removed
    api = browser_client.get(f"/api/campaigns/{campaign.id}/quality/").json()
    assert api["summary"]["on_hold"] == 1 and api["summary"]["filtered"] == 0
    assert api["workers"][0]["held_until"] == 6


@pytest.mark.parametrize(
    ("gold_rounds", "needed", "said"),
    [
        (4, 0, "each worker's first 2 assignments carry a full set; the units need no more "
         "assignments in all"),
        (1, 1, "no assignment of a worker carries a full set; the units need about 1 more "
         "assignment in all"),
    ],
)  # fmt: skip
def test_the_gold_coverage_message_counts_in_words(gold_rounds, needed, said):
    from cfannotate.labeling.selectors import GoldCoverage

    coverage = GoldCoverage(
        gold_rounds=gold_rounds, per_assignment=2, assignments_needed=needed, workers_out_of_gold=0
    )
    assert said in coverage.message and "(s)" not in coverage.message
