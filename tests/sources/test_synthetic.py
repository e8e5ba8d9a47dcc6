import io
from collections import Counter

import numpy as np
import pytest
from PIL import Image

from virtuebench import REFUSAL_ANSWER
from virtuebench.levels import answers_by_level
from virtuebench.sources.synthetic import (
    MAX_SECOND,
    SyntheticSettings,
    draw_second_code,
    plan,
    read_second_code,
    render_frame,
)


def _jpeg_round_trip(pixels: np.ndarray, quality: int, size=None) -> Image.Image:
    image = Image.fromarray(pixels)
    if size:
        image = image.resize(size, Image.Resampling.BICUBIC)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return Image.open(io.BytesIO(buffer.getvalue()))


def test_second_code_round_trips_every_second():
    pixels = np.zeros((144, 256, 3), np.uint8)
    for second in range(MAX_SECOND + 1):
        draw_second_code(pixels, second)
        assert read_second_code(pixels) == second


@pytest.mark.parametrize("second", [0, 1, 7, 511, 1089, 4095])
def test_second_code_survives_jpeg_and_resizing(second):
    pixels = render_frame(second, 256, 144, "orange", [])
    assert read_second_code(_jpeg_round_trip(pixels, 60)) == second
    assert read_second_code(_jpeg_round_trip(pixels, 75, size=(160, 90))) == second


def test_a_blank_strip_is_not_a_code():
    assert read_second_code(np.zeros((72, 128, 3), np.uint8)) is None
    assert read_second_code(np.full((72, 128, 3), 255, np.uint8)) is None


def test_plan_is_deterministic_in_the_seed():
    a, b, c = plan(SyntheticSettings(seed=3)), plan(SyntheticSettings(seed=3)), plan(SyntheticSettings(seed=4))
    assert [(v.duration_s, v.events, [q.question for q in v.questions]) for v in a] == [
        (v.duration_s, v.events, [q.question for q in v.questions]) for v in b
    ]
    assert [v.events for v in a] != [v.events for v in c]


def test_default_demo_matches_the_papers_shape():
    settings = SyntheticSettings()
    videos = plan(settings)
    assert len(videos) == 12
    durations = [v.duration_s for v in videos]
    assert 60 <= min(durations) < 128 and 1024 < max(durations) <= 18 * 60 + 30
    assert any(512 <= d < 1024 for d in durations), "some videos stop at 512"
    per_level = Counter()
    situations = Counter()
    categories = Counter()
    for video in videos:
        for question in video.questions:
            categories[question.category] += 1
            answers = answers_by_level(question.answer, question.evidence, video.duration_s, settings.levels)
            refused = [level for level, text in answers.items() if text == REFUSAL_ANSWER]
            per_level.update(answers)
            if not refused:
                situations["every level"] += 1
            elif len(refused) == len(answers):
                situations["no level"] += 1
            elif max(refused) < min(set(answers) - set(refused)):
                situations["higher levels only"] += 1
    assert situations["every level"] and situations["no level"] and situations["higher levels only"]
    assert categories["perception"] and categories["reasoning"]
    assert set(per_level) == {64, 128, 256, 512, 1024}


def test_questions_name_unambiguous_objects():
    for video in plan(SyntheticSettings(seed=1)):
        shapes = Counter(event.shape for event in video.events)
        colours = Counter(event.colour for event in video.events)
        assert video.border not in colours
        for question in video.questions:
            if question.task_type == "colour":
                shape = question.question.removeprefix("What colour is the ").removesuffix("?")
                assert shapes[shape] == 1
            if question.task_type == "shape":
                colour = question.question.removeprefix("What shape is the ").removesuffix(" object?")
                assert colours[colour] == 1


def test_unknown_setting_is_named():
    with pytest.raises(ValueError, match="n_vidoes"):
        SyntheticSettings.from_dict({"n_vidoes": 3})


def test_the_preview_is_what_the_adapter_writes_without_a_video(tmp_path):
    """The Snakefile checks the demo's items before any job from this preview (an empty result is an error): it must be
    the instances the adapter writes, their video paths aside, and it writes nothing."""
    from dataclasses import replace

    from virtuebench.sources.synthetic import adapter, preview

    settings = {"seed": 3, "n_videos": 2, "max_duration_s": 140, "width": 64, "height": 36}
    planned = preview(settings)
    assert not list(tmp_path.iterdir())
    written, excluded = adapter(settings, str(tmp_path / "videos"), threads=1)
    assert (
        excluded == []
        and planned
        and [replace(inst, video_path="") for inst in planned] == [replace(inst, video_path="") for inst in written]
    )
    assert [inst.video_path for inst in planned] == [f"{inst.video_id}.mp4" for inst in written]
    with pytest.raises(ValueError, match="unknown setting"):
        preview({"n_videos": 2, "colour": "red"})
