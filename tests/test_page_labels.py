"""Every form field on every researcher page has a name a screen reader can say: a
`<label for>`, a label around it, `aria-label`, `aria-labelledby` or a `title`."""

from html.parser import HTMLParser

import pytest

from bench.pages import request_headers
from tests.test_page_queries import _labeled, researcher_pages

pytestmark = pytest.mark.django_db

FIELDS = {"input", "select", "textarea"}
UNNAMED_TYPES = {"hidden", "submit", "button", "reset", "image"}  # named by their value


class _Fields(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.label_for: set[str] = set()
        self.open_labels = 0
        self.unlabeled: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "label":
            self.open_labels += 1
            if attributes.get("for"):
                self.label_for.add(attributes["for"])
        elif tag in FIELDS and attributes.get("type") not in UNNAMED_TYPES:
            named = self.open_labels or any(
                attributes.get(name) for name in ("aria-label", "aria-labelledby", "title")
            )
            if not named:
                self.unlabeled.append((tag, attributes))

    def handle_endtag(self, tag):
        if tag == "label" and self.open_labels:
            self.open_labels -= 1


def unlabeled_fields(html: str) -> list[str]:
    parser = _Fields()
    parser.feed(html)
    return [
        f"<{tag} name={attributes.get('name')!r} id={attributes.get('id')!r}>"
        for tag, attributes in parser.unlabeled
        if attributes.get("id") not in parser.label_for
    ]


def test_every_field_of_every_researcher_page_has_a_label(client, researcher):
    client.force_login(researcher)
    campaign = _labeled(researcher, units=3, workers=2)
    missing = {}
    for name, url in researcher_pages(campaign).items():
        response = client.get(url, headers=request_headers(name))  # a block as htmx loads it
        assert response.status_code == 200, (name, response.status_code)
        if problems := unlabeled_fields(response.content.decode()):
            missing[name] = problems
    assert missing == {}


def test_the_check_sees_each_way_of_naming_a_field():
    assert unlabeled_fields('<input name="a" id="a">') == ["<input name='a' id='a'>"]
    assert unlabeled_fields('<label for="a">A</label><input name="a" id="a">') == []
    assert unlabeled_fields('<label>A <select name="b"></select></label>') == []
    assert unlabeled_fields('<textarea name="c" aria-label="C"></textarea>') == []
    assert unlabeled_fields('<input type="hidden" name="d"><input type="submit">') == []
    assert unlabeled_fields('<label>A</label><input name="e">') == ["<input name='e' id=None>"]
