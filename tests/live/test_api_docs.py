"""The API's reference pages in real Chromium: Swagger UI at /api/docs/ and Redoc at /api/redoc/.

Both render every operation of the schema, load nothing from another site (the sidecar's
bundles are static files here) and run under the site's Content-Security-Policy with no
console error, CSP refusals included.
"""

import json
import re
import urllib.request
from pathlib import Path

import pytest

from tests.live.browser import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
]


@pytest.fixture(scope="module")
def operation_ids(daphne_server) -> set[str]:
    with urllib.request.urlopen(daphne_server.url("/api/schema/?format=json")) as answer:
        schema = json.load(answer)
    return {
        operation["operationId"]
        for item in schema["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


class Heard:
    """Every console error and uncaught exception on a page, and every address it asked for."""

    def __init__(self, page):
        self.errors: list[str] = []
        self.requested: list[str] = []
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("request", lambda request: self.requested.append(request.url))

    def elsewhere(self, server) -> list[str]:
        own = (server.url("/"), f"blob:{server.url('/')}")
        return [url for url in self.requested if not url.startswith(own)]


def rendered(page, selector: str, attribute: str, pattern: str) -> set[str]:
    page.locator(selector).first.wait_for()
    return {
        re.fullmatch(pattern, value).group(1)
        for value in page.locator(selector).evaluate_all(f"(all) => all.map((e) => e.getAttribute('{attribute}'))")
    }


def test_swagger_ui_renders_every_operation_from_this_site_under_the_csp(page, daphne_server, operation_ids):
    heard = Heard(page)
    answer = page.goto(daphne_server.url("/api/docs/"))
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    # Swagger UI's blocks are "operations-<tag>-<operationId>".
    assert rendered(page, ".opblock", "id", r"operations-[a-z]+-(\w+)") == operation_ids
    page.wait_for_load_state("networkidle")
    assert heard.errors == []
    assert heard.elsewhere(daphne_server) == []


def test_redoc_renders_every_operation_from_this_site_under_the_csp(page, daphne_server, operation_ids):
    heard = Heard(page)
    answer = page.goto(daphne_server.url("/api/redoc/"))
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    # Redoc's sections are "tag/<tag>/operation/<operationId>".
    assert rendered(page, '.api-content [id*="/operation/"]', "id", r"tag/[a-z]+/operation/(\w+)") == operation_ids
    page.get_by_placeholder("Search...").fill("resume")  # the search worker runs under the page's policy
    page.get_by_role("link", name="runs_resume_create").first.wait_for()
    page.wait_for_load_state("networkidle")
    assert heard.errors == []
    assert heard.elsewhere(daphne_server) == []


def test_the_schema_shows_in_the_browser_as_json(page, daphne_server):
    page.goto(daphne_server.url("/api/schema/?format=json"))  # a download would raise here
    assert json.loads(page.locator("body").inner_text())["info"]["title"] == "Condor API"
