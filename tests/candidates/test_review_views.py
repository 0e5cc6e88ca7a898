"""The review page, the promote page and the gold page (htmx): owner-scoped, errors in place."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.campaigns.models import TaskType
from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.labeling.models import GoldItem, GoldRound, LabelingUnit, Round, RoundKind
from tests.factories import (
    make_assignment,
    make_campaign,
    make_candidate,
    make_gold_round,
    make_original,
    make_unit,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(owner=researcher)
    first = make_original(campaign, text="It is great for kids.", label="positive")
    make_candidate(
        first, text="It is not great for kids.", control_code="negation", fluency_full=-1.5
    )
    make_candidate(first, text="It is great for adults.", control_code="lexical", fluency_full=-4.0)
    make_candidate(
        make_original(campaign, text="A dull film.", label="negative"),
        text="A <b>thrilling</b> film.",
        control_code="lexical",
        status=CandidateStatus.FILTERED,
    )
    return campaign


def _candidate(text):
    return Candidate.objects.get(text=text)


def test_the_review_page_filters_in_place_and_escapes_text(logged_in, campaign):
    url = reverse("candidate-review", args=[campaign.id])
    page = logged_in.get(url).content.decode()
    assert "<h1>Review candidates</h1>" in page and "It is not great for kids." in page
    assert "A &lt;b&gt;thrilling&lt;/b&gt; film." in page and "<b>thrilling" not in page

    partial = logged_in.get(
        url, {"control_code": "negation"}, HTTP_HX_TARGET="review-results", **HTMX
    ).content.decode()
    assert partial.lstrip().startswith('<div id="review-results"') and "<h1>" not in partial
    assert "It is not great for kids." in partial and "It is great for adults." not in partial
    assert "1 candidate match" in partial

    fluent = logged_in.get(url, {"min_fluency": "-2", "ordering": "fluency"}).content.decode()
    assert "It is not great for kids." in fluent and "It is great for adults." not in fluent
    searched = logged_in.get(url, {"search": "DULL", "status": "filtered"}).content.decode()
    assert "thrilling" in searched and "kids" not in searched.split("review-results")[1]


def test_each_row_says_which_engine_and_model_made_it(logged_in, campaign):
    made = _candidate("It is not great for kids.")
    made.metadata = {"strategy": "fewshot", "engine": "server", "model": "org/<m>-7b"}
    made.save(update_fields=["metadata"])
    page = logged_in.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    row = page.split(f'id="candidate-{made.id}"', 1)[1].split("</tr>", 1)[0]
    assert "<code>polyjuice</code>" in row and "server · org/&lt;m&gt;-7b" in row  # escaped
    other = page.split(f'id="candidate-{_candidate("It is great for adults.").id}"', 1)[1]
    assert "provenance" not in other.split("</tr>", 1)[0]  # nothing recorded, nothing shown


def test_bad_filters_are_a_400_with_the_reason(logged_in, campaign):
    url = reverse("candidate-review", args=[campaign.id])
    response = logged_in.get(url, {"min_fluency": "lots", "status": "secret"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Some filters are invalid." in html and "min_fluency" in html and "status" in html
    too_large = logged_in.get(url, {"original": "99999999999999999999"})
    assert too_large.status_code == 400 and "original" in too_large.content.decode()


def test_accept_and_reject_swap_the_row(logged_in, campaign):
    candidate = _candidate("It is great for adults.")
    accepted = logged_in.post(reverse("candidate-accept", args=[campaign.id, candidate.id]), **HTMX)
    html = accepted.content.decode()
    assert accepted.status_code == 200 and html.lstrip().startswith(
        f'<tr id="candidate-{candidate.id}"'
    )
    assert "Selected for labeling" in html and "unit " in html
    rejected = logged_in.post(reverse("candidate-reject", args=[campaign.id, candidate.id]), **HTMX)
    assert "Rejected by the researcher" in rejected.content.decode()
    assert not LabelingUnit.objects.filter(campaign=campaign).exists()
    assert (
        logged_in.get(reverse("candidate-accept", args=[campaign.id, candidate.id])).status_code
        == 405
    )


def test_a_refused_reject_shows_why_in_the_row(logged_in, campaign):
    unit = make_unit(make_original(campaign), candidates=1)
    assignment = make_assignment(campaign)
    Round.objects.create(
        assignment=assignment, worker=assignment.worker, kind=RoundKind.REAL, position=1, unit=unit
    )
    candidate = unit.items.get().candidate
    response = logged_in.post(reverse("candidate-reject", args=[campaign.id, candidate.id]), **HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert 'role="alert"' in html and "already given this candidate&#x27;s labeling unit" in html
    assert Candidate.objects.get(pk=candidate.pk).status == CandidateStatus.GENERATED


def test_inline_edit_saves_or_explains(logged_in, campaign):
    candidate = _candidate("It is great for adults.")
    url = reverse("candidate-edit", args=[campaign.id, candidate.id])
    form = logged_in.get(url, **HTMX).content.decode()
    assert "<textarea" in form and "It is great for adults.</textarea>" in form
    unchanged = logged_in.post(url, {"text": "It is great for adults."}, **HTMX)
    assert unchanged.status_code == 400 and "Unchanged" in unchanged.content.decode()
    assert "<textarea" in unchanged.content.decode()  # the form stays, with the text typed
    saved = logged_in.post(url, {"text": "It is terrible for kids."}, **HTMX)
    assert saved.status_code == 200 and "It is terrible for kids." in saved.content.decode()
    assert "<textarea" not in saved.content.decode()
    assert Candidate.objects.get(pk=candidate.pk).fluency_full is None
    cancel = logged_in.get(reverse("candidate-row", args=[campaign.id, candidate.id]), **HTMX)
    assert "<textarea" not in cancel.content.decode()


def test_bulk_review_is_all_or_nothing(logged_in, campaign):
    ids = [c.id for c in Candidate.objects.filter(campaign=campaign)]
    foreign = make_candidate(make_original(make_campaign()))
    url = reverse("candidates-bulk", args=[campaign.id]) + "?control_code=lexical"
    refused = logged_in.post(url, {"action": "accept", "ids": [ids[0], foreign.id]}, **HTMX)
    assert refused.status_code == 400
    html = refused.content.decode()
    assert f"accept.{foreign.id}" in html and "nothing was changed" in html
    assert not LabelingUnit.objects.exists()
    done = logged_in.post(url, {"action": "reject", "ids": ids}, **HTMX)
    assert done.status_code == 200 and "3 candidates rejected." in done.content.decode()
    assert "It is not great for kids." not in done.content.decode()  # the filter is kept
    assert set(Candidate.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
        CandidateStatus.REJECTED
    }
    for bad in (
        {"action": "accept"},
        {"action": "delete", "ids": ids},
        {"action": "accept", "ids": ["x"]},
    ):
        assert logged_in.post(url, bad, **HTMX).status_code == 400


def test_pages_are_owner_scoped(client, other_researcher, campaign):
    candidate = Candidate.objects.filter(campaign=campaign).first()
    gold_round = make_gold_round(campaign)
    urls = [
        ("get", reverse("candidate-review", args=[campaign.id])),
        ("get", reverse("candidate-row", args=[campaign.id, candidate.id])),
        ("post", reverse("candidate-accept", args=[campaign.id, candidate.id])),
        ("post", reverse("candidate-reject", args=[campaign.id, candidate.id])),
        ("post", reverse("candidate-edit", args=[campaign.id, candidate.id])),
        ("post", reverse("candidates-bulk", args=[campaign.id])),
        ("get", reverse("gold-page", args=[campaign.id])),
        ("get", reverse("gold-original", args=[campaign.id, candidate.original_id])),
        ("post", reverse("gold-original", args=[campaign.id, candidate.original_id])),
        ("post", reverse("gold-round-active", args=[campaign.id, gold_round.id])),
        ("post", reverse("gold-round-answers", args=[campaign.id, gold_round.id])),
    ]
    for method, url in urls:  # anonymous visitors (workers too) are sent to log in
        response = getattr(client, method)(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    client.force_login(other_researcher)
    for method, url in urls:
        assert getattr(client, method)(url).status_code == 404, url
    assert GoldRound.objects.get(pk=gold_round.pk).is_active
    assert Candidate.objects.get(pk=candidate.pk).status == CandidateStatus.GENERATED


def test_posts_need_the_csrf_token(researcher, campaign):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    candidate = _candidate("It is great for adults.")
    url = reverse("candidate-accept", args=[campaign.id, candidate.id])
    assert client.post(url, **HTMX).status_code == 403
    page = client.get(reverse("candidate-review", args=[campaign.id]))
    token = page.cookies["csrftoken"].value
    assert '"X-CSRFToken": "' in page.content.decode()  # htmx sends it from <body>
    assert client.post(url, HTTP_X_CSRFTOKEN=token, **HTMX).status_code == 200
    assert Candidate.objects.get(pk=candidate.pk).status == CandidateStatus.SELECTED


def test_promote_two_candidates_to_a_gold_round(logged_in, campaign):
    original = campaign.originals.get(text="It is great for kids.")
    first, second = original.candidates.order_by("id")
    make_unit(original, candidates=1)
    url = reverse("gold-original", args=[campaign.id, original.id])
    review = logged_in.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert f'href="{url}">Promote to gold</a>' in review
    page = logged_in.get(url).content.decode()
    assert "It is not great for kids." in page and 'name="candidate"' in page

    bad = logged_in.post(
        url, {"kind": "gold", "candidate": [first.id], f"label-{first.id}": "meh"}, **HTMX
    )
    assert bad.status_code == 400 and "Unknown label" in bad.content.decode()
    assert 'id="gold-pick"' in bad.content.decode() and "<h1>" not in bad.content.decode()

    response = logged_in.post(
        url,
        {
            "kind": "training",
            "candidate": [first.id, second.id],
            f"valid-{first.id}": "true",
            f"label-{first.id}": "negative",
            f"explanation-{first.id}": "The negation flips it.",
            f"valid-{second.id}": "true",
            f"label-{second.id}": "positive",
        },
        **HTMX,
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("gold-page", args=[campaign.id])
    gold_round = GoldRound.objects.get(original=original)
    assert gold_round.kind == "training" and gold_round.items.count() == 2
    assert not LabelingUnit.objects.filter(original=original).exists()
    gold_page = logged_in.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert "The negation flips it." in gold_page and "Training round" in gold_page
    # The message names the kind made and ends with one period, whatever the text ends with.
    made = (
        f"A training round was made from original {original.external_id}; the original left "
        "its labeling units, and its 1 candidate there is back on the review page, unlabeled."
    )
    assert made in gold_page and f"{made}." not in gold_page


def test_gold_page_edits_answers_until_a_worker_has_the_round(logged_in, campaign):
    gold_round = make_gold_round(campaign)
    item = gold_round.items.first()
    url = reverse("gold-round-answers", args=[campaign.id, gold_round.id])
    data = {}
    for each in gold_round.items.all():
        data |= {f"valid-{each.id}": "true", f"label-{each.id}": "positive"}
    data[f"valid-{item.id}"] = "false"
    data[f"explanation-{item.id}"] = "Not English."
    saved = logged_in.post(url, data, **HTMX)
    assert saved.status_code == 200 and "Answers saved." in saved.content.decode()
    item.refresh_from_db()
    assert (item.expected_valid, item.expected_label.value, item.explanation) == (
        False,
        "positive",
        "Not English.",
    )
    bad = logged_in.post(url, {**data, f"label-{item.id}": "neutral"}, **HTMX)
    assert bad.status_code == 400 and "Unknown label" in bad.content.decode()

    assignment = make_assignment(campaign)
    Round.objects.create(
        assignment=assignment,
        worker=assignment.worker,
        kind=RoundKind.GOLD,
        position=1,
        gold_round=gold_round,
    )
    shown = logged_in.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert "Given to workers 1 time." in shown and "Save answers" not in shown
    refused = logged_in.post(url, data, **HTMX)
    assert refused.status_code == 409 and "already given this round" in refused.content.decode()

    off = logged_in.post(
        reverse("gold-round-active", args=[campaign.id, gold_round.id]), {"active": "0"}, **HTMX
    )
    assert (
        "Inactive" in off.content.decode() and not GoldRound.objects.get(pk=gold_round.pk).is_active
    )
    on = logged_in.post(
        reverse("gold-round-active", args=[campaign.id, gold_round.id]), {"active": "1"}, **HTMX
    )
    assert on.status_code == 200 and GoldRound.objects.get(pk=gold_round.pk).is_active


def test_author_a_round_on_the_gold_page(logged_in, campaign):
    original = make_original(campaign, text="The plot is clever.", label="positive")
    url = reverse("gold-original", args=[campaign.id, original.id])
    same = logged_in.post(url, {"kind": "gold", "new-text-1": original.text}, **HTMX)
    assert same.status_code == 400 and "The same as the original." in same.content.decode()
    assert ">The plot is clever.</textarea>" in same.content.decode()  # kept to fix
    empty = logged_in.post(url, {"kind": "gold"}, **HTMX)
    assert empty.status_code == 400 and "Tick at least one candidate" in empty.content.decode()

    response = logged_in.post(
        url,
        {
            "kind": "gold",
            "new-text-1": "The plot is dumb.",
            "new-valid-1": "true",
            "new-label-1": "negative",
            "new-text-2": "Plot the clever is.",
            "new-valid-2": "false",
            "new-label-2": "positive",
            "new-explanation-2": "Scrambled.",
        },
    )
    assert response.status_code == 302 and response["Location"] == reverse(
        "gold-page", args=[campaign.id]
    )
    items = GoldItem.objects.filter(gold_round__original=original).order_by("position")
    assert [(i.candidate.text, i.expected_valid) for i in items] == [
        ("The plot is dumb.", True),
        ("Plot the clever is.", False),
    ]


def test_the_campaign_page_links_to_review_and_gold(logged_in, campaign):
    html = logged_in.get(reverse("campaign-detail", args=[campaign.id])).content.decode()
    assert reverse("candidate-review", args=[campaign.id]) in html
    assert reverse("gold-page", args=[campaign.id]) in html


def test_a_row_says_why_it_was_dropped_and_what_code_was_asked_for(logged_in, researcher):
    from cfannotate.candidates.adapter import DROP_REASON_LABELS, DROP_REASON_SHORT
    from generation.fluency import TOO_LONG
    from generation.sanity import REASONS

    campaign = make_campaign(owner=researcher)
    original = make_original(campaign, text="It is great for kids.", label="positive")
    make_candidate(
        original,
        text="It is great <i>for</i>",
        control_code="lexical",
        status=CandidateStatus.FILTERED,
        metadata={"edit_type": "negation<script>", "dropped_by": "truncated"},
    )
    make_candidate(
        original,
        text="It is not great for kids.",
        control_code="negation",
        metadata={"edit_type": "negation", "dropped_by": None},
    )

    page = logged_in.get(reverse("candidate-review", args=[campaign.id])).content.decode()

    every_reason = {*REASONS, TOO_LONG, "fluency_full", "fluency_changed"}
    assert every_reason <= set(DROP_REASON_LABELS) and every_reason <= set(DROP_REASON_SHORT)
    assert page.count("cut off mid-sentence") == 1
    assert "asked: negation&lt;script&gt;" in page and "<script>" not in page
    assert page.count("asked:") == 1  # asked for what it does: no note


def test_each_original_group_opens_with_what_generation_made_of_it(client, researcher, campaign):
    dull = campaign.originals.get(text="A dull film.")
    make_candidate(dull, status=CandidateStatus.FILTERED, metadata={"dropped_by": "truncated"})
    client.force_login(researcher)
    html = client.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert "2 kept · 0 selected" in html
    # The FILTERED fixture row has no recorded reason: it counts as "filtered".
    assert "0 kept · 1 cut off · 1 filtered · 0 selected" in html
    assert "none kept: 1 cut off mid-sentence, 1 filtered" in html
    by_fluency = client.get(
        reverse("candidate-review", args=[campaign.id]), {"ordering": "fluency"}
    )
    assert "kept ·" not in by_fluency.content.decode()  # not grouped by original: no headers


def test_a_pair_tasks_groups_show_the_fixed_side_and_the_originals_label(client, researcher):
    """An NLI hypothesis is judged against its premise: the group header shows it, escaped,
    with the original's label, which "flips the label" is read against."""
    nli = make_campaign(owner=researcher, task_type=TaskType.NLI)
    original = make_original(
        nli, "A boy plays.", label="neutral", context="A <b>boy</b> kicks a ball outside."
    )
    make_candidate(original, text="A boy sleeps.")
    client.force_login(researcher)
    html = client.get(reverse("candidate-review", args=[nli.id])).content.decode()
    words = " ".join(html.split())
    assert f"<code>{original.external_id}</code> (May be True):" in words
    assert "Premise: A &lt;b&gt;boy&lt;/b&gt; kicks a ball outside." in words


