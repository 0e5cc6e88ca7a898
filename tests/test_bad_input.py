"""No route answers bad input with a server error.

The test walks the site's URL resolver (every route but the admin's and sign-in/out) and
sends each one, as the campaign's owner, with the URL's ids filled in twice (ids that
exist, then ids that do not): a GET, form posts whose every usual field holds one odd
value (empty, a NUL, 20,000 characters, NaN, 1e309, markup, emoji, a huge number), a
multipart post of undecodable files and of files with a NUL in a text and, to
the API, JSON bodies that are broken or of the wrong types by every method. Each answer
must be below 500: a clear refusal (4xx) or the thing done. The views' own tests check
what each refusal says.
"""

import re

import pytest
from django.core.cache import caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from cfannotate.candidates.models import Candidate
from cfannotate.core.worker_tokens import join_token, link_token, worker_token
from cfannotate.crowd.models import InvitationLink
from cfannotate.labeling.models import GoldRound
from tests.factories import make_assignment, make_labeling_campaign, make_platform_records
from tests.test_api_parity import _routes

pytestmark = pytest.mark.django_db

ODD_VALUES = [
    "",
    "\x00",
    "x" * 20_000,
    "-1",
    "NaN",
    "1e309",
    "[]",
    "{}",
    "ü🙂",
    "<script>alert(1)</script>",
    "0",
    "999999999999999999999",
]
# Every field name a page or API form reads, and some it does not.
FIELDS = [
    "text",
    "budget",
    "ids",
    "action",
    "state",
    "amount",
    "reason",
    "kind",
    "n",
    "m",
    "seeds",
    "test_fraction",
    "name",
    "quota",
    "label",
    "labels",
    "original",
    "items",
    "answers",
    "active",
    "title",
    "assignments",
    "reward",
    "places",
    "worker",
    "token",
    "mapping",
    "columns",
    "generators",
    "targeting",
    "settings",
    "explanation",
    "external_id",
    "valid",
    "choice",
    "comment",
    "code",
    "judgment-0",
    "label-0",
    "use",
    "candidate_id",
    "page",
    "format",
    "status",
    "hours",
]
FILE_FIELDS = ("file", "predictions", "training")
BAD_FILES = {
    "rows.csv": b'\xff\xfe\x00garbage,\n"unterminated',
    # Well formed, with a NUL in a text (PostgreSQL refuses to store one).
    "nul.csv": b"id,text,label,original_id\n1,It is \x00 fine.,positive,1\n",
    "nul.jsonl": b'{"id": 1, "text": "It is \\u0000 fine.", "label": "positive", '
    b'"original_id": 1}\n',
}
JSON_BODIES = [
    '{"a": [',
    "[]",
    '"x"',
    '{"text": null, "ids": "x", "labels": 5, "budget": "x", "settings": [], "mapping": 3}',
    '{"x": 1e999}',
    '{"text": "a\\u0000b", "name": "\\u0000", "reason": "\\u0000", "label": "\\u0000"}',
]
SKIPPED = ("admin/", "accounts/login/", "accounts/logout/")
ID_NAME = re.compile(r"<(?:(\w+):)?(\w+)>")


def _path(route: str, values: dict) -> str:
    """The route with its parameters filled in (the platform entry's regex by hand)."""
    route = route.replace("^(?P<platform>mturk|prolific)/(?P<token>[^/]+)/$", "mturk/<token>/")
    return "/" + ID_NAME.sub(lambda match: str(values.get(match.group(2), "garbage")), route)


def _requests(route: str):
    """(method, data, content type or None) to send to one route."""
    yield "get", {}, None
    yield "post", {}, None
    for value in ODD_VALUES:
        yield "post", dict.fromkeys(FIELDS, value), None
    for file_name, content in BAD_FILES.items():
        files = {name: SimpleUploadedFile(file_name, content) for name in FILE_FIELDS}
        yield "post", files, None
    if route.startswith("api/"):
        for method in ("post", "patch", "put", "delete"):
            for body in JSON_BODIES:
                yield method, body, "application/json"


def test_no_route_answers_bad_input_with_a_server_error(researcher):
    campaign = make_labeling_campaign(units=3)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    candidate = Candidate.objects.filter(original__campaign=campaign).first()
    assignment = make_assignment(campaign)
    make_platform_records(campaign, assignment)
    link = InvitationLink.objects.filter(campaign=campaign).first()
    existing = {
        "campaign_id": campaign.id,
        "candidate_id": candidate.id,
        "original_id": candidate.original_id,
        "assignment_id": assignment.id,
        "worker_id": assignment.worker_id,
        "gold_round_id": GoldRound.objects.filter(campaign=campaign).first().id,
        "link_id": link.id,
        "kind": "contrast",
        "position": 1,
        "index": 0,
    }
    missing = {name: 999_999 for name in existing} | {"kind": "nonsense"}
    page_client = Client(raise_request_exception=False)
    api_client = APIClient(raise_request_exception=False)
    api_client.force_authenticate(researcher)

    errors, answered = [], 0
    for route, _pattern in _routes():
        if route.startswith(SKIPPED):
            continue
        caches["default"].clear()  # the throttles' counts: every route gets its own requests
        page_client.force_login(researcher)  # a post may have signed the session out
        client = api_client if route.startswith("api/") else page_client
        for values in (existing, missing):
            tokens = {"token": worker_token(assignment)}
            if route.startswith("join/link/"):
                tokens["token"] = link_token(link.id)
            elif route.startswith("join/"):
                tokens["token"] = join_token(campaign.id)
            path = _path(route, values | tokens)
            for method, data, content_type in _requests(route):
                extra = {"content_type": content_type} if content_type else {}
                response = getattr(client, method)(path, data, **extra)
                answered += 1
                if response.status_code >= 500:
                    shown = data if isinstance(data, str) else sorted(set(map(str, data.values())))
                    errors.append(
                        f"{method.upper()} {path}: {response.status_code} for {shown!r:.80}"
                    )
    assert answered > 3000  # every route was reached
    assert errors == []


def test_the_walk_fills_every_parameter_of_a_route():
    values = {"campaign_id": 7, "candidate_id": 9, "token": "t"}
    assert _path("campaigns/<int:campaign_id>/candidates/<int:candidate_id>/", values) == (
        "/campaigns/7/candidates/9/"
    )
    assert _path("w/<str:token>/rounds/<int:position>/", values) == "/w/t/rounds/garbage/"
    assert _path("join/^(?P<platform>mturk|prolific)/(?P<token>[^/]+)/$", values) == (
        "/join/mturk/t/"
    )
