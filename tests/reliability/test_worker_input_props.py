"""Property tests: no token, form or method a worker's browser can send makes a worker page fail.

Workers have no account, so their pages are the most exposed part of the site. For
arbitrary tokens (garbage, truncated, tampered, another assignment's), arbitrary
form fields (unknown labels, huge strings, NUL bytes, repeated or missing fields),
arbitrary round positions and item indices, and every HTTP method, a worker URL
answers either normally or with a 4xx page that says why; a refused request leaves
the database as it was.
"""

import re
from urllib.parse import quote, urlencode

import pytest
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cfannotate.core.worker_tokens import (
    entry_token,
    form_token,
    join_token,
    link_token,
    worker_token,
)
from cfannotate.crowd.models import InvitationLink, Platform, Publication, Worker
from cfannotate.labeling.assignments import assignment_start
from cfannotate.labeling.models import Assignment, Judgment, Round
from cfannotate.labeling.rounds import current_round, round_serve
from tests.factories import make_labeling_campaign, make_worker

PROPERTY_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# A refusal says why in words: an alert, or for "no work right now" (no fault of the
# worker's) a status line.
ALERT = re.compile(rb'role="(?:alert|status)"[^>]*>\s*(?:<p>)?\s*([^<\s][^<]*)')
REFUSALS = {400, 403, 404, 405, 409, 410}

# Text a browser can put in a URL or a form: any code point but lone surrogates.
any_text = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60)
huge_text = st.builds(
    lambda chunk, times: chunk * times, any_text.filter(bool), st.integers(1, 20_000)
)
field_values = st.one_of(
    st.sampled_from(["valid", "invalid", "1", "0", "true", " TRUE ", "", "positive", "negative"]),
    any_text,
    huge_text,
    st.just("positive\x00"),
)
indices = st.one_of(st.integers(0, 12), st.integers(2**31 - 2, 2**70))
field_names = st.one_of(
    st.builds(lambda kind, index: f"{kind}-{index}", st.sampled_from(["valid", "label"]), indices),
    any_text,
)
# The served round is position 1 and its items are 1-3: aim there often, elsewhere too.
positions = st.one_of(st.just(1), st.integers(0, 8), st.integers(2**31 - 2, 2**70))
item_indices = st.one_of(st.integers(1, 3), indices)
good_values = st.sampled_from(["valid", "invalid", "positive", "negative"])


@st.composite
def answer_fields(draw, index: int | None = None, max_size: int = 8) -> list[tuple[str, str]]:
    """Form fields, many of them plausible answers for the round's items, some garbage."""
    plausible = st.tuples(
        st.builds(
            lambda kind, i: f"{kind}-{i}",
            st.sampled_from(["valid", "label"]),
            st.just(index) if index is not None else st.integers(1, 3),
        ),
        good_values,
    )
    return draw(
        st.lists(st.one_of(plausible, st.tuples(field_names, field_values)), max_size=max_size)
    )


@pytest.fixture
def world(db):
    """A worker on the first round (served) of an assignment, and a second worker's assignment."""
    campaign = make_labeling_campaign(
        units=4, gold=1, training=1, rounds_per_assignment=3, gold_rounds_per_assignment=1
    )
    assignment = assignment_start(campaign=campaign, worker=make_worker())
    round_serve(assignment=assignment, position=current_round(assignment).position)
    other_campaign = make_labeling_campaign(units=2, gold=1, training=0, rounds_per_assignment=1)
    other = assignment_start(campaign=other_campaign, worker=make_worker())
    publication = Publication.objects.create(
        campaign=campaign, platform=Platform.MTURK, external_id="HIT-TYPE", options={}
    )
    link = InvitationLink.objects.create(campaign=campaign, name="Lab", quota=1)
    return {
        "assignment": assignment,
        "token": worker_token(assignment),
        "form_token": form_token(assignment.token_nonce),
        "other_token": worker_token(other),
        "other_form_token": form_token(other.token_nonce),
        "join_token": join_token(campaign.id),
        "entry_token": entry_token(publication.id),
        "link_token": link_token(link.id),
    }


def snapshot() -> tuple:
    """Everything a worker request may write, in a comparable form."""
    return (
        list(Judgment.objects.order_by("id").values_list("id", "is_valid", "label_id")),
        list(Round.objects.order_by("id").values_list("id", "served_at", "submitted_at")),
        list(
            Assignment.objects.order_by("id").values_list(
                "id", "state", "token_nonce", "submitted_at", "completion_code"
            )
        ),
        Worker.objects.count(),
    )


