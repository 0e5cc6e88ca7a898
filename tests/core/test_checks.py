"""The system checks that keep the API's token and JSON settings on cfannotate's classes."""

from cfannotate.core.checks import check_api_token_authentication, check_json_parser


def _rest_framework(settings, **changes):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, **changes}


def test_drf_token_authentication_is_flagged(settings):
    _rest_framework(
        settings,
        DEFAULT_AUTHENTICATION_CLASSES=[
            "rest_framework.authentication.TokenAuthentication",
            "rest_framework.authentication.SessionAuthentication",
        ],
    )
    [warning] = check_api_token_authentication(None)
    assert warning.id == "cfannotate.W010"
    assert "rest_framework.authentication.TokenAuthentication" in warning.msg


def test_the_digest_token_authentication_passes(settings):
    _rest_framework(
        settings,
        DEFAULT_AUTHENTICATION_CLASSES=[
            "cfannotate.core.api_tokens.ApiTokenAuthentication",
            "rest_framework.authentication.SessionAuthentication",
        ],
    )
    assert check_api_token_authentication(None) == []


def test_drf_json_parser_is_flagged_and_the_bounded_one_passes(settings):
    _rest_framework(settings, DEFAULT_PARSER_CLASSES=["rest_framework.parsers.JSONParser"])
    [warning] = check_json_parser(None)
    assert warning.id == "cfannotate.W011"
    _rest_framework(
        settings,
        DEFAULT_PARSER_CLASSES=[
            "cfannotate.core.json_input.BoundedJSONParser",
            "rest_framework.parsers.FormParser",
        ],
    )
    assert check_json_parser(None) == []
