"""Request bodies and query parameters of the API: a body's key the endpoint does not take
is refused, not ignored, and a number sent as text must be written in plain digits."""

from collections.abc import Mapping

from rest_framework import serializers

from cfannotate.core.form_numbers import written_number_problem

# Sent by a browser's form (the browsable API) beside the fields; never a field itself.
FORM_KEYS = frozenset({"csrfmiddlewaretoken"})
MAX_NAMED = 20  # unknown keys named in one answer

# DRF's number fields read text with int(), float() and Decimal(), which also take "1_000"
# and other scripts' digits ("١٢"): `{"places": "1_0"}` added 10 places without a word.
_NUMBER_KINDS = (
    (serializers.IntegerField, "integer"),
    (serializers.DecimalField, "decimal"),
    (serializers.FloatField, "float"),
)


def _number_kind(field: serializers.Field) -> str | None:
    for field_class, kind in _NUMBER_KINDS:
        if isinstance(field, field_class):
            return kind
    return None


class QuerySerializer(serializers.Serializer):
    """Query parameters: a number parameter given text that is not a plain ASCII number
    (`?original=1_0`, which int() reads as 10) is a 400 under its name, as in a body.
    Parameters it does not declare (`page`, `format`) are left to others."""

    def to_internal_value(self, data):
        errors = self._input_errors(data) if isinstance(data, Mapping) else {}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if not errors or not isinstance(exc.detail, Mapping):
                raise
            raise serializers.ValidationError({**exc.detail, **errors}) from exc
        if errors:
            raise serializers.ValidationError(errors)
        return value

    def _input_errors(self, data: Mapping) -> dict:
        """What is wrong with `data` that DRF's own validation lets through."""
        return written_number_errors(self.fields, data)


class BodySerializer(QuerySerializer):
    """DRF drops the keys a serializer does not declare: `{"acept": [3]}` accepted nothing
    and answered 200, and a setting sent beside `settings` rather than in it seemed saved.
    Here each such key is a 400 under its own name, with the keys the request takes.

    A number field (or a list of them) given text that is not a plain ASCII number is a
    400 under its name too, as the forms' strict number fields (core.form_numbers) do."""

    def _input_errors(self, data: Mapping) -> dict:
        return self._unknown_key_errors(data) | super()._input_errors(data)

    def _unknown_key_errors(self, data: Mapping) -> dict:
        unknown = sorted(set(data) - set(self.fields) - FORM_KEYS)
        if not unknown:
            return {}
        takes = ", ".join(name for name, field in self.fields.items() if not field.read_only)
        problem = f"Not a field of this request; it takes {takes}."
        errors = {key: [problem] for key in unknown[:MAX_NAMED]}
        if len(unknown) > MAX_NAMED:
            errors["non_field_errors"] = [f"And {len(unknown) - MAX_NAMED} more unknown keys."]
        return errors


def written_number_errors(fields: Mapping, data: Mapping) -> dict:
    """Each number field (or list of them) of `fields` given text in `data` that is not a
    plain ASCII number, with why, under its name (and a list item under its index)."""
    errors = {}
    for name, field in fields.items():
        if field.read_only or name not in data:
            continue
        # A form post (the browsable API) sends a list as repeated keys.
        many = isinstance(field, serializers.ListField) and hasattr(data, "getlist")
        value = data.getlist(name) if many else data[name]
        if kind := _number_kind(field):
            if problem := written_number_problem(value, kind):
                errors[name] = [problem]
        elif (
            isinstance(field, serializers.ListField)
            and isinstance(value, list)
            and (kind := _number_kind(field.child))
        ):
            problems = {
                index: [problem]
                for index, item in enumerate(value)
                if (problem := written_number_problem(item, kind))
            }
            if problems:
                errors[name] = problems
    return errors
