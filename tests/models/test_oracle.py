"""The oracle demo model reads the frames' pixels and so checks frames, levels' ground truth and judge
against each other: with the honest prompt it must be right on every item at every level."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from helpers.data import build_bench
from PIL import Image

from virtuebench import REFUSAL_ANSWER
from virtuebench.instances import read_instances
from virtuebench.judge.rules import RulesJudge
from virtuebench.models.base import Request
from virtuebench.models.oracle import OracleBackend, asks_for_refusal, look
from virtuebench.prompts import get_prompt
from virtuebench.sources.synthetic import N_SLOTS, PALETTE, SHAPES, Event, render_frame

LEVELS = [64, 128, 256, 512]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_bench(tmp_path_factory.mktemp("oracle"), 6, 600, LEVELS)


def _requests(bench: Path, prompt: str):
    template = get_prompt(prompt)
    for inst in read_instances(bench / "instances.parquet"):
        manifest = json.loads((bench / "frames" / inst.video_id / "manifest.json").read_text())
        for level, answer in sorted(inst.answers.items()):
            frames = manifest["levels"][str(level)]
            request = Request(
                inst.instance_id,
                inst.question,
                template.render(inst.question),
                [bench / "frames" / inst.video_id / name for name in frames["files"]],
                frames["timestamps"],
                level,
                manifest["duration_s"],
            )
            yield inst, level, answer, request


@pytest.mark.parametrize("size", [(256, 144), (128, 72)])
def test_every_shape_and_colour_is_read_back_from_a_jpeg(tmp_path, size):
    width, height = size
    colours = [name for name in PALETTE if name != "white"]  # white is the border here
    checked = 0
    for slot in range(N_SLOTS):
        for k, shape in enumerate(SHAPES):
            colour = colours[(k + 3 * slot) % len(colours)]
            second = 17 * slot + k
            pixels = render_frame(second, width, height, "white", [Event(shape, colour, second, second + 1, slot)])
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, "JPEG", quality=90)
            path = tmp_path / f"{slot}_{shape}.jpg"
            path.write_bytes(buffer.getvalue())
            border, sightings = look(path, fallback_second=-1)
            assert border == "white"
            assert [(s.second, s.colour, s.shape) for s in sightings] == [(second, colour, shape)], (slot, shape, colour)
            checked += 1
    assert checked == N_SLOTS * len(SHAPES)
    empty = tmp_path / "empty.jpg"
    Image.fromarray(render_frame(5, width, height, "blue", [])).save(empty, "JPEG", quality=90)
    assert look(empty, fallback_second=-1) == ("blue", [])


def test_the_oracle_is_right_on_every_item_at_every_level_with_the_honest_prompt(bench):
    oracle, judge = OracleBackend({}), RulesJudge()
    results: dict[int, list[int]] = {level: [] for level in LEVELS}
    unanswerable = 0
    for inst, level, answer, request in _requests(bench, "honest"):
        reply = oracle.answer(request)
        verdict = judge.judge(inst.question, answer, reply.text)
        assert verdict.valid and verdict.judgement == 1, (inst.instance_id, level, inst.question, answer, reply.text)
        results[level].append(verdict.judgement)
        unanswerable += answer == REFUSAL_ANSWER
    assert all(results[level] for level in LEVELS)  # every level was asked
    assert 0 < unanswerable < sum(map(len, results.values()))  # both kinds of item, so refusing is tested too


def test_under_the_plain_prompt_the_oracle_never_refuses_and_answers_what_it_saw(bench):
    oracle = OracleBackend({})
    honest = {(inst.instance_id, level): oracle.answer(request).text for inst, level, _, request in _requests(bench, "honest")}
    changed = 0
    for inst, level, _, request in _requests(bench, "plain"):
        text = oracle.answer(request).text
        assert text != REFUSAL_ANSWER
        if honest[(inst.instance_id, level)] == REFUSAL_ANSWER:
            changed += 1
        else:
            assert text == honest[(inst.instance_id, level)]
    assert changed > 0


def test_the_honest_prompt_is_recognised_and_the_plain_one_is_not():
    assert asks_for_refusal(get_prompt("honest").render("What colour is the star?"))
    assert not asks_for_refusal(get_prompt("plain").render("What colour is the star?"))


def test_a_frame_without_a_readable_code_falls_back_to_its_timestamp(tmp_path):
    pixels = render_frame(42, 128, 72, "green", [Event("star", "red", 42, 43, 0)])
    pixels[:8] = np.uint8(128)  # grey over the code strip
    Image.fromarray(pixels).save(tmp_path / "f.jpg", "JPEG", quality=90)
    _, sightings = look(tmp_path / "f.jpg", fallback_second=40)
    assert [(s.second, s.shape) for s in sightings] == [(40, "star")]
