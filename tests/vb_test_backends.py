"""Backends for tests, loaded through config as `vb_test_backends:Class`: they log each call to a file."""

from __future__ import annotations

import time
from pathlib import Path

from virtuebench.models.base import Reply, Request


class RecordingBackend:
    """Answers 'red' after `delay_s`; appends each instance_id it is asked to `calls_file`;
    raises for the instance ids in `fail_on`."""

    def __init__(self, settings):
        self.delay_s = settings.get("delay_s", 0.0)
        self.calls_file = Path(settings["calls_file"])
        self.fail_on = set(settings.get("fail_on", []))

    def answer(self, request: Request) -> Reply:
        with self.calls_file.open("a") as handle:
            handle.write(request.instance_id + "\n")
        time.sleep(self.delay_s)
        if request.instance_id in self.fail_on:
            raise ConnectionError("simulated outage")
        assert request.frames and all(path.exists() for path in request.frames)
        return Reply("red", usage={"frames": len(request.frames)})
