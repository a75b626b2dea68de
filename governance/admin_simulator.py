"""The policy simulator page in the admin: a tool and a context in, the real gate's verdict out.

A GET form (nothing changes, so a result is a link one can share). The verdict and the
truth table come from registry/simulator.py, which calls the engine itself.
"""

from django import forms
from django.core.validators import RegexValidator
from django.template.response import TemplateResponse

from core.json_form_field import StrictJSONField
from registry import simulator
from registry.policy import STATIC_REGISTRY, Context, effective_spec
from sessions_app.models import AgeBandChoice, AutonomyChoice

# SPEC section 2: op and tool names are plain ASCII (letters, digits, ".", "_", "-").
plain_ascii = RegexValidator(r"^[A-Za-z0-9._-]*$", "Use letters, digits, '.', '_' and '-' only.", "invalid_name")


def _json_object(value):
    if value is not None and not isinstance(value, dict):
        raise forms.ValidationError('Enter a JSON object, e.g. {"url": "https://…"}.')


class SimulatorForm(forms.Form):
    tool = forms.ChoiceField()
    op = forms.CharField(
        required=False,
        max_length=60,
        validators=[plain_ascii],
        help_text="The verb, e.g. update or delete (destructive verbs change the verdict); "
        "left blank, a write parks as one that names no op.",
    )
    autonomy = forms.ChoiceField(choices=AutonomyChoice.choices, initial=AutonomyChoice.AUTONOMOUS)
    tainted = forms.BooleanField(required=False, label="Session tainted")
    consent = forms.BooleanField(required=False, label="Consent granted")
    age_band = forms.ChoiceField(choices=AgeBandChoice.choices, initial=AgeBandChoice.ADULT)
    args = StrictJSONField(
        required=False, initial=dict, validators=[_json_object], widget=forms.Textarea(attrs={"rows": 4, "cols": 60})
    )
    metadata = StrictJSONField(
        required=False,
        initial=dict,
        validators=[_json_object],
        label="Client metadata",
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text='Step 3 of resolution reads it: {"mutating": true} makes a would-be read a mutate.',
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tool"].choices = [(name, name) for name in simulator.tool_names()]

    def context(self) -> Context:
        data = self.cleaned_data
        return Context(
            autonomy=data["autonomy"], tainted=data["tainted"], consent=data["consent"], age_band=data["age_band"]
        )


def simulator_view(model_admin, request):
    form = SimulatorForm(request.GET or None)
    result = None
    if form.is_valid():
        data = form.cleaned_data
        tool = data["tool"]
        registered = simulator.registered_spec(tool)
        args, metadata = data["args"] or {}, data["metadata"] or {}
        result = {
            "verdict": simulator.simulate(
                tool, form.context(), op=data["op"], args=args, metadata=metadata, registered=registered
            ),
            "registered": registered,
            "static": STATIC_REGISTRY.get(tool),
            "effective": effective_spec(tool, registered),
            "table": simulator.truth_table(tool, registered, op=data["op"], args=args, metadata=metadata),
        }
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Policy simulator",
        "opts": model_admin.model._meta,
        "form": form,
        "result": result,
    }
    return TemplateResponse(request, "admin/governance/simulator.html", context)
