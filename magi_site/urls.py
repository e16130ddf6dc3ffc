from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from judgements.monitoring import endpoint
from judgements.web import site_pages
from magi_site import errors

# A form over the body limit is refused before any view runs; this says so in a page.
handler400 = errors.bad_request

urlpatterns = [
    # Ours, not Django's: logging out also closes the session's live pages. The admin's
    # "Log out" posts here too.
    path("admin/logout/", site_pages.log_out),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", site_pages.log_out, name="logout"),
    path("metrics", endpoint.metrics, name="metrics"),
    path("", include("judgements.api.urls")),
    path("", include("judgements.web.urls")),
]
