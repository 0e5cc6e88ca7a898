"""Number fields that take plain ASCII digits only, never "1_000" or other scripts' digits."""

from decimal import Decimal

import pytest
from django import forms

from cfannotate.campaigns.models import Campaign
from cfannotate.core.form_numbers import (
    StrictDecimalField,
    StrictFloatField,
    StrictIntegerField,
    is_digits,
    plain_int,
    strict_formfield,
)


class NumbersForm(forms.Form):
    count = StrictIntegerField(required=False)
    share = StrictFloatField(required=False)
    amount = StrictDecimalField(required=False, max_digits=8, decimal_places=2)


def _clean(**data):
    form = NumbersForm(data)
    return form.is_valid(), form


@pytest.mark.parametrize(
    ("data", "cleaned"),
    [
        ({"count": "12"}, 12),
        ({"count": " -3 "}, -3),
        ({"count": "+4"}, 4),
        ({"count": "12.0"}, 12),  # as Django's IntegerField
        ({"share": "0.5"}, 0.5),
        ({"share": ".5"}, 0.5),
        ({"share": "-1e-3"}, -0.001),
        ({"amount": "0.50"}, Decimal("0.50")),
        ({"amount": "10"}, Decimal("10")),
        ({"count": ""}, None),
    ],
)
def test_plain_numbers_are_read(data, cleaned):
    valid, form = _clean(**data)
    [(name, _)] = data.items()
    assert valid, form.errors
    assert form.cleaned_data[name] == cleaned


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("count", "1_000", "Enter a whole number. Use digits, e.g. 12."),
        ("count", "\u0661\u0662", "Enter a whole number. Use digits, e.g. 12."),
        ("count", "\uff11\uff12", "Enter a whole number. Use digits, e.g. 12."),  # full width
        ("count", "1e3", "Enter a whole number. Use digits, e.g. 12."),
        ("share", "1_0", "Enter a number. Use digits, e.g. 0.5."),
        ("share", "\u0660.\u0665", "Enter a number. Use digits, e.g. 0.5."),
        ("share", "nan", "Enter a number. Use digits, e.g. 0.5."),
        ("share", "1e999", "Enter a number. Use digits, e.g. 0.5."),
        ("amount", "1_0", "Enter a number. Use digits, e.g. 0.50."),
        ("amount", "\u0661\u0662", "Enter a number. Use digits, e.g. 0.50."),
        ("amount", "1e1", "Enter a number. Use digits, e.g. 0.50."),
        ("amount", "Infinity", "Enter a number. Use digits, e.g. 0.50."),
    ],
)
def test_underscores_other_digits_and_non_numbers_are_refused(name, text, message):
    valid, form = _clean(**{name: text})
    assert not valid
    assert form.errors[name] == [message]


def test_plain_int():
    assert (plain_int(" 7 "), plain_int("-7"), plain_int("12.0")) == (7, -7, 12)
    for text in ("1_0", "\u0663", "\u00b2", "", "1.5", "1e3"):
        assert plain_int(text) is None, text


def test_is_digits():
    assert is_digits("0042")
    for text in ("\u0661\u0662", "\u00b2", "-1", " 1", ""):  # "²".isdigit() is true
        assert not is_digits(text), text


def test_strict_formfield_maps_a_models_number_fields():
    def field(name):
        return strict_formfield(Campaign._meta.get_field(name))

    assert type(field("lease_minutes")) is StrictIntegerField
    assert field("lease_minutes").min_value == 0  # the model's own bounds are kept
    assert type(field("weight_base")) is StrictFloatField
    assert type(field("bonus_amount")) is StrictDecimalField
    assert type(field("name")) is forms.CharField
    assert type(field("flip_classifier")) is forms.TypedChoiceField
