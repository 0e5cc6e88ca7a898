"""`htmx_ready` waits under the site's Content Security Policy (no 'unsafe-eval')."""

import pytest

from tests.browser.conftest import htmx_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_htmx_ready_waits_for_htmx_without_evaluating_strings(live_server, page):
    page.goto(f"{live_server.url}/accounts/login/")
    htmx_ready(page)
    # As on a page whose deferred scripts have not run yet: htmx comes 0.5 s later, so
    # the first check fails and the wait has to poll.
    page.evaluate(
        "() => { const loaded = window.htmx; window.htmx = undefined;"
        " setTimeout(() => { window.htmx = loaded; }, 500); }"
    )
    assert page.evaluate("() => window.htmx === undefined")
    htmx_ready(page)
    assert page.evaluate("() => window.htmx !== undefined")
    assert page.console_errors == []
