"""A command's refusal of bad input, as every manage.py command of MAGI writes it: one line
per field on standard error, "invalid input: FIELD: MESSAGE", then exit status 2."""

import sys
from typing import NoReturn

from django.core.management.base import OutputWrapper

from judgements.core.errors import InvalidInput

EXIT_INVALID = 2


def refuse(stderr: OutputWrapper, exc: InvalidInput) -> NoReturn:
    for field, messages in exc.errors.items():
        stderr.write(f"invalid input: {field}: {' '.join(messages)}")
    sys.exit(EXIT_INVALID)
