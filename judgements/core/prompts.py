"""What each agent is told.

Each agent checks one criterion of its own and votes on that alone: approve when the
content satisfies it, reject when the content violates it. The judged content and every
earlier reason are fenced as data: a text that says "ignore your criteria" is something
to judge, never an order.

The system message is the rules alone, the same text for every call of every judgement.
The user message is laid out in cache order, so the nine calls of a judgement share the
longest possible prefix (providers and llama.cpp reuse a prefix they have seen): the
fenced content, then the agent's name and the earlier answers, then the question with the
agent's criterion last. The fence markers depend on the content alone, so they are the
same in all nine prompts.
"""

import hashlib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from judgements.core import (
    continued_chat,
    plain_question,
    prompt_variants,
    rules,
    system_rules,
    worked_examples,
)

# Re-exported (the `as`, core/ being checked with no implicit re-export): callers name a
# prompt's variants prompts.Variant, and what a prompt is made from prompts.AgentBrief and
# prompts.EarlierDecision.
from judgements.core.briefs import AgentBrief as AgentBrief
from judgements.core.briefs import EarlierDecision as EarlierDecision
from judgements.core.json_values import JsonObject
from judgements.core.prompt_variants import Variant as Variant
from judgements.core.text import one_line_json

REASON_MAX_CHARS = 200
MISSING_MAX_ITEMS = 3
MISSING_ITEM_MAX_CHARS = 60
CONTRADICTION = "contradiction"


class AgentVerdict(BaseModel):
    """The structured answer every agent must give: the reason first, so the decision
    follows from it, and `criterion_met`, which must agree with the decision.

    `missing`, last, names in a few words what the criterion needs and the content does
    not state: checked word by word against the content (judgements/core/answer_checks.py).
    It comes after the decision so it explains the vote rather than steering it; a server
    that does not send it answers the empty list.
    """

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=REASON_MAX_CHARS)
    criterion_met: bool = Field(strict=True)  # true or false, not "yes" or 1
    decision: Literal["approve", "reject"]
    missing: list[Annotated[str, Field(max_length=MISSING_ITEM_MAX_CHARS)]] = Field(
        default_factory=list, max_length=MISSING_MAX_ITEMS
    )
    # The QUOTE variant's words of the content the vote rests on ("" when not asked, or
    # when the vote rests on nothing the content states).
    quote: str = Field(default="", max_length=prompt_variants.QUOTE_MAX_CHARS)

    @model_validator(mode="after")
    def _agrees_with_itself(self) -> "AgentVerdict":
        if self.criterion_met != (self.decision == "approve"):
            met = "true" if self.criterion_met else "false"
            raise PydanticCustomError(
                CONTRADICTION,
                "the answer contradicts itself: criterion_met is {met} but decision is {decision}",
                {"met": met, "decision": self.decision},
            )
        return self


def verdict_schema(
    *,
    tied: bool = False,
    variants: frozenset[Variant] = frozenset(),
) -> JsonObject:
    """The JSON schema of AgentVerdict, properties in answer order (reason first).

    The free fields carry their length bounds; OpenAI's strict json_schema mode rejects
    such keywords on some models, so judgements/llm/completions.py sends that mode the
    schema without them (`without_length_bounds`), the bound staying in the prompt and in
    our own validation.

    `tied`: for servers that turn any JSON schema into a decoding grammar (llama.cpp's),
    the two consistent answers as alternatives, so the decision follows from
    `criterion_met` and a self-contradicting answer cannot be produced at all (a small
    model otherwise writes one again and again). Every answer is still checked.

    `variants` (judgements/core/prompt_variants.py): the keys in the order they ask for
    (DECISION_FIRST), and a required "quote" (QUOTE); none: the schema as measured.
    """
    fields = answer_fields()
    keys = prompt_variants.answer_keys(variants)
    if not tied:
        decision: JsonObject = {"type": "string", "enum": ["approve", "reject"]}
        return object_schema(
            fields | {"criterion_met": {"type": "boolean"}, "decision": decision}, keys
        )
    # An approve finds nothing missing (NO_MISSING: no such key).
    none_missing: JsonObject | None = (
        {"type": "array", "maxItems": 0} if "missing" in keys else None
    )
    return {
        "anyOf": [
            object_schema(
                fields
                | {"criterion_met": {"const": met}, "decision": {"const": decision}}
                | ({"missing": none_missing} if met and none_missing else {}),
                keys,
            )
            for met, decision in ((True, "approve"), (False, "reject"))
        ]
    }


