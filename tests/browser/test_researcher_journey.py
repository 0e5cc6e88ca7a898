"""The researcher's whole day in a real browser, and two workers labeling in parallel.

From the home page on, only by what the pages show (no URL typed after the first): log
in; "New campaign" from the sentiment template; the overview's next step leads to the
data section, where a CSV is uploaded with its columns mapped on the preview; the
settings choose the generators and the quality settings; a gold round is made on an
original picked in the gold section; the overview's next step leads to generation (the
real lexicon generators, ranking with a tiny model, run by `db_worker` as in
production); a candidate is rejected in review; the next step leads to labeling and
platforms, where labeling opens and an invitation link is made; two workers in separate
browser contexts label at the same time, each answering every real counterfactual as
valid with the label flipped and every gold one as expected; quality control runs; the
overview's last step leads to the exports, whose contrast set is downloaded, loaded back
with `datasets`, and checked row by row against what the workers said. The section
navigation marks the section the researcher is in all along.
"""

import csv
import difflib
import json

import pytest
from django.core.management import call_command

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import CandidateStatus
from cfannotate.labeling.models import Judgment, LabelingUnit, UnitItem
from cfannotate.quality.models import WorkerQuality
from tests.browser.conftest import htmx_ready
from tests.factories import make_user
from tests.generation.tiny_models import tiny_lm_directory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "journey-password-1"
# Reviews whose opinion words the lexicon generators can remove or replace (with VADER).
REVIEWS = [
    ("r1", "The soundtrack is gorgeous and perfectly matches every scene.", "pos"),
    ("r2", "It is a clever thriller with a twist I did not see coming.", "pos"),
    ("r3", "The acting was superb and the story kept me hooked until the very end.", "pos"),
    ("r4", "Her performance is warm, funny and completely believable.", "pos"),
    ("r5", "The jokes fall flat and the pacing is painfully slow.", "neg"),
    ("r6", "A dull, plodding film that never finds its rhythm.", "neg"),
    ("r7", "The dialogue is wooden and the characters are forgettable.", "neg"),
]
GOLD_ORIGINAL = "r7"
GOLD = [  # text, valid, label display name
    ("The dialogue is sharp and the characters are unforgettable.", "Valid", "Positive"),
    ("The dialogue is wooden and the characters are dull.", "Valid", "Negative"),
    ("The dialogue wooden is and characters the forgettable are.", "Invalid", "Negative"),
]
FLIP = {"Positive": "Negative", "Negative": "Positive"}


def _section(page, title):
    """Go to a section of the campaign with its navigation; it is marked as the current one."""
    nav = page.get_by_role("navigation", name="Campaign sections")
    nav.get_by_role("link", name=title, exact=True).click()
    nav.locator('[aria-current="page"]', has_text=title).wait_for()
    assert nav.locator('[aria-current="page"]').count() == 1
    htmx_ready(page)


def _next_step(page, action, section):
    """On the overview: the next step says `action`; its button leads to `section`."""
    _section(page, "Overview")
    box = page.locator(".next-step")
    box.get_by_text(action).wait_for()
    box.get_by_role("link", name=f"Go to {section.lower()}").click()
    nav = page.get_by_role("navigation", name="Campaign sections")
    nav.locator('[aria-current="page"]', has_text=section).wait_for()
    htmx_ready(page)


def _log_in(page, base, username):
    page.goto(base)
    page.get_by_role("banner").get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Your campaigns").wait_for()


def _create_campaign(page) -> Campaign:
    page.get_by_role("link", name="New campaign").click()
    page.get_by_label("Campaign name").fill("Journey <reviews>")
    page.get_by_label("Sentiment (single text)").check()
    page.get_by_role("button", name="Create campaign").click()
    page.get_by_text("Upload its dataset of labeled originals next.").wait_for()
    campaign = Campaign.objects.get(name="Journey <reviews>")
    nav = page.get_by_role("navigation", name="Campaign sections")
    assert nav.locator('[aria-current="page"]').inner_text() == "Overview"
    page.locator(".next-step").get_by_text("Upload the originals").wait_for()
    page.locator(".next-step").get_by_role("link", name="Go to data").click()
    nav.locator('[aria-current="page"]', has_text="Data").wait_for()
    return campaign


