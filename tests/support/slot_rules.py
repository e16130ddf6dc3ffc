"""A local server's slots and the rules in them (judgements/llm/local/warm_rules.py and
installed_rules.py), on the real bundled model: a server started on a file of the tests'
own, and how many of round 1's prompt tokens each slot found cached."""

import asyncio
from pathlib import Path
from typing import cast

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from judgements.core import prompt_variants, prompts
from judgements.llm.local import bundled_file
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.llm.local.provider import LOCAL_API_KEY
from judgements.llm.local.servers import start_server

# The default rules are 376 tokens on the bundled model's tokenizer; a call that found
# none of them cached reports 0.
RULES_TOKENS_AT_LEAST = 300


def start(model: Path):  # the server module's type is its own
    """A server on `model` (a copy of the bundled file), under the bundled model's name
    and pinned checksum."""
    return start_server(BUNDLED_MODEL_NAME, model, sha256=bundled_file.SHA256)


def round_one(content: str) -> list[list[dict[str, str]]]:
    """Round 1 of three agents as the engine asks it under the site's default variants."""
    variants = prompt_variants.resolve(None)
    agents = [
        prompts.AgentBrief("Melchior", "Approve only plans that are legal."),
        prompts.AgentBrief("Balthasar", "Approve only plans that are safe for the traveller."),
        prompts.AgentBrief("Casper", "Approve only plans that fit a one-week holiday."),
    ]
    return [prompts.build_messages(a, content, 1, [], variants=variants) for a in agents]


async def cached_tokens_of_round_one(base_url: str) -> list[int]:
    """Round 1's three calls at once, as the engine sends a round (each lands on a slot of
    its own): the prompt tokens each found cached."""
    client = AsyncOpenAI(base_url=base_url, api_key=LOCAL_API_KEY, timeout=120, max_retries=0)

    async def cached(messages: list[dict[str, str]]) -> int:
        completion = await client.chat.completions.create(
            model=BUNDLED_MODEL_NAME,
            messages=cast(list[ChatCompletionMessageParam], messages),
            max_tokens=1,
            temperature=0,
        )
        assert completion.usage is not None
        details = completion.usage.prompt_tokens_details
        return details.cached_tokens or 0 if details is not None else 0

    return list(await asyncio.gather(*(cached(m) for m in round_one("A week in Japan."))))
