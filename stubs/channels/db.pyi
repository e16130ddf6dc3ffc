# channels' SyncToAsync that closes old database connections around each call
# (channels/db.py), which judgements/infrastructure/database.py's db_call runs on its pool.

from typing import ParamSpec, TypeVar

from asgiref.sync import SyncToAsync

_P = ParamSpec("_P")
_R = TypeVar("_R")

class DatabaseSyncToAsync(SyncToAsync[_P, _R]): ...
