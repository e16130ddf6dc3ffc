"""The configuration format's limits, as the server's own schemas declare them: written
by judgements/api/config_format.py from them, never by hand (the client cannot import the
server); tests/judgements/api/test_config_format.py fails when this file differs.
MAGI_CONTENT_MAX_CHARS is a deployment's setting: its default is here, and a deployment's
lower one shows at plan time, in the server's dry run of the batch."""

PANEL_NAME_MAX_CHARS = 100
PANEL_DESCRIPTION_MAX_CHARS = 1_000
REVIEWERS_MAX_ITEMS = 1_000
AGENT_NAME_MAX_CHARS = 100
AGENT_MODEL_MAX_CHARS = 200
CRITERIA_MAX_CHARS = 5_000
USERNAME_MAX_CHARS = 150
MEMBERS_MAX_ITEMS = 10_000
CASE_ID_MAX_CHARS = 100
CASE_TITLE_MAX_CHARS = 200
CONTENT_MAX_CHARS = 20_000
TAG_MAX_CHARS = 40
TAGS_MAX_ITEMS = 20