def test_a_row_a_button_answers_takes_the_focus_and_says_what_was_done(logged_in, campaign):
    """htmx focuses the new row's [autofocus] control (focus fell to <body> with the old
    row) and fills the page's status line out of band with what the button did."""
    candidate = _candidate("It is great for adults.")
    html = logged_in.post(
        reverse("candidate-accept", args=[campaign.id, candidate.id]), **HTMX
    ).content.decode()
    row, after = html.split("</tr>", 1)
    assert re.search(
        rf'<input type="checkbox"[^>]*aria-label="Tick candidate {candidate.id}" autofocus', row
    )
    assert row.count("autofocus") == 1
    assert (
        f'<p id="review-status" hx-swap-oob="innerHTML">Candidate {candidate.id} accepted.</p>'
        in after
    )
    rejected = logged_in.post(reverse("candidate-reject", args=[campaign.id, candidate.id]), **HTMX)
    assert f"Candidate {candidate.id} rejected." in rejected.content.decode()
    editing = logged_in.get(
        reverse("candidate-edit", args=[campaign.id, candidate.id]), **HTMX
    ).content.decode()
    assert re.search(r"<textarea [^>]*autofocus", editing) and editing.count("autofocus") == 1
    assert "review-status" not in editing  # nothing done yet
    saved = logged_in.post(
        reverse("candidate-edit", args=[campaign.id, candidate.id]),
        {"text": "It is awful for adults."},
        **HTMX,
    ).content.decode()
    assert f"Candidate {candidate.id} saved." in saved
    # The page itself never autofocuses a row.
    page = logged_in.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert "autofocus" not in page