def answer_fields() -> dict[str, JsonObject]:
    """The schemas of an answer's free fields, with their length bounds."""
    item: JsonObject = {"type": "string", "maxLength": MISSING_ITEM_MAX_CHARS}
    return {
        "reason": {"type": "string", "minLength": 1, "maxLength": REASON_MAX_CHARS},
        "quote": {"type": "string", "maxLength": prompt_variants.QUOTE_MAX_CHARS},
        "missing": {"type": "array", "items": item, "maxItems": MISSING_MAX_ITEMS},
    }


def object_schema(properties: dict[str, JsonObject], keys: list[str]) -> JsonObject:
    """An object of exactly `keys`, in their order."""
    return {
        "type": "object",
        "properties": {key: properties[key] for key in keys},
        "required": [*keys],
        "additionalProperties": False,
    }


def rules_text(variants: frozenset[Variant] = frozenset(), round_number: int | None = None) -> str:
    """The system message: the rules, with each variant's paragraph where it asks for one
    (judgements/core/system_rules.py); with none, SHARED_RULES exactly. `round_number`
    matters only to SHORT_RULES, which leaves the earlier rounds' paragraph out of round 1,
    and to NAMED_PEERS, whose paragraph starts in round 2."""
    paragraphs = [
        system_rules.intro(variants),
        system_rules.history_rules(variants, round_number),
        system_rules.answer_rules(variants),
    ]
    return "\n".join(p for p in paragraphs if p).format(reason_max=REASON_MAX_CHARS)


# The default rules, unformatted, as measured (the README's numbers).
SHARED_RULES = "\n".join(
    [system_rules.RULES_INTRO, system_rules.HISTORY_DEFAULT, system_rules.ANSWER_DEFAULT]
)


def fence_token(content: str) -> str:
    """A marker tag the content does not contain, so the content cannot close its fence.

    It depends on the content alone, so every prompt of a judgement uses the same markers
    (a prefix a provider can cache). Criteria and model-written reasons are not known when
    the first prompt is built: any occurrence of the tag in them is neutralised instead.
    """
    digest = hashlib.sha256(content.encode()).hexdigest()
    # Eight characters: absent from the content by construction, and short, because the
    # six markers of a prompt are read (as tokens) in every call.
    for start in range(0, len(digest) - 8, 4):
        token = digest[start : start + 8].upper()
        if token not in content:
            return token
    raise ValueError("could not find a fence marker absent from the content")  # pragma: no cover


def neutralise(text: str, token: str) -> str:
    """`text` with every occurrence of the fence tag defused, so it cannot close a fence."""
    return text.replace(token, token.lower() + "-quoted")


def markers(token: str) -> dict[str, str]:
    return {
        "content_open": f"<<<CONTENT {token}>>>",
        "content_close": f"<<<END CONTENT {token}>>>",
        "history_open": f"<<<EARLIER ANSWERS {token}>>>",
        "history_close": f"<<<END EARLIER ANSWERS {token}>>>",
    }


def history_lines(
    agent: AgentBrief,
    earlier: list[EarlierDecision],
    token: str,
    variants: frozenset[Variant] = frozenset(),
) -> str:
    # A plain line per answer rather than a JSON object: the keys cost tokens in every
    # later-round call. The reason stays a JSON string, so it cannot break out of its line.
    return "\n".join(history_line(agent, d, token, variants) for d in in_order(earlier))


