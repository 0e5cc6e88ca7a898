"""A local stand-in for Prolific's REST API, enough for cfannotate's client: token auth,
draft studies and their places, paged submissions, transitions, bonus batches and
participant groups.
It keeps what it was asked in `requests` so tests can check what reached it."""

import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v1/"


@dataclass
class FakeProlific:
    token: str = "prolific-test-token"
    page_size: int = 2
    studies: dict = field(default_factory=dict)
    submissions: dict = field(default_factory=dict)
    batches: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)
    requests: list = field(default_factory=list)
    # path prefix -> (status, body): the next request there is refused this way
    refuse: dict = field(default_factory=dict)
    url: str = ""

    def add_submission(self, *, id, participant, study, status="AWAITING REVIEW", bonuses=()):
        self.submissions[id] = {
            "id": id,
            "participant_id": participant,
            "study_id": study,
            "status": status,
            "bonus_payments": list(bonuses),
            "completed_at": "2026-05-01T10:00:00Z" if status != "ACTIVE" else None,
        }

    def calls(self, method: str, path_start: str) -> list:
        return [r for r in self.requests if r[0] == method and r[1].startswith(PREFIX + path_start)]

    # --- Routing -------------------------------------------------------------------------

    def answer(self, method: str, path: str, query: dict, body: dict | None):
        for prefix, refusal in list(self.refuse.items()):
            if path.startswith(PREFIX + prefix):
                del self.refuse[prefix]
                return refusal
        route = path[len(PREFIX) :].strip("/").split("/")
        if method == "POST" and route == ["studies"]:
            return self._study_create(body)
        if method == "GET" and route[0] == "studies" and len(route) == 2:
            study = self.studies.get(route[1])
            return (200, study) if study else (404, {"error": {"detail": "Not found."}})
        if method == "PATCH" and route[0] == "studies" and len(route) == 2:
            return self._study_update(route[1], body or {})
        if method == "GET" and route == ["submissions"]:
            return self._submissions_page(query)
        if method == "POST" and route == ["submissions", "bonus-payments"]:
            return self._bonus_set_up(body)
        if method == "GET" and route[0] == "submissions" and len(route) == 2:
            found = self.submissions.get(route[1])
            return (200, found) if found else (404, {"error": {"detail": "Not found."}})
        if method == "POST" and route[0] == "submissions" and route[2:] == ["transition"]:
            return self._transition(route[1], body)
        if method == "POST" and route[0] == "bulk-bonus-payments" and route[2:] == ["pay"]:
            return self._bonus_pay(route[1])
        if method == "POST" and route[0] == "participant-groups" and route[2:] == ["participants"]:
            members = self.groups.setdefault(route[1], set())
            members.update(body.get("participant_ids", []))
            return 200, {"results": [{"participant_id": pid} for pid in sorted(members)]}
        return 404, {"error": {"detail": f"No route {method} {path}"}}

    def _study_create(self, body):
        required = ["name", "description", "external_study_url", "completion_codes", "reward"]
        missing = [name for name in required if not body.get(name)]
        if missing:
            return 400, {"error": {"detail": {name: ["required"] for name in missing}}}
        study_id = f"{len(self.studies) + 1:024x}"
        self.studies[study_id] = {**body, "id": study_id, "status": "UNPUBLISHED"}
        return 201, self.studies[study_id]

    def _study_update(self, study_id, body):
        """Like Prolific once a study is published: only its places (a new total, never
        fewer) and its internal name change; a completed study becomes active again."""
        study = self.studies.get(study_id)
        if study is None:
            return 404, {"error": {"detail": "Not found."}}
        other = set(body) - {"total_available_places", "internal_name"}
        if other and study["status"] != "UNPUBLISHED":
            return 400, {"error": {"detail": {name: ["read-only"] for name in sorted(other)}}}
        places = body.get("total_available_places", study["total_available_places"])
        if not isinstance(places, int) or places < study["total_available_places"]:
            return 400, {"error": {"detail": {"total_available_places": ["cannot decrease"]}}}
        study.update(body)
        if study["status"] in {"COMPLETED", "AWAITING REVIEW"}:
            study["status"] = "ACTIVE"
        return 200, study

    def _submissions_page(self, query):
        study = query.get("study", [""])[0]
        page = int(query.get("page", ["1"])[0])
        rows = [s for s in self.submissions.values() if s["study_id"] == study]
        start = (page - 1) * self.page_size
        results = rows[start : start + self.page_size]
        more = start + self.page_size < len(rows)
        next_href = f"{self.url}submissions/?study={study}&page={page + 1}" if more else None
        return 200, {"results": results, "_links": {"next": {"href": next_href}}}

    def _transition(self, submission_id, body):
        submission = self.submissions.get(submission_id)
        if submission is None:
            return 404, {"error": {"detail": "Not found."}}
        if submission["status"] != "AWAITING REVIEW":
            return 400, {"error": {"detail": f"Submission is {submission['status']}."}}
        if body.get("action") == "APPROVE":
            submission["status"] = "APPROVED"
        elif body.get("action") == "REJECT":
            if len(body.get("message", "")) < 100 or not body.get("rejection_category"):
                return 400, {"error": {"detail": "message and rejection_category required"}}
            submission["status"] = "REJECTED"
        else:
            return 400, {"error": {"detail": "Unknown action."}}
        return 200, submission

    def _bonus_set_up(self, body):
        participant, amount = body["csv_bonuses"].strip().split(",")
        batch_id = f"bonus{len(self.batches) + 1}"
        self.batches[batch_id] = {
            "study": body["study_id"],
            "participant": participant,
            "cents": round(float(amount) * 100),
            "paid": False,
        }
        return 201, {"id": batch_id, "study": body["study_id"], "total_amount": amount}

    def _bonus_pay(self, batch_id):
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {"error": {"detail": "Not found."}}
        batch["paid"] = True
        for submission in self.submissions.values():
            if (submission["participant_id"], submission["study_id"]) == (
                batch["participant"],
                batch["study"],
            ):
                submission["bonus_payments"].append(batch["cents"])
        return 202, None


def _handler(fake: FakeProlific):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _serve(self, method):
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            fake.requests.append((method, parts.path, body, self.headers.get("Authorization")))
            if self.headers.get("Authorization") != f"Token {fake.token}":
                status, payload = 401, {"error": {"detail": "Invalid token."}}
            else:
                status, payload = fake.answer(method, parts.path, parse_qs(parts.query), body)
            data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._serve("GET")

        def do_POST(self):
            self._serve("POST")

        def do_PATCH(self):
            self._serve("PATCH")

    return Handler


def start(fake: FakeProlific) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}{PREFIX}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@contextmanager
def served(settings):
    """A fake Prolific on loopback, the site's settings pointed at it, for the duration."""
    fake = FakeProlific()
    server = start(fake)
    settings.CROWD_PROLIFIC_API_URL = fake.url
    settings.CROWD_PROLIFIC_TOKEN = fake.token
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
