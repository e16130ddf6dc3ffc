"""The HTTP API's addresses, all under /api/."""

from django.urls import path, re_path

from judgements.api import endpoint, evaluation_endpoints, judgement_endpoints

urlpatterns = [
    path("api/judgements/", judgement_endpoints.judgements_collection, name="api-judgements"),
    path(
        "api/judgements/<int:judgement_id>/",
        judgement_endpoints.judgement_resource,
        name="api-judgement",
    ),
    path(
        "api/judgements/<int:judgement_id>/override",
        judgement_endpoints.judgement_override,
        name="api-judgement-override",
    ),
    path(
        "api/judgements/<int:judgement_id>/confirm",
        judgement_endpoints.judgement_confirm,
        name="api-judgement-confirm",
    ),
    path("api/reviews/", judgement_endpoints.reviews_collection, name="api-reviews"),
    path("api/panels/", judgement_endpoints.panels_collection, name="api-panels"),
    path("api/suites/", evaluation_endpoints.suites_collection, name="api-suites"),
    path(
        "api/suites/<int:suite_id>.jsonl",
        evaluation_endpoints.suite_export,
        name="api-suite-export",
    ),
    path("api/evaluations/", evaluation_endpoints.evaluations_collection, name="api-evaluations"),
    path(
        "api/evaluations/<int:run_id>/",
        evaluation_endpoints.evaluation_resource,
        name="api-evaluation",
    ),
    path(
        "api/evaluations/<int:run_id>/cancel",
        evaluation_endpoints.evaluation_cancel,
        name="api-evaluation-cancel",
    ),
    path("api/schema.json", judgement_endpoints.schema, name="api-schema"),
    # Anything else under /api/ answers JSON too, never the site's HTML 404.
    re_path(r"^api/", endpoint.not_found, name="api-not-found"),
]
