"""The dataset upload on the campaign page (htmx, without a browser): file → preview →
mapping → import; the kept file is bound to its user and campaign; oversized files are
dropped while they stream in."""

import codecs
import os
import re
import time
import tracemalloc
from http.cookies import SimpleCookie

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import ClientHandler
from django.urls import reverse

from cfannotate.campaigns.models import Original
from cfannotate.core import pending_uploads
from cfannotate.core.upload_handlers import OversizedUpload
from tests.factories import make_campaign

CSV = b"id,review,stars,sentiment\nr1,A warm and funny film.,5,pos\nr2,Dull.,1,neg\n"


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.UPLOAD_DIR = tmp_path / "uploads"
    return settings.UPLOAD_DIR


def kept_files(upload_dir) -> list:
    return sorted(upload_dir.glob("*.upload")) if upload_dir.exists() else []


def send_file(client, campaign, content: bytes = CSV, name: str = "reviews.csv"):
    url = reverse("original-upload", args=[campaign.id])
    upload = SimpleUploadedFile(name, content, content_type="text/csv")
    return client.post(url, {"file": upload}, HTTP_HX_REQUEST="true")


def token_of(response) -> str:
    html = response.content.decode()
    start = html.index('name="token" value="') + len('name="token" value="')
    return html[start : html.index('"', start)]


def test_the_data_section_has_the_upload_form(client, researcher, campaign):
    client.force_login(researcher)
    html = client.get(reverse("campaign-data", args=[campaign.id])).content.decode()
    assert 'id="original-upload"' in html
    assert f'hx-post="{reverse("original-upload", args=[campaign.id])}"' in html
    assert "up to 50 MB, 100,000 rows and 200 columns" in html
    assert "each researcher keeps\n        at most 10 such files (250 MB) at once" in html


def test_preview_then_import(client, researcher, campaign, upload_dir):
    client.force_login(researcher)
    response = send_file(client, campaign)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<strong>reviews.csv</strong>: CSV (utf-8)" in html
    assert '<span id="upload-row-count">2</span> rows' in html
    assert '<option value="review" selected>review</option>' in html
    assert '<option value="sentiment" selected>sentiment</option>' in html
    assert '<option value="r1"' not in html  # options are columns, not cells
    assert "A warm and funny film." in html and "Import 2 rows" in html
    assert len(kept_files(upload_dir)) == 1 and not Original.objects.exists()

    # Changing a select re-renders the preview under the new mapping.
    remapped = client.post(
        reverse("original-upload-preview", args=[campaign.id]),
        {"token": token_of(response), "map-id": "", "map-text": "review", "map-label": "stars"},
        HTTP_HX_REQUEST="true",
    )
    html = remapped.content.decode()
    assert '<option value="stars" selected>stars</option>' in html
    assert "Unknown label &#x27;5&#x27;" in html and "disabled>Import 2 rows" in html

    imported = client.post(
        reverse("original-upload-import", args=[campaign.id]),
        {
            "token": token_of(response),
            "map-id": "id",
            "map-text": "review",
            "map-label": "sentiment",
        },
        HTTP_HX_REQUEST="true",
    )
    assert imported.status_code == 200 and imported["HX-Refresh"] == "true"
    originals = list(campaign.originals.order_by("id").values_list("external_id", "extra"))
    assert originals == [("r1", {"stars": "5"}), ("r2", {"stars": "1"})]
    assert kept_files(upload_dir) == []  # the kept file is gone once imported
    page = client.get(reverse("campaign-data", args=[campaign.id])).content.decode()
    assert "Imported 2 originals from reviews.csv." in page and "A warm and funny film." in page


def test_a_previewed_file_is_still_there_when_the_page_is_reloaded(
    client, researcher, campaign, upload_dir
):
    client.force_login(researcher)
    token = token_of(send_file(client, campaign))
    client.post(
        reverse("original-upload-preview", args=[campaign.id]),
        {"token": token, "map-id": "", "map-text": "review", "map-label": "sentiment"},
        HTTP_HX_REQUEST="true",
    )
    data_url = reverse("campaign-data", args=[campaign.id])
    for page in (
        client.get(data_url),  # a reload, or coming back from another page
        client.get(reverse("original-upload", args=[campaign.id]), HTTP_HX_REQUEST="true"),
    ):
        html = page.content.decode()
        assert "<strong>reviews.csv</strong>: CSV (utf-8)" in html and "Import 2 rows" in html
        # Under the mapping last chosen (no id column), not the guess (the "id" column).
        assert '<option value="id" selected>' not in html
        assert token_of(page) == token
    # Importing it from the reloaded page empties the form for good.
    imported = client.post(
        reverse("original-upload-import", args=[campaign.id]),
        {"token": token, "map-id": "", "map-text": "review", "map-label": "sentiment"},
        HTTP_HX_REQUEST="true",
    )
    assert imported["HX-Refresh"] == "true"
    assert [o.external_id for o in campaign.originals.order_by("id")] == ["row-1", "row-2"]
    html = client.get(data_url).content.decode()
    assert 'name="file"' in html and "Import 2 rows" not in html


