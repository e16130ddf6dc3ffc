"""The pages' addresses."""

from django.urls import path

from judgements.web import (
    history_pages,
    judgement_pages,
    new_judgement_page,
    notification_pages,
    panel_pages,
    review_pages,
    run_pages,
    site_pages,
    slack_pages,
    suite_pages,
    token_pages,
)

urlpatterns = [
    path("", new_judgement_page.judgement_new, name="judgement-new"),
    path("judgements/", history_pages.judgement_list, name="judgement-list"),
    path("judgements/export.csv", history_pages.judgement_list_csv, name="judgement-list-csv"),
    path(
        "judgements/<int:judgement_id>/", judgement_pages.judgement_detail, name="judgement-detail"
    ),
    path(
        "judgements/<int:judgement_id>.json",
        judgement_pages.judgement_export,
        {"kind": "json"},
        name="judgement-export-json",
    ),
    path(
        "judgements/<int:judgement_id>.evidence.json",
        judgement_pages.judgement_export,
        {"kind": "evidence.json"},
        name="judgement-evidence",
    ),
    path(
        "judgements/<int:judgement_id>.md",
        judgement_pages.judgement_export,
        {"kind": "md"},
        name="judgement-export-md",
    ),
    path(
        "judgements/<int:judgement_id>/hide/", judgement_pages.judgement_hide, name="judgement-hide"
    ),
    path(
        "judgements/<int:judgement_id>/review/",
        review_pages.judgement_review_forms,
        name="judgement-review-forms",
    ),
    path(
        "judgements/<int:judgement_id>/override/",
        review_pages.judgement_override,
        name="judgement-override",
    ),
    path(
        "judgements/<int:judgement_id>/confirm/",
        review_pages.judgement_confirm,
        name="judgement-confirm",
    ),
    path("reviews/", review_pages.review_queue, name="review-queue"),
    path("tokens/", token_pages.token_list, name="token-list"),
    path(
        "account/notifications/",
        notification_pages.notification_settings,
        name="notification-settings",
    ),
    path("tokens/<int:token_id>/revoke/", token_pages.token_revoke, name="token-revoke"),
    path("teams/<int:team_id>/slack/", slack_pages.team_slack, name="team-slack"),
    path("teams/<int:team_id>/slack/test/", slack_pages.team_slack_test, name="team-slack-test"),
    path(
        "teams/<int:team_id>/slack/remove/", slack_pages.team_slack_remove, name="team-slack-remove"
    ),
    path("slack/interactivity/", slack_pages.slack_interactivity, name="slack-interactivity"),
    path("account/slack/link/", slack_pages.slack_link, name="slack-link"),
    path("panels/", panel_pages.panel_list, name="panel-list"),
    path("panels/<int:panel_id>/", panel_pages.panel_edit, name="panel-edit"),
    path("panels/<int:panel_id>/certify/", panel_pages.panel_certify, name="panel-certify"),
    path(
        "panels/<int:panel_id>/certify-cascade/",
        panel_pages.panel_certify_cascade,
        name="panel-certify-cascade",
    ),
    path("suites/", suite_pages.suite_list, name="suite-list"),
    path("suites/<int:suite_id>/", suite_pages.suite_detail, name="suite-detail"),
    path("suites/<int:suite_id>.jsonl", suite_pages.suite_export, name="suite-export"),
    path("evaluations/compare/", run_pages.evaluation_compare, name="evaluation-compare"),
    path("evaluations/<int:run_id>/", run_pages.evaluation_run, name="evaluation-run"),
    *(
        path(
            f"evaluations/<int:run_id>.{kind}",
            run_pages.evaluation_export,
            {"kind": kind},
            name=f"evaluation-export-{kind}",
        )
        for kind in ("json", "csv", "md")
    ),
    path(
        "evaluations/<int:run_id>/cancel/",
        run_pages.evaluation_cancel,
        name="evaluation-cancel",
    ),
    path(
        "evaluations/<int:run_id>/progress/",
        run_pages.evaluation_progress,
        name="evaluation-progress",
    ),
    path("healthz", site_pages.healthz, name="healthz"),
    # The audit log's public keys as a JWK set, for anyone checking a receipt
    # (docs/evidence.md); jwks.json is the name many tools look for.
    path(".well-known/magi-keys.json", site_pages.public_keys, name="public-keys"),
    path(".well-known/jwks.json", site_pages.public_keys),
]
