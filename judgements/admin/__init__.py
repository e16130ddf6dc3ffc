"""The audit history. Recorded decisions and attempts are read-only here: nobody edits
or deletes what the panel said through the admin. Django imports this package; each
module registers its models."""

from judgements.admin import evaluations, judgements, people, records, teams  # noqa: F401 - imported to register
