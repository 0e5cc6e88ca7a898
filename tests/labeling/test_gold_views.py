"""The gold page: the searchable list of originals free for a round, the round made on one
of them (ticked candidates or typed counterfactuals), and what the researcher is told."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from cfannotate.campaigns.models import Original, TaskType
from cfannotate.candidates.models import CandidateStatus
from cfannotate.labeling.gold_views import AUTHOR_ROWS, PICK_PER_PAGE
from cfannotate.labeling.models import GoldKind, GoldRound, LabelingUnit
from cfannotate.labeling.units import ORIGINAL_GIVEN_OUT
from tests.factories import (
    make_campaign,
    make_candidate,
    make_gold_round,
    make_original,
    make_unit,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("kind", "said"), [("training", "A training"), ("gold", "A gold")])
def test_an_authored_round_is_named_by_its_kind_with_one_final_period(
    client, researcher, campaign, kind, said
):
    client.force_login(researcher)
    original = make_original(campaign, text="A sentence that ends with a period.")
    label = campaign.labels.first().value
    response = client.post(
        reverse("gold-original", args=[campaign.id, original.id]),
        {"kind": kind, "new-text-1": "A sentence.", "new-valid-1": "true", "new-label-1": label},
    )
    assert response.status_code == 302
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message == f"{said} round was made from original {original.external_id}."
    assert ".." not in message


@pytest.mark.parametrize(("kind", "said"), [("training", "A training"), ("gold", "A gold")])
def test_an_original_id_that_ends_with_a_period_does_not_double_it(
    client, researcher, campaign, kind, said
):
    client.force_login(researcher)
    original = make_original(campaign)
    original.external_id = "review-12."
    original.save(update_fields=["external_id"])
    response = client.post(
        reverse("gold-original", args=[campaign.id, original.id]),
        {
            "kind": kind,
            "new-text-1": "A sentence.",
            "new-valid-1": "true",
            "new-label-1": campaign.labels.first().value,
        },
    )
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message == f"{said} round was made from original review-12."
    assert "gold" not in message if kind == "training" else "training" not in message


# --- The list of originals free for a round -----------------------------------------------

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_list_offers_originals_workers_were_not_given_with_their_candidates_and_rounds(
    client, researcher, campaign
):
    client.force_login(researcher)
    free = make_original(campaign, text="The plot is clever.", label="positive")
    make_candidate(free, text="The plot is dumb.")
    make_candidate(free, text="The plot is not clever.")
    given_out = make_original(campaign, text="Already labeled by workers.")
    LabelingUnit.objects.filter(pk=make_unit(given_out).pk).update(claims=1)
    used = make_gold_round(campaign, GoldKind.TRAINING).original

    html = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    rows = {row.split("</code>")[0]: row for row in html.split("<td><code>")[1:]}
    assert set(rows) == {free.external_id, used.external_id}
    assert "The plot is clever." in rows[free.external_id] and "Positive" in rows[free.external_id]
    assert '<td class="num">2</td>' in rows[free.external_id]
    assert '<td><span class="meta">none</span></td>' in rows[free.external_id]
    assert "1 training" in rows[used.external_id]
    assert reverse("gold-original", args=[campaign.id, free.id]) in rows[free.external_id]
    assert "manage.py" not in html  # no command-line hints left on the page
    assert "Already labeled by workers." not in html


def test_search_by_id_or_words_answers_htmx_with_the_list_alone(client, researcher, campaign):
    client.force_login(researcher)
    clever = make_original(campaign, text="The plot is clever.")
    dull = make_original(campaign, text="A DULL film.")
    url = reverse("gold-page", args=[campaign.id])

    by_words = client.get(url, {"q": "dull"}).content.decode()  # no JS: the whole page
    assert "<h1>" in by_words and 'value="dull"' in by_words
    assert "A DULL film." in by_words and "The plot is clever." not in by_words
    by_id = client.get(url, {"q": clever.external_id}, HTTP_HX_TARGET="gold-picker", **HTMX)
    fragment = by_id.content.decode()
    assert fragment.lstrip().startswith('<div id="gold-picker"') and "<h1>" not in fragment
    assert "The plot is clever." in fragment and dull.text not in fragment
    nothing = client.get(url, {"q": "zzz"}).content.decode()
    assert "No original free for a round matches “zzz”." in nothing


def test_the_list_comes_a_page_at_a_time_and_keeps_the_search(client, researcher, campaign):
    client.force_login(researcher)
    for number in range(PICK_PER_PAGE + 3):
        make_original(campaign, text=f"Match {number:02d} here.")
    make_original(campaign, text="Other words.")
    url = reverse("gold-page", args=[campaign.id])

    first = client.get(url, {"q": "match"}).content.decode()
    assert f"{PICK_PER_PAGE + 3} originals match “match”." in first
    assert "Page 1 of 2" in first and "Match 19 here." in first and "Match 20 here." not in first
    assert "?q=match&amp;page=2" in first
    second = client.get(url, {"q": "match", "page": "2"}, HTTP_HX_TARGET="gold-picker", **HTMX)
    second = second.content.decode()
    assert "Match 20 here." in second and "Match 22 here." in second
    assert "Match 19 here." not in second and "Other words." not in second
    assert "?q=match&amp;page=1" in second


def test_original_text_is_escaped_in_the_list_and_on_its_round_form(client, researcher, campaign):
    client.force_login(researcher)
    hostile = "<script>alert(1)</script> & <b>bold</b>"
    original = make_original(campaign, text=hostile)
    make_candidate(original, text="<img src=x onerror=alert(2)>")
    pages = [
        client.get(reverse("gold-page", args=[campaign.id])),
        client.get(reverse("gold-original", args=[campaign.id, original.id])),
        client.get(reverse("gold-original", args=[campaign.id, original.id]), **HTMX),
    ]
    for response in pages:
        html = response.content.decode()
        assert response.status_code == 200
        assert "<script>alert(1)" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html


# --- A round on the picked original -----------------------------------------------------------


def test_ticked_candidates_with_answers_set_in_place_become_a_gold_round(
    client, researcher, campaign
):
    client.force_login(researcher)
    original = make_original(campaign, text="The plot is clever.", label="positive")
    dumb = make_candidate(original, text="The plot is dumb.")
    scrambled = make_candidate(original, text="Plot the clever is.")
    left = make_candidate(original, text="The plot is very clever.")
    url = reverse("gold-original", args=[campaign.id, original.id])

    form = client.get(url, HTTP_HX_TARGET="gold-pick", **HTMX).content.decode()
    assert form.lstrip().startswith('<form id="gold-pick"') and "The plot is dumb." in form
    response = client.post(
        url,
        {
            "kind": "gold",
            "candidate": [str(dumb.id), str(scrambled.id)],
            f"valid-{dumb.id}": "true",
            f"label-{dumb.id}": "negative",
            f"explanation-{dumb.id}": "Dumb flips it.",
            f"valid-{scrambled.id}": "false",
            f"label-{scrambled.id}": "positive",
        },
        **HTMX,
    )
    assert response.status_code == 200 and response["HX-Redirect"] == reverse(
        "gold-page", args=[campaign.id]
    )
    gold_round = GoldRound.objects.get(original=original)
    assert (gold_round.kind, gold_round.is_active) == (GoldKind.GOLD, True)
    answers = [
        (item.candidate_id, item.expected_valid, item.expected_label.value, item.explanation)
        for item in gold_round.items.order_by("position")
    ]
    assert answers == [
        (dumb.id, True, "negative", "Dumb flips it."),
        (scrambled.id, False, "positive", ""),
    ]
    left.refresh_from_db()
    assert left.status != CandidateStatus.GOLD

    # The page lists the round, its kind and state, and the original now says it has one.
    page = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert f'id="gold-round-{gold_round.id}"' in page and "Active" in page
    assert "1 gold" in page


def test_typed_counterfactuals_become_a_training_round(client, researcher, campaign):
    client.force_login(researcher)
    original = make_original(campaign, text="The plot is clever.", label="positive")
    response = client.post(
        reverse("gold-original", args=[campaign.id, original.id]),
        {
            "kind": "training",
            "new-text-1": "The plot is dumb.",
            "new-valid-1": "true",
            "new-label-1": "negative",
            "new-explanation-1": "Dumb is negative.",
            "new-text-3": "The plot is clever and kind.",
            "new-valid-3": "true",
            "new-label-3": "positive",
        },
    )
    assert response.status_code == 302
    gold_round = GoldRound.objects.get(original=original)
    assert gold_round.kind == GoldKind.TRAINING
    assert [
        (item.candidate.text, item.expected_label.value, item.explanation)
        for item in gold_round.items.order_by("position")
    ] == [
        ("The plot is dumb.", "negative", "Dumb is negative."),
        ("The plot is clever and kind.", "positive", ""),
    ]


def test_no_answer_is_chosen_for_the_researcher(client, researcher, campaign):
    """A gold answer scores every worker who meets it: the form guesses nothing, shows what
    the generator aimed for and what the classifier predicts, and refuses an unchosen one."""
    client.force_login(researcher)
    original = make_original(campaign, text="The plot is clever.", label="positive")
    negative = campaign.labels.get(value="negative")
    aimed = make_candidate(original, text="The plot is dumb.", intended_label=negative)
    url = reverse("gold-original", args=[campaign.id, original.id])
    page = client.get(url).content.decode()
    row = page[page.index(f'<tr id="pick-{aimed.id}"') :]
    assert "selected" not in row[: row.index("</tr>")]
    assert "aimed at Negative" in page
    assert page.count('<option value="">choose…</option>') == 2 + 2 * AUTHOR_ROWS

    response = client.post(url, {"kind": "gold", "candidate": str(aimed.id)}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 400
    assert "Choose whether a careful worker finds it valid." in html
    assert "Choose the label a careful worker gives." in html
    typed = client.post(url, {"kind": "gold", "new-text-1": "The plot is dull."}, **HTMX)
    assert typed.status_code == 400 and "Choose the label a careful worker gives." in (
        typed.content.decode()
    )
    assert not GoldRound.objects.exists()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({}, "Tick at least one candidate, or type a new counterfactual."),
        ({"new-text-1": "The plot is dumb.", "tick": True}, "Either tick candidates or type new"),
        ({"tick": True, "label": "neutral"}, "Unknown label &#x27;neutral&#x27;"),
        ({"new-text-1": "The plot is dumb.", "new-label-1": "meh"}, "Unknown label &#x27;meh"),
        ({"tick": True, "kind": "bronze"}, "Use gold or training."),
    ],
)
def test_a_round_that_cannot_be_made_says_why_in_place_and_saves_nothing(
    client, researcher, campaign, fields, said
):
    client.force_login(researcher)
    original = make_original(campaign, text="The plot is clever.", label="positive")
    candidate = make_candidate(original, text="The plot is dumb.")
    data = {"kind": fields.pop("kind", "gold"), "new-label-1": "negative"}
    if fields.pop("tick", False):
        data |= {"candidate": str(candidate.id), f"label-{candidate.id}": "negative"}
    if "label" in fields:
        data[f"label-{candidate.id}"] = fields.pop("label")
    data |= fields
    response = client.post(reverse("gold-original", args=[campaign.id, original.id]), data, **HTMX)
    html = response.content.decode()
    assert response.status_code == 400 and said in html
    assert html.lstrip().startswith('<form id="gold-pick"')
    assert not GoldRound.objects.exists()
    candidate.refresh_from_db()
    assert candidate.status != CandidateStatus.GOLD


def test_typed_counterfactuals_take_an_original_out_of_units_no_worker_was_given(
    client, researcher, campaign
):
    client.force_login(researcher)
    original = make_original(campaign, text="The plot is clever.")
    unit = make_unit(original)
    generated = [item.candidate for item in unit.items.all()]
    listed = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert "The plot is clever." in listed and ">in units</span>" in listed
    url = reverse("gold-original", args=[campaign.id, original.id])
    assert "This original is in labeling units no worker was given yet." in (
        client.get(url).content.decode()
    )
    post = {
        "kind": "gold",
        "new-text-1": "The plot is dumb.",
        "new-valid-1": "valid",
        "new-label-1": "negative",
    }
    response = client.post(url, post, follow=True)
    assert "the original left its labeling units, and its 3 candidates there are back on " in (
        response.content.decode()
    )
    gold_round = GoldRound.objects.get(original=original)
    assert [item.candidate.text for item in gold_round.items.all()] == ["The plot is dumb."]
    assert not LabelingUnit.objects.filter(original=original).exists()
    for candidate in generated:  # back on the review page, out of labeling
        candidate.refresh_from_db()
        assert candidate.status == CandidateStatus.GENERATED


def test_an_original_workers_were_given_is_not_offered_nor_taken(client, researcher, campaign):
    client.force_login(researcher)
    original = make_original(campaign, text="The plot is clever.")
    LabelingUnit.objects.filter(pk=make_unit(original).pk).update(claims=1)
    listed = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert "The plot is clever." not in listed
    assert "Workers were already given every original" in listed
    url = reverse("gold-original", args=[campaign.id, original.id])
    response = client.post(
        url,
        {"kind": "gold", "new-text-1": "The plot is dumb.", "new-valid-1": "valid"}
        | {"new-label-1": "negative"},
    )
    assert response.status_code == 400 and ORIGINAL_GIVEN_OUT in response.content.decode()
    assert not GoldRound.objects.exists()
    assert LabelingUnit.objects.filter(original=original).count() == 1


def test_another_owners_campaign_or_original_is_not_found(
    client, researcher, other_researcher, campaign
):
    original = make_original(campaign)
    candidate = make_candidate(original)
    elsewhere = make_original(make_campaign(owner=researcher))
    post = {"kind": "gold", "candidate": str(candidate.id), f"label-{candidate.id}": "negative"}
    client.force_login(other_researcher)
    url = reverse("gold-original", args=[campaign.id, original.id])
    assert client.get(url).status_code == 404
    assert client.post(url, post).status_code == 404
    assert client.get(reverse("gold-page", args=[campaign.id]), {"q": "x"}).status_code == 404
    client.force_login(researcher)
    wrong = reverse("gold-original", args=[campaign.id, elsewhere.id])
    assert client.get(wrong).status_code == 404 and client.post(wrong, post).status_code == 404
    assert not GoldRound.objects.exists()


def test_a_rounds_forms_work_without_javascript(client, researcher, campaign):
    """Plain form posts (no htmx) save, then go back to the gold page saying what happened."""
    client.force_login(researcher)
    gold_round = make_gold_round(campaign)
    page = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    active_url = reverse("gold-round-active", args=[campaign.id, gold_round.id])
    assert f'method="post" action="{active_url}"' in page

    off = client.post(active_url, {"active": "0"})
    assert off.status_code == 302
    assert off["Location"].endswith(f"/gold/#gold-round-{gold_round.id}")
    assert not GoldRound.objects.get(pk=gold_round.pk).is_active
    assert f"Round #{gold_round.id}: saved." in client.get(off["Location"]).content.decode()

    item = gold_round.items.first()
    answers_url = reverse("gold-round-answers", args=[campaign.id, gold_round.id])
    bad = client.post(answers_url, {f"valid-{item.id}": "true", f"label-{item.id}": "sarcastic"})
    assert bad.status_code == 400  # the gold page again, the error in the round's panel
    html = bad.content.decode()
    assert "<h1>Gold and training rounds</h1>" in html
    assert "<strong>Counterfactual 1, label</strong>: Unknown label &#x27;sarcastic&#x27;" in html
    assert not list(get_messages(bad.wsgi_request))
    item.refresh_from_db()
    assert item.expected_label.value != "sarcastic"  # nothing saved


def _answers_of_the_page(campaign, gold_round) -> dict:
    """The round's answer form as the page sends it unchanged."""
    data = {}
    for item in gold_round.items.all():
        data |= {
            f"valid-{item.id}": "true" if item.expected_valid else "false",
            f"label-{item.id}": item.expected_label.value,
            f"explanation-{item.id}": item.explanation,
        }
    return data


