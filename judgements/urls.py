from django.urls import path, re_path

from judgements import api, api_evaluations, evaluation_views, panel_views, token_views, views

urlpatterns = [
    path("", views.judgement_new, name="judgement-new"),
    path("judgements/", views.judgement_list, name="judgement-list"),
    path("judgements/export.csv", views.judgement_list_csv, name="judgement-list-csv"),
    path("judgements/<int:judgement_id>/", views.judgement_detail, name="judgement-detail"),
    path(
        "judgements/<int:judgement_id>.json",
        views.judgement_export,
        {"kind": "json"},
        name="judgement-export-json",
    ),
    path(
        "judgements/<int:judgement_id>.md",
        views.judgement_export,
        {"kind": "md"},
        name="judgement-export-md",
    ),
    path("judgements/<int:judgement_id>/hide/", views.judgement_hide, name="judgement-hide"),
    path(
        "judgements/<int:judgement_id>/review/",
        views.judgement_review_forms,
        name="judgement-review-forms",
    ),
    path(
        "judgements/<int:judgement_id>/override/",
        views.judgement_override,
        name="judgement-override",
    ),
    path(
        "judgements/<int:judgement_id>/confirm/",
        views.judgement_confirm,
        name="judgement-confirm",
    ),
    path("reviews/", views.review_queue, name="review-queue"),
    path("tokens/", token_views.token_list, name="token-list"),
    path("tokens/<int:token_id>/revoke/", token_views.token_revoke, name="token-revoke"),
    path("panels/", panel_views.panel_list, name="panel-list"),
    path("panels/<int:panel_id>/", panel_views.panel_edit, name="panel-edit"),
    path("suites/", evaluation_views.suite_list, name="suite-list"),
    path("suites/<int:suite_id>/", evaluation_views.suite_detail, name="suite-detail"),
    path("suites/<int:suite_id>.jsonl", evaluation_views.suite_export, name="suite-export"),
    path("evaluations/compare/", evaluation_views.evaluation_compare, name="evaluation-compare"),
    path("evaluations/<int:run_id>/", evaluation_views.evaluation_run, name="evaluation-run"),
    *(
        path(
            f"evaluations/<int:run_id>.{kind}",
            evaluation_views.evaluation_export,
            {"kind": kind},
            name=f"evaluation-export-{kind}",
        )
        for kind in ("json", "csv", "md")
    ),
    path(
        "evaluations/<int:run_id>/cancel/",
        evaluation_views.evaluation_cancel,
        name="evaluation-cancel",
    ),
    path(
        "evaluations/<int:run_id>/progress/",
        evaluation_views.evaluation_progress,
        name="evaluation-progress",
    ),
    path("healthz", views.healthz, name="healthz"),
    path("api/judgements/", api.judgements_collection, name="api-judgements"),
    path("api/judgements/<int:judgement_id>/", api.judgement_resource, name="api-judgement"),
    path(
        "api/judgements/<int:judgement_id>/override",
        api.judgement_override,
        name="api-judgement-override",
    ),
    path(
        "api/judgements/<int:judgement_id>/confirm",
        api.judgement_confirm,
        name="api-judgement-confirm",
    ),
    path("api/reviews/", api.reviews_collection, name="api-reviews"),
    path("api/panels/", api.panels_collection, name="api-panels"),
    path("api/suites/", api_evaluations.suites_collection, name="api-suites"),
    path("api/suites/<int:suite_id>.jsonl", api_evaluations.suite_export, name="api-suite-export"),
    path("api/evaluations/", api_evaluations.evaluations_collection, name="api-evaluations"),
    path(
        "api/evaluations/<int:run_id>/",
        api_evaluations.evaluation_resource,
        name="api-evaluation",
    ),
    path(
        "api/evaluations/<int:run_id>/cancel",
        api_evaluations.evaluation_cancel,
        name="api-evaluation-cancel",
    ),
    path("api/schema.json", api.schema, name="api-schema"),
    # Anything else under /api/ answers JSON too, never the site's HTML 404.
    re_path(r"^api/", api.not_found, name="api-not-found"),
]
