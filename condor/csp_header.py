"""django-csp's middleware, with the settings' policy written once instead of for every response.

django-csp builds the Content-Security-Policy header afresh for each response (a
dataclass copied to a dict, the directives copied, sorted and joined): a few hundred
µs of CPU on every API call, for a header that is the same every time unless a view
changes it. Here a response that nothing customised (no nonce used, no csp_update /
csp_replace / csp_exempt decorator) gets the header django-csp would write, built once
per policy setting; anything else goes through django-csp unchanged. The header is still
on every response, API answers included (a test holds the two equal).
"""

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings

# What a decorator (or a view) sets on a response to change its policy.
_CUSTOMISED = ("_csp_config", "_csp_update", "_csp_replace", "_csp_config_ro", "_csp_update_ro",
               "_csp_replace_ro", "_csp_exempt", "_csp_exempt_ro")
_built: dict[str, tuple[object, str]] = {}  # setting name -> (the setting's value, its header)


def _policy(setting: str) -> str:
    """The header django-csp builds from `setting` with no per-response parts; rebuilt if the setting changes."""
    value = getattr(settings, setting, None)
    cached = _built.get(setting)
    if cached is None or cached[0] is not value:
        cached = (value, build_policy(report_only=setting.endswith("_REPORT_ONLY")))
        _built[setting] = cached
    return cached[1]


class CSPHeaderMiddleware(CSPMiddleware):
    def process_response(self, request, response):
        customised = getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in _CUSTOMISED)
        if customised or (response.status_code in (404, 500) and settings.DEBUG):
            return super().process_response(request, response)
        for header, setting in ((HEADER, "CONTENT_SECURITY_POLICY"),
                                (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY")):
            policy = _policy(setting)
            excluded = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()
            if policy and header not in response and not request.path_info.startswith(tuple(excluded)):
                response[header] = policy
        # As django-csp does: a nonce asked for after the header is written is an error, not a silent gap.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
