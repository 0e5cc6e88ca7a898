"""A small client for Prolific's REST API (token auth): studies, submissions, bonuses, groups.

Every failure, refused or unreachable, becomes a `PlatformError` with one sentence; the
token is only ever sent to the configured API address, also when following pages.
"""

from urllib.parse import urljoin, urlsplit

import httpx
from django.conf import settings

from cfannotate.crowd.providers.base import PlatformError


class ProlificClient:
    def __init__(
        self, *, base_url: str | None = None, token: str | None = None, timeout: float | None = None
    ) -> None:
        self.base_url = (base_url or settings.CROWD_PROLIFIC_API_URL).rstrip("/") + "/"
        self.token = settings.CROWD_PROLIFIC_TOKEN if token is None else token
        self.timeout = timeout or settings.CROWD_API_TIMEOUT_SECONDS

    # --- Studies ---------------------------------------------------------------------------

    def study_create(self, fields: dict) -> dict:
        """A draft (unpublished) study; publishing it, and paying for it, happens on Prolific."""
        return self._request("POST", "studies/", json=fields)

    def study_get(self, study_id: str) -> dict:
        return self._request("GET", f"studies/{study_id}/")

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
        if not self.token:
            raise PlatformError(
                "Prolific is not configured: set CFANNOTATE_PROLIFIC_TOKEN to an API token "
                "from your Prolific account settings."
            )
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
                f"Prolific could not be reached ({error.__class__.__name__}). "
                "Nothing was changed; try again later."
            ) from None
        if response.status_code == 401:
            raise PlatformError("Prolific did not accept the API token (401): check it.")
        if response.status_code >= 400:
            raise PlatformError(
                f"Prolific refused {method} {urlsplit(url).path} ({response.status_code}): "
                f"{_error_detail(response)}"
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


def _error_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        detail = error.get("detail") or error.get("title") or error
        return str(detail)[:300]
    return str(error)[:300]
