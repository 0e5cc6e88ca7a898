"""A previewed file left waiting is shown again from the summary kept beside it: loading
the data page reads neither the file nor its rows (1.1-1.6 s and 50-80 MB for 30 MB),
shows what a fresh preview shows, and previews the file again once the summary no
longer holds (another mapping, the campaign's originals, labels or settings changed)."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from cfannotate.campaigns import upload_views
from cfannotate.campaigns.models import Campaign
from cfannotate.core import pending_uploads
from tests.factories import make_original


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.UPLOAD_DIR = tmp_path / "uploads"
    return settings.UPLOAD_DIR


@pytest.fixture
def previews(monkeypatch):
    """The files previewed from scratch, by name: each read and check of a whole file."""
    read = []
    whole = upload_views.upload_preview

    def counted(**kwargs):
        read.append(kwargs["file_name"])
        return whole(**kwargs)

    monkeypatch.setattr(upload_views, "upload_preview", counted)
    return read


def rich_csv(bad_rows: int = 60) -> bytes:
    """Rows of every kind a preview shows: good, unknown labels (more than 50 rows, more
    than 20 spellings), an id twice, an empty text, the text of an existing original."""
    lines = ["id,review,stars,sentiment"]
    lines += [f"g{n},Good film number {n}.,5,pos" for n in range(5)]
    lines += ["g1,Twice.,1,neg", "e1,,1,neg", "s1,Already here.,3,negative"]
    lines += [f"b{n},Odd film {n}.,{n},label{n % 25}" for n in range(bad_rows)]
    return ("\n".join(lines) + "\n").encode()


def send(client, campaign, content: bytes, name: str = "reviews.csv"):
    url = reverse("original-upload", args=[campaign.id])
    upload = SimpleUploadedFile(name, content, content_type="text/csv")
    response = client.post(url, {"file": upload}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response


def shown(client, campaign) -> str:
    """The upload block as the data page shows it (its htmx fragment), tokens left out."""
    html = client.get(reverse("original-upload", args=[campaign.id]), HTTP_HX_REQUEST="true")
    return re.sub(r'(name="csrfmiddlewaretoken" value=")[^"]+', r"\1", html.content.decode())


def notes(upload_dir) -> list:
    return sorted(upload_dir.glob("*.note.json"))


@pytest.mark.parametrize(
    "content, name",
    [
        (rich_csv(), "reviews.csv"),
        (rich_csv(bad_rows=3), "few.csv"),
        (b"id,review,sentiment\nr1,Already here.,pos\nr2,Fine.,negative\n", "clean.csv"),
        (
            b'{"text": "Fine.", "label": "pos", "meta": {"a": [1, 2.5]}, "n": 3}\n'
            b'{"text": "Meh.", "label": true, "n": null}\n'
            b'{"text": "Gone.", "label": "neg", "extra": "x"}\n',
            "rows.jsonl",
        ),
    ],
)
def test_a_reload_shows_what_the_preview_showed_without_reading_the_file(
    logged_in, campaign, upload_dir, previews, content, name
):
    make_original(campaign, text="Already here.")
    posted = send(logged_in, campaign, content, name)
    assert previews == [name]
    again = shown(logged_in, campaign)
    assert previews == [name]  # not read again
    for path in notes(upload_dir):
        path.unlink()  # as if the summary were never kept: the file is previewed again
    fresh = shown(logged_in, campaign)
    assert previews == [name, name]
    assert again == fresh
    # The very block the upload answered with, and the data page shows it too.
    assert again == re.sub(
        r'(name="csrfmiddlewaretoken" value=")[^"]+', r"\1", posted.content.decode()
    )
    page = logged_in.get(reverse("campaign-data", args=[campaign.id])).content.decode()
    assert previews == [name, name] and "Import" in page


def test_the_rich_file_shows_every_part_of_the_preview(logged_in, campaign, previews):
    make_original(campaign, text="Already here.")
    send(logged_in, campaign, rich_csv())
    html = shown(logged_in, campaign)
    assert previews == ["reviews.csv"]
    assert "<strong>reviews.csv</strong>: CSV (utf-8)" in html and "Import 68 rows" in html
    assert "62 rows cannot be imported; the first 50 are listed." in html
    assert "and 8 other spellings" in html and 'id="upload-labels"' in html
    assert "The id &#x27;g1&#x27; is used twice." in html and "The text is empty." in html


def test_a_reload_reads_as_much_for_a_file_of_a_hundred_times_the_rows(
    logged_in, researcher, previews
):
    from tests.factories import make_campaign

    def queries(rows: int) -> int:
        campaign = make_campaign(owner=researcher)
        content = "text,label\n" + "".join(f"Film {n}.,pos\n" for n in range(rows))
        send(logged_in, campaign, content.encode())
        with CaptureQueriesContext(connection) as captured:
            shown(logged_in, campaign)
        return len(captured)

    assert queries(3) == queries(300)
    assert len(previews) == 2  # the two uploads; neither reload read its file


def test_the_file_is_previewed_again_when_the_summary_no_longer_holds(
    logged_in, campaign, upload_dir, previews
):
    content = b"id,review,sentiment\nr1,Already here.,pos\nr2,Fine.,negative\n"
    posted = send(logged_in, campaign, content).content.decode()
    token = re.search(r'name="token" value="([^"]+)"', posted)[1]
    shown(logged_in, campaign)
    assert len(previews) == 1

    # Another mapping: previewed as it is chosen, then shown from its own summary.
    logged_in.post(
        reverse("original-upload-preview", args=[campaign.id]),
        {"token": token, "map-id": "", "map-text": "review", "map-label": "sentiment"},
        HTTP_HX_REQUEST="true",
    )
    assert '<option value="id" selected>' not in shown(logged_in, campaign)
    assert len(previews) == 2

    # An original added since has one of the file's texts.
    make_original(campaign, text="Already here.")
    assert "1 of 2 rows has the same text" in shown(logged_in, campaign)
    assert len(previews) == 3
    shown(logged_in, campaign)
    assert len(previews) == 3  # kept again for the next load

    # A label renamed, the campaign's settings saved.
    campaign.labels.filter(value="negative").update(display_name="Gloomy")
    assert "Gloomy" in shown(logged_in, campaign) and len(previews) == 4
    Campaign.objects.filter(pk=campaign.pk).update(updated_at=timezone.now())
    shown(logged_in, campaign)
    assert len(previews) == 5

    # A summary of another form, or one that cannot be read: previewed again.
    (note,) = notes(upload_dir)
    note.write_text(json.dumps({**json.loads(note.read_text()), "version": 0}))
    shown(logged_in, campaign)
    note.write_text("{not json")
    shown(logged_in, campaign)
    assert len(previews) == 7


def test_a_summary_goes_with_its_file(logged_in, campaign, upload_dir):
    send(logged_in, campaign, rich_csv(3))
    assert len(notes(upload_dir)) == 1
    send(logged_in, campaign, rich_csv(4))  # replaces the waiting file and its summary
    (note,) = notes(upload_dir)
    (kept,) = upload_dir.glob("*.upload")
    assert note.name == kept.name.replace(".upload", ".note.json")
    # Not counted against the quota: the files are.
    assert pending_uploads.pending_upload_quota(user=campaign.owner).files == 1
    token = re.search(r'name="token" value="([^"]+)"', shown(logged_in, campaign))[1]
    logged_in.post(reverse("original-upload-cancel", args=[campaign.id]), {"token": token})
    assert notes(upload_dir) == [] and list(upload_dir.glob("*.upload")) == []


def test_an_import_takes_the_summary_away_too(logged_in, campaign, upload_dir):
    content = b"id,review,sentiment\nr1,A warm film.,pos\n"
    token = re.search(
        r'name="token" value="([^"]+)"', send(logged_in, campaign, content).content.decode()
    )[1]
    imported = logged_in.post(
        reverse("original-upload-import", args=[campaign.id]),
        {"token": token, "map-id": "id", "map-text": "review", "map-label": "sentiment"},
        HTTP_HX_REQUEST="true",
    )
    assert imported["HX-Refresh"] == "true" and notes(upload_dir) == []


def test_a_summary_that_cannot_be_written_only_costs_a_read(
    logged_in, campaign, upload_dir, previews, monkeypatch
):
    # Its directory gone, say: writing it fails as a full disk would.
    monkeypatch.setattr(pending_uploads, "_note_path", lambda path: upload_dir / "gone" / "x")
    send(logged_in, campaign, rich_csv(3))
    assert "Import 11 rows" in shown(logged_in, campaign)
    assert notes(upload_dir) == [] and len(previews) == 2
