"""Idempotent submits against a real daphne and PostgreSQL: requests racing with one key."""

import json
import threading
import urllib.error
import urllib.request

from django.contrib.auth import get_user_model

from judgements.models import ApiToken, IdempotencyKey, Judgement
from tests.support.services import ALIAS, MODELS

RACERS = 8


def make_token(username: str = "bot") -> str:
    user = get_user_model().objects.db_manager(ALIAS).create(username=username)
    key = f"magi_{username}-idempotency-test-key"
    ApiToken.objects.db_manager(ALIAS).create(
        user=user, name=username, prefix=key[5:13], key_hash=ApiToken.hash(key)
    )
    return key


def case(title: str = "Deploy 42") -> dict:
    return {
        "title": title,
        "content": "Deploy build 42 to production.",
        "agents": [
            {"name": name, "model": model, "criteria": "Approve safe deploys."}
            for name, model in zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=True)
        ],
    }


def post(web, token: str, body: dict, key: str) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        f"http://{web.host}/api/judgements/",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Idempotency-Key": key,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_concurrent_posts_with_one_key_start_one_judgement(processes):
    web = processes.web()
    token = make_token()
    start = threading.Barrier(RACERS)
    answers: list[tuple[int, dict, dict]] = []
    lock = threading.Lock()

    def race() -> None:
        start.wait()  # every request leaves at once
        answer = post(web, token, case(), "deploy-42")
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=race) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)

    assert len(answers) == RACERS
    assert {status for status, _, _ in answers} == {201}, answers
    assert len({body["id"] for _, _, body in answers}) == 1
    replayed = sorted(headers["Idempotency-Replayed"] for _, headers, _ in answers)
    assert replayed == ["false"] + ["true"] * (RACERS - 1)
    assert Judgement.objects.using(ALIAS).count() == 1
    assert IdempotencyKey.objects.using(ALIAS).count() == 1

    # The same key with another body, from the same real server: 422, nothing stored.
    status, _, body = post(web, token, case("Deploy 43"), "deploy-42")
    assert status == 422 and list(body["errors"]) == ["Idempotency-Key"]
    assert Judgement.objects.using(ALIAS).count() == 1
