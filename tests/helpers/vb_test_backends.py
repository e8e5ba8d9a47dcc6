"""Backends for tests, loaded through config as `helpers.vb_test_backends:Class`: they log each call to a file."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from virtuebench import REFUSAL_ANSWER
from virtuebench.models.base import SEEDED, Backend, Reply, Request


class RecordingBackend(Backend):
    """Answers 'red' after `delay_s`; appends each instance_id it is asked to `calls_file`;
    raises for the instance ids in `fail_on`. With VB_TEST_HOLD_AFTER=N in the environment (not in the settings,
    which are part of the job's fingerprint), it answers N items and then never answers again, so a test that kills
    the job finds exactly N finished items whatever the machine's load."""

    def __init__(self, settings):
        self.delay_s = settings.get("delay_s", 0.0)
        self.calls_file = Path(settings["calls_file"])
        self.fail_on = set(settings.get("fail_on", []))
        self.hold_after = int(os.environ.get("VB_TEST_HOLD_AFTER", "-1"))
        self.answered = 0

    def answer(self, request: Request) -> Reply:
        with self.calls_file.open("a") as handle:
            handle.write(request.instance_id + "\n")
        if self.answered == self.hold_after:
            while True:  # until the test kills the job
                time.sleep(1)
        self.answered += 1
        time.sleep(self.delay_s)
        if request.instance_id in self.fail_on:
            raise ConnectionError("simulated outage")
        assert request.frames and all(path.exists() for path in request.frames)
        return Reply("red", usage={"frames": len(request.frames)})


class ScriptedBackend(Backend):
    """Replies by the prompt: the reply of the first key of `replies` (a mapping, or a list of
    [key, reply] pairs where the order matters: configs travel as sorted JSON) that occurs in the
    rendered prompt, else `default`. Logs each instance_id (and the number of frames) to `calls_file`;
    raises for the instance ids in `fail_on`. The reply may use {n_frames} and {level}."""

    def __init__(self, settings):
        replies = settings.get("replies", {})
        self.replies = dict(replies.items()) if isinstance(replies, dict) else {key: reply for key, reply in replies}
        self.default = settings.get("default", "I don't know.")
        self.calls_file = Path(settings["calls_file"]) if settings.get("calls_file") else None
        self.fail_on = set(settings.get("fail_on", []))

    def answer(self, request: Request) -> Reply:
        if self.calls_file:
            with self.calls_file.open("a") as handle:
                handle.write(f"{request.instance_id}\t{len(request.frames)}\n")
        if request.instance_id in self.fail_on:
            raise ConnectionError("simulated outage")
        assert all(path.exists() for path in request.frames)
        reply = next((text for key, text in self.replies.items() if key in request.prompt), self.default)
        return Reply(reply.format(n_frames=len(request.frames), level=request.level))


class WeightsBackend(Backend):
    """'Loads' the weights its spec's hub id names (nothing is read: load_backend records their commit, as for a real
    backend), answers 'red', and for the instance ids in `cut_off` stops at the token limit (`finish_reason` 'length');
    for those in `unclosed` ends inside a thinking block. Raises for the instance ids in `fail_on`. Built directly
    (no spec), `loaded_commit` stands for the commit a download brought."""

    loads_weights = True

    def __init__(self, settings):
        self.weights_commit = settings.get("loaded_commit")
        self.cut_off = set(settings.get("cut_off", []))
        self.unclosed = set(settings.get("unclosed", []))
        self.fail_on = set(settings.get("fail_on", []))

    def answer(self, request: Request) -> Reply:
        if request.instance_id in self.fail_on:
            raise ConnectionError("simulated outage")
        if request.instance_id in self.unclosed:
            return Reply("", thinking="the frames show a star, it is", finish_reason="stop", unclosed_thinking=True)
        if request.instance_id in self.cut_off:
            return Reply("The star is red, and the", finish_reason="length")
        return Reply("red", finish_reason="stop")


class SampledBackend(Backend):
    """A sampling model in miniature (registry `samples` > 1): for each request it draws, from a generator seeded with
    its `seed` + Request.sample and the instance id, one of the oracle's answer (read from the demo's frames), the guess
    backend's answer and the refusal, so that runs of an item differ and a rerun repeats each one. Appends
    `instance_id#sample` to `calls_file` where given; VB_TEST_HOLD_AFTER as RecordingBackend's."""

    @classmethod
    def decoding(cls, settings):
        return SEEDED

    def __init__(self, settings):
        from virtuebench.models.oracle import OracleBackend
        from virtuebench.models.reference import GuessBackend

        self.seed = int(settings.get("seed", 0))
        self.oracle, self.guess = OracleBackend({}), GuessBackend({})
        self.calls_file = Path(settings["calls_file"]) if settings.get("calls_file") else None
        self.hold_after = int(os.environ.get("VB_TEST_HOLD_AFTER", "-1"))
        self.answered = 0

    def choice(self, request: Request) -> int:
        """Which answer run `request.sample` of the item gives: 0 the oracle's, 1 the guess's, 2 the refusal."""
        return random.Random(f"{self.seed + request.sample}:{request.instance_id}").choice((0, 0, 1, 2))

    def answer(self, request: Request) -> Reply:
        if self.calls_file:
            with self.calls_file.open("a") as handle:
                handle.write(f"{request.instance_id}#{request.sample}\n")
        if self.answered == self.hold_after:
            while True:  # until the test kills the job
                time.sleep(1)
        self.answered += 1
        pick = self.choice(request)
        if pick == 2:
            return Reply(REFUSAL_ANSWER)
        return (self.oracle if pick == 0 else self.guess).answer(request)


class AliasBackend(Backend):
    """Answers 'red' and names the model that answered as an endpoint behind an alias does: `names` in turn, one per
    request (an alias that moved to another snapshot while the job asked)."""

    def __init__(self, settings):
        self.names = list(settings["names"])
        self.asked = 0

    def answer(self, request: Request) -> Reply:
        name = self.names[self.asked % len(self.names)]
        self.asked += 1
        return Reply("red", model=name)