def test_a_waiting_file_that_is_gone_shows_the_empty_form(
    client, researcher, other_researcher, campaign, upload_dir
):
    client.force_login(researcher)
    token = token_of(send_file(client, campaign))
    data_url = reverse("campaign-data", args=[campaign.id])
    cancelled = client.post(reverse("original-upload-cancel", args=[campaign.id]), {"token": token})
    assert cancelled.status_code == 303 and cancelled["Location"] == data_url  # without htmx
    assert "Import 2 rows" not in client.get(data_url).content.decode()

    token_of(send_file(client, campaign))
    for path in kept_files(upload_dir):
        path.unlink()  # expired and purged, say
    html = client.get(data_url).content.decode()
    assert 'name="file"' in html and "Import 2 rows" not in html
    assert html.count("upload it again") == 0  # no error for what nobody asked for


def test_the_upload_works_without_javascript(client, researcher, campaign, upload_dir):
    """Plain posts (htmx not loaded yet, or no JavaScript): each step comes back to the
    data page, which shows the waiting file; a refusal is the data page with the error."""
    client.force_login(researcher)
    data_url = reverse("campaign-data", args=[campaign.id])
    upload_url = reverse("original-upload", args=[campaign.id])
    refused = client.post(upload_url, {"file": SimpleUploadedFile("x.csv", b"")})
    page = refused.content.decode()
    assert refused.status_code == 400 and "<html" in page and "<h1>Data</h1>" in page
    sent = client.post(upload_url, {"file": SimpleUploadedFile("reviews.csv", CSV)})
    assert sent.status_code == 303 and sent["Location"] == data_url
    page = client.get(data_url).content.decode()
    assert "<strong>reviews.csv</strong>" in page and "Import 2 rows" in page
    mapping = {"token": token_of(client.get(data_url)), "map-id": "id"}
    mapping |= {"map-text": "review", "map-label": "sentiment"}
    imported = client.post(reverse("original-upload-import", args=[campaign.id]), mapping)
    assert imported.status_code == 302 and imported["Location"] == data_url
    assert campaign.originals.count() == 2 and kept_files(upload_dir) == []


def test_uploading_the_same_file_again_warns_that_its_rows_are_there_already(
    client, researcher, campaign
):
    """Without an id column nothing tells the rows apart from those imported before: the
    preview says how many are there already, and the import is still offered."""
    client.force_login(researcher)
    content = b"review,sentiment\nA warm and funny film.,pos\nDull.,neg\n"
    mapping = {"map-id": "", "map-text": "review", "map-label": "sentiment"}
    first = send_file(client, campaign, content)
    assert 'id="upload-same-text"' not in first.content.decode()
    client.post(
        reverse("original-upload-import", args=[campaign.id]),
        {"token": token_of(first), **mapping},
        HTTP_HX_REQUEST="true",
    )

    again = send_file(client, campaign, content)

    html = again.content.decode()
    assert (
        "2 of 2 rows have the same text as originals already in this campaign; "
        "importing adds them again."
    ) in html
    assert "disabled>Import 2 rows" not in html and "Import 2 rows" in html
    page = client.get(reverse("campaign-data", args=[campaign.id])).content.decode()
    assert 'id="upload-same-text"' in page  # the waiting file, shown again


def test_import_errors_list_the_rows_and_import_nothing(client, researcher, campaign):
    client.force_login(researcher)
    response = send_file(client, campaign, b"text,label\nGood.,positive\n,positive\nOk.,meh\n")
    token = token_of(response)
    # The preview already says what is wrong, and offers no import.
    assert "2 rows cannot be imported" in response.content.decode()
    failed = client.post(
        reverse("original-upload-import", args=[campaign.id]),
        {"token": token, "map-text": "text", "map-label": "label"},
        HTTP_HX_REQUEST="true",
    )
    assert failed.status_code == 400
    html = failed.content.decode()
    assert "2 rows are invalid; nothing was imported." in html
    assert "<strong>row 3</strong>: text (&#x27;text&#x27;): The text is empty." in html
    assert "<strong>row 4</strong>: label (&#x27;label&#x27;): Unknown label" in html
    assert not campaign.originals.exists()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "The file has no rows"),
        (b"text,label\n", "The file has a header but no rows"),
        (b"text,label,text\nA,B,C\n", "names the column &#x27;text&#x27; twice"),
        ("text,label\nTrès,positive\n".encode("latin-1"), "line 2 has the byte 0xE8"),
    ],
)
def test_bad_files_come_back_with_the_reason(client, researcher, campaign, content, message):
    client.force_login(researcher)
    response = send_file(client, campaign, content)
    html = response.content.decode()
    assert message in html, html
    assert response.status_code in (200, 400)
    assert not Original.objects.exists()