def assert_refused_with_message(response) -> None:
    assert response.status_code in REFUSALS, (response.status_code, response.content[:300])
    match = ALERT.search(response.content)
    assert match and match.group(1).strip(), response.content[:500]


def _tampered(token: str, how: int, where: int, char: str) -> str:
    where %= len(token)
    if how == 0:  # truncated
        return token[:where]
    if how == 1:  # one character replaced
        replaced = token[:where] + char + token[where + 1 :]
        return replaced if replaced != token else token + char
    return token[:where] + char + token[where:]  # one character inserted


url_safe_tokens = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="/"), min_size=1
)
worker_paths = st.sampled_from(
    ["", "instructions/", "rounds/1/", "rounds/1/items/1/", "rounds/1/submit/", "done/"]
)


@PROPERTY_SETTINGS
@given(token=url_safe_tokens, path=worker_paths, method=st.sampled_from(["get", "post"]))
def test_garbage_tokens_are_refused_with_a_message(world, token, path, method):
    before = snapshot()
    response = getattr(Client(), method)(f"/w/{quote(token, safe='')}/{path}")
    assert_refused_with_message(response)
    assert response.status_code == 403
    assert snapshot() == before


@PROPERTY_SETTINGS
@given(
    how=st.integers(0, 2),
    where=st.integers(0, 10_000),
    char=st.characters(exclude_categories=["Cs"], exclude_characters="/"),
    path=worker_paths,
)
def test_tampered_tokens_are_refused(world, how, where, char, path):
    token = _tampered(world["token"], how, where, char)
    before = snapshot()
    response = Client().post(
        f"/w/{quote(token, safe='')}/{path}", {"form_token": world["form_token"], "valid-1": "1"}
    )
    if token == "":
        assert response.status_code == 404
        return
    assert_refused_with_message(response)
    assert snapshot() == before


@PROPERTY_SETTINGS
@given(form_token_kind=st.sampled_from(["missing", "other", "garbage"]), garbage=any_text)
def test_writes_need_this_assignments_form_token(world, form_token_kind, garbage):
    data = {"valid-1": "valid", "label-1": "positive"}
    if form_token_kind == "other":
        data["form_token"] = world["other_form_token"]
    elif form_token_kind == "garbage":
        data["form_token"] = garbage
    before = snapshot()
    for path in ("rounds/1/items/1/", "rounds/1/submit/"):
        response = Client().post(f"/w/{world['token']}/{path}", data)
        assert_refused_with_message(response)
        assert response.status_code == 403
    # Another worker's token with this worker's form token is refused the same way.
    response = Client().post(
        f"/w/{world['other_token']}/rounds/1/items/1/", {"form_token": world["form_token"]}
    )
    assert_refused_with_message(response)
    assert snapshot() == before


def _post_pairs(url: str, pairs: list[tuple[str, str]], *, htmx: bool):
    headers = {"HX-Request": "true"} if htmx else {}
    return Client().post(
        url, urlencode(pairs), content_type="application/x-www-form-urlencoded", headers=headers
    )


def _check_write(world, response, before) -> None:
    """A write either went through (2xx/3xx) or was refused with a message and wrote nothing."""
    assert response.status_code < 500, response.content[:500]
    event(f"status {response.status_code}")  # --hypothesis-show-statistics shows the mix
    if response.status_code < 400:
        return
    assert_refused_with_message(response)
    after = snapshot()
    if b"Answer every counterfactual" in response.content:
        # A round submitted with answers missing keeps the answers it did have.
        assert after[1:] == before[1:]
        assert [row[0] for row in after[0]] == [row[0] for row in before[0]]
    else:
        assert after == before


@PROPERTY_SETTINGS
@given(position=positions, index=item_indices, data=st.data(), htmx=st.booleans())
def test_item_save_with_arbitrary_fields(world, position, index, data, htmx):
    pairs = data.draw(answer_fields(index))
    pairs = [("form_token", world["form_token"]), *pairs]
    before = snapshot()
    url = f"/w/{world['token']}/rounds/{position}/items/{index}/"
    _check_write(world, _post_pairs(url, pairs, htmx=htmx), before)


@PROPERTY_SETTINGS
@given(
    position=positions,
    pairs=answer_fields(max_size=12),
    htmx=st.booleans(),
)
def test_round_submit_with_arbitrary_fields(world, position, pairs, htmx):
    pairs = [("form_token", world["form_token"]), *pairs]
    before = snapshot()
    url = f"/w/{world['token']}/rounds/{position}/submit/"
    _check_write(world, _post_pairs(url, pairs, htmx=htmx), before)


