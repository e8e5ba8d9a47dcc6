import numpy as np
import pytest

from virtuebench import REFUSAL_ANSWER
from virtuebench.levels import (
    answers_by_level,
    available_levels,
    clip_timestamps,
    evidence_is_seen,
    grid_size,
    interval_is_seen,
    is_available,
    level_indices,
    level_timestamps,
    sampled_levels,
)


def test_grid_is_one_point_per_whole_second():
    assert grid_size(65.0) == 65
    assert grid_size(65.999) == 65
    assert grid_size(0.4) == 0
    with pytest.raises(ValueError, match="duration_s"):
        grid_size(float("nan"))


@pytest.mark.parametrize("duration", [64.0, 64.9, 100.5, 333.3, 1023.9, 1024.0, 4000.2])
@pytest.mark.parametrize("level", [64, 128, 256, 512, 1024])
def test_level_indices_follow_the_documented_rule(duration, level):
    size = int(np.floor(duration))
    if level > size:
        assert level not in available_levels(duration, [level])
        with pytest.raises(ValueError, match="unavailable"):
            level_indices(level, duration)
        return
    assert available_levels(duration, [level]) == [level]  # a video of exactly `level` seconds has the level
    indices = level_indices(level, duration)
    assert len(indices) == level and len(set(indices)) == level
    assert indices[0] == 0 and indices[-1] == size - 1
    assert level_timestamps(level, duration) == [i + 0.5 for i in indices]


def test_level_indices_by_hand():
    """Worked by hand from the rule (round(linspace(0, T - 1, level)), halves to even): 10 s, 4 frames: 0, 3, 6,
    9; 10 s, 3 frames: 0, 4.5 -> 4, 9; 7 s, 7 frames: every second; 100 s, 5 frames: 0, 24.75 -> 25, 49.5 -> 50,
    74.25 -> 74, 99."""
    assert level_indices(4, 10.0) == [0, 3, 6, 9]
    assert level_indices(3, 10.0) == [0, 4, 9]
    assert level_indices(7, 7.0) == [0, 1, 2, 3, 4, 5, 6]
    assert level_indices(5, 100.0) == [0, 25, 50, 74, 99]
    assert level_timestamps(3, 10.0) == [0.5, 4.5, 9.5]


def test_a_level_exists_from_exactly_its_number_of_seconds():
    assert is_available(64, 64.0) and not is_available(64, 63.99) and is_available(1024, 1024.0)
    assert not is_available(0, 100.0) and not is_available(-1, 100.0)


def test_levels_unavailable_for_short_videos():
    assert available_levels(300.2, [64, 128, 256, 512, 1024]) == [64, 128, 256]
    assert available_levels(63.9, [64]) == []


def test_evidence_is_seen_only_when_every_interval_holds_a_timestamp():
    stamps = [0.5, 10.5, 20.5]
    assert evidence_is_seen([[10, 11]], stamps)
    assert not evidence_is_seen([[11, 20]], stamps)
    assert not evidence_is_seen([[10, 11], [11, 20]], stamps)
    assert not evidence_is_seen([[20.5, 20.5]], stamps)  # empty interval [a, a)
    assert not evidence_is_seen([], stamps)  # no evidence known: not derivable


def test_answers_by_level_gives_the_papers_three_situations():
    duration = 1100.4
    t64, t1024 = set(level_indices(64, duration)), set(level_indices(1024, duration))
    only_high = next(k for k in sorted(t1024) if k not in t64 and k not in set(level_indices(512, duration)))
    never = next(
        k
        for k in range(1100)
        if k not in t1024
        and k not in set(level_indices(512, duration))
        and k not in set(level_indices(256, duration))
        and k not in set(level_indices(128, duration))
        and k not in t64
    )
    levels = [64, 128, 256, 512, 1024]
    always = answers_by_level("red", [[0, 1100]], duration, levels)
    assert set(always.values()) == {"red"}
    nowhere = answers_by_level("red", [[never, never + 1]], duration, levels)
    assert set(nowhere.values()) == {REFUSAL_ANSWER}
    higher = answers_by_level("red", [[only_high, only_high + 1]], duration, levels)
    assert higher[1024] == "red" and higher[64] == REFUSAL_ANSWER and higher[512] == REFUSAL_ANSWER


