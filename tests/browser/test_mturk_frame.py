"""A whole MTurk assignment in a real browser, framed the way MTurk frames an ExternalQuestion.

A local "MTurk" on another site (127.0.0.1, while the live server is localhost) serves a
page with our entry URL in an iframe and a fake `/mturk/externalSubmit` that records what
it receives. The worker pages must load inside that frame without any cookie, and the
completion page must post the result there once our server has stored everything.
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from cfannotate.crowd.models import MTurkHit, Platform, Publication
from cfannotate.labeling.models import Assignment, AssignmentState, Judgment
from tests.browser.conftest import htmx_ready
from tests.crowd.conftest import entry_path, mturk_params
from tests.factories import make_labeling_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class FakeMTurk:
    """The framing page and the externalSubmit endpoint, on their own origin."""

    def __init__(self):
        self.task_url = ""
        self.submissions: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, html: str):
                data = html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(
                    "<!doctype html><title>Fake MTurk</title><h1>HIT</h1>"
                    f'<iframe id="task" src="{fake.task_url}" width="900" height="900"></iframe>'
                )

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                fake.submissions.append({"path": self.path, **{k: v[0] for k, v in form.items()}})
                self._send("<!doctype html><p id='received'>HIT submitted to fake MTurk</p>")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_mturk(settings):
    fake = FakeMTurk()
    settings.CROWD_MTURK_FRAME_ORIGINS = [fake.origin]
    settings.CROWD_MTURK_SUBMIT_ORIGINS = {"live": fake.origin, "sandbox": fake.origin}
    yield fake
    fake.close()


def _publication():
    campaign = make_labeling_campaign(
        units=3, gold=0, training=1, rounds_per_assignment=1, gold_rounds_per_assignment=0
    )
    publication = Publication.objects.create(
        campaign=campaign, platform=Platform.MTURK, sandbox=True, external_id="HT", options={}
    )
    MTurkHit.objects.create(publication=publication, hit_id="HIT1", max_assignments=9)
    return publication


def _answer(frame, items=3):
    htmx_ready(frame.owner.element_handle().content_frame())  # choices are saved by htmx
    for index in range(1, items + 1):
        item = frame.locator(f"#item-{index}")
        item.get_by_label("Valid", exact=True).check()
        item.get_by_label("Positive").check()
        frame.locator(f"#status-{index}").get_by_text("Saved").wait_for()
    frame.get_by_role("button", name="Submit round").click()


def _do_the_hit(live_server, page, fake_mturk):
    """The whole HIT in MTurk's frame, up to the completion page; returns the frame."""
    publication = _publication()
    path = entry_path(publication, **mturk_params(submit=fake_mturk.origin))
    fake_mturk.task_url = live_server.url + path
    assert "localhost" in live_server.url  # another site than the fake MTurk (127.0.0.1)
    page.clock.install()  # time runs as usual until the test moves it on
    page.goto(fake_mturk.origin + "/hit")
    frame = page.frame_locator("#task")

    frame.get_by_role("heading", name="Instructions").wait_for()
    frame.get_by_role("link", name="Start").click()
    frame.get_by_role("heading", name="Training round").wait_for()
    _answer(frame)
    frame.get_by_role("link", name="Continue").click()
    frame.get_by_role("heading", name="Round 1 of 1").wait_for()
    _answer(frame)
    frame.get_by_role("heading", name="Thank you, all rounds are submitted").wait_for()
    return frame


def test_a_worker_does_a_hit_inside_mturks_frame(live_server, browser, fake_mturk):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # The completion page shows only once everything is stored, then hands the HIT back.
    frame = _do_the_hit(live_server, page, fake_mturk)
    assignment = Assignment.objects.get()
    assert assignment.state == AssignmentState.SUBMITTED
    assert Judgment.objects.filter(round__assignment=assignment, label=None).count() == 0
    frame.get_by_text("Sending your work to the platform in 10 seconds.").wait_for()
    page.clock.fast_forward("00:11")
    frame.locator("#received").wait_for(timeout=10_000)
    assert fake_mturk.submissions == [
        {
            "path": "/mturk/externalSubmit",
            "assignmentId": "ASSIGN1",
            "completion_code": assignment.completion_code,
        }
    ]
    # Nothing relied on a cookie: none was ever set for our site.
    assert [c for c in context.cookies() if "localhost" in c["domain"]] == []
    assert errors == []
    context.close()


def test_a_worker_may_stay_on_the_completion_page_and_hand_back_by_hand(
    live_server, browser, fake_mturk
):
    """The hand-back is timed (WCAG 2.2.1): the worker can turn it off and read on."""
    context = browser.new_context()
    page = context.new_page()
    frame = _do_the_hit(live_server, page, fake_mturk)
    frame.get_by_role("button", name="Stay on this page").click()
    frame.get_by_text("You stay on this page").wait_for()
    page.clock.fast_forward("01:00")
    page.wait_for_timeout(300)
    assert fake_mturk.submissions == []
    assert frame.get_by_role("button", name="Stay on this page").is_hidden()
    submit = frame.get_by_role("button", name="Submit the HIT")
    assert submit.evaluate("button => button === document.activeElement")
    submit.click()
    frame.locator("#received").wait_for(timeout=10_000)
    assert len(fake_mturk.submissions) == 1
    context.close()


def test_a_site_that_is_not_mturk_cannot_frame_the_task(live_server, browser, fake_mturk, settings):
    publication = _publication()
    fake_mturk.task_url = live_server.url + entry_path(
        publication, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="HIT1"
    )
    context = browser.new_context()
    page = context.new_page()
    # Allowed: MTurk's preview shows in the frame, and claims nothing.
    page.goto(fake_mturk.origin + "/hit")
    page.frame_locator("#task").get_by_text("Accept the HIT to start").wait_for()
    # The same page framed by an origin that is not in the list: the browser refuses it.
    settings.CROWD_MTURK_FRAME_ORIGINS = ["https://www.mturk.com"]
    page.goto(fake_mturk.origin + "/hit")
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)
    task = page.frames[1]
    assert task.url.startswith("chrome-error://"), task.url
    assert not Assignment.objects.exists()
    context.close()
