import yaml


def test_openapi_schema_is_served(client, db):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    assert "/api/campaigns/create/" in schema["paths"]
    assert {"cookieAuth", "tokenAuth"} <= set(schema["components"]["securitySchemes"])


def test_api_docs_page_loads_only_local_assets(client, db):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    assert "cdn" not in html.lower()


def test_home_page_for_visitors_loads_no_external_asset(client, db):
    html = client.get("/").content.decode()
    assert "/static/django_htmx/htmx-2.min.js" in html
    assert "http://" not in html and "https://" not in html


def test_health_probe(client, db):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_htmx_requests_carry_the_csrf_token(client, db):
    html = client.get("/").content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in html


def test_admin_login_leads_to_the_login_page(client, db):
    response = client.get("/admin/login/", follow=True)
    assert response.status_code == 200
    assert response.redirect_chain == [("/accounts/login/?next=/admin/", 302)]


def test_the_favicon_address_leads_to_the_svg_icon(client):
    # Browsers ask for /favicon.ico after htmx swaps; a 404 there is a console error.
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith("favicon.svg")
    assert client.post("/favicon.ico").status_code == 405
