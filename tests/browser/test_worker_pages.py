"""A worker labels a whole assignment in a real browser: instructions, training with
feedback, rounds by mouse and by keyboard, a reload in the middle, the completion code."""

import time

import pytest
from django.urls import reverse

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.core.worker_tokens import join_token
from cfannotate.labeling.models import Assignment, AssignmentState, Judgment, Round
from tests.browser.conftest import htmx_ready
from tests.factories import make_campaign, make_labeling_campaign, make_original, make_unit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# clientWidth, not innerWidth: a phone zooms out to show a page wider than its screen.
PAGE_WIDER_THAN_SCREEN = (
    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
)


def _answer_by_mouse(page, items, valid="Valid", label="Positive"):
    htmx_ready(page)  # each choice is saved by htmx
    for index in range(1, items + 1):
        item = page.locator(f"#item-{index}")
        item.get_by_label(valid, exact=True).check()
        item.get_by_label(label).check()
        page.locator(f"#status-{index}").get_by_text("Saved").wait_for()


def _round_heading(page):
    return page.get_by_role("heading", level=1).inner_text()


def test_a_worker_labels_a_whole_assignment(live_server, page):
    campaign = make_labeling_campaign(
        units=6, gold=2, training=1, rounds_per_assignment=3, gold_rounds_per_assignment=1
    )
    page.goto(live_server.url + reverse("join", kwargs={"token": join_token(campaign.id)}))
    page.get_by_role("button", name="Start").click()

    # Instructions first, then the training round.
    page.get_by_role("heading", name="Instructions").wait_for()
    page.get_by_role("link", name="Start").click()
    assert _round_heading(page) == "Training round"
    htmx_ready(page)
    submit = page.get_by_role("button", name="Submit round")
    submit.click()  # incomplete: the page says what is missing, nothing is sent
    page.get_by_text("3 edited versions still to answer").wait_for()
    page.get_by_role("alert").get_by_text("Edited versions 1, 2 and 3 still need").wait_for()
    assert Round.objects.filter(submitted_at__isnull=False).count() == 0
    _answer_by_mouse(page, 3)
    submit.click()
    page.get_by_role("heading", name="Training round: the expected answers").wait_for()
    assert page.get_by_text("Known answer 1 of training round.").is_visible()
    page.get_by_role("link", name="Continue").click()

    # Round 1 by mouse, with a reload halfway: the saved choices come back.
    assert _round_heading(page) == "Round 1 of 4"
    htmx_ready(page)
    page.locator("#item-1").get_by_label("Invalid", exact=True).check()
    page.locator("#item-1").get_by_label("Negative").check()
    page.locator("#status-1").get_by_text("Saved").wait_for()
    page.reload()
    assert page.locator("#item-1").get_by_label("Invalid", exact=True).is_checked()
    assert page.locator("#item-1").get_by_label("Negative").is_checked()
    page.locator("#item-2").get_by_label("Valid", exact=True).check()
    page.locator("#item-2").get_by_label("Positive").check()
    page.locator("#item-3").get_by_label("Valid", exact=True).check()
    page.locator("#item-3").get_by_label("Positive").check()
    page.get_by_role("button", name="Submit round").click()

    # The other rounds by keyboard only: V / X, a label number, J to the next, Enter.
    for number in (2, 3, 4):
        page.get_by_role("heading", name=f"Round {number} of 4").wait_for()
        for key in ("v", "2", "j", "v", "2", "j", "v", "2"):
            page.keyboard.press(key)
        page.locator("[data-remaining]", has_text="All answered").wait_for()
        page.keyboard.press("Enter")

    page.get_by_role("heading", name="Thank you, all rounds are submitted").wait_for()
    assignment = Assignment.objects.get()
    assert assignment.state == AssignmentState.SUBMITTED
    assert page.locator("#completion-code").inner_text() == assignment.completion_code
    judgments = Judgment.objects.filter(round__assignment=assignment)
    assert judgments.count() == 15 and not judgments.filter(label=None).exists()
    first_real = judgments.filter(round__position=2).order_by("id").first()
    assert (first_real.is_valid, first_real.label.value) == (False, "negative")
    assert page.console_errors == [], page.console_errors


