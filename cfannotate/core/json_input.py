"""Parsing the JSON that clients send: API bodies, JSON form fields and uploaded lines.

Python's parser recurses once per nesting level, so a body of a few thousand `[` ends
in RecursionError, a 500; and a value that parses just under the recursion limit fails
later, in code that walks it deeper down the stack (the JSON encoder saving a
JSONField, serializers, error flattening). So every JSON input goes through
`json_loads`, which refuses nesting deeper than MAX_DEPTH, and `NaN` or `Infinity`
(not JSON, and unstorable in PostgreSQL's jsonb), as syntax errors.
"""

import json
import re

from rest_framework import parsers, serializers
from rest_framework.exceptions import ParseError

from cfannotate.core.exceptions import InvalidInput

# Records, generator options and mappings nest three or four levels; the limit stays far
# below Python's recursion limit, which the code that later walks the value shares.
MAX_DEPTH = 64

# Outside strings: what nests, and the constants Python's parser would take.
_STRING_OR_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|([\[\]{}])|(NaN|-?Infinity)')


class JSONTooDeep(json.JSONDecodeError):
    """Nesting past MAX_DEPTH, at the bracket that passes it."""


class _NonFiniteConstant(ValueError):
    pass


def _refuse_constant(name: str) -> float:
    raise _NonFiniteConstant(name)


def json_loads(text: str | bytes) -> object:
    """`json.loads`, but nesting past MAX_DEPTH and NaN/Infinity are `json.JSONDecodeError`."""
    if isinstance(text, bytes | bytearray):
        text = text.decode()
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except _NonFiniteConstant as error:
        raise json.JSONDecodeError(
            f"{error} is not a JSON number", text, _first_constant_at(text)
        ) from None
    except RecursionError:
        raise _too_deep(text) from None
    if _nests_deeper_than(value, MAX_DEPTH):
        raise _too_deep(text)
    return value


def _nests_deeper_than(value: object, limit: int) -> bool:
    """Level by level, not recursively: the point is to refuse what recursion cannot take.

    For what `json.loads` returns, whose containers are exactly dicts and lists.
    """
    containers = (dict, list)
    level = [value] if type(value) in containers else []
    for _ in range(limit):
        deeper = []
        for item in level:
            children = item.values() if type(item) is dict else item
            deeper += [child for child in children if type(child) in containers]
        if not deeper:
            return False
        level = deeper
    return True


def _too_deep(text: str) -> JSONTooDeep:
    return JSONTooDeep(f"nested deeper than {MAX_DEPTH} levels", text, _too_deep_at(text))


def _too_deep_at(text: str) -> int:
    """Where the nesting first passes MAX_DEPTH (only called once it does)."""
    depth = 0
    for match in _STRING_OR_TOKEN.finditer(text):
        bracket = match.group(1)
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif bracket:
            depth -= 1
    return 0


def _first_constant_at(text: str) -> int:
    for match in _STRING_OR_TOKEN.finditer(text):
        if match.group(2):
            return match.start()
    return 0


class BoundedJSONParser(parsers.JSONParser):
    """DRF's JSON body parser on `json_loads`: a too-deep body is a 400 like a syntax error."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = parsers.get_encoding(parser_context or {})
        try:
            value = json_loads(stream.read().decode(encoding))
        except UnicodeDecodeError:
            raise ParseError(f"JSON parse error - the body is not {encoding} text.") from None
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
        if where := nul_at(value):
            # PostgreSQL cannot store the character in text; no input of ours needs it.
            raise InvalidInput(
                f"The body holds a NUL character (\\u0000) in {where}; remove it.",
                fields={where: ["Holds a NUL character (\\u0000); remove it."]},
            )
        return value


def nul_at(value: object, where: str = "the body") -> str:
    """Where the first NUL character of a parsed JSON value is ("" when there is none): `where`,
    then each key or index on the way down, as `records[2].text`. Level by level, as the
    value is already bounded by MAX_DEPTH."""
    level = [(where, value)]
    while level:
        deeper = []
        for path, item in level:
            if isinstance(item, str):
                if "\x00" in item:
                    return path
            elif isinstance(item, dict):
                for key, child in item.items():
                    if "\x00" in key:
                        return f"a key of {path}"
                    deeper.append((f"{key}" if path == where else f"{path}.{key}", child))
            elif isinstance(item, list):
                deeper += [(f"{path}[{index}]", child) for index, child in enumerate(item)]
        level = deeper
    return ""


class BoundedJSONField(serializers.JSONField):
    """A JSON field whose text (multipart form input, `binary=True`) is read by `json_loads`."""

    def to_internal_value(self, data):
        if self.binary or getattr(data, "is_json_string", False):
            try:
                value = json_loads(data)
            except JSONTooDeep as error:
                raise serializers.ValidationError(
                    f"Value must be valid JSON: {error.msg}."
                ) from None
            except ValueError:
                self.fail("invalid")
            if where := nul_at(value, "the value"):
                raise serializers.ValidationError(
                    f"Holds a NUL character (\\u0000) at {where}; remove it."
                )
            return value
        return super().to_internal_value(data)