def _upload(page, tmp_path):
    path = tmp_path / "reviews.csv"
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["review_id", "review", "stars", "sentiment"])
        for external_id, text, label in REVIEWS:
            writer.writerow([external_id, text, "5" if label == "pos" else "1", label])
    page.get_by_label("CSV, TSV or JSONL file").set_input_files(str(path))
    page.get_by_role("button", name="Preview").click()
    page.get_by_role("button", name=f"Import {len(REVIEWS)} rows").wait_for()
    # The guesses map review → text and sentiment → label; the id column is mapped here.
    page.locator("#map-id").select_option("review_id")
    page.get_by_role("button", name=f"Import {len(REVIEWS)} rows").click()
    page.get_by_text(f"Imported {len(REVIEWS)} originals from reviews.csv.").wait_for()
    page.locator("#originals").get_by_role("cell", name=REVIEWS[0][1]).wait_for()


def _configure(page, campaign, model_dir):
    _section(page, "Settings")
    page.locator("#id_use_polyjuice").uncheck()
    # Replacements are ranked by a tiny model built for the test: the packaged SmolLM2
    # would cost this journey 15 s and is exercised by the generation tests.
    options = {
        "lexicon-remove": {"classifier": "vader"},
        "lexicon-replace": {"classifier": "vader", "model": str(model_dir)},
    }
    for name, chosen in options.items():
        page.locator(f"#id_use_{name}").check()
        page.locator(f"#id_options_{name}").fill(json.dumps(chosen))
    # The browser is far faster than the 18 s a round that C.2 asks of people.
    page.get_by_label("Min median seconds").fill("0")
    page.get_by_label("Gold rounds per assignment").fill("1")
    page.get_by_label("Training rounds").fill("0")
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text("Saved:").wait_for()
    campaign.refresh_from_db()
    assert [entry["name"] for entry in campaign.generators] == ["lexicon-remove", "lexicon-replace"]


def _author_gold(page, campaign):
    _section(page, "Gold and training")
    page.get_by_label("Search originals").fill(GOLD_ORIGINAL)
    page.get_by_role("link", name=f"Open original {GOLD_ORIGINAL}").click()
    for number, (text, valid, label) in enumerate(GOLD, start=1):
        page.get_by_label(f"Counterfactual {number}", exact=True).fill(text)
        page.get_by_label(f"Valid? (counterfactual {number})").select_option(
            "true" if valid == "Valid" else "false"
        )
        page.get_by_label(f"Label (counterfactual {number})").select_option(label=label)
    page.get_by_role("button", name="Save the round").click()
    page.get_by_text(GOLD[0][0]).first.wait_for()
    assert campaign.gold_rounds.filter(kind="gold").count() == 1


def _generate(page, campaign):
    _next_step(page, "Generate candidates, or import your own.", "Generation")
    page.get_by_role("button", name="Generate candidates").click()
    page.locator("#generation-progress progress").wait_for()
    # The chunks, then the selection they queue, run in a worker as in production.
    for _ in range(2):
        call_command("db_worker", queue_name="*", batch=True, startup_delay=False, reload=False)
    page.get_by_text("Done").first.wait_for(timeout=30_000)
    assert LabelingUnit.objects.filter(campaign=campaign).exists()


def _reject_one(page, campaign) -> str:
    _section(page, "Review")
    selected = UnitItem.objects.filter(unit__campaign=campaign).select_related("candidate")
    rejected = selected.order_by("id").first().candidate
    row = page.locator("tr", has_text=rejected.text)
    row.get_by_role("button", name="Reject").click()
    row.get_by_text("Rejected").wait_for()
    rejected.refresh_from_db()
    assert rejected.status == CandidateStatus.REJECTED
    return rejected.text


def _publish(page, campaign) -> str:
    _next_step(page, "Open the campaign for labeling.", "Labeling and platforms")
    page.get_by_role("button", name="Open for labeling").click()
    page.get_by_role("button", name="Pause labeling").wait_for()
    block = page.locator("#platforms-block")
    block.locator("#link_name").fill("Pilot crowd")
    block.get_by_role("button", name="New invitation link").click()
    link = page.get_by_label("Invitation link Pilot crowd")
    link.wait_for()
    return link.input_value()


def _start(worker_page, link):
    worker_page.goto(link)
    worker_page.get_by_role("button", name="Start").click()
    worker_page.get_by_role("heading", name="Instructions").wait_for()
    worker_page.get_by_role("link", name="Start").click()