def wide_csv(columns: int) -> bytes:
    header = ",".join(f"c{number}" for number in range(columns))
    return f"{header}\n{','.join('x' * columns)}\n".encode()


def test_a_file_wider_than_the_cap_is_refused_before_its_columns_are_guessed(
    client, researcher, campaign, upload_dir, monkeypatch
):
    """300,000 columns (2.6 MB): refused from the header line's separators alone."""

    def guessed(*args, **kwargs):
        raise AssertionError("the columns of a file over the cap were looked at one by one")

    monkeypatch.setattr("cfannotate.campaigns.uploads.mapping_guess", guessed)
    client.force_login(researcher)
    response = send_file(client, campaign, wide_csv(300_000), "wide.csv")
    assert response.status_code == 400
    html = response.content.decode()
    assert "The file has 300,000 columns; the limit is 200." in html
    assert "Keep only the columns the campaign needs" in html
    assert 'name="file"' in html  # the form again, for the fixed file
    assert kept_files(upload_dir) == [] and not Original.objects.exists()


def test_the_column_cap_is_exact(client, researcher, campaign, upload_dir):
    client.force_login(researcher)
    refused = send_file(client, campaign, wide_csv(201))
    assert refused.status_code == 400
    assert "The file has 201 columns; the limit is 200." in refused.content.decode()
    header = "text,label," + ",".join(f"extra{number}" for number in range(198))
    at_the_cap = f"{header}\nA fine film.,positive{',' * 198}\n".encode()
    previewed = send_file(client, campaign, at_the_cap)
    assert previewed.status_code == 200
    assert "</span> row, 200 columns." in " ".join(previewed.content.decode().split())
    assert len(kept_files(upload_dir)) == 1


def test_a_latin1_file_is_refused_with_the_byte_its_line_and_the_fix(
    client, researcher, campaign, upload_dir
):
    rows = "text,label\nA fine film.,positive\nUn café crème.,positive\n"
    client.force_login(researcher)
    response = send_file(client, campaign, rows.encode("latin-1"))
    assert response.status_code == 400
    html = response.content.decode()
    assert "The file is not UTF-8 text: line 3 has the byte 0xE9" in html
    assert "save the file as UTF-8 (in Excel: Save As → CSV UTF-8 (Comma delimited))" in html
    assert (
        "<strong>line 3</strong>: Byte 0xE9 (&#x27;é&#x27; in Windows-1252) at character 7 of "
        "the line (byte offset 39 of the file), in “Un café crème.,positive”."
    ) in html
    assert "Map the file" not in html and 'name="file"' in html
    assert kept_files(upload_dir) == [] and not Original.objects.exists()

    # The same rows saved as Excel's "CSV UTF-8" (with its byte order mark) import.
    fixed = send_file(client, campaign, codecs.BOM_UTF8 + rows.encode("utf-8"))
    assert "<strong>reviews.csv</strong>: CSV (utf-8-sig)" in fixed.content.decode()
    imported = client.post(
        reverse("original-upload-import", args=[campaign.id]),
        {"token": token_of(fixed), "map-text": "text", "map-label": "label"},
        HTTP_HX_REQUEST="true",
    )
    assert imported["HX-Refresh"] == "true"
    assert list(campaign.originals.order_by("id").values_list("text", flat=True)) == [
        "A fine film.",
        "Un café crème.",
    ]


