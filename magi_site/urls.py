from django.contrib import admin
from django.urls import include, path

from judgements.admin import people as admin_people
from judgements.monitoring import endpoint
from judgements.web import sign_in_pages, site_pages
from magi_site import errors

# A form over the body limit is refused before any view runs; this says so in a page.
handler400 = errors.bad_request

urlpatterns = [
    # Ours, not Django's: logging out also closes the session's live pages. The admin's
    # "Log out" posts here too.
    path("admin/logout/", site_pages.log_out),
    # The admin's own password change, audited (a changed password hash is compared by
    # `manage.py audit verify`).
    path("admin/password_change/", admin_people.password_change),
    path("admin/", admin.site.urls),
    # Django's login page, with OpenID Connect's button when it is configured.
    path("accounts/login/", sign_in_pages.sign_in, name="login"),
    path("accounts/oidc/start/", sign_in_pages.oidc_start, name="oidc-start"),
    path("accounts/oidc/callback/", sign_in_pages.oidc_callback, name="oidc-callback"),
    path("accounts/logout/", site_pages.log_out, name="logout"),
    path("metrics", endpoint.metrics, name="metrics"),
    path("", include("judgements.api.urls")),
    path("", include("judgements.web.urls")),
]