def _key_hint(page) -> str:
    """What the current item's legend adds after its name (the keyboard hint, or none)."""
    return page.evaluate(
        """() => getComputedStyle(
            document.querySelector('.cf-item[aria-current="true"] legend'), '::after'
        ).content"""
    )


def _phone(browser, width: int, height: int):
    """A browser context the size of a phone, with a touch screen."""
    return browser.new_context(
        viewport={"width": width, "height": height}, is_mobile=True, has_touch=True
    )


def _first_round(page, live_server, campaign) -> None:
    """Join through the campaign's link, past the instructions, to the first round."""
    page.goto(live_server.url + reverse("join", kwargs={"token": join_token(campaign.id)}))
    page.get_by_role("button", name="Start").click()
    page.get_by_role("link", name="Start").click()
    page.get_by_role("button", name="Submit round").wait_for()


def test_the_round_page_fits_a_phone(live_server, browser):
    campaign = make_labeling_campaign(units=2, rounds_per_assignment=1)
    context = _phone(browser, 360, 740)
    page = context.new_page()
    _first_round(page, live_server, campaign)
    assert page.evaluate(PAGE_WIDER_THAN_SCREEN) <= 0
    # Every choice is a labelled radio button a screen reader can name.
    assert page.get_by_role("radiogroup").count() == 6
    assert page.get_by_role("radio", name="Valid", exact=True).count() == 3
    # A touch screen gets no hint about keys; a desktop browser on the same round does.
    page.locator("[data-item]").first.tap()
    assert _key_hint(page) == "none"
    desktop = browser.new_context().new_page()
    desktop.goto(page.url)
    desktop.locator("[data-item]").first.click()
    assert "keys answer this one" in _key_hint(desktop)
    desktop.context.close()
    context.close()


def _submits(page):
    """POSTs to a round's submit address from now on, as the browser sends them."""
    sent = []
    page.on(
        "request", lambda r: r.method == "POST" and r.url.endswith("/submit/") and sent.append(r)
    )
    return sent


def test_the_next_round_arrives_in_the_submit_answer_and_a_failed_send_says_so(live_server, page):
    campaign = make_labeling_campaign(
        units=6, training=0, rounds_per_assignment=3, gold_rounds_per_assignment=0
    )
    page.goto(live_server.url + reverse("join", kwargs={"token": join_token(campaign.id)}))
    page.get_by_role("button", name="Start").click()
    page.get_by_role("link", name="Start").click()
    assert _round_heading(page) == "Round 1 of 3"
    htmx_ready(page)
    first_url = page.url
    loads = []
    page.on("load", lambda _: loads.append(page.url))
    submits = _submits(page)

    # Incomplete: htmx asks worker.js first, and nothing is sent.
    _answer_by_mouse(page, 2)
    page.keyboard.press("Enter")
    page.locator("#item-3.cf-missing").wait_for()
    assert submits == []

    # Complete: one request, no page load; the address, title and focus follow.
    page.locator("#item-3").get_by_label("Valid", exact=True).check()
    page.locator("#item-3").get_by_label("Negative").check()
    page.locator("#status-3").get_by_text("Saved").wait_for()
    page.get_by_role("button", name="Submit round").click()
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    assert len(submits) == 1 and loads == []
    assert page.url == first_url.replace("/rounds/1/", "/rounds/2/")
    assert page.title().startswith("Round 2 of 3")
    assert page.evaluate("document.activeElement.id") == "round-title"
    assert Round.objects.get(position=2).served_at is not None
    assert page.console_errors == [], page.console_errors

    # The swapped-in round answers the keyboard once per key press, like a loaded one.
    page.locator("#item-1 input").first.focus()
    page.keyboard.press("x")
    page.keyboard.press("1")
    page.locator("#status-1").get_by_text("Saved").wait_for()
    assert page.locator("#item-1").get_by_label("Invalid", exact=True).is_checked()
    assert page.locator("#item-2 input:checked").count() == 0
    page.reload()  # the pushed address shows the same round, with its answers
    assert _round_heading(page) == "Round 2 of 3"
    assert page.locator("#item-1").get_by_label("Invalid", exact=True).is_checked()

    # The server cannot be reached: the page says so and keeps the answers.
    _answer_by_mouse(page, 3)
    page.route("**/rounds/2/submit/", lambda route: route.abort())
    page.get_by_role("button", name="Submit round").click()
    page.get_by_text("Not sent: the server could not be reached.").wait_for()
    assert Round.objects.get(position=2).submitted_at is None
    assert page.locator("#item-3").get_by_label("Valid", exact=True).is_checked()
    page.unroute("**/rounds/2/submit/")
    page.get_by_role("button", name="Submit round").click()
    page.get_by_role("heading", name="Round 3 of 3").wait_for()
    assert Round.objects.get(position=2).submitted_at is not None


