"""A content-addressed store of results that cost a model request: answers and verdicts, by a key of all they depend on.

One file per entry, `<root>/<kind>/<key[:2]>/<key>.json`, shared by every job and every results folder that names the
same root. Written for many writers on many hosts of a shared filesystem: an entry is written to a temporary sibling
of a name no other writer uses and renamed into place (atomic within a directory, NFS included), and no lock is taken
(NFS breaks lock files and SQLite's locking). Two writers of one key write the same answer; whichever rename lands
last is kept, and both are whole. A killed writer leaves at most a temporary file, which is never read as an entry.

Each entry carries its key and the SHA-256 of its value: an entry cut short, edited or moved under another key is
damaged, counted, never used, and replaced when its answer is made again. docs/records.md has the layout.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any

FORMAT = "virtuebench.store/1"


def digest_of(value: Any) -> str:
    """The SHA-256 of a JSON value, independent of key order: what an entry's `digest` holds for its `value`."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def store_key(parts: Any) -> str:
    """An entry's key: the SHA-256 of everything its value depends on (a JSON value)."""
    return digest_of(parts)


class Store:
    """The entries of one kind ("answers", "verdicts", ...) under `root`."""

    def __init__(self, root: str | Path, kind: str) -> None:
        self.root, self.kind = Path(root), kind
        self.folder = self.root / kind
        self.damaged: list[Path] = []  # entries found damaged by this process (ignored; asked again)
        self.hits = self.writes = 0
        self._tag = f"{socket.gethostname()}.{os.getpid()}"

    def path(self, key: str) -> Path:
        if len(key) < 8 or not all(char in "0123456789abcdef" for char in key):
            raise ValueError(f"store key {key!r} is not a lower-case hexadecimal digest")
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The value stored under `key`, or None where there is none or it is damaged (then counted in `damaged`)."""
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            self.damaged.append(path)
            return None
        try:
            entry = json.loads(text)
            whole = entry["format"] == FORMAT and entry["key"] == key and digest_of(entry["value"]) == entry["digest"]
        except (ValueError, TypeError, KeyError):
            whole = False
        if not whole or not isinstance(entry["value"], dict):
            self.damaged.append(path)
            return None
        self.hits += 1
        return entry["value"]

    def put(self, key: str, value: dict[str, Any], about: dict[str, Any] | None = None) -> None:
        """Store `value` under `key`, whole or not at all. `about`: what the entry is for a person reading the
        store (model, item, level), outside the digest."""
        path = self.path(key)
        entry = {"format": FORMAT, "key": key, "digest": digest_of(value), "about": about or {}, "value": value}
        text = json.dumps(entry, ensure_ascii=False)  # the value as given: a record made from it reads as the first did
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{self._tag}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            with tmp.open("w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())  # on the server before the rename makes it an entry
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self.writes += 1

    def damaged_line(self) -> str | None:
        """One line on the damaged entries this process met, or None."""
        if not self.damaged:
            return None
        return (
            f"{len(self.damaged)} damaged {self.kind} entr{'y' if len(self.damaged) == 1 else 'ies'} in {self.folder} "
            f"(first: {self.damaged[0]}) ignored and made again"
        )
