"""A verdict cache in SQLite, shared by every judge job on a machine.

Keyed by judge model, prompt hash, question, ground truth and response: an unchanged rerun asks the
API nothing, and changed responses are judged anew. WAL mode and a busy timeout make concurrent jobs
(and threads) safe; only valid verdicts are stored, so a failure is retried on the next run.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from virtuebench.records import stable_hash


class VerdictCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        self._set_up()

    def _set_up(self) -> None:
        """WAL mode and the table. Switching to WAL can answer "locked" at once, without waiting, while
        another job sets up the same new file: retry for a while rather than fail."""
        deadline = time.monotonic() + 60
        while True:
            try:
                self._db.execute("PRAGMA busy_timeout=60000")
                if self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, judge_model TEXT, prompt_hash TEXT, "
                    "verdict TEXT NOT NULL, created REAL)"
                )
                return
            except sqlite3.OperationalError as error:
                if not any(word in str(error) for word in ("locked", "busy")) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05 + random.random() * 0.2)

    @staticmethod
    def key(judge_model: str, prompt_hash: str, question: str, answer: str, response: str) -> str:
        return stable_hash([judge_model, prompt_hash, question, answer, response], length=32)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT verdict FROM verdicts WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, judge_model: str, prompt_hash: str, verdict: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?)",
                (key, judge_model, prompt_hash, json.dumps(verdict), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]

    def close(self) -> None:
        self._db.close()