# ---------------------------------------------------------------------------------------
# Every answer lands on the counterfactual the worker sees marked (keyboard, mouse, mixed).

SHOWN_TEXTS = """els => els.map(el => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll("del").forEach(removed => removed.remove());
    return copy.textContent.split(/\\s+/).filter(Boolean).join(" ");
})"""


def _shown(page) -> list[str]:
    """The edited texts on the page, in the order the worker sees them."""
    return page.eval_on_selector_all("[data-item] .cf-text", SHOWN_TEXTS)


def _stored(position: int) -> dict[str, tuple[bool | None, str | None]]:
    """Edited text -> (valid, label) as stored for the round at `position`."""
    judgments = Judgment.objects.filter(round__position=position).select_related(
        "candidate", "label"
    )
    return {
        " ".join(j.candidate.text.split()): (j.is_valid, j.label.value if j.label else None)
        for j in judgments
    }


def _assert_landed(page, position: int, expected: dict[int, tuple[bool, str]]) -> None:
    shown = _shown(page)
    assert len(set(shown)) == len(shown) == 3  # distinct texts, so each names its judgment
    stored = _stored(position)
    for index, answer in expected.items():
        assert stored[shown[index - 1]] == answer, f"edited version {index}"


def _current(page) -> str:
    return page.locator('[data-item][aria-current="true"]').get_attribute("id")


def _open_first_round(live_server, page, rounds=3):
    campaign = make_labeling_campaign(
        units=6, training=0, rounds_per_assignment=rounds, gold_rounds_per_assignment=0
    )
    page.goto(live_server.url + reverse("join", kwargs={"token": join_token(campaign.id)}))
    page.get_by_role("button", name="Start").click()
    page.get_by_role("link", name="Start").click()
    page.get_by_role("heading", name=f"Round 1 of {rounds}").wait_for()
    htmx_ready(page)


def _saved(page, *indices):
    for index in indices:
        page.locator(f"#status-{index}").get_by_text("Saved").wait_for()


def _label_saved(*, position: int, expected: str, within_seconds: float) -> str | None:
    """The label stored for the round at `position`: `expected` as soon as it is stored,
    else what is stored when `within_seconds` have passed (None for none)."""
    deadline = time.monotonic() + within_seconds
    while True:
        judgment = (
            Judgment.objects.filter(round__position=position, label__isnull=False)
            .select_related("label")
            .first()
        )
        stored = judgment.label.value if judgment else None
        if stored == expected or time.monotonic() > deadline:
            return stored
        time.sleep(0.1)