def in_order(earlier: list[EarlierDecision]) -> list[EarlierDecision]:
    """The earlier answers as every prompt lists them: by round, then by agent."""
    return sorted(earlier, key=lambda d: (d.round, d.agent_name))


def plain_history_line(agent: AgentBrief, d: EarlierDecision) -> str:
    """One earlier answer in PLAIN_LATER's list: no fence tag to neutralise (the content
    is in a code block, and a JSON string holds no line break to start one)."""
    return f"{speaker(agent, d)}, {d.decision}: {one_line_json(d.reason)}"


def speaker(agent: AgentBrief, d: EarlierDecision) -> str:
    """Who gave an earlier answer, as every list of them says it: "(you)" marks the
    agent's own."""
    return f"round {d.round}, {d.agent_name}{' (you)' if d.agent_name == agent.name else ''}"


def history_line(
    agent: AgentBrief, d: EarlierDecision, token: str, variants: frozenset[Variant]
) -> str:
    """One earlier answer: as measured; with its decision alone (DECISIONS_ONLY); or with
    the agent's criterion named and its reason marked as about it (NAMED_PEERS). The
    criterion, like the reason, is a JSON string: it cannot break out of its line."""
    who = speaker(agent, d)
    if Variant.DECISIONS_ONLY in variants:
        return f"{who}, {d.decision}"
    reason = one_line_json(neutralise(d.reason, token))
    if Variant.NAMED_PEERS in variants:
        criterion = one_line_json(neutralise(d.criterion, token))
        return (
            f"{who}, criterion {criterion}, {d.decision};"
            f" reason about {d.agent_name}'s criterion: {reason}"
        )
    return f"{who}, {d.decision}: {reason}"


def previous_answer(
    agent: AgentBrief, earlier: list[EarlierDecision], token: str, variants: frozenset[Variant]
) -> str | None:
    """The agent's answer of the round before: its vote, with OWN_REASON its reason too."""
    own = [d for d in earlier if d.agent_name == agent.name]
    if not own:
        return None
    previous = max(own, key=lambda d: d.round)
    recalled = f'Your vote in the previous round was "{previous.decision}"'
    if Variant.OWN_REASON not in variants:
        return recalled + "."
    reason = one_line_json(neutralise(previous.reason, token))
    return f"{recalled}, with the reason {reason}."


ANSWER_WITH_JSON = "Answer with the JSON object."


def question(
    round_number: int,
    criteria: str,
    previous: str | None = None,
    answer_with: str = ANSWER_WITH_JSON,
) -> str:
    """What the agent is asked, last in the prompt, where a small model still has its
    criterion in view when it answers. `answer_with`, the last line, is the one part the
    confidence probe (judgements/core/check_prompts.py) changes."""
    # The fake LLM server of the test suite reads the round from "This is round N of".
    text = f"This is round {round_number} of {rules.ROUNDS}."
    if previous:
        # The rules say when to change it; this only keeps the vote in view.
        text += f" {previous}"
    if not criteria:
        # CRITERION_FIRST: the criterion was given before the content.
        return f"{text} Does the content above satisfy your criterion?\n{answer_with}"
    text += " Does the content above satisfy this criterion?"
    return f"{text}\n{criteria}\n{answer_with}"


def user_message(
    agent: AgentBrief,
    content: str,
    round_number: int,
    earlier: list[EarlierDecision],
    token: str,
    answer_with: str = ANSWER_WITH_JSON,
    variants: frozenset[Variant] = frozenset(),
) -> str:
    fences = markers(token)
    criteria = neutralise(agent.criteria, token)
    fenced = f"{fences['content_open']}\n{content}\n{fences['content_close']}\n"
    if Variant.CRITERION_FIRST in variants:
        parts = [f"You are {agent.name}. Your criterion:\n{criteria}\n", fenced]
        criteria = ""
    else:
        parts = [fenced, f"You are {agent.name}."]
    previous = None
    if round_number > 1:
        history = history_lines(agent, earlier, token, variants) or "(none)"
        shown = f"Earlier answers:\n{fences['history_open']}\n{history}\n{fences['history_close']}"
        # HISTORY_FIRST: the earlier answers before the content, so that the content, the
        # agent's name and its criterion come last, as round 1 asks them.
        parts = [shown, *parts] if Variant.HISTORY_FIRST in variants else [*parts, shown]
        previous = previous_answer(agent, earlier, token, variants)
    parts.append(question(round_number, criteria, previous, answer_with))
    return "\n".join(parts)


