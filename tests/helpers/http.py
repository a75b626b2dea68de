"""Requests as the clients send them: an agent's JSON, a browser's JSON with its CSRF token, raw bytes.

Agents speak through a DRF `APIClient` carrying their key; reviewers through a Django
test `Client` logged in with CSRF enforced (tests.helpers.personas.logged_in).
"""

import json


def post(api, path: str, body: dict | None = None):
    """An agent's JSON POST."""
    return api.post(path, body or {}, format="json")


def post_json(http, path, body, *, csrf=True):
    """POST a JSON body from a browser session, with the CSRF token the page would send."""
    headers = {"HTTP_X_CSRFTOKEN": http.cookies["csrftoken"].value} if csrf else {}
    raw = body if isinstance(body, str) else json.dumps(body)
    return http.post(path, raw, content_type="application/json", **headers)


def raw_post(api, path, raw: str, **headers):
    """POST bytes the JSON encoder would never produce (duplicate keys, NaN, huge integers)."""
    return api.generic("POST", path, raw, content_type="application/json", **headers)


def error_of(response) -> tuple[int, str]:
    """(status, error code) of a refusal, to compare with what SPEC section 9 names."""
    return response.status_code, response.json()["error"]