def test_keyboard_mouse_and_mixed_answers_land_on_the_item_shown(live_server, page):
    _open_first_round(live_server, page)
    keys = page.keyboard

    # Keyboard only. Answering an item leaves the marker where it is: J moves it, so
    # "v 1 j" then a label key answers the second item, never the third.
    assert _current(page) == "item-1"
    for key in ("v", "1", "j", "x", "2", "j", "v", "2", "k", "1"):
        keys.press(key)
    assert _current(page) == "item-2"
    _saved(page, 1, 2, 3)
    page.locator("[data-remaining]", has_text="All answered").wait_for()
    # The campaign's labels are Negative (key 1) and Positive (key 2).
    _assert_landed(page, 1, {1: (True, "negative"), 2: (False, "negative"), 3: (True, "positive")})
    keys.press("Enter")

    # Mouse only, out of order.
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    for index, valid, label in (
        (3, "Invalid", "Positive"),
        (1, "Valid", "Negative"),
        (2, "Valid", "Positive"),
    ):
        page.locator(f"#item-{index}").get_by_label(valid, exact=True).check()
        page.locator(f"#item-{index}").get_by_label(label).check()
        assert _current(page) == f"item-{index}"
    _saved(page, 1, 2, 3)
    _assert_landed(page, 2, {1: (True, "negative"), 2: (True, "positive"), 3: (False, "positive")})
    page.get_by_role("button", name="Submit round").click()

    # Mixed: a click marks its item, keys follow it; a click on the text (not a choice)
    # moves the marker too.
    page.get_by_role("heading", name="Round 3 of 3").wait_for()
    page.locator("#item-2").get_by_label("Valid", exact=True).check()
    keys.press("1")
    keys.press("j")
    keys.press("x")
    keys.press("2")
    page.locator("#item-1 .cf-text").click()
    assert _current(page) == "item-1"
    keys.press("v")
    keys.press("2")
    _saved(page, 1, 2, 3)
    _assert_landed(page, 3, {1: (True, "positive"), 2: (True, "negative"), 3: (False, "positive")})
    keys.press("Enter")
    page.get_by_role("heading", name="Thank you, all rounds are submitted").wait_for()
    assert page.console_errors == [], page.console_errors


def test_back_and_forward_in_a_round_land_on_a_working_page(live_server, page):
    _open_first_round(live_server, page)
    round_1 = page.url
    _answer_by_mouse(page, 3)
    page.get_by_role("button", name="Submit round").click()
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    page.locator("#item-1").get_by_label("Invalid", exact=True).check()
    page.locator("#item-1").get_by_label("Positive").check()
    _saved(page, 1)

    # Back to the submitted round: the server shows where the worker is, with the
    # answers saved so far, at that round's address, and the page answers keys.
    page.go_back()
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    page.wait_for_url(round_1.replace("/rounds/1/", "/rounds/2/"))
    assert page.locator("#item-1").get_by_label("Invalid", exact=True).is_checked()
    assert _current(page) == "item-2"  # the first one still to answer
    page.keyboard.press("k")
    page.keyboard.press("1")
    assert page.locator("#item-1").get_by_label("Negative").is_checked()
    shown = _shown(page)[0]
    for _ in range(50):  # the click's save is on its way
        if _stored(2).get(shown) == (False, "negative"):
            break
        page.wait_for_timeout(100)
    assert _stored(2)[shown] == (False, "negative")

    # Back again, to the assignment's first address (a whole page): once work has begun,
    # it leads back to the round; so does Forward.
    page.go_back()
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    page.go_forward()
    page.get_by_role("heading", name="Round 2 of 3").wait_for()
    _answer_by_mouse(page, 3)
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Round 3 of 3").wait_for()
    assert Round.objects.get(position=2).submitted_at is not None
    assert page.console_errors == [], page.console_errors


def test_a_worker_resumes_on_a_phone_with_the_code_from_their_round(live_server, browser):
    campaign = make_labeling_campaign(units=2, rounds_per_assignment=1)
    join_url = live_server.url + reverse("join", kwargs={"token": join_token(campaign.id)})
    laptop = browser.new_context()
    page = laptop.new_page()
    page.goto(join_url)
    page.get_by_role("button", name="Start").click()
    page.get_by_role("link", name="Start").click()
    page.get_by_role("button", name="Submit round").wait_for()
    code = page.locator(".resume-code strong").inner_text()
    laptop.close()

    phone = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True)
    page = phone.new_page()
    page.goto(join_url)
    assert page.evaluate(PAGE_WIDER_THAN_SCREEN) <= 0
    box = page.get_by_label("Resume code")
    box.fill("12-WRONGCODE2")
    page.get_by_role("button", name="Resume").click()
    page.get_by_role("alert").get_by_text("No task of yours has this code here").wait_for()
    assert page.get_by_label("Resume code").input_value() == "12-WRONGCODE2"  # kept to fix
    assert page.evaluate(PAGE_WIDER_THAN_SCREEN) <= 0
    page.get_by_label("Resume code").fill(code.lower())
    page.get_by_role("button", name="Resume").click()
    page.get_by_role("heading", name="Training round").wait_for()
    assert Assignment.objects.count() == 1
    phone.close()


