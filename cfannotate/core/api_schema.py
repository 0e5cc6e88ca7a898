"""Documents the API's one error shape, `{"message", "fields"}`, on every operation.

Every view answers refused requests through `cfannotate.core.api_errors`, so rather
than repeat a 400/403/404/... entry on each `extend_schema`, this drf-spectacular
postprocessing hook adds a `4XX` response (OpenAPI's range key) with the `Error`
component wherever an operation does not document its own 4xx answers.
"""

ERROR_COMPONENT = "Error"
ERROR_SCHEMA = {
    "type": "object",
    "description": "Why the request was refused; `fields` names the inputs at fault.",
    "properties": {
        "message": {"type": "string"},
        "fields": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
    },
    "required": ["message", "fields"],
}
ERROR_RESPONSE = {
    "description": "The request was refused: malformed input, not signed in, not yours, "
    "not found, not allowed in the campaign's current state, or too many requests "
    "(429, with a Retry-After header in seconds).",
    "content": {
        "application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}}
    },
}


def add_error_responses(result: dict, generator, request, public) -> dict:
    """POSTPROCESSING_HOOKS entry: the `Error` component and a `4XX` response per operation."""
    result.setdefault("components", {}).setdefault("schemas", {})[ERROR_COMPONENT] = ERROR_SCHEMA
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            if not any(str(code).startswith("4") for code in responses):
                responses["4XX"] = ERROR_RESPONSE
    return result
