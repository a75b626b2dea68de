"""The admin pages of the models that moved out of approvals answer at their old addresses too."""

import pytest

from tests.helpers.personas import person


@pytest.mark.parametrize(
    "old, new",
    [
        ("/admin/approvals/auditevent/?kind__exact=verdict", "/admin/audit/auditevent/?kind__exact=verdict"),
        ("/admin/approvals/apiclient/", "/admin/agents/apiclient/"),
        ("/admin/approvals/tooldescriptor/1/change/", "/admin/registry/tooldescriptor/1/change/"),
        ("/admin/approvals/accessgrant/", "/admin/registry/accessgrant/"),
    ],
)
def test_an_old_address_redirects_to_the_models_new_page(client, old, new):
    response = client.get(old)
    assert response.status_code == 301 and response["Location"] == new


def test_the_models_that_stayed_are_served_where_they_were(db, client):
    client.force_login(person("carl", "compliance"))
    assert client.get("/admin/approvals/approval/").status_code == 200
    assert client.get("/admin/audit/auditevent/").status_code == 200