def _checked(page) -> list[str]:
    return page.eval_on_selector_all(
        "[data-item] input:checked", "els => els.map(el => el.name + '=' + el.value)"
    )


@pytest.mark.parametrize("answer", ["arrives", "fails"])
def test_keys_pressed_while_a_round_is_sent_change_nothing(live_server, page, answer):
    """A fast worker presses Enter, then answer keys (or taps) before the next round has
    arrived. Those change nothing in the round being sent: were its submit to fail, they would
    have changed answers the worker had already sent. The next round arrives unanswered."""
    _open_first_round(live_server, page)
    for key in ("v", "1", "j", "v", "1", "j", "v", "1"):
        page.keyboard.press(key)
    _saved(page, 1, 2, 3)
    sent = _checked(page)
    held = []
    page.route("**/rounds/1/submit/", lambda route: held.append(route))
    saves = []
    page.on("request", lambda request: "/items/" in request.url and saves.append(request.url))

    page.keyboard.press("Enter")
    while not held:
        page.wait_for_timeout(20)
    for key in ("x", "2", "k", "x", "2", "Enter"):
        page.keyboard.press(key)
    box = page.locator("#item-3").get_by_label("Invalid", exact=True).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # a tap too
    assert _checked(page) == sent

    if answer == "fails":
        held[0].abort()
        page.get_by_text("Not sent: the server could not be reached.").wait_for()
        assert _checked(page) == sent
    else:
        held[0].continue_()
        page.get_by_role("heading", name="Round 2 of 3").wait_for()
        assert page.locator("[data-item] input:checked").count() == 0
    page.wait_for_timeout(300)  # anything queued behind the submit would be sent by now
    assert saves == []
    assert set(_stored(1).values()) == {(True, "negative")}
    if answer == "arrives":
        assert page.console_errors == [], page.console_errors


def _ten_label_campaign(text: str):
    """An open custom campaign of ten labels, one unit on an original reading `text`."""
    labels = [{"value": f"l{n}", "display_name": f"Label number {n}"} for n in range(1, 11)]
    campaign = make_campaign(
        task_type="custom",
        labels=labels,
        settings={
            "rounds_per_assignment": 1,
            "gold_rounds_per_assignment": 0,
            "training_rounds": 0,
        },
    )
    make_unit(make_original(campaign, text=text))
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.LABELING)
    return campaign


def test_the_tenth_label_is_key_0_and_no_key_picks_another(live_server, page):
    """The page showed "10" beside the tenth label, and pressing 1 then 0 saved the first."""
    campaign = _ten_label_campaign("The plot is fine.")
    _first_round(page, live_server, campaign)
    htmx_ready(page)
    hints = page.locator("#item-1 kbd").all_inner_texts()
    assert hints == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0"]
    # A corner of the item, not its middle, where a click could land on a label's radio.
    page.locator("[data-item]").first.click(position={"x": 4, "y": 4})
    page.keyboard.press("v")
    page.keyboard.press("0")
    _saved(page, 1)
    assert page.locator("#item-1 input[name=label-1]:checked").get_attribute("value") == "l10"
    # "Saved" may still show from the save of "v": wait for the label's save to land.
    assert _label_saved(position=1, expected="l10", within_seconds=10) == "l10"


def test_a_long_word_in_the_reference_stays_on_a_phones_screen(live_server, browser):
    campaign = _ten_label_campaign("See " + "https://example.org/" + "a" * 60 + " for the plot.")
    context = _phone(browser, 390, 844)
    page = context.new_page()
    _first_round(page, live_server, campaign)
    assert page.evaluate(PAGE_WIDER_THAN_SCREEN) <= 0
    context.close()
