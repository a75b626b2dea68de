from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from core.api_docs import Redoc, SwaggerUI
from governance.admin_login import CondorAdminAuthenticationForm
from inbox.views import inbox

admin.site.login_form = CondorAdminAuthenticationForm

handler404 = "core.error_pages.not_found"
handler500 = "core.error_pages.server_error"

urlpatterns = [
    path("api/v1/", include("condor.api_urls")),  # first: the agents' calls, the most frequent by far
    path("", RedirectView.as_view(url="/inbox/", permanent=False)),
    path("inbox/", inbox, name="inbox"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/approvals/", include("governance.moved_pages")),  # before the admin: old addresses
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SwaggerUI.as_view(), name="api-docs"),
    path("api/redoc/", Redoc.as_view(), name="api-redoc"),
]
