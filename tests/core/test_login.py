"""Failed logins are limited per username and per address; past the limit, 429 and a reason."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.usefixtures("rate_limits")  # 3 failures per 15 minutes

LOGIN = "/accounts/login/"
ADDRESS = "198.51.100.7"


def _login(client, username, password, address=ADDRESS):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def _fail(client, username, times, address=ADDRESS):
    for _ in range(times):
        response = _login(client, username, "wrong", address)
        assert response.status_code == 200
        assert "Please enter a correct username and password" in response.content.decode()


def test_past_the_limit_the_login_page_answers_429_and_checks_no_password(client, researcher):
    _fail(client, "alice", 3)
    refused = _login(client, "alice", "pw-for-tests")  # the right password, too late
    assert refused.status_code == 429
    wait = int(refused["Retry-After"])
    assert 14 * 60 < wait <= 15 * 60
    html = refused.content.decode()
    assert (
        "Too many failed logins for this username or from this address; "
        "try again in 15 minutes." in html
    )
    assert 'value="alice"' in html and 'role="alert"' in html
    assert "_auth_user_id" not in client.session
    # The page itself still loads.
    assert client.get(LOGIN).status_code == 200


def test_a_successful_login_works_and_forgets_the_username_failures(client, researcher):
    _fail(client, "alice", 2)
    response = _login(client, "alice", "pw-for-tests")
    assert response.status_code == 302 and response["Location"] == reverse("home")
    assert client.session["_auth_user_id"] == str(researcher.pk)
    client.logout()
    # Two more failures from elsewhere: the username starts again from zero.
    _fail(client, "alice", 2, address="192.0.2.1")
    assert _login(client, "alice", "pw-for-tests", address="192.0.2.1").status_code == 302


def test_the_limit_holds_per_username_and_per_address(client, researcher, other_researcher):
    _fail(client, "alice", 3)
    # The same username from another address is refused (spread guessing) ...
    assert _login(client, "alice", "wrong", address="192.0.2.1").status_code == 429
    assert _login(client, " ALICE ", "wrong", address="192.0.2.1").status_code == 429
    # ... and so is another username from the same address (one guesser, many accounts).
    assert _login(client, "bob", "pw-for-tests").status_code == 429
    # Anyone else logs in as usual.
    assert _login(client, "bob", "pw-for-tests", address="192.0.2.1").status_code == 302


def test_empty_and_unknown_usernames_count_as_failures(client, db):
    assert _login(client, "", "").status_code == 200
    _fail(client, "nobody-here", 2)
    assert _login(client, "carol", "anything").status_code == 429  # three from this address
    _fail(client, "nobody-here", 1, address="192.0.2.9")
    assert _login(client, "nobody-here", "wrong", address="192.0.2.9").status_code == 429


def test_the_admin_signs_in_through_the_limited_login_page(client, db):
    response = client.get("/admin/login/?next=/admin/campaigns/")
    assert response.status_code == 302
    assert response["Location"] == f"{LOGIN}?next=/admin/campaigns/"
    posted = client.post("/admin/login/", {"username": "alice", "password": "wrong"})
    assert posted.status_code == 302 and posted["Location"] == f"{LOGIN}?next=/admin/"