def test_only_a_one_line_status_is_live_not_the_results(logged_in, campaign):
    url = reverse("candidate-review", args=[campaign.id])
    page = logged_in.get(url).content.decode()
    assert "aria-live" not in page.split('id="review-results"', 1)[1].split(">", 1)[0]
    assert '<p id="review-status" class="visually-hidden" role="status"></p>' in page
    partial = logged_in.get(
        url, {"control_code": "negation"}, HTTP_HX_TARGET="review-results", **HTMX
    ).content.decode()
    assert partial.rstrip().endswith(
        '<p id="review-status" hx-swap-oob="innerHTML">1 candidate match.</p>'
    )
    ids = [c.id for c in Candidate.objects.filter(campaign=campaign, control_code="lexical")]
    bulk = logged_in.post(
        reverse("candidates-bulk", args=[campaign.id]), {"action": "reject", "ids": ids}, **HTMX
    ).content.decode()
    said = "2 candidates rejected. 3 candidates match."
    assert f'<p id="review-status" hx-swap-oob="innerHTML">{said}</p>' in bulk


def test_each_original_is_a_row_group_headed_by_a_row_group_header(client, researcher, campaign):
    """A header in its own <tbody> with scope="rowgroup" heads its original's rows only; the
    one <tbody> with scope="colgroup" headers made each one a header of every cell below."""
    client.force_login(researcher)
    html = client.get(reverse("candidate-review", args=[campaign.id])).content.decode()
    assert 'scope="colgroup"' not in html
    table = html.split('<table class="table review-table">', 1)[1].split("</table>", 1)[0]
    groups = table.split("<tbody>")[1:]
    assert len(groups) == 2  # two originals
    for group in groups:
        assert group.count('<th scope="rowgroup" colspan="8">Original') == 1
    assert "It is great for kids." in groups[0] and "A dull film." not in groups[0]
    assert "A dull film." in groups[1]