@PROPERTY_SETTINGS
@given(
    path=worker_paths,
    method=st.sampled_from(["get", "post", "put", "patch", "delete", "options", "head"]),
    with_form_token=st.booleans(),
)
def test_every_method_on_every_worker_url(world, path, method, with_form_token):
    data = urlencode({"form_token": world["form_token"]} if with_form_token else {})
    before = snapshot()
    response = Client().generic(
        method.upper(),
        f"/w/{world['token']}/{path}",
        data,
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code < 500
    if response.status_code >= 400 and method != "head":
        assert_refused_with_message(response)
        assert snapshot() == before


join_paths = st.sampled_from(["{join}", "link/{link}", "mturk/{entry}", "prolific/{entry}"])


@PROPERTY_SETTINGS
@given(
    path=join_paths,
    tokens=st.sampled_from(["real", "garbage"]),
    garbage=url_safe_tokens,
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
    query=st.dictionaries(
        st.sampled_from(["worker", "workerId", "assignmentId", "hitId", "turkSubmitTo", "x"]),
        field_values,
        max_size=4,
    ),
    # A server hands Django headers as Latin-1, so that is all a cookie can hold.
    cookie=st.one_of(st.none(), st.text(st.characters(max_codepoint=255), max_size=40)),
)
def test_join_and_entry_links_with_arbitrary_input(
    world, path, tokens, garbage, method, query, cookie
):
    quoted = quote(garbage, safe="")
    url = "/join/" + path.format(
        join=world["join_token"] if tokens == "real" else quoted,
        entry=world["entry_token"] if tokens == "real" else quoted,
        link=world["link_token"] if tokens == "real" else quoted,
    )
    client = Client()
    if cookie is not None:
        client.cookies[f"cfannotate_worker_{world['assignment'].campaign_id}"] = cookie
    before = snapshot()
    response = client.generic(method, f"{url}/?{urlencode(query)}")
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        assert_refused_with_message(response)
        assert snapshot() == before


@PROPERTY_SETTINGS
@given(token=st.text(alphabet="/abc.:", min_size=1, max_size=8))
def test_tokens_with_slashes_never_fail(world, token):
    response = Client().get(f"/w/{token}/")
    assert response.status_code in {301, 403, 404}


# --- Regressions: the examples the properties above found -------------------------------------


def test_a_non_ascii_form_token_is_refused_not_a_crash(world):
    # hmac.compare_digest raised TypeError on str with non-ASCII characters: a 500.
    response = Client().post(
        f"/w/{world['token']}/rounds/1/items/1/", {"form_token": "é", "valid-1": "valid"}
    )
    assert_refused_with_message(response)
    assert response.status_code == 403


def test_a_malformed_answer_for_a_round_that_does_not_exist_is_a_400(world):
    # The view re-rendered the round for any field error and fetched a missing round: a 500.
    before = snapshot()
    response = Client().post(
        f"/w/{world['token']}/rounds/7/submit/",
        {"form_token": world["form_token"], "valid-1": "positive\x00"},
    )
    assert_refused_with_message(response)
    assert response.status_code == 400
    assert b"valid-1 must be valid or invalid" in response.content
    assert snapshot() == before


@pytest.mark.parametrize(
    ("method", "path"), [("PUT", "rounds/1/submit/"), ("DELETE", ""), ("PATCH", "done/")]
)
def test_a_wrong_method_on_a_worker_page_says_so(world, method, path):
    # require_GET/require_POST answered an empty 405.
    response = Client().generic(method, f"/w/{world['token']}/{path}")
    assert response.status_code == 405
    assert_refused_with_message(response)


@pytest.mark.parametrize("path", ["{join}/", "link/{link}/", "mturk/{entry}/"])
def test_a_wrong_method_on_a_join_link_says_so(world, path):
    url = "/join/" + path.format(
        join=world["join_token"], link=world["link_token"], entry=world["entry_token"]
    )
    response = Client().generic("PUT", url)
    assert response.status_code == 405
    assert response["Allow"]
    assert_refused_with_message(response)


def test_a_refused_join_registers_no_worker(db):
    # The link's worker was registered before the entry found no work, and stayed behind.
    campaign = make_labeling_campaign(units=1, gold=1, training=0, rounds_per_assignment=1)
    url = f"/join/{join_token(campaign.id)}/"
    statuses = []
    while 409 not in statuses and len(statuses) < 10:  # new browsers until the work is taken
        workers = Worker.objects.count()
        response = Client().post(url)
        statuses.append(response.status_code)
    assert statuses[0] == 302
    assert statuses[-1] == 409
    assert_refused_with_message(response)
    assert Worker.objects.count() == workers