def _answer_round(worker_page, original_labels, gold) -> bool:
    """Answer the round on screen; False when the assignment is over."""
    if worker_page.get_by_role("heading", name="Thank you, all rounds are submitted").count():
        return False
    worker_page.get_by_role("button", name="Submit round").wait_for()
    reference = worker_page.locator(".reference-text").inner_text().strip()
    items = worker_page.locator(".cf-item")
    for index in range(1, items.count() + 1):
        item = worker_page.locator(f"#item-{index}")
        # The words the edit removed are shown struck through; the text is the rest.
        shown = item.locator(".cf-text").evaluate(
            "el => Array.from(el.childNodes).filter(n => n.nodeName !== 'DEL')"
            ".map(n => n.textContent).join('')"
        )
        if reference in gold:
            text = max(
                gold[reference], key=lambda t: difflib.SequenceMatcher(None, t, shown).ratio()
            )
            valid, label = gold[reference][text]
        else:
            valid, label = "Valid", FLIP[original_labels[reference]]
        item.get_by_label(valid, exact=True).check()
        item.get_by_label(label).check()
        worker_page.locator(f"#status-{index}").get_by_text("Saved").wait_for()
    heading = worker_page.get_by_role("heading", level=1).inner_text()
    worker_page.get_by_role("button", name="Submit round").click()
    worker_page.wait_for_function(
        "h => document.querySelector('h1') && document.querySelector('h1').innerText !== h",
        arg=heading,
    )
    return True


def test_researcher_journey_with_two_workers_in_parallel(
    live_server, browser, page, tmp_path, tmp_path_factory
):
    from datasets import load_dataset

    researcher = make_user("journey")
    researcher.set_password(PASSWORD)
    researcher.save()
    base = live_server.url

    _log_in(page, base, "journey")
    campaign = _create_campaign(page)
    _upload(page, tmp_path)
    assert campaign.originals.count() == len(REVIEWS)
    _configure(page, campaign, tiny_lm_directory(tmp_path_factory, "llama"))
    _author_gold(page, campaign)
    _generate(page, campaign)
    rejected_text = _reject_one(page, campaign)
    link = _publish(page, campaign)

    display = {"pos": "Positive", "neg": "Negative"}
    original_labels = {text: display[label] for _, text, label in REVIEWS}
    gold_original = next(text for key, text, _ in REVIEWS if key == GOLD_ORIGINAL)
    gold = {gold_original: {text: (valid, label) for text, valid, label in GOLD}}

    contexts = [browser.new_context(), browser.new_context()]
    workers = [context.new_page() for context in contexts]
    errors = []
    for worker_page in workers:
        worker_page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
        worker_page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        for worker_page in workers:
            _start(worker_page, link)
        active = list(workers)
        while active:  # the two assignments advance in turn, both open at once
            active = [w for w in active if _answer_round(w, original_labels, gold)]
        for worker_page in workers:
            worker_page.get_by_role(
                "heading", name="Thank you, all rounds are submitted"
            ).wait_for()
    finally:
        for context in contexts:
            context.close()

    assert errors == [], errors
    units = LabelingUnit.objects.filter(campaign=campaign)
    assert all(unit.completed == unit.judgments_needed == 2 for unit in units)

    _section(page, "Quality")
    page.get_by_role("button", name="Run quality control now").click()
    page.locator("dt", has_text="Workers qualified").locator("+ dd", has_text="2 / 2").wait_for()
    assert WorkerQuality.objects.filter(campaign=campaign, qualified=True).count() == 2

    _next_step(page, "Download the contrast and augmentation sets.", "Exports")
    with page.expect_download() as download:
        page.locator("#exports").get_by_role("link", name="JSONL").first.click()
    path = tmp_path / "contrast.jsonl"
    download.value.save_as(path)
    rows = load_dataset("json", data_files=str(path), split="train")

    labeled = UnitItem.objects.filter(unit__campaign=campaign).select_related(
        "candidate__original__label"
    )
    expected = {
        (
            item.candidate.original.external_id,
            item.candidate.text,
            "negative" if item.candidate.original.label.value == "positive" else "positive",
        )
        for item in labeled
    }
    assert rejected_text not in {text for _, text, _ in expected}
    assert {(row["original_id"], row["text"], row["label"]) for row in rows} == expected
    assert all(row["votes"] == 2 and row["agreement"] == 1.0 for row in rows)
    judged = Judgment.objects.filter(
        round__assignment__campaign=campaign, round__submitted_at__isnull=False
    )
    assert judged.count() == 2 * len(expected) + 2 * len(GOLD)
    assert page.console_errors == [], page.console_errors
