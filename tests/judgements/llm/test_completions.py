import pytest

from judgements.llm import completions


@pytest.mark.parametrize(
    ("text", "decision"),
    [
        ('{"reason": "ok", "criterion_met": true, "decision": "approve"}', "approve"),
        ('```json\n{"reason": "no", "criterion_met": false, "decision": "reject"}\n```', "reject"),
        ('Sure! {"reason": "no", "criterion_met": false, "decision": "reject"} Bye.', "reject"),
    ],
)
def test_it_parses_json_wrapped_by_servers_without_structured_output(text, decision):
    assert completions.parse_verdict(text).decision == decision


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (
            '{"reason": "over budget", "criterion_met": false, "decision": "approve"}',
            "contradictory answer (the answer contradicts itself: criterion_met is false but "
            "decision is approve)",
        ),
        (
            '{"reason": "x", "criterion_met": "yes", "decision": "approve"}',
            "invalid structured output (criterion_met: Input should be a valid boolean",
        ),
    ],
)
def test_it_refuses_answers_that_contradict_themselves_or_do_not_validate(text, cause):
    with pytest.raises(completions.InvalidOutputError) as caught:
        completions.parse_verdict(text)
    assert str(caught.value).startswith(cause)
