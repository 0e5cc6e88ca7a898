"""Request bodies of the API: a key the endpoint does not take is refused, not ignored."""

from collections.abc import Mapping

from rest_framework import serializers

# Sent by a browser's form (the browsable API) beside the fields; never a field itself.
FORM_KEYS = frozenset({"csrfmiddlewaretoken"})
MAX_NAMED = 20  # unknown keys named in one answer


class BodySerializer(serializers.Serializer):
    """DRF drops the keys a serializer does not declare: `{"acept": [3]}` accepted nothing
    and answered 200, and a setting sent beside `settings` rather than in it seemed saved.
    Here each such key is a 400 under its own name, with the keys the request takes."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields) - FORM_KEYS)
            if unknown:
                takes = ", ".join(
                    name for name, field in self.fields.items() if not field.read_only
                )
                problem = f"Not a field of this request; it takes {takes}."
                errors = {key: [problem] for key in unknown[:MAX_NAMED]}
                if len(unknown) > MAX_NAMED:
                    errors["non_field_errors"] = [
                        f"And {len(unknown) - MAX_NAMED} more unknown keys."
                    ]
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
