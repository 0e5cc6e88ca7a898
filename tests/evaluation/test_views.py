"""The campaign page's evaluation section: loader, run forms, tables like Tables 2 and 3, charts."""

import json
import re

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from cfannotate.evaluation.models import Evaluation
from tests.evaluation.conftest import exact_predictions


def jsonl(name: str, rows) -> SimpleUploadedFile:
    text = "\n".join(json.dumps(row) for row in rows) + "\n"
    return SimpleUploadedFile(name, text.encode(), content_type="application/jsonl")


def test_the_campaign_page_loads_the_section(client, researcher, campaign):
    client.force_login(researcher)

    html = client.get(reverse("campaign-exports", args=[campaign.id])).content.decode()

    assert f'hx-get="{reverse("evaluation-fragment", args=[campaign.id])}"' in html


def test_the_empty_section_offers_both_runs(client, researcher, campaign):
    client.force_login(researcher)

    response = client.get(
        reverse("evaluation-fragment", args=[campaign.id]), HTTP_HX_REQUEST="true"
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="evaluation"')
    assert "No contrast-set evaluation yet." in html
    assert "No augmentation experiment yet." in html
    assert html.count(f'hx-post="{reverse("evaluation-run", args=[campaign.id])}"') == 2


def test_uploaded_predictions_render_table2_and_its_chart(client, researcher, labeled):
    client.force_login(researcher)

    response = client.post(
        reverse("evaluation-run", args=[labeled.campaign.id]),
        {"kind": "table2", "predictions": jsonl("p.jsonl", exact_predictions(labeled))},
        HTTP_HX_REQUEST="true",
    )

    html = response.content.decode()
    assert response.status_code == 200, html
    assert "Contrast set (Table 2) computed with the uploaded predictions." in html
    assert '<th scope="col" class="num">Consistency</th>' in html
    assert "50.0 (+0.0)" in html  # contrast accuracy and its drop, as in Polyjuice Table 2
    assert "1/2" in html
    assert "<svg" in html and "Accuracy on originals and contrast set" in html
    assert 'class="series-4"' in html  # interval whiskers
    assert Evaluation.objects.get().created_by == researcher


def test_without_htmx_the_section_is_a_page_and_a_run_comes_back_to_it(client, researcher, labeled):
    """No JavaScript: the exports page links to the evaluation, a page of its own, whose
    forms post plainly; a run goes back to it, saying what it did."""
    client.force_login(researcher)
    campaign_id = labeled.campaign.id
    section = reverse("evaluation-fragment", args=[campaign_id])
    assert (
        f'href="{section}"'
        in client.get(reverse("campaign-exports", args=[campaign_id])).content.decode()
    )
    page = client.get(section).content.decode()
    run = reverse("evaluation-run", args=[campaign_id])
    assert "<h1>Exports</h1>" in page and "No contrast-set evaluation yet." in page
    assert f'method="post" action="{run}" enctype="multipart/form-data"' in page

    response = client.post(
        run,
        {"kind": "table2", "predictions": jsonl("p.jsonl", exact_predictions(labeled))},
        HTTP_REFERER=f"http://testserver{section}",
    )
    assert response.status_code == 303 and response["Location"] == f"http://testserver{section}"
    shown = client.get(section).content.decode()
    assert "Contrast set (Table 2) computed with the uploaded predictions." in shown
    assert '<th scope="col" class="num">Consistency</th>' in shown


def test_table3_renders_comp_and_aug_rows(client, researcher, evaluable):
    client.force_login(researcher)

    response = client.post(
        reverse("evaluation-run", args=[evaluable.campaign.id]),
        {"kind": "table3", "test_fraction": "0.5", "seeds": "0, 1", "n": "", "m": ""},
        HTTP_HX_REQUEST="true",
    )

    html = response.content.decode()
    assert response.status_code == 200, html
    assert '<th scope="row">comp</th>' in html and '<th scope="row">aug</th>' in html
    assert "comp against aug" in html
    assert Evaluation.objects.get().parameters["seeds"] == [0, 1]


def test_a_bad_form_is_a_400_fragment_that_says_why(client, researcher, campaign):
    client.force_login(researcher)
    run = reverse("evaluation-run", args=[campaign.id])

    bad_seeds = client.post(run, {"kind": "table3", "seeds": "a,b"})
    bad_file = client.post(
        run,
        {"kind": "table2", "predictions": SimpleUploadedFile("p.jsonl", b"{not json\n")},
    )
    not_enough = client.post(run, {"kind": "table2"})

    assert bad_seeds.status_code == 400
    assert "seeds: Give whole numbers separated by commas" in bad_seeds.content.decode()
    assert bad_file.status_code == 400
    assert "line 1: Not valid JSON" in bad_file.content.decode()
    assert not_enough.status_code == 400
    assert "no contrast set yet" in not_enough.content.decode()
    assert 'id="evaluation"' in not_enough.content.decode()
    assert not Evaluation.objects.exists()


def test_a_latin1_predictions_file_is_refused_with_the_byte_and_the_fix(
    client, researcher, labeled
):
    client.force_login(researcher)
    rows = [json.dumps(row) for row in exact_predictions(labeled)]
    rows[1] = '{"id": "été", "label": "positive"}'
    content = "\n".join(rows).encode("latin-1")

    response = client.post(
        reverse("evaluation-run", args=[labeled.campaign.id]),
        {"kind": "table2", "predictions": SimpleUploadedFile("p.jsonl", content)},
    )

    html = response.content.decode()
    assert response.status_code == 400
    assert "The predictions file is refused: The file is not UTF-8 text: line 2 has" in html
    assert "encoding=&#x27;utf-8&#x27;" in html
    assert "line 2: Byte 0xE9 (&#x27;é&#x27; in Windows-1252) at character 9" in html
    assert not Evaluation.objects.exists()


def test_another_owners_campaign_is_a_404(client, other_researcher, labeled):
    client.force_login(other_researcher)

    assert client.get(reverse("evaluation-fragment", args=[labeled.campaign.id])).status_code == 404
    response = client.post(
        reverse("evaluation-run", args=[labeled.campaign.id]), {"kind": "table2"}
    )
    assert response.status_code == 404


def _table3_inputs(html: str) -> dict[str, str]:
    form = html[html.index('value="table3"') :]
    form = form[: form.index("</form>")]
    return {
        name: re.search(rf'name="{name}"[^>]*value="([^"]*)"', form).group(1)
        for name in ("n", "m", "test_fraction", "seeds")
    }


def test_a_refused_table3_run_keeps_what_was_typed(client, researcher, campaign):
    """With htmx and without, a refused run shows the posted n, m, held out and seeds, not
    empty boxes and the defaults."""
    client.force_login(researcher)
    run = reverse("evaluation-run", args=[campaign.id])
    typed = [
        {"n": "99999999999999999999999", "m": "4", "test_fraction": "0.3", "seeds": "7,8"},
        {"n": "5", "m": "5", "test_fraction": "nan", "seeds": "7,8"},
        {"n": "5", "m": "6", "test_fraction": "0.4", "seeds": "1,1"},
    ]

    for values in typed:
        for headers in ({"HTTP_HX_REQUEST": "true"}, {}):
            response = client.post(run, {"kind": "table3", **values}, **headers)

            assert response.status_code == 400
            assert _table3_inputs(response.content.decode()) == values


def test_the_table3_form_starts_with_the_defaults(client, researcher, campaign):
    client.force_login(researcher)

    html = client.get(
        reverse("evaluation-fragment", args=[campaign.id]), HTTP_HX_REQUEST="true"
    ).content.decode()

    assert _table3_inputs(html) == {"n": "", "m": "", "test_fraction": "0.3", "seeds": "0,1,2"}


def test_seeds_and_sizes_in_other_digits_are_refused(client, researcher, campaign):
    client.force_login(researcher)
    run = reverse("evaluation-run", args=[campaign.id])

    seeds = client.post(run, {"kind": "table3", "seeds": "1_0,\u0661"})
    size = client.post(run, {"kind": "table3", "n": "1_0"})

    assert seeds.status_code == 400
    assert "seeds: Give whole numbers separated by commas" in seeds.content.decode()
    assert size.status_code == 400
    assert "n: Enter a whole number. Use digits, e.g. 12." in size.content.decode()
    assert not Evaluation.objects.exists()


def test_two_prediction_files_in_one_post_are_refused(client, researcher, labeled):
    client.force_login(researcher)
    predictions = exact_predictions(labeled)
    response = client.post(
        reverse("evaluation-run", args=[labeled.campaign.id]),
        {
            "kind": "table2",
            "predictions": [jsonl("p.jsonl", predictions), jsonl("q.jsonl", predictions)],
        },
        HTTP_HX_REQUEST="true",
    )
    assert "Send one file at a time; this request has 2" in response.content.decode()
    assert not Evaluation.objects.exists()
