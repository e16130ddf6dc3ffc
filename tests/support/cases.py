"""A judgement case as the API, the page and the command line take it, for tests."""

DEFAULT_MODELS = ("model-a", "model-b", "model-c")


def case_for(models=DEFAULT_MODELS, **overrides) -> dict:
    case = {
        "title": "Trip to Japan",
        "content": "I am going to travel to Japan next week.",
        "agents": [
            {"name": name, "model": model, "criteria": f"{name} approves only safe plans."}
            for name, model in zip(("Melchior", "Balthasar", "Casper"), models, strict=True)
        ],
    }
    case.update(overrides)
    return case


def validated(case: dict):
    """A case given as JSON as a JSON way in hands `submit`: validated by the case's
    pydantic model where it comes in (intake/schemas.py)."""
    from judgements.intake import schemas

    return schemas.validated(schemas.CaseJson, case).case()


def json_case(models=DEFAULT_MODELS, **overrides):
    """case_for's case, validated as a JSON way in hands it to `submit`."""
    return validated(case_for(models, **overrides))


def typed_case(models=DEFAULT_MODELS, **fields):
    """case_for's case as the typed value a page or a run hands `submit` (intake/case.py),
    with any of its other fields (panel, prompt_variants, ...)."""
    from judgements.intake.case import Case, agents_of

    data = case_for(models)
    return Case(
        title=data["title"], content=data["content"], agents=agents_of(data["agents"]), **fields
    )


def saved_panel(name="Travel desk", owner=None, models=DEFAULT_MODELS, description=""):
    """A saved panel of `owner` (None: an example), validated like any, whose agents use
    the given scripted models (the suite's `make_panel`)."""
    from judgements.configuration import saving

    agents = case_for(models)["agents"]
    return saving.save_panel(owner=owner, name=name, description=description, agents=agents)
