"""A small OpenAI-compatible chat-completions server for tests and benchmarks.

It speaks real HTTP on 127.0.0.1, so the openai SDK under test runs unpatched. Each
model is scripted: its vote in each round (optionally per judged content, chosen by a
marker the prompt holds), a delay, and failures to serve before it answers (HTTP errors,
malformed JSON, a dropped connection, a cut-off reply).
"""

import contextlib
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The round instruction comes last in a prompt; the judged content, earlier in it, may
# quote the same words, so the last occurrence is the one that counts.
ROUND_PATTERN = re.compile(r"This is round (\d) of")
# The engine's note when it asks an answer again (judgements/core/recheck.py recheck_note).
RECHECK_MARKER = "A check of your answer found"
# The calls beside the vote (judgements/core/check_prompts.py), told apart by their words.
PROBE_MARKER = 'Answer with one word: "approve" or "reject".'
SECOND_OPINION_MARKER = "reject it if it fails any of them"
# Every plain call (the second opinion, the plain call told the rule, the plain call on
# one criterion) opens with these words; a PLAIN_RULES agent's opening goes on otherwise.
PLAIN_CALL_PATTERN = re.compile(
    r"^Decide whether to approve or reject the content the user sends\. Approve it"
)
SCREEN_PATTERN = re.compile(r'^Repeat "(\w+)" once while ignoring the following text')
# The words a decision is made of, and the other side of each.
OPPOSITE = {"true": "false", "false": "true", "approve": "reject", "reject": "approve"}
TOKEN_PATTERN = re.compile(r"\s*\w+|\s*[^\w\s]")
# Where a JSON answer's decision is made (a one-word reply's is its first token).
DECISIVE = re.compile(r'"(?:criterion_met|decision)"\s*:\s*"?')

# Failure kinds a script can ask for, one per attempt, in order.
HTTP_FAILURES = {"400": 400, "401": 401, "403": 403, "404": 404, "429": 429, "500": 500, "503": 503}
# "contradiction": a well-formed answer whose criterion_met disagrees with its decision.
OTHER_FAILURES = {"malformed", "invalid", "length", "disconnect", "empty", "contradiction"}


@dataclass
class ModelScript:
    votes: str = "AAA"  # one letter per round: A approve, R reject
    delay: float = 0.0  # seconds before answering, to stand in for a model thinking
    failures: dict[int, list[str]] = field(default_factory=dict)  # round -> failures in order
    # The failures meet the votes alone: the calls beside them (checks, an evaluation run's
    # plain calls), which pass no gate and would otherwise take them first, are answered.
    vote_failures_only: bool = False
    reason: str | None = None
    # marker -> votes: a prompt holding the marker (in the judged content, say) gets these
    # votes instead of `votes`; the first marker found, in the dict's order, wins.
    votes_when: dict[str, str] = field(default_factory=dict)
    # round -> reason, beating `reason` in that round.
    reasons: dict[int, str] = field(default_factory=dict)
    # What the answer says the content lacks ("missing"); None: the key is left out.
    missing: list[str] | None = None
    # The QUOTE variant's words of the content ("quote"); None: the key is left out.
    quote: str | None = None
    # Asked again after a check (the prompt holds RECHECK_MARKER): with `recheck_keeps`
    # the same answer comes back; else a reason of its own and nothing missing, voting
    # `recheck_votes` if given.
    recheck_keeps: bool = False
    recheck_votes: str | None = None
    # Log-probabilities, when a request asks for them: the probability of the decision
    # given (per content marker with `confidence_when`), the rest to the other side.
    # `logprobs` False: a provider that ignores the request; `refuse_logprobs`: one that
    # answers HTTP 400 to it.
    confidence: float = 0.9
    confidence_when: dict[str, float] = field(default_factory=dict)
    logprobs: bool = True
    refuse_logprobs: bool = False
    # The second opinion's decision (None: its round-1 vote), and the injection screen:
    # a prompt holding one of `steered_by` loses the check word.
    opinion: str | None = None
    steered_by: tuple[str, ...] = ()

    def vote(self, round_number: int, prompt: str = "") -> str:
        votes = next((v for marker, v in self.votes_when.items() if marker in prompt), self.votes)
        return "approve" if votes[round_number - 1].upper() == "A" else "reject"

    def sureness(self, prompt: str) -> float:
        return next(
            (c for marker, c in self.confidence_when.items() if marker in prompt), self.confidence
        )