def test_grid_edges():
    assert grid_size(0.0) == 0  # an empty video has an empty grid, not an error
    assert grid_size(2.9999999999) == 3  # within a nanosecond of a whole second counts as it (float noise)
    assert grid_size(2.999999) == 2
    for bad in (-0.5, float("inf")):
        with pytest.raises(ValueError, match=f"duration_s must be a finite, non-negative number, got {bad!r}"):
            grid_size(bad)


def test_level_one_is_the_first_frame_and_level_zero_is_refused():
    assert is_available(1, 1.0) and not is_available(1, 0.99)
    assert level_indices(1, 5.0) == [0] and level_timestamps(1, 5.0) == [0.5]
    for level in (0, -3):
        with pytest.raises(ValueError, match=f"^level must be positive, got {level}$"):
            level_indices(level, 10.0)
    with pytest.raises(ValueError, match=r"^level 11 is unavailable for a video of 10.5 s \(grid of 10 points\)$"):
        level_indices(11, 10.5)


def test_an_interval_holds_its_start_but_not_its_end():
    assert interval_is_seen([4.5, 5.0], [4.5])  # a frame at the very start of the evidence sees it
    assert not interval_is_seen([4.0, 4.5], [4.5])  # ... one at its end does not: [start, end)
    assert interval_is_seen(["3", "5"], [4.5])  # intervals read from text compare as numbers


def test_clip_sampling_takes_the_centre_of_equal_segments():
    # 10 s in 4 segments of 2.5 s: centres 1.25, 3.75, 6.25, 8.75; one frame of a 7 s clip: its middle
    assert clip_timestamps(4, 10.0) == [1.25, 3.75, 6.25, 8.75]
    assert clip_timestamps(1, 7.0) == [3.5]
    assert clip_timestamps(3, 1.0) == [0.167, 0.5, 0.833]  # 1/6, 1/2, 5/6 s to the millisecond


@pytest.mark.parametrize(("level", "duration"), [(0, 10.0), (-1, 10.0), (4, 0.0), (4, -2.0)])
def test_clip_sampling_refuses_a_bad_level_or_duration(level, duration):
    with pytest.raises(ValueError, match=f"^clip sampling needs a positive level and duration, got {level} and {duration}$"):
        clip_timestamps(level, duration)


def test_the_levels_a_video_has_under_each_sampling():
    # clip sampling: any positive level of any clip; the 1 FPS grid: levels up to the whole seconds
    assert sampled_levels(10.0, [64, 8, 1, 0, -2], "clip") == [1, 8, 64]
    assert sampled_levels(0.5, [8], "clip") == [8]  # a half-second clip still has 8 frames over it
    assert sampled_levels(0.0, [8], "clip") == [] and sampled_levels(-1.0, [8], "clip") == []
    assert sampled_levels(100.0, [128, 64], "1fps") == [64]
    assert sampled_levels(100.0, [128, 64]) == [64]  # the 1 FPS grid is the default


def test_clip_capped_sampling_shows_one_frame_per_whole_second_of_a_short_clip():
    from virtuebench.levels import clip_frame_count

    # LongVideoBench's loader: at most one frame per whole second of the clip, at least one frame
    assert clip_frame_count(64, 20.9, "clip-capped") == 20
    assert clip_frame_count(64, 64.0, "clip-capped") == 64 and clip_frame_count(64, 3600.0, "clip-capped") == 64
    assert clip_frame_count(8, 0.4, "clip-capped") == 1
    assert clip_frame_count(64, 20.9, "clip") == 64  # plain clip sampling repeats frames instead
