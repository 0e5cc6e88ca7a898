"""Forms of the campaign pages: a new campaign from a task template, and its settings.

The forms only parse what the browser sends; `services.campaign_create` and
`services.campaign_update` decide what is valid, exactly as for the API, and their
field errors are put back on the form (`errors_onto_form`).
"""

import json
import secrets

from django import forms

from cfannotate.campaigns.generator_options import (
    ENGINE_GENERATOR,
    ENGINE_OPTIONS,
    SERVER_OPTIONS,
)
from cfannotate.campaigns.label_map import (
    label_map_entries_check,
    label_map_lines,
    label_map_text,
)
from cfannotate.campaigns.models import SETTING_STAGES, Campaign, TaskType
from cfannotate.campaigns.task_templates import template_for
from cfannotate.core.exceptions import CfannotateError
from cfannotate.core.form_numbers import StrictFloatField, StrictIntegerField, strict_formfield
from cfannotate.core.json_input import json_loads

MAX_LABEL_LINES = 50

# The settings page shows every stage's scalar settings as model fields; generators and
# targeting get their own fields below. `candidates_per_original` is left to the
# generators' own options (per_prompt, max_candidates, ...), which decide how many
# candidates each original gets.
EDITED_APART = ("generators", "targeting", "candidates_per_original")
STAGES = tuple(
    (title, tuple(name for name in names if name not in EDITED_APART))
    for title, names in SETTING_STAGES
)
SCALAR_SETTINGS = tuple(name for _, names in STAGES for name in names)


def errors_onto_form(form: forms.Form, error: CfannotateError) -> None:
    """Put a service's field errors on the form fields they name (the rest on the form)."""
    form.add_error(None, error.message)
    field_for = getattr(form, "field_for", form_field_for)
    for where, problems in error.fields.items():
        name = where if where in form.fields else field_for(where)
        # A field of its own needs no "generators[0].server_url:" before the problem; a
        # block of several entries (or the form) says which entry it means.
        own_field = name in form.fields and (name == where or name != form_field_for(where))
        for problem in problems:
            if own_field:
                form.add_error(name, problem)
            else:
                form.add_error(name if name in form.fields else None, f"{where}: {problem}")


def form_field_for(where: str) -> str:
    """`generators[1].codes` belongs to the generators block, `targeting.code` to targeting."""
    if where.startswith("generators"):
        return "generators"
    if where.startswith("targeting"):
        return "targeting_code" if where == "targeting.code" else "targeting_slices"
    return where


class CampaignCreateForm(forms.Form):
    name = forms.CharField(max_length=200, label="Campaign name")
    task_type = forms.ChoiceField(
        choices=TaskType.choices, widget=forms.RadioSelect, initial=TaskType.SENTIMENT
    )
    labels = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Custom tasks only: one label per line, optionally followed by a colon "
        "and what it means, e.g. “Sarcastic: says the opposite of what it means”.",
    )
    text_name = forms.CharField(
        max_length=60,
        required=False,
        label="Perturbed field",
        help_text="What workers call the text that is edited (Sentence, Hypothesis).",
    )
    context_name = forms.CharField(
        max_length=60,
        required=False,
        label="Fixed field",
        help_text="Pair tasks only: the fixed text (Premise, Question 1).",
    )
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Left empty, the task template's instructions are used.",
    )
    # New with every blank form, sent back with it: the same form sent twice makes one
    # campaign (`services.campaign_create`). Empty (a page from before it existed): none.
    creation_token = forms.CharField(
        required=False,
        max_length=64,
        widget=forms.HiddenInput,
        initial=lambda: secrets.token_urlsafe(24),
    )

    def clean_labels(self) -> list[dict[str, str]] | None:
        lines = [line.strip() for line in self.cleaned_data["labels"].splitlines()]
        lines = [line for line in lines if line]
        if len(lines) > MAX_LABEL_LINES:
            raise forms.ValidationError(f"At most {MAX_LABEL_LINES} labels.")
        labels = []
        for line in lines:
            name, _, description = line.partition(":")
            labels.append(
                {
                    "value": name.strip(),
                    "display_name": name.strip(),
                    "description": description.strip(),
                }
            )
        return labels or None

    def clean(self) -> dict:
        cleaned = super().clean()
        if (
            cleaned.get("task_type") == TaskType.CUSTOM
            and not cleaned.get("labels")
            and "labels" not in self.errors  # too many lines, said already
        ):
            self.add_error("labels", "A custom task needs at least two labels, one per line.")
        return cleaned

    def service_arguments(self) -> dict:
        """Keyword arguments of `campaign_create`; empty fields take the template's values."""
        data = self.cleaned_data
        template = template_for(data["task_type"])
        arguments = {
            "name": data["name"],
            "task_type": data["task_type"],
            "creation_token": data["creation_token"],
        }
        if data["labels"]:
            arguments["labels"] = data["labels"]
        if data["text_name"]:
            arguments["text_name"] = data["text_name"]
        if data["context_name"] or (template is None and data["task_type"] == TaskType.CUSTOM):
            arguments["context_name"] = data["context_name"]
        if data["instructions"].strip():
            arguments["instructions"] = data["instructions"]
        return arguments