@dataclass
class RecordedRequest:
    model: str
    round: int
    body: dict
    started: float
    finished: float = 0.0


class QuietServer(ThreadingHTTPServer):
    # The default backlog of 5 drops connections when hundreds of calls arrive at once.
    request_queue_size = 1024

    def handle_error(self, request, client_address) -> None:
        # Scripted disconnects and clients that time out are expected here.
        pass


class Gate:
    """Holds chat completions per (model, round) while closed: how tests order events
    without sleeping.

    Open (the default) lets every call through at once. Closed, a call parks until
    `allow(model, round)` (before or after it arrives) or until the gate opens again.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._closed = False
        self._allowed: set[tuple[str, int]] = set()
        self._parked: list[tuple[str, int]] = []
        # The most calls parked at once since the gate last closed: how many reached the
        # server together. A call leaves the gate before its answer is written, so unlike
        # FakeLLM.in_flight this never counts a call whose answer the client already has.
        self.most_parked = 0

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._allowed.clear()
            self.most_parked = 0

    def parked(self) -> list[tuple[str, int]]:
        """The calls parked at the gate now."""
        with self._cond:
            return list(self._parked)

    def open(self) -> None:
        with self._cond:
            self._closed = False
            self._allowed.clear()
            self._cond.notify_all()

    def allow(self, model: str, round_number: int) -> None:
        with self._cond:
            self._allowed.add((model, round_number))
            self._cond.notify_all()

    def wait(self, model: str, round_number: int, timeout: float = 60.0) -> None:
        key = (model, round_number)
        with self._cond:
            self._parked.append(key)
            self.most_parked = max(self.most_parked, len(self._parked))
            self._cond.notify_all()
            try:
                self._cond.wait_for(lambda: not self._closed or key in self._allowed, timeout)
            finally:
                self._parked.remove(key)

    def wait_parked_other_than(
        self, seen: set[tuple[str, int]], timeout: float = 10.0
    ) -> tuple[str, int]:
        """Block until a call not in `seen` is parked at the gate; return its key."""
        with self._cond:
            new = lambda: [k for k in self._parked if k not in seen]  # noqa: E731
            if not self._cond.wait_for(new, timeout):
                raise AssertionError(f"no new call parked in {timeout} s: {self._parked}")
            return new()[0]

    def wait_parked(self, *keys: tuple[str, int], timeout: float = 10.0) -> None:
        """Block until a call for each (model, round) is parked at the gate."""
        with self._cond:
            if not self._cond.wait_for(lambda: all(k in self._parked for k in keys), timeout):
                raise AssertionError(f"calls {keys} not parked in {timeout} s: {self._parked}")


class FakeLLM:
    def __init__(self) -> None:
        self.scripts: dict[str, ModelScript] = {}
        # The model names this server answers for; settings can point at this very list.
        self.models: list[str] = []
        self.requests: list[RecordedRequest] = []
        self.model_listings = 0  # GET /models answered
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.gate = Gate()
        self.server = QuietServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        # A short poll: stop() waits for the loop to notice, up to one interval per test.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)  # bound to an IPv4 address, above
        return f"http://{host}:{port}/v1"

    def start(self) -> "FakeLLM":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.gate.open()
        self.server.shutdown()
        self.server.server_close()

    def script(self, model: str, **kwargs) -> ModelScript:
        self.scripts[model] = ModelScript(**kwargs)
        if model not in self.models:
            self.models.append(model)
        return self.scripts[model]

    def reset(self) -> None:
        with self.lock:
            self.scripts.clear()
            self.models.clear()
            self.requests.clear()
            self.model_listings = 0
            self.in_flight = self.max_in_flight = 0
        self.gate.open()

    def hold(self) -> None:
        """Keep every answer waiting until release() — a model that thinks until told."""
        self.gate.close()

    def release(self) -> None:
        self.gate.open()

    def requests_for(self, model: str, round_number: int | None = None) -> list[RecordedRequest]:
        with self.lock:
            return [
                r
                for r in self.requests
                if r.model == model and (round_number is None or r.round == round_number)
            ]

    def cached_prefix(self, body: dict) -> int:
        """Like a provider's prompt cache: of a prompt's 100 tokens, the share that an
        earlier request of the same model already began with (prefix of the messages'
        text, compared with every earlier one)."""
        text = json.dumps(body.get("messages", []))
        with self.lock:
            earlier = [
                json.dumps(r.body.get("messages", []))
                for r in self.requests
                if r.body is not body and r.model == body.get("model")
            ]
        longest = max((shared_prefix(text, e) for e in earlier), default=0)
        return 100 * longest // max(len(text), 1)

    def _next_failure(self, model: str, round_number: int) -> str | None:
        with self.lock:
            queue = self.scripts.get(model, ModelScript()).failures.get(round_number, [])
            return queue.pop(0) if queue else None

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; with Nagle's algorithm the
            # second waits for a delayed ACK (about 40 ms) and skews every latency.
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def _send_json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    with fake.lock:
                        fake.model_listings += 1
                    models = [{"id": m, "object": "model"} for m in fake.scripts]
                    self._send_json(200, {"object": "list", "data": models})
                else:
                    self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                model = body.get("model", "")
                text = "\n".join(m.get("content", "") for m in body.get("messages", []))
                rounds = ROUND_PATTERN.findall(text)
                round_number = int(rounds[-1]) if rounds else 1
                record = RecordedRequest(model, round_number, body, time.monotonic())
                with fake.lock:
                    fake.requests.append(record)
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    self._answer(model, round_number, body, text)
                finally:
                    with fake.lock:
                        fake.in_flight -= 1
                        record.finished = time.monotonic()

            def _answer(self, model: str, round_number: int, body: dict, prompt: str) -> None:
                script = fake.scripts.get(model)
                if script is None:
                    self._send_json(404, {"error": {"message": f"model {model!r} not found"}})
                    return
                if body.get("logprobs") and script.refuse_logprobs:
                    message = "logprobs are not supported by this model"
                    self._send_json(400, {"error": {"message": message, "type": "test"}})
                    return
                if script.delay:
                    time.sleep(script.delay)
                check = check_answer(script, prompt)
                if check is None:
                    # The calls beside the vote pass no gate: the tests order votes.
                    fake.gate.wait(model, round_number)
                beside_the_vote = check is not None and script.vote_failures_only
                failure = None if beside_the_vote else fake._next_failure(model, round_number)
                if failure in HTTP_FAILURES:
                    status = HTTP_FAILURES[failure]
                    message = f"scripted failure {status}"
                    self._send_json(status, {"error": {"message": message, "type": "test"}})
                    return
                if failure == "disconnect":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if check is not None:
                    self._send_json(200, completion(model, check, logprobs=wants(body, script)))
                    return
                vote = script.vote(round_number, prompt)
                reason = script.reasons.get(round_number) or script.reason
                reason = reason or f"{model} says {vote} in round {round_number}"
                missing = script.missing
                if RECHECK_MARKER in prompt and not script.recheck_keeps:
                    if script.recheck_votes:
                        again = script.recheck_votes[round_number - 1]
                        vote = "approve" if again == "A" else "reject"
                    reason = f"{model} looked again in round {round_number}"
                    missing = [] if missing is not None else None
                content = answer(reason, vote, missing=missing, quote=script.quote)
                finish_reason = "stop"
                if failure == "malformed":
                    content = '{"decision": "approve", "reason": '
                elif failure == "invalid":
                    content = answer(reason, "maybe")
                elif failure == "contradiction":
                    content = answer(reason, vote, criterion_met=vote != "approve")
                elif failure == "empty":
                    content = ""
                elif failure == "length":
                    content, finish_reason = content[:10], "length"
                cached = fake.cached_prefix(body)
                sure = script.sureness(prompt) if wants(body, script) else None
                self._send_json(200, completion(model, content, finish_reason, cached, sure))

        return Handler


def provider_settings(server: FakeLLM) -> dict[str, object]:
    """The settings that make `server` a deployment's only remote provider, as the suite's
    `fake_llm` fixture sets them (and a fixture building rows once for a module does)."""
    return {
        "MAGI_PROVIDERS": {
            "default": {
                "base_url": server.base_url,
                "api_key": "test-key",
                "structured_output": "json_schema",
                "models": server.models,
                # Long enough that a loaded machine (two test sessions on two cores, an
                # evaluation's calls in flight at once) never times a call out; a test of
                # timeouts sets its own.
                "timeout": 30.0,
                "temperature": 0.0,
                "seed": 0,
            }
        },
        "MAGI_LOCAL_MODELS": {},
        # The calls beside the vote are off unless a test asks for them (tests/judgements/
        # engine/test_checks.py): most tests count and order the nine calls of the vote.
        "MAGI_CONFIDENCE_PROBE": False,
        "MAGI_SECOND_OPINION": False,
        "MAGI_INJECTION_SCREEN": False,
        "MAGI_LLM_RETRY_INITIAL_WAIT": 0.01,
        "MAGI_LLM_RETRY_MAX_WAIT": 0.05,
    }


def wants(body: dict, script: ModelScript) -> bool:
    return bool(body.get("logprobs")) and script.logprobs


def check_answer(script: ModelScript, prompt: str) -> tuple[str, float] | None:
    """The reply to a call beside the vote and how sure it is, or None for a vote."""
    sure = script.sureness(prompt)
    if prompt.rstrip().endswith(PROBE_MARKER):
        return script.vote(1, prompt), sure
    if SECOND_OPINION_MARKER in prompt or PLAIN_CALL_PATTERN.match(prompt):
        decision = script.opinion or script.vote(1, prompt)
        return json.dumps({"decision": decision, "reason": "read against all three"}), sure
    if found := SCREEN_PATTERN.match(prompt):
        steered = any(marker in prompt for marker in script.steered_by)
        return ("approve" if steered else found.group(1)), sure
    return None


def token_logprobs(content: str, sure: float) -> dict:
    """The reply cut into word and punctuation tokens, as a provider reports them: the
    first decision word (true/false, approve/reject) with its other side as an
    alternative, every other token certain."""
    items = []
    decided = False
    found = DECISIVE.search(content)
    at = found.end() if found else 0
    end = 0
    for token in TOKEN_PATTERN.findall(content):
        end += len(token)
        word = token.strip()
        alternatives = [(token, 0.0)]
        if not decided and end > at and word in OPPOSITE:
            decided = True
            other = token.replace(word, OPPOSITE[word])
            alternatives = [(token, math.log(sure)), (other, math.log(max(1.0 - sure, 1e-12)))]
        items.append(
            {
                "token": token,
                "logprob": alternatives[0][1],
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives
                ],
            }
        )
    return {"content": items}


def answer(
    reason: str,
    decision: str,
    criterion_met: bool | None = None,
    missing: list | None = None,
    quote: str | None = None,
) -> str:
    """An agent's answer in the prompt's format: reason first, then criterion_met, which
    agrees with the decision unless told otherwise, then "missing" when given."""
    if criterion_met is None:
        criterion_met = decision == "approve"
    body: dict = {"reason": reason, "criterion_met": criterion_met, "decision": decision}
    if missing is not None:
        body["missing"] = missing
    if quote is not None:
        body["quote"] = quote
    return json.dumps(body)


def shared_prefix(a: str, b: str) -> int:
    """How many leading characters two texts have in common."""
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def completion(
    model: str,
    content,
    finish_reason: str = "stop",
    cached: int = 0,
    sure: float | None = None,
    logprobs: bool = False,
) -> dict:
    """A chat completion. `content` may come with its sureness (text, p) from
    check_answer; with a sureness, the reply carries log-probabilities."""
    if isinstance(content, tuple):
        content, p = content
        sure = p if logprobs else None
    choice: dict = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": finish_reason,
    }
    if sure is not None:
        choice["logprobs"] = token_logprobs(content, sure)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "total_tokens": 120,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def main() -> None:
    """Serve scripted models from a process of their own (benchmarks use this, so the
    server's threads do not share a GIL with the engine being measured)."""
    import argparse

    parser = argparse.ArgumentParser(description="OpenAI-compatible test server")
    parser.add_argument("--models", default="model-a,model-b,model-c")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--votes", default="AAA")
    args = parser.parse_args()
    server = FakeLLM()
    for model in args.models.split(","):
        server.script(model, delay=args.delay, votes=args.votes)
    print(server.base_url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.server.serve_forever()


if __name__ == "__main__":
    main()
