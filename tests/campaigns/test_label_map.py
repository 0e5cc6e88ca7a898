"""A model's label names mapped to the campaign's (`Campaign.flip_label_map`): the lines of
the settings page, the API's object, and the service that stores it (the settings page's
own tests are in test_forms_and_pages.py)."""

import pytest

from cfannotate.campaigns.label_map import (
    label_map_check,
    label_map_entries_check,
    label_map_lines,
    label_map_text,
)
from cfannotate.campaigns.services import campaign_update
from cfannotate.core.exceptions import InvalidInput

LABELS = [("negative", "Negative"), ("positive", "Positive")]


def _parse(text: str) -> tuple[dict[str, str], list[str]]:
    return label_map_entries_check(label_map_lines(text), labels=LABELS)


def test_one_mapping_a_line_with_either_separator_and_blank_lines_skipped():
    mapping, problems = _parse("LABEL_0 = negative\n\n   \nLABEL_1: Positive\n")
    assert problems == []
    # The campaign's label in any case or as its display name is stored as its value.
    assert mapping == {"LABEL_0": "negative", "LABEL_1": "positive"}
    assert label_map_text(mapping) == "LABEL_0 = negative\nLABEL_1 = positive"
    assert _parse(label_map_text(mapping))[0] == mapping


def test_every_bad_line_is_named_by_its_number():
    text = (
        "LABEL_0 = negative\n"
        "LABEL_1 positive\n"  # no separator
        "= negative\n"  # no model label
        "LABEL_2 = sarcastic\n"  # not a label of the campaign
        "label_0 = positive\n"  # LABEL_0 again (model labels match in any case)
        "LABEL_3 =\n"  # no campaign label
    )
    mapping, problems = _parse(text)
    assert problems == [
        "Line 2: write it as “model label = campaign label”.",
        "Line 3: no model label before the “=”.",
        "Line 4: sarcastic is not a label of this campaign; one of negative, positive.",
        "Line 5: the model label label_0 is already mapped in Line 1.",
        "Line 6: no campaign label after the “=”; one of negative, positive.",
    ]
    assert mapping == {"LABEL_0": "negative"}


def test_a_model_label_is_mapped_once_even_where_its_first_line_is_refused():
    _, problems = _parse("LABEL_0 = sarcastic\nLABEL_0 = negative\n")
    assert problems == [
        "Line 1: sarcastic is not a label of this campaign; one of negative, positive.",
        "Line 2: the model label LABEL_0 is already mapped in Line 1.",
    ]


def test_the_apis_object_is_checked_by_the_same_rules():
    assert label_map_check({"NEG": "Negative", "POS": "positive"}, labels=LABELS) == {
        "NEG": "negative",
        "POS": "positive",
    }
    with pytest.raises(InvalidInput) as caught:
        label_map_check({"LABEL_0": "sarcastic", "LABEL_1": None, "": "negative"}, labels=LABELS)
    assert caught.value.fields == {
        "flip_label_map": [
            "“LABEL_0”: sarcastic is not a label of this campaign; one of negative, positive.",
            "“LABEL_1”: no campaign label after the “=”; one of negative, positive.",
            "“”: no model label before the “=”.",
        ]
    }
    with pytest.raises(InvalidInput) as caught:
        label_map_check(["LABEL_0", "negative"], labels=LABELS)
    assert "flip_label_map" in caught.value.fields


@pytest.mark.django_db
def test_the_service_stores_the_campaigns_label_values_or_refuses_naming_the_setting(campaign):
    assert campaign.flip_label_map == {}  # the default: the model's names are the campaign's
    updated = campaign_update(
        campaign=campaign,
        settings={"flip_label_map": {"LABEL_0": "Negative", "LABEL_1": "positive"}},
    )
    assert updated.flip_label_map == {"LABEL_0": "negative", "LABEL_1": "positive"}
    with pytest.raises(InvalidInput) as caught:
        campaign_update(campaign=campaign, settings={"flip_label_map": {"LABEL_0": "sarcastic"}})
    assert list(caught.value.fields) == ["flip_label_map"]
    campaign.refresh_from_db()
    assert campaign.flip_label_map == {"LABEL_0": "negative", "LABEL_1": "positive"}


@pytest.mark.django_db
def test_the_api_sets_the_map_as_an_object_and_refuses_a_bad_one(api_client, campaign):
    url = f"/api/campaigns/{campaign.id}/update/"
    response = api_client.patch(
        url, {"settings": {"flip_label_map": {"NEGATIVE": "negative"}}}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["flip_label_map"] == {"NEGATIVE": "negative"}

    response = api_client.patch(
        url, {"settings": {"flip_label_map": {"LABEL_1": "sarcastic"}}}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {
        "flip_label_map": [
            "“LABEL_1”: sarcastic is not a label of this campaign; one of negative, positive."
        ]
    }
    campaign.refresh_from_db()
    assert campaign.flip_label_map == {"NEGATIVE": "negative"}