def build_messages(
    agent: AgentBrief,
    content: str,
    round_number: int,
    earlier: list[EarlierDecision],
    answer_with: str = ANSWER_WITH_JSON,
    variants: frozenset[Variant] = frozenset(),
) -> list[dict[str, str]]:
    # The content sits in the user turn, fenced, right before the question about it. On
    # Qwen2.5-Coder-1.5B, with the content in the system message after long rules, agents
    # wrote that it "does not mention" what it plainly said, and the panel approved 6 of
    # 16 approvable starter cases; laid out like this, 16 of 16 (24 of 32 cases right
    # against 20). The price: 5 of 12 red-team cases approved against 2 (one plain call:
    # 7). The fences and the rules, not the message's role, keep the content data; the
    # README ("How good is my panel?") has the measurements.
    last = None if answer_with == ANSWER_WITH_JSON else answer_with
    asked = asked_as_a_user(agent, content, round_number, earlier, last, variants)
    if asked is not None:
        return asked
    # Hashing a long content is the costliest step here: once per call, not once per use.
    token = fence_token(content)
    return [
        {"role": "system", "content": rules_text(variants, round_number)},
        {
            "role": "user",
            "content": user_message(
                agent, content, round_number, earlier, token, answer_with, variants
            ),
        },
    ]


def asked_as_a_user(
    agent: AgentBrief,
    content: str,
    round_number: int,
    earlier: list[EarlierDecision],
    last: str | None,
    variants: frozenset[Variant],
) -> list[dict[str, str]] | None:
    """A round as issue 69's variants ask it, in a user's words rather than under the
    rules of a system message; None where the round is asked in the default's layout.
    `last`: another last line than the user's JSON one (the confidence probe's word)."""
    if Variant.CONTINUED_CHAT in variants and round_number > 1:
        # Issue 69: a later round continues the agent's own chat of round 1.
        first = build_messages(agent, content, 1, [], variants=variants)
        turns = continued_chat.later_turns(
            agent, content, earlier, round_number, rules.ROUNDS, variants, last
        )
        return [*first, *turns]
    if Variant.PLAIN_QUESTION in variants and round_number == 1:
        # Issue 69: round 1 as a user asks it, one user message, the content fenced.
        text = plain_question.fenced_text(
            [agent.criteria],
            content,
            keys=prompt_variants.answer_keys(variants),
            agent_name=agent.name,
            answer_with=last,
        )
        return [{"role": "user", "content": text}]
    if variants & prompt_variants.USERS_WORDS_FIRST and round_number == 1:
        # Issue 69: round 1 in the user's own words, the content in a code block; under
        # WORKED_EXAMPLES after examples asked and answered the same way.
        text = plain_question.user_text([agent.criteria], content, answer_with=last)
        shown = []
        if Variant.WORKED_EXAMPLES in variants:
            keys = prompt_variants.round_keys(variants, 1)
            shown = worked_examples.turns(keys=keys, answer_with=last)
        return [*shown, {"role": "user", "content": text}]
    if Variant.PLAIN_LATER in variants and round_number > 1:
        # Issue 69: a later round in the user's words too, the earlier answers listed.
        history = [plain_history_line(agent, d) for d in in_order(earlier)]
        text = plain_question.later_text(
            agent.criteria, content, history, round_number, rules.ROUNDS, last
        )
        return [{"role": "user", "content": text}]
    return None
