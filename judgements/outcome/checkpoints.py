"""Each checkpoint the audit log signs, kept where the database's writer cannot rewrite it
(as AWS CloudTrail delivers its digest files): written to the append-only directory
(MAGI_AUDIT_CHECKPOINT_DIR) as `checkpoint-<size>.txt`, and sent to the webhook
subscribers (MAGI_AUDIT_CHECKPOINT_WEBHOOKS) as a checkpoint event (webhooks.CHECKPOINT).
A checkpoint is marked published once both are done; until then every worker's next run
tries again, so none is skipped (a file already there with the same text counts as
written).

Every worker runs `sequence_and_publish` on its timer (engine/runner.py): the sequencer
(audit/sequencer.py) places what is queued, then this publishes what it signed."""

import logging
import os
from pathlib import Path
from urllib.parse import urlsplit

from django.db import transaction

from judgements.audit import sequencer
from judgements.models import Checkpoint
from judgements.models.magi_settings import magi_settings
from judgements.outcome import webhooks

log = logging.getLogger(__name__)


class NotKept(Exception):
    """The directory holds another checkpoint at this size, or cannot be written."""


def file_of(checkpoint: Checkpoint) -> Path:
    return Path(magi_settings.MAGI_AUDIT_CHECKPOINT_DIR) / f"checkpoint-{checkpoint.size:012d}.txt"


def latest_kept() -> Path | None:
    """The largest checkpoint the directory keeps (None: no directory, or none kept yet):
    what `manage.py audit verify` checks the log against when given no --checkpoint, so
    that a log rolled back in the database fails where its checkpoints were kept."""
    if not magi_settings.MAGI_AUDIT_CHECKPOINT_DIR:
        return None
    # The size is written with twelve digits: the names sort as the sizes do.
    found = sorted(Path(magi_settings.MAGI_AUDIT_CHECKPOINT_DIR).glob("checkpoint-*.txt"))
    return found[-1] if found else None


def write_file(checkpoint: Checkpoint) -> None:
    """The checkpoint's note as a new file, never over another (O_EXCL)."""
    path = file_of(checkpoint)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    except FileExistsError:
        if path.read_text() != checkpoint.note:
            raise NotKept(f"{path} holds another checkpoint of size {checkpoint.size}") from None
        return
    except OSError as exc:
        raise NotKept(f"{path}: {exc}") from None
    with os.fdopen(descriptor, "w") as handle:
        handle.write(checkpoint.note)
        handle.flush()
        os.fsync(handle.fileno())


def subscribers() -> list[str]:
    """The subscribers' URLs that the allow-list lets through (the others are logged)."""
    allowed = []
    for url in magi_settings.MAGI_AUDIT_CHECKPOINT_WEBHOOKS:
        parts = urlsplit(url)
        if webhooks.allowed(parts.scheme, (parts.hostname or "").lower()):
            allowed.append(url)
        else:
            log.error("checkpoint webhook %s is not on MAGI_WEBHOOK_HOSTS: not sent", url)
    return allowed


def publish(checkpoint: Checkpoint) -> bool:
    """Keep one checkpoint outside the database; False when another worker did."""
    if magi_settings.MAGI_AUDIT_CHECKPOINT_DIR:
        write_file(checkpoint)
    payload: webhooks.CheckpointEvent = {
        "event": webhooks.CHECKPOINT,
        "checkpoint": checkpoint.note,
        "size": checkpoint.size,
        "root_hash": checkpoint.root_hash,
    }
    with transaction.atomic():
        marked = Checkpoint.objects.filter(pk=checkpoint.pk, published=False).update(published=True)
        if not marked:
            return False
        for url in subscribers():
            webhooks.enqueue_checkpoint(url, payload)
    return True


def publish_pending(limit: int = 100) -> int:
    """Publish the checkpoints not yet kept outside, oldest first; how many."""
    done = 0
    for checkpoint in Checkpoint.objects.filter(published=False).order_by("size")[:limit]:
        try:
            done += publish(checkpoint)
        except NotKept as exc:
            log.error("checkpoint at size %s not kept: %s; trying again", checkpoint.size, exc)
            break
    return done


def sequence_and_publish(worker_id: str) -> int:
    """One run: place the queued entries (if this worker gets the sequencer's lease),
    then publish every checkpoint not yet kept outside. How many entries were placed."""
    placed = sequencer.run(worker_id)
    publish_pending()
    return placed