@pytest.mark.parametrize("htmx", [True, False])
def test_refused_answers_keep_what_was_typed_and_name_the_row(client, researcher, campaign, htmx):
    """One bad label refuses every change, yet the explanation typed on another row and the
    choices made stay in the form, and the problem is beside its row's field."""
    client.force_login(researcher)
    gold_round = make_gold_round(campaign, label="positive")
    first, _, third = gold_round.items.all()
    data = _answers_of_the_page(campaign, gold_round) | {
        f"explanation-{first.id}": "MY TYPED <b>explanation</b>",
        f"valid-{first.id}": "false",
        f"label-{first.id}": "negative",
        f"label-{third.id}": "zzz",
    }
    url = reverse("gold-round-answers", args=[campaign.id, gold_round.id])

    response = client.post(url, data, **({"HTTP_HX_REQUEST": "true"} if htmx else {}))

    html = response.content.decode()
    assert response.status_code == 400
    assert "fix the fields below" in html
    assert "<strong>Counterfactual 3, label</strong>: Unknown label &#x27;zzz&#x27;" in html
    assert "items[3]" not in html
    assert 'value="MY TYPED &lt;b&gt;explanation&lt;/b&gt;"' in html
    row = html[html.index(f'name="valid-{first.id}"') : html.index(f'name="valid-{third.id}"')]
    assert '<option value="false" selected>' in row
    assert '<option value="negative" selected>' in row
    assert f'aria-describedby="gold-item-{third.id}-label-error"' in html
    assert f'id="gold-item-{third.id}-label-error">Unknown label' in html
    first.refresh_from_db()
    assert (first.expected_valid, first.explanation) == (True, "Known answer 1 of gold round.")


