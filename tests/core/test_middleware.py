from django.http import HttpResponse
from django.test import RequestFactory

from cfannotate.core.framing import allow_form_posts, allow_framing
from cfannotate.core.middleware import ContentSecurityPolicyMiddleware, build_policy


def _policy(response) -> dict[str, list[str]]:
    directives = [part.strip().split() for part in response["Content-Security-Policy"].split(";")]
    return {name: sources for name, *sources in directives}


def test_every_page_denies_framing_and_foreign_scripts(client, db):
    response = client.get("/")
    policy = _policy(response)
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["script-src"] == ["'self'"]
    assert response["X-Frame-Options"] == "DENY"


def test_error_responses_carry_the_policy_too(client, db):
    response = client.get("/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_allow_framing_names_only_the_given_origins():
    def view(request):
        response = HttpResponse("task")
        allow_framing(response, origins=["https://worker.mturk.com"])
        return allow_form_posts(response, origins=["https://www.mturk.com"])

    response = ContentSecurityPolicyMiddleware(view)(RequestFactory().get("/"))
    policy = _policy(response)
    assert policy["frame-ancestors"] == ["'self'", "https://worker.mturk.com"]
    assert policy["form-action"] == ["'self'", "https://www.mturk.com"]
    assert response.xframe_options_exempt is True


def test_build_policy_keeps_defaults_for_untouched_directives():
    policy = build_policy({"img-src": ["'self'"]})
    assert "object-src 'none'" in policy
    assert "img-src 'self';" in policy
