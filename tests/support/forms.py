"""A case as the new-judgement page posts it."""


def form_data(case: dict) -> dict:
    data = {
        "title": case["title"],
        "content": case["content"],
        "agents-TOTAL_FORMS": "3",
        "agents-INITIAL_FORMS": "0",
    }
    for index, agent in enumerate(case["agents"]):
        for field, value in agent.items():
            data[f"agents-{index}-{field}"] = value
    return data
