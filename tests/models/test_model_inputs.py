"""What every model family is told about time and how its replies are read (no torch needed):
models/timing.py and the parts of models/families.py that are plain text."""

import re

import pytest

from virtuebench.levels import grid_size, level_timestamps
from virtuebench.models.families import FAMILIES, llava_video_time_instruction, split_thinking
from virtuebench.models.timing import FrameTimes, clock_text

HOUR = 3600.4  # a one-hour video: a 1 FPS grid of T = 3600 points


@pytest.mark.parametrize("level", [64, 128, 256, 512, 1024])
def test_the_metadata_clock_gives_each_frame_its_manifest_time(level):
    times = FrameTimes.of(level_timestamps(level, HOUR), HOUR)
    metadata = times.hf_metadata()
    # transformers' VideoMetadata.timestamps is index / fps: exactly the manifest's timestamps (k + 0.5 s).
    assert [index / metadata["fps"] for index in metadata["frames_indices"]] == list(times.timestamps)
    assert metadata["fps"] == 2.0 and metadata["duration"] == HOUR
    # VideoMetadata.sampled_fps, from which Qwen2.5-VL's processor derives second_per_grid_ts:
    sampled_fps = len(metadata["frames_indices"]) / metadata["total_num_frames"] * metadata["fps"]
    assert sampled_fps == pytest.approx(level / grid_size(HOUR)) == pytest.approx(times.sampled_fps)
    assert 2 / sampled_fps == pytest.approx(2 * 3600 / level)  # 112.5 s at 64 frames, 7.03 s at 1024


def test_off_grid_times_use_a_finer_clock():
    times = FrameTimes.of([0.25, 1.75, 3.1], 4.0)
    metadata = times.hf_metadata()
    assert metadata["fps"] == 100.0 and [i / 100 for i in metadata["frames_indices"]] == [0.25, 1.75, 3.1]
    assert metadata["total_num_frames"] > max(metadata["frames_indices"])


def test_frame_times_reject_what_no_video_has():
    with pytest.raises(ValueError, match="increase"):
        FrameTimes.of([1.5, 1.5], 10)
    with pytest.raises(ValueError, match="at least one"):
        FrameTimes.of([], 10)
    assert FrameTimes.of([0.5, 1.5], None).duration_s == 2.0  # unknown duration: half a second past the last frame


def test_clock_labels():
    assert [clock_text(t) for t in (0.5, 59.9, 61.5, 3599.5, 3661.5)] == ["0:00", "0:59", "1:01", "59:59", "61:01"]


def test_llava_video_is_told_the_duration_and_every_frame_time():
    times = FrameTimes.of(level_timestamps(64, HOUR), HOUR)
    text = llava_video_time_instruction(times)
    assert text.startswith(
        "The video lasts for 3600.40 seconds, and 64 frames are uniformly sampled from it. These frames are located at 0.50s,"
    )
    assert text.endswith(f",{times.timestamps[-1]:.2f}s.Please answer the following questions related to this video.")
    assert re.findall(r"(\d+\.\d\d)s[,.]", text) == [f"{t:.2f}" for t in times.timestamps]
    family = FAMILIES["llava-video"]
    assert family.user_text("Question: what?", times).endswith(".\nQuestion: what?")
    assert FAMILIES["qwen2.5-vl"].user_text("Question: what?", times, "/no_think") == "Question: what? /no_think"


@pytest.mark.parametrize(
    ("reply", "thinking", "answer"),
    [
        ("<think>The frames show a red star.</think>\n\nRed.", "The frames show a red star.", "Red."),
        ("I count 3 stars.</think>Three", "I count 3 stars.", "Three"),  # the template opened <think> itself
        ("<think>first</think>draft</think> Final", "first</think>draft", "Final"),  # the last close decides
        ("<think>still thinking when the tokens ran out", "still thinking when the tokens ran out", ""),
        ("Blue.", None, "Blue."),
    ],
)
def test_thinking_is_kept_apart_from_the_answer(reply, thinking, answer):
    assert split_thinking(reply) == (thinking, answer)
    assert FAMILIES["qwen3-vl"].parse(reply) == (thinking, answer)


def test_families_that_do_not_think_keep_the_reply_whole():
    assert FAMILIES["llava-video"].parse(" I think</think> red ") == (None, "I think</think> red")
