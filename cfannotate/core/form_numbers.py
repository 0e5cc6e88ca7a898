"""Number fields for forms that take only numbers as people write them in plain digits.

Python's int(), float() and Decimal() also read "1_000" and other scripts' digits ("١٢"),
so Django's number fields would save `amount=1_0` as 10.00 without a word. These fields
refuse anything but ASCII: an optional sign, digits, a decimal point and digits (and an
exponent for floats, which number inputs may send). Use them in place of Django's:

    amount = StrictDecimalField(max_digits=8, decimal_places=2)

and in a ModelForm, `Meta.formfield_callback = strict_formfield` for the model's fields.
Numbers read from a POST by hand: `plain_int(text)` and `is_digits(text)`, not int() or
str.isdigit(). The API's request bodies check text sent for a number with
`written_number_problem` (core.api_input.BodySerializer).
"""

import re

from django import forms
from django.core.exceptions import ValidationError
from django.db import models

# Django's IntegerField takes "12.0" as 12; so do these.
_PLAIN_INTEGER = re.compile(r"[+-]?[0-9]+(\.0*)?")
_PLAIN_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_PLAIN_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")

# Django's words first, then how to write it.
INTEGER_MESSAGE = "Enter a whole number. Use digits, e.g. 12."
NUMBER_MESSAGE = "Enter a number. Use digits, e.g. 0.5."
DECIMAL_MESSAGE = "Enter a number. Use digits, e.g. 0.50."


_KINDS = {
    "integer": (_PLAIN_INTEGER, INTEGER_MESSAGE),
    "float": (_PLAIN_FLOAT, NUMBER_MESSAGE),
    "decimal": (_PLAIN_DECIMAL, DECIMAL_MESSAGE),
}


def plain_int(text: str) -> int | None:
    """`text` as a whole number when it is one in ASCII digits (" -3 ", "12.0"), else None."""
    text = text.strip()
    if _PLAIN_INTEGER.fullmatch(text) is None:
        return None
    return int(text.partition(".")[0])


def is_plain_number(text: str) -> bool:
    """Whether `text` is a number written in ASCII digits (" -3 ", "0.5", "1e-3"), which is
    all int(), float() or Decimal() should be given of what a person or a client typed."""
    return _PLAIN_FLOAT.fullmatch(text.strip()) is not None


def is_digits(text: str) -> bool:
    """Whether `text` is ASCII digits alone (an id, a count). str.isdigit() is also true for
    "١٢", which int() reads as 12, and for "²", which int() refuses."""
    return text.isascii() and text.isdigit()


def written_number_problem(value, kind: str) -> str | None:
    """What is wrong with `value`, text a client sent for a number of `kind` ("integer",
    "float" or "decimal"), or None when it is a plain ASCII number or not text at all (a
    JSON number is a number already)."""
    if not isinstance(value, str) or not value.strip():
        return None
    pattern, message = _KINDS[kind]
    return None if pattern.fullmatch(value.strip()) else message


def _check_plain(value, pattern: re.Pattern, message: str) -> None:
    # Values that are not text (an int from `initial`, a Decimal from the instance) are
    # numbers already; only what a person typed is checked.
    if isinstance(value, str) and value.strip() and not pattern.fullmatch(value.strip()):
        raise ValidationError(message, code="invalid")


class StrictIntegerField(forms.IntegerField):
    default_error_messages = {"invalid": INTEGER_MESSAGE}

    def to_python(self, value):
        _check_plain(value, _PLAIN_INTEGER, self.error_messages["invalid"])
        return super().to_python(value)


class StrictFloatField(forms.FloatField):
    default_error_messages = {"invalid": NUMBER_MESSAGE}

    def to_python(self, value):
        _check_plain(value, _PLAIN_FLOAT, self.error_messages["invalid"])
        return super().to_python(value)


class StrictDecimalField(forms.DecimalField):
    default_error_messages = {"invalid": DECIMAL_MESSAGE}

    def to_python(self, value):
        _check_plain(value, _PLAIN_DECIMAL, self.error_messages["invalid"])
        return super().to_python(value)


def strict_formfield(db_field: models.Field, **kwargs) -> forms.Field | None:
    """A ModelForm's `formfield_callback`: the model's number fields as strict form fields.

    Fields with choices keep their select (Django ignores `form_class` for them).
    """
    if isinstance(db_field, models.DecimalField):
        kwargs.setdefault("form_class", StrictDecimalField)
    elif isinstance(db_field, models.FloatField):
        kwargs.setdefault("form_class", StrictFloatField)
    elif isinstance(db_field, models.IntegerField) and not isinstance(db_field, models.AutoField):
        kwargs.setdefault("form_class", StrictIntegerField)
    return db_field.formfield(**kwargs)