def test_each_researcher_keeps_at_most_the_quota_of_files(
    client, researcher, other_researcher, upload_dir, monkeypatch
):
    monkeypatch.setattr(pending_uploads, "QUOTA_FILES", 2)
    first, second, third = (make_campaign(owner=researcher, name=f"C{n}") for n in range(3))
    client.force_login(researcher)
    first_token = token_of(send_file(client, first))
    second_token = token_of(send_file(client, second))

    refused = send_file(client, third)
    assert refused.status_code == 409
    html = " ".join(refused.content.decode().split())
    assert (
        f"You already keep 2 uploaded files ({2 * len(CSV) / 1024:.1f} KB) waiting to be "
        f"imported, and this one ({len(CSV) / 1024:.1f} KB) would pass the limit of 2 files "
        "and 250.0 MB per researcher."
    ) in html
    assert "Import or cancel a preview you have open" in html
    assert re.search(r"the oldest in (24 h|23 h 59 min)\. Nothing was kept of this file", html)
    assert "<strong>file</strong>: Upload quota reached: 2 of 2 files" in html
    assert 'name="file"' in html and len(kept_files(upload_dir)) == 2

    # Uploading to a campaign again replaces its waiting file rather than adding one.
    again = send_file(client, first)
    assert again.status_code == 200 and len(kept_files(upload_dir)) == 2
    stale = client.post(
        reverse("original-upload-import", args=[first.id]),
        {"token": first_token, "map-text": "review", "map-label": "sentiment"},
        HTTP_HX_REQUEST="true",
    )
    assert stale.status_code == 410 and "replaced by a newer upload" in stale.content.decode()

    # Cancelling a preview frees its place...
    client.post(reverse("original-upload-cancel", args=[second.id]), {"token": second_token})
    third_token = token_of(send_file(client, third))
    assert send_file(client, second).status_code == 409
    # ...and so does importing one.
    imported = client.post(
        reverse("original-upload-import", args=[third.id]),
        {"token": third_token, "map-text": "review", "map-label": "sentiment"},
        HTTP_HX_REQUEST="true",
    )
    assert imported["HX-Refresh"] == "true" and third.originals.count() == 2
    assert send_file(client, second).status_code == 200

    # Another researcher has a quota of their own.
    client.force_login(other_researcher)
    assert send_file(client, make_campaign(owner=other_researcher)).status_code == 200
    assert len(kept_files(upload_dir)) == 3


def test_the_byte_quota_counts_the_kept_files_sizes(
    client, researcher, upload_dir, monkeypatch, settings
):
    settings.UPLOAD_MAX_BYTES = len(CSV)
    monkeypatch.setattr(pending_uploads, "QUOTA_BYTES", len(CSV) + 10)
    first, second = make_campaign(owner=researcher), make_campaign(owner=researcher)
    client.force_login(researcher)
    assert send_file(client, first).status_code == 200
    refused = send_file(client, second)
    assert refused.status_code == 409
    assert "would pass the limit of 10 files and 0.1 KB per researcher" in refused.content.decode()
    assert len(kept_files(upload_dir)) == 1
    # An expired file no longer counts: it is purged before the quota is counted.
    [kept] = kept_files(upload_dir)
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(kept, (two_days_ago, two_days_ago))
    assert send_file(client, second).status_code == 200


