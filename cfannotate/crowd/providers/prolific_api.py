"""A small client for Prolific's REST API (token auth): studies, submissions, bonuses, groups.

Every failure, refused or unreachable, becomes a `PlatformError` with one sentence; the
token is only ever sent to the configured API address, also when following pages.
"""

from urllib.parse import urljoin, urlsplit

import httpx
from django.conf import settings

from cfannotate.core.text import sentence
from cfannotate.crowd.providers.base import PlatformError


class ProlificClient:
    def __init__(
        self, *, base_url: str | None = None, token: str | None = None, timeout: float | None = None
    ) -> None:
        self.base_url = (base_url or settings.CROWD_PROLIFIC_API_URL).rstrip("/") + "/"
        self.token = settings.CROWD_PROLIFIC_TOKEN if token is None else token
        self.timeout = timeout or settings.CROWD_API_TIMEOUT_SECONDS

    def check_configured(self) -> None:
        """PlatformError, saying which setting to set, when there is no API token."""
        if not self.token:
            raise PlatformError(
                "Prolific is not configured: CFANNOTATE_PROLIFIC_TOKEN is not set.",
                fix=SET_UP_PROLIFIC,
            )

    # --- Studies ---------------------------------------------------------------------------

    def study_create(self, fields: dict) -> dict:
        """A draft (unpublished) study; publishing it, and paying for it, happens on Prolific."""
        return self._request("POST", "studies/", json=fields)

    def study_get(self, study_id: str) -> dict:
        return self._request("GET", f"studies/{study_id}/")

    def study_update(self, study_id: str, fields: dict) -> dict:
        """Change a study; once published, Prolific lets only its places grow (the new
        total, not the places added) and its internal name change."""
        return self._request("PATCH", f"studies/{study_id}/", json=fields)

    # --- Submissions ---------------------------------------------------------------------------

    def submissions(self, study_id: str) -> list[dict]:
        """Every submission of a study, following the API's pages."""
        found: list[dict] = []
        url: str | None = self._url("submissions/")
        params: dict | None = {"study": study_id}
        while url:
            page = self._request("GET", url, params=params)
            found.extend(page.get("results", []))
            url, params = self._next_page(page), None
        return found

    def submission_get(self, submission_id: str) -> dict:
        return self._request("GET", f"submissions/{submission_id}/")

    def submission_transition(self, submission_id: str, action: str, **extra) -> dict:
        return self._request(
            "POST", f"submissions/{submission_id}/transition/", json={"action": action, **extra}
        )

    # --- Bonuses and groups ----------------------------------------------------------------------

    def bonus_set_up(self, *, study_id: str, participant_id: str, amount: str) -> dict:
        return self._request(
            "POST",
            "submissions/bonus-payments/",
            json={"study_id": study_id, "csv_bonuses": f"{participant_id},{amount}\n"},
        )

    def bonus_pay(self, bulk_id: str) -> dict:
        return self._request("POST", f"bulk-bonus-payments/{bulk_id}/pay/")

    def participant_group_add(self, group_id: str, participant_ids: list[str]) -> dict:
        return self._request(
            "POST",
            f"participant-groups/{group_id}/participants/",
            json={"participant_ids": participant_ids},
        )

    # --- Transport ---------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else urljoin(self.base_url, path)

    def _next_page(self, page: dict) -> str | None:
        links = page.get("_links") or {}
        href = (links.get("next") or {}).get("href") if isinstance(links, dict) else None
        href = href or page.get("next")
        if not href:
            return None
        url = self._url(href)
        ours, theirs = urlsplit(self.base_url), urlsplit(url)
        if (theirs.scheme, theirs.netloc) != (ours.scheme, ours.netloc):
            raise PlatformError("Prolific pointed to a next page on another host; stopped there.")
        return url

    def _request(self, method: str, path: str, *, json=None, params=None) -> dict:
        self.check_configured()
        url = self._url(path)
        try:
            response = httpx.request(
                method,
                url,
                json=json,
                params=params,
                headers={"Authorization": f"Token {self.token}", "Accept": "application/json"},
                timeout=self.timeout,
            )
        except httpx.HTTPError as error:
            raise PlatformError(
                f"Prolific could not be reached ({error.__class__.__name__}). Nothing was changed.",
                fix="Check that this server can reach the internet, then try again in a few "
                "minutes.",
            ) from None
        if response.status_code == 401:
            raise PlatformError("Prolific did not accept the API token (401).", fix=SET_UP_PROLIFIC)
        if response.status_code >= 400:
            detail, fields = _error_detail(response)
            raise PlatformError(
                f"Prolific refused {method} {urlsplit(url).path} ({response.status_code}): "
                f"{detail}",
                fields=fields,
                fix=_status_fix(response.status_code),
            )
        if not response.content:
            return {}
        try:
            data = response.json()
        except ValueError:
            raise PlatformError("Prolific answered with something that is not JSON.") from None
        if not isinstance(data, dict):
            raise PlatformError("Prolific answered with an unexpected JSON value.")
        return data


SET_UP_PROLIFIC = (
    "Set CFANNOTATE_PROLIFIC_TOKEN to an API token from your Prolific account "
    "(Settings, then API tokens) and restart the server."
)


def _status_fix(status: int) -> str:
    if status == 403:
        return "The API token's workspace may not allow this: check its role on Prolific."
    if status == 404:
        return "The study may have been deleted on Prolific: sync the status to see."
    if status == 429:
        return "Prolific is limiting requests: wait a minute and try again."
    if status >= 500:
        return "Prolific had a problem on its side: nothing was changed; try again later."
    return ""  # a refused request: the caller knows which of its fields to point at


def _error_detail(response: httpx.Response) -> tuple[str, dict[str, list[str]]]:
    """Prolific's reason in words, and the fields it refused (its names), if it said.

    Its errors look like `{"error": {"title": ..., "detail": ...}}` where the detail is a
    sentence, a list of them, or a field-by-field dict of lists, as Django REST framework
    writes them; never show a Python dict to the researcher.
    """
    try:
        body = response.json()
    except ValueError:
        text = response.text[:300].strip()
        return (sentence(text) if text and "<" not in text else response.reason_phrase), {}
    error = body.get("error", body) if isinstance(body, dict) else body
    detail = error
    if isinstance(error, dict) and ("detail" in error or "title" in error):
        detail = error.get("detail") or error.get("title")
    if isinstance(detail, dict):
        fields = {
            str(name): [sentence(item) for item in (value if isinstance(value, list) else [value])]
            for name, value in detail.items()
        }
        words = " ".join(f"{name}: {' '.join(notes)}" for name, notes in fields.items())
        return words[:600], fields
    if isinstance(detail, list):
        return " ".join(sentence(item) for item in detail)[:600], {}
    return sentence(detail)[:300], {}
