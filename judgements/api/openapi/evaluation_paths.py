"""The evaluation endpoints' paths in the OpenAPI document."""

from judgements.api.openapi.parts import (
    ERRORS,
    JSONL,
    LOCATION,
    answer,
    id_parameter,
    json_content,
    ref,
)


def evaluation_paths() -> dict:
    invalid_suite = answer(
        "Invalid input; `errors` names the line and field (`line 4.expected`), or `name`, "
        "`description` or `cases`.",
        "Invalid",
    )
    invalid_run = answer(
        "Invalid input; `errors` names each field (`suite`, `repeat`, `agents[1].model`).",
        "Invalid",
    )
    not_found = answer("No such suite or run, or another user's.", "Error")
    return {
        "/api/suites/": {
            "get": {
                "summary": "The suites the caller may run: their own and the shipped ones "
                "(staff: every suite).",
                "responses": {
                    "200": answer("The suites.", "SuiteList"),
                    "401": ERRORS["401"],
                },
            },
            "post": {
                "summary": "Import a suite: the body is JSONL, one case a line "
                '({"id", "content", "expected", and optionally "title", '
                '"expected_agents", "tags"}), as GET /api/suites/{suite_id}.jsonl '
                "exports it.",
                "parameters": [
                    {
                        "name": "name",
                        "in": "query",
                        "required": True,
                        "description": "Differs from the caller's other suites' names.",
                        "schema": {"type": "string", "maxLength": 100},
                    },
                    {
                        "name": "description",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                    },
                ],
                "requestBody": {"required": True, "content": JSONL},
                "responses": {
                    "201": answer("Stored.", "Suite", LOCATION),
                    "400": invalid_suite,
                    **{k: ERRORS[k] for k in ("401", "413")},
                },
            },
        },
        "/api/suites/{suite_id}.jsonl": {
            "get": {
                "summary": "A suite as JSONL, one case a line.",
                "parameters": [id_parameter("suite_id")],
                "responses": {
                    "200": {"description": "The suite.", "content": JSONL},
                    "401": ERRORS["401"],
                    "404": not_found,
                },
            }
        },
        "/api/evaluations/": {
            "post": {
                "summary": "Start an evaluation run: a panel over a suite, each case "
                "`repeat` times, as ordinary judgements.",
                "requestBody": {
                    "required": True,
                    "content": json_content(ref("EvaluationRequest")),
                },
                "responses": {
                    "201": answer("Queued; its progress.", "EvaluationRun", LOCATION),
                    "400": invalid_run,
                    **{k: ERRORS[k] for k in ("401", "413")},
                    "429": answer(
                        "The caller has MAGI_UNFINISHED_RUNS_PER_USER runs under way; retry "
                        "after `Retry-After` seconds.",
                        "Error",
                        {"Retry-After": {"required": True, "schema": {"type": "string"}}},
                    ),
                },
            }
        },
        "/api/evaluations/{run_id}/": {
            "get": {
                "summary": "A run's progress and, once every judgement has ended, its report.",
                "parameters": [id_parameter("run_id")],
                "responses": {
                    "200": answer("The run.", "EvaluationRun"),
                    "401": ERRORS["401"],
                    "404": not_found,
                },
            }
        },
        "/api/evaluations/{run_id}/cancel": {
            "post": {
                "summary": "Cancel a run: its judgements not yet ended end in error, and "
                "workers stop their remaining calls. What was decided stays.",
                "parameters": [id_parameter("run_id")],
                "responses": {
                    "200": answer("The run, cancelled.", "EvaluationRun"),
                    "401": ERRORS["401"],
                    "404": not_found,
                    "409": answer("The run has already ended.", "Error"),
                },
            }
        },
    }
