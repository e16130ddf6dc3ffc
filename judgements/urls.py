from django.urls import path, re_path

from judgements import api, views

urlpatterns = [
    path("", views.judgement_new, name="judgement-new"),
    path("judgements/", views.judgement_list, name="judgement-list"),
    path("judgements/<int:judgement_id>/", views.judgement_detail, name="judgement-detail"),
    path(
        "judgements/<int:judgement_id>/override/",
        views.judgement_override,
        name="judgement-override",
    ),
    path("healthz", views.healthz, name="healthz"),
    path("api/judgements/", api.judgements_collection, name="api-judgements"),
    path("api/judgements/<int:judgement_id>/", api.judgement_resource, name="api-judgement"),
    path(
        "api/judgements/<int:judgement_id>/override",
        api.judgement_override,
        name="api-judgement-override",
    ),
    path("api/schema.json", api.schema, name="api-schema"),
    # Anything else under /api/ answers JSON too, never the site's HTML 404.
    re_path(r"^api/", api.not_found, name="api-not-found"),
]