def test_no_file_chosen(client, researcher, campaign):
    client.force_login(researcher)
    response = client.post(reverse("original-upload", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert "Choose a CSV, TSV or JSONL file to upload." in response.content.decode()


def test_the_kept_file_is_refused_to_another_user_or_campaign(
    client, researcher, other_researcher, campaign
):
    client.force_login(researcher)
    token = token_of(send_file(client, campaign))
    url = reverse("original-upload-import", args=[campaign.id])
    mapping = {"token": token, "map-text": "review", "map-label": "sentiment"}

    # Another researcher cannot even reach the campaign...
    client.force_login(other_researcher)
    assert client.post(url, mapping, HTTP_HX_REQUEST="true").status_code == 404
    # ...nor use the token for a campaign of their own.
    theirs = make_campaign(owner=other_researcher)
    theirs_url = reverse("original-upload-import", args=[theirs.id])
    refused = client.post(theirs_url, mapping, HTTP_HX_REQUEST="true")
    assert refused.status_code == 404 and "No such upload" in refused.content.decode()
    # The owner's other campaign is another scope, too.
    client.force_login(researcher)
    second = make_campaign(owner=researcher)
    other_scope = reverse("original-upload-import", args=[second.id])
    assert client.post(other_scope, mapping, HTTP_HX_REQUEST="true").status_code == 404
    tampered = {**mapping, "token": token[:-2] + ("AA" if token[-2:] != "AA" else "BB")}
    assert client.post(url, tampered, HTTP_HX_REQUEST="true").status_code == 404
    assert not Original.objects.exists()
    # The owner still imports it.
    assert client.post(url, mapping, HTTP_HX_REQUEST="true")["HX-Refresh"] == "true"


def test_cancel_deletes_the_kept_file(client, researcher, campaign, upload_dir):
    client.force_login(researcher)
    token = token_of(send_file(client, campaign))
    assert len(kept_files(upload_dir)) == 1
    response = client.post(
        reverse("original-upload-cancel", args=[campaign.id]),
        {"token": token},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and 'name="file"' in response.content.decode()
    assert kept_files(upload_dir) == []
    gone = client.post(
        reverse("original-upload-import", args=[campaign.id]),
        {"token": token, "map-text": "review", "map-label": "sentiment"},
    )
    assert gone.status_code == 410 and "upload it again" in gone.content.decode()


def test_kept_files_expire_after_a_day(client, researcher, campaign, upload_dir, monkeypatch):
    client.force_login(researcher)
    token = token_of(send_file(client, campaign))
    [old] = kept_files(upload_dir)
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    send_file(client, campaign)  # saving a new file purges the old ones
    assert old not in kept_files(upload_dir) and len(kept_files(upload_dir)) == 1
    monkeypatch.setattr(pending_uploads, "MAX_AGE_SECONDS", -1)
    expired = client.post(reverse("original-upload-preview", args=[campaign.id]), {"token": token})
    assert expired.status_code == 410 and "expired after a day" in expired.content.decode()


def test_upload_views_are_owner_scoped_and_need_login(client, other_researcher, campaign):
    url = reverse("original-upload", args=[campaign.id])
    assert client.get(url).status_code == 302
    client.force_login(other_researcher)
    assert client.get(url).status_code == 404
    assert send_file(client, campaign).status_code == 404


class _Concatenated:
    """A request body read from parts (bytes or open files) in turn, never all at once."""

    def __init__(self, *parts) -> None:
        self.parts = list(parts)

    def read(self, size: int = -1) -> bytes:
        out = b""
        while self.parts and (size < 0 or len(out) < size):
            part = self.parts[0]
            want = -1 if size < 0 else size - len(out)
            chunk = part.read(want) if hasattr(part, "read") else part[: None if want < 0 else want]
            if not hasattr(part, "read"):
                self.parts[0] = part[len(chunk) :]
            if not chunk:
                self.parts.pop(0)
            out += chunk
        return out

    def readline(self, size: int = -1) -> bytes:
        raise OSError("a multipart body is read in chunks, never by line")


def test_a_file_over_50_mb_is_dropped_as_it_streams_in(client, researcher, campaign, tmp_path):
    """A real 51 MB file through the middleware and view; Python allocates a few MB at most."""
    big = tmp_path / "big.csv"
    row = b"A long review that repeats itself to fill the file up.,positive\n"
    block = row * (1024 * 1024 // len(row))
    with big.open("wb") as handle:
        handle.write(b"text,label\n")
        for _ in range(51):
            handle.write(block)
    size = big.stat().st_size
    assert size > 50 * 1024 * 1024

    client.force_login(researcher)
    boundary = "cfannotateboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    csrf = "a" * 32
    cookies = SimpleCookie()
    cookies.load(client.cookies.output(header="", sep=";"))
    cookie_header = "; ".join(f"{key}={morsel.value}" for key, morsel in cookies.items())
    with big.open("rb") as body:
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": reverse("original-upload", args=[campaign.id]),
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "HTTP_HOST": "testserver",
            "HTTP_HX_REQUEST": "true",
            "HTTP_COOKIE": f"{cookie_header}; csrftoken={csrf}",
            "HTTP_X_CSRFTOKEN": csrf,
            "CONTENT_TYPE": f"multipart/form-data; boundary={boundary}",
            "CONTENT_LENGTH": str(len(head) + size + len(tail)),
            "wsgi.input": _Concatenated(head, body, tail),
            "wsgi.url_scheme": "http",
        }
        tracemalloc.start()
        try:
            # The test client's handler, fed a streamed body; CSRF is checked as in production.
            response = ClientHandler(enforce_csrf_checks=True)(environ)
            html = response.content.decode()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert response.status_code == 400
    # Past the limit the bytes were counted and dropped: no 51 MB temporary file either.
    assert isinstance(response.wsgi_request.FILES["file"], OversizedUpload)
    assert f"The file has {size:,} bytes; the limit is 52,428,800." in html
    assert peak < 8 * 1024 * 1024, f"{peak:,} bytes allocated while the upload streamed in"
    assert not Original.objects.exists()


def test_two_files_in_one_post_are_refused_and_none_is_kept(
    client, researcher, campaign, upload_dir
):
    client.force_login(researcher)
    files = [SimpleUploadedFile(name, CSV, content_type="text/csv") for name in ("a.csv", "b.csv")]
    response = client.post(
        reverse("original-upload", args=[campaign.id]), {"file": files}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert "Send one file at a time; this request has 2" in response.content.decode()
    assert kept_files(upload_dir) == [] and not Original.objects.exists()
