"""A kind of configuration for tests alone (judgements/api/resources.py): what adding one
takes, one class. The `notes` fixture (tests/judgements/api/conftest.py) registers it."""

from typing import ClassVar

from pydantic import BaseModel

from judgements.api import resources
from judgements.intake import schemas
from judgements.models import ApiToken


class NoteWrite(schemas.Strict):
    text: str


class Note(BaseModel):
    id: int
    text: str
    etag: str


class NoteList(BaseModel):
    notes: list[Note]


class Notes(resources.Resource[NoteWrite, Note, Note]):
    """Notes kept in memory: created (not on a dry run) and read back."""

    kind, plural, list_answer = "note", "notes", NoteList
    routes: ClassVar[dict[str, resources.Route]] = {
        "list": resources.Route("Every note."),
        "create": resources.Route("Write a note."),
        "read": resources.Route("One note."),
    }
    kept: ClassVar[list[str]] = []

    def create(self, token: ApiToken, body: NoteWrite, dry_run: bool) -> Note:
        if not dry_run:
            self.kept.append(body.text)
        return Note(id=len(self.kept), text=body.text, etag=f'"note-{len(self.kept)}"')

    def listing(self, token: ApiToken) -> list[Note]:
        return [self.read(token, pk) for pk in range(1, len(self.kept) + 1)]

    def read(self, token: ApiToken, pk: int) -> Note:
        return Note(id=pk, text=self.kept[pk - 1], etag=f'"note-{pk}"')
