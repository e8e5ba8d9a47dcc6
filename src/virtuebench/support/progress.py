"""Progress lines for long jobs: items done of total, rate and time left, printed to the job's log."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, label: str, total: int, already_done: int = 0, every_s: float = 5.0, stream: TextIO | None = None):
        self.label, self.total, self.done = label, total, already_done
        self.resumed = already_done
        self.every_s = every_s
        self.stream = stream or sys.stderr
        self.started = self.last = time.monotonic()
        if already_done:
            self._print(f"resuming: {already_done}/{total} already done")

    def _print(self, text: str) -> None:
        print(f"[{self.label}] {text}", file=self.stream, flush=True)

    def step(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.every_s or self.done == self.total:
            self.last = now
            elapsed = now - self.started
            rate = (self.done - self.resumed) / elapsed if elapsed > 0 else 0.0
            left = (self.total - self.done) / rate if rate > 0 else float("nan")
            self._print(f"{self.done}/{self.total} items, {rate:.1f} items/s, {left:.0f} s left")

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started
