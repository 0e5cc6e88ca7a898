"""A real Chromium (Debian's package) driven by Playwright against the live test server."""

import os
import shutil

import pytest

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = os.environ.get("CFANNOTATE_CHROMIUM") or shutil.which("chromium")
    if not path:
        pytest.fail(
            "Browser tests need Debian's chromium: run `make browser` "
            "(apt-get install -y chromium)."
        )
    return path


def log_in(page, base_url: str, username: str) -> None:
    """Sign in through the login page, as a researcher does (a `make_user` user)."""
    from tests.factories import TEST_PASSWORD

    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", TEST_PASSWORD)
    page.click("button[type=submit]")


def htmx_ready(page) -> None:
    """Wait until the page (or frame) a click led to has run its scripts, htmx included.

    A click that navigates does not wait for the new page to load; a control that
    htmx or worker.js drives does nothing when used before its deferred script has
    run, so call this once the new page's content is there.

    The predicate is a function, not an expression: Playwright polls an expression by
    evaluating a string in the page, which the site's CSP (no 'unsafe-eval') refuses as
    soon as the first check comes out false.
    """
    page.wait_for_function("() => document.readyState === 'complete' && window.htmx !== undefined")


@pytest.fixture(scope="session")
def browser():
    # Playwright's sync API runs an event loop in this thread; the ORM calls that
    # the tests make between page actions are still plain synchronous code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    yield page
    context.close()


@pytest.fixture
def prolific(settings):
    """The fake Prolific on loopback, with the settings that point the site at it."""
    from tests.crowd import fake_prolific

    settings.CROWD_PUBLIC_URL = "https://labels.example.org"
    with fake_prolific.served(settings) as fake:
        yield fake