def test_a_round_of_a_pair_task_shows_the_fixed_side(client, researcher):
    nli = make_campaign(owner=researcher, task_type=TaskType.NLI)
    gold_round = make_gold_round(nli)
    Original.objects.filter(pk=gold_round.original_id).update(context="A <b>dog</b> runs.")
    client.force_login(researcher)
    page = client.get(reverse("gold-page", args=[nli.id])).content.decode()
    assert "Premise: A &lt;b&gt;dog&lt;/b&gt; runs." in page


def test_a_pair_tasks_originals_are_listed_and_searched_with_their_fixed_side(client, researcher):
    nli = make_campaign(owner=researcher, task_type=TaskType.NLI)
    kicks = make_original(nli, "A boy plays.", context="A <i>boy</i> kicks a ball.")
    make_original(nli, "A cat sleeps.", context="A cat lies on a mat.")
    client.force_login(researcher)
    url = reverse("gold-page", args=[nli.id])

    page = client.get(url).content.decode()
    assert "Premise: A &lt;i&gt;boy&lt;/i&gt; kicks a ball." in page
    assert 'placeholder="Id or words of the text or the premise"' in page

    found = client.get(url, {"q": "kicks"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="gold-picker")
    html = found.content.decode()
    assert f"<code>{kicks.external_id}</code>" in html and "A cat sleeps." not in html


def test_a_gold_round_workers_can_tell_by_its_size_is_named_until_switched_off(
    client, researcher, campaign
):
    client.force_login(researcher)
    make_unit(make_original(campaign), candidates=3)
    make_gold_round(campaign, items=3)
    odd = make_gold_round(campaign, items=2)
    page = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert '<p id="gold-size-note" class="notice">1 hidden gold round of 2 holds 2' in page

    off = client.post(
        reverse("gold-round-active", args=[campaign.id, odd.id]),
        {"active": "0"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert '<p id="gold-size-note" class="notice" hidden hx-swap-oob="true"></p>' in off
    page = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert '<p id="gold-size-note" class="notice" hidden></p>' in page
