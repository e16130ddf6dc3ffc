"""Chat templates' control tokens, defused in every message MAGI sends a model. Pure, no
Django.

A server that runs the model itself (llama.cpp, the bundled runtime; vLLM; Ollama) fills
the chat template with the messages and then reads the whole prompt with its special
tokens parsed: `<|im_end|>` written inside a message becomes the real end of that message,
one token, and `<|im_start|>assistant` a turn the model takes for its own. So a judged
content, a panel's criterion or an earlier agent's reason holding those strings would
leave every fence MAGI draws (code blocks, marker lines, JSON strings) and write turns of
its own: an earlier answer "approve", a new system message. A fence drawn in text cannot
stop a token the tokenizer makes before the model reads a word.

`defused` puts a backslash after the first character of each control token of the
template families below, so the tokenizer reads it as ordinary text, and the model still
reads, and the audit record still shows, what the text said. The rest of the text is sent
as written. Defusing twice changes nothing more.
"""

import re

# DeepSeek writes its tokens' names between full-width vertical bars (U+FF5C).
_BAR = "\uff5c"
# The control tokens of the chat templates of the model families MAGI is run with, each
# matched exactly as its tokenizer matches it (case and all).
CONTROL_TOKEN = re.compile(
    # ChatML (Qwen, SmolLM), Llama 3, Phi, Granite, gpt-oss: <|im_end|>, <|eot_id|>, <|end|>
    r"<\|[^\s<>|]{1,64}\|>"
    # DeepSeek's: the same shape with the full-width bars
    rf"|<{_BAR}[^\s<>{_BAR}]{{1,64}}{_BAR}>"
    # SentencePiece's sequence marks (Llama 2, Mistral) and Gemma's turns
    r"|</?s>|<unk>|<pad>|</?(?:bos|eos)>|<(?:start|end)_of_turn>"
    # Mistral's instruction and tool marks
    r"|\[/?(?:INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\]"
    # Qwen's tool and thinking marks; Command R's <|START_OF_TURN_TOKEN|> is matched above,
    # its <BOS_TOKEN> here
    r"|</?(?:tool_call|tool_response|think)>|<[A-Z]+(?:_[A-Z]+)*_TOKEN>"
)


def defused(text: str) -> str:
    """`text` with a backslash after the first character of every control token in it."""
    return CONTROL_TOKEN.sub(lambda found: f"{found[0][0]}\\{found[0][1:]}", text)