class CampaignSettingsForm(forms.ModelForm):
    """Every per-stage setting; generators as one checkbox and options each, Polyjuice's
    engine and inference server in their own section, targeting apart."""

    # Empty values leave the option out of the entry, so the site default applies.
    engine = forms.ChoiceField(
        required=False,
        label="Engine",
        help_text="Where Polyjuice's model runs when candidates are generated.",
    )
    server_url = forms.CharField(
        required=False,
        max_length=500,
        label="Server URL",
        widget=forms.URLInput(attrs={"spellcheck": "false"}),
        help_text="The base URL of an OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, "
        "transformers serve), e.g. http://gpu-box:8000/v1.",
    )
    server_model = forms.CharField(
        required=False,
        max_length=300,
        label="Model name",
        widget=forms.TextInput(attrs={"spellcheck": "false"}),
        help_text="The name the server knows the model by.",
    )
    server_api = forms.ChoiceField(
        required=False,
        label="API",
        help_text="completions for base models, chat for instruction-tuned ones; auto picks "
        "chat when the model's name says so (instruct, chat, -it).",
    )
    server_api_key_env = forms.CharField(
        required=False,
        max_length=100,
        label="API key variable",
        widget=forms.TextInput(attrs={"spellcheck": "false", "autocomplete": "off"}),
        help_text="The NAME of an environment variable, e.g. OPENAI_API_KEY, never the key. "
        "The key itself is read from the environment of the web server and the generation "
        "workers; it is never stored or shown. Empty: no key.",
    )
    server_concurrency = StrictIntegerField(
        required=False, label="Concurrent requests", help_text="Requests in flight at once."
    )
    server_timeout = StrictFloatField(
        required=False, label="Timeout (seconds)", help_text="Per request."
    )
    server_retries = StrictIntegerField(
        required=False,
        label="Retries",
        help_text="Further tries of a failed request, waiting twice as long each time; then "
        "the chunk fails with the server's message.",
    )
    targeting_slices = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Slices",
        help_text="Originals matching a slice get targeted blanks on exactly that pattern "
        "(Polyjuice §4.1). None: blanks everywhere.",
    )
    targeting_code = forms.ChoiceField(
        required=False, label="Control code for targeted blanks", help_text="Optional."
    )
    # Text here, a JSON object in the API; both checked by `label_map.label_map_entries_check`.
    flip_label_map = forms.CharField(
        required=False,
        label=Campaign._meta.get_field("flip_label_map").verbose_name.capitalize(),
        widget=forms.Textarea(
            attrs={"rows": 3, "spellcheck": "false", "placeholder": "LABEL_0 = negative"}
        ),
        help_text="For a model directory whose labels are named otherwise than the "
        "campaign's: one per line, the model's label = the campaign's label, e.g. "
        "LABEL_0 = negative. Names the campaign shares with the model need no line.",
    )

    class Meta:
        model = Campaign
        fields = SCALAR_SETTINGS
        formfield_callback = strict_formfield

    def __init__(
        self,
        *args,
        catalog: list,
        slices: list,
        codes: list,
        engines: list,
        server_apis: list,
        engine_defaults: dict,
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.catalog = catalog
        self.engine_position: int | None = None  # of the Polyjuice entry, once cleaned
        campaign: Campaign = self.instance
        entries = campaign.generators or [{"name": "polyjuice"}]
        names = [entry.get("name") for entry in entries if isinstance(entry, dict)]
        # The API accepts one generator twice with different options; this form shows one
        # entry per generator, so such a list is left alone here (edit it through the API).
        self.generators_editable = len(names) == len(set(names)) == len(entries)
        by_name = {entry["name"]: entry for entry in entries if isinstance(entry, dict)}
        self._engine_fields(
            by_name.get(ENGINE_GENERATOR) or {}, engines, server_apis, engine_defaults
        )
        for item in catalog:
            entry = by_name.get(item.name)
            hidden = ("name", *ENGINE_OPTIONS) if item.name == ENGINE_GENERATOR else ("name",)
            options = {k: v for k, v in (entry or {}).items() if k not in hidden}
            self.fields[f"use_{item.name}"] = forms.BooleanField(
                required=False, initial=entry is not None, label=item.name
            )
            self.fields[f"options_{item.name}"] = forms.CharField(
                required=False,
                label=f"{item.name} options (JSON)",
                initial=json.dumps(options) if options else "",
                widget=forms.TextInput(attrs={"placeholder": "{}", "spellcheck": "false"}),
            )
            if not self.generators_editable:
                self.fields[f"use_{item.name}"].disabled = True
                self.fields[f"options_{item.name}"].disabled = True
        self.fields["generators"] = forms.CharField(required=False, widget=forms.HiddenInput)
        targeting = campaign.targeting if isinstance(campaign.targeting, dict) else {}
        self.fields["targeting_slices"].choices = slices
        self.fields["targeting_slices"].initial = targeting.get("slices") or []
        self.fields["targeting_code"].choices = [("", "Any (the generator's choice)"), *codes]
        self.fields["targeting_code"].initial = targeting.get("code") or ""
        self.initial["flip_label_map"] = label_map_text(campaign.flip_label_map)

    def clean_flip_label_map(self) -> dict[str, str]:
        """The text as a map; every bad line named by its number."""
        entries = label_map_lines(self.cleaned_data["flip_label_map"])
        labels = list(self.instance.labels.values_list("value", "display_name"))
        mapping, problems = label_map_entries_check(entries, labels=labels)
        if problems:
            raise forms.ValidationError(problems)
        return mapping

    def _engine_fields(self, entry: dict, engines: list, server_apis: list, defaults: dict) -> None:
        """Polyjuice's engine options from its entry; the site's defaults as placeholders."""
        site = defaults.get("engine", "auto")
        self.fields["engine"].choices = [("", f"Site default ({site})"), *engines]
        api = defaults.get("server_api", "auto")
        self.fields["server_api"].choices = [("", f"Site default ({api})"), *server_apis]
        for name in ENGINE_OPTIONS:
            field = self.fields[name]
            field.initial = entry.get(name, "")
            shown = defaults.get(name)
            if shown not in (None, "") and not isinstance(field, forms.ChoiceField):
                field.widget.attrs["placeholder"] = str(shown)
            field.disabled = not self.generators_editable
        self.fields["server_url"].widget.attrs.setdefault("placeholder", "http://gpu-box:8000/v1")

    def engine_rows(self) -> list:
        """The engine select, then the inference server's fields, for the template."""
        return [self[name] for name in ENGINE_OPTIONS]

    def field_for(self, where: str) -> str:
        """`generators[i].server_url` of the Polyjuice entry is the Server URL field."""
        prefix = f"generators[{self.engine_position}]."
        option = where.removeprefix(prefix)
        if self.engine_position is not None and where != option and option in ENGINE_OPTIONS:
            return option
        return form_field_for(where)

    def _engine_options(self, cleaned: dict) -> dict:
        """The engine section as options of the Polyjuice entry; empty fields are left out.

        The server's fields belong to the server engine: with an in-process engine chosen
        they are dropped rather than refused, so switching engines needs no clearing.
        """
        engine = cleaned.get("engine") or ""
        options = {"engine": engine} if engine else {}
        if engine in ("", "server"):
            for name in SERVER_OPTIONS:
                value = cleaned.get(name)
                if value is not None and value != "":
                    options[name] = value
        return options

    def generator_rows(self) -> list[tuple]:
        """(catalog item, use field, options field) for the template."""
        return [
            (item, self[f"use_{item.name}"], self[f"options_{item.name}"]) for item in self.catalog
        ]

    def stage_rows(self) -> list[tuple[str, list]]:
        return [(title, [self[name] for name in names]) for title, names in STAGES]

    def clean(self) -> dict:
        cleaned = super().clean()
        if self.generators_editable:
            entries = []
            for item in self.catalog:
                if not cleaned.get(f"use_{item.name}"):
                    self._refuse_options_of_unticked(item.name, cleaned)
                    continue
                raw = (cleaned.get(f"options_{item.name}") or "").strip()
                try:
                    options = json_loads(raw) if raw else {}
                except json.JSONDecodeError as error:
                    self.add_error(f"options_{item.name}", f"Not valid JSON: {error.msg}.")
                    continue
                if not isinstance(options, dict) or "name" in options:
                    self.add_error(
                        f"options_{item.name}",
                        'An object of options, e.g. {"codes": ["negation"]}, without "name".',
                    )
                    continue
                if item.name == ENGINE_GENERATOR:
                    apart = sorted(set(options) & set(ENGINE_OPTIONS))
                    if apart:
                        self.add_error(
                            f"options_{item.name}",
                            f"Set {', '.join(apart)} in the Generation engine section.",
                        )
                        continue
                    self.engine_position = len(entries)
                    options = {**options, **self._engine_options(cleaned)}
                entries.append({"name": item.name, **options})
            # Only when none is ticked: a ticked one with bad options has its own error.
            if not any(cleaned.get(f"use_{item.name}") for item in self.catalog):
                self.add_error("generators", "Choose at least one generator.")
            cleaned["generators"] = entries
        # Checked with the API's rules on save (generator_settings.entries_from_settings).
        slices = cleaned.get("targeting_slices") or []
        code = cleaned.get("targeting_code") or None
        cleaned["targeting"] = {
            **({"slices": slices} if slices else {}),
            **({"code": code} if code else {}),
        }
        return cleaned

    def _refuse_options_of_unticked(self, name: str, cleaned: dict) -> None:
        """Options typed for a generator left unticked would be dropped without a word. The
        options a generator's box was shown with are not typed: unticking a generator
        leaves its box as it was, and that turns it off."""
        typed = (cleaned.get(f"options_{name}") or "").strip()
        shown = (self.fields[f"options_{name}"].initial or "").strip()
        if typed not in ("", "{}", shown):
            self.add_error(f"options_{name}", f"Tick {name} to use these options, or clear them.")

    def changed_settings(self) -> dict:
        """The settings whose values differ from the campaign's, as `campaign_update` takes them."""
        # The form's instance already holds the new values (ModelForm fills it in while
        # validating), so the current ones are read back from the database.
        current = Campaign.objects.values(*SCALAR_SETTINGS, "generators", "targeting").get(
            pk=self.instance.pk
        )
        if not current["generators"]:
            current["generators"] = [{"name": "polyjuice"}]
        changed = {}
        for name in (*SCALAR_SETTINGS, "generators", "targeting"):
            if name == "generators" and not self.generators_editable:
                continue
            if self.cleaned_data[name] != current[name]:
                changed[name] = self.cleaned_data[name]
        return changed
