"""Frame times worked by hand: what models are told about time (models/timing.py) and which frames each level
needs (frames.plan_frames). Every expected value below is computed on paper from the documented rules."""

import math

import pytest

from virtuebench.frames import plan_frames
from virtuebench.models.timing import FrameTimes, clock_text


def test_grid_frames_of_a_three_second_video():
    times = FrameTimes((0.5, 1.5, 2.5), 3.0)
    # T = 3 grid seconds, N = 3 frames: 1 frame a second, 1 s apart; half seconds need a 2 Hz clock
    assert (times.n_frames, times.extent_s, times.sampled_fps, times.spacing_s, times.clock_hz) == (3, 3.0, 1.0, 1.0, 2)
    assert times.hf_metadata() == {"fps": 2.0, "frames_indices": [1, 3, 5], "total_num_frames": 6, "duration": 3.0}


def test_the_extent_is_the_whole_seconds_of_the_video():
    times = FrameTimes((0.5, 5.5, 9.5), 10.7)  # T = floor(10.7) = 10
    assert times.extent_s == 10.0
    assert times.sampled_fps == pytest.approx(0.3) and times.spacing_s == pytest.approx(10 / 3)
    short = FrameTimes((0.25,), 0.5)  # under a second: the grid is empty, the extent one second
    assert (short.extent_s, short.sampled_fps, short.spacing_s) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("timestamps", "hz"),
    [((1.0, 2.0), 1), ((0.5, 2.0), 2), ((0.1, 0.2), 10), ((0.25, 3.0), 100), ((0.001, 0.5), 1000), ((0.0005, 1.0), 1000)],
)
def test_the_coarsest_clock_on_which_every_time_is_a_whole_tick(timestamps, hz):
    assert FrameTimes(timestamps, 5.0).clock_hz == hz


def test_the_clock_never_rounds_a_time_away():
    # 1.0000004 is within the 1e-6 tolerance of a whole second; 1.00001 is not (and lands on the ms clock)
    assert FrameTimes((1.0000004, 2.0), 5.0).clock_hz == 1
    assert FrameTimes((1.00001, 2.0), 5.0).clock_hz == 1000


def test_total_frames_cover_the_last_frame_when_it_lies_past_the_grid():
    # T = 10 s at 10 Hz is 100 ticks, but the last frame sits at tick 106: the clip needs 107 ticks
    times = FrameTimes((0.5, 5.0, 10.6), 10.7)
    assert times.hf_metadata() == {"fps": 10.0, "frames_indices": [5, 50, 106], "total_num_frames": 107, "duration": 10.7}
    inside = FrameTimes((0.5, 1.5), 10.7)  # 2 Hz, T = 10: 20 ticks, more than the last frame's 3 + 1
    assert inside.hf_metadata()["total_num_frames"] == 20


@pytest.mark.parametrize("duration", [0.0, -1.0, math.nan, math.inf])
def test_frame_times_need_a_real_duration(duration):
    with pytest.raises(ValueError, match="video duration must be positive"):
        FrameTimes((0.5,), duration)


def test_frame_times_must_increase():
    with pytest.raises(ValueError, match="^frame timestamps must increase strictly$"):
        FrameTimes((2.5, 1.5), 10.0)
    with pytest.raises(ValueError, match="^FrameTimes needs at least one timestamp$"):
        FrameTimes((), 10.0)
    assert FrameTimes((0.5, 0.5000001), 10.0).n_frames == 2  # close but increasing is allowed


def test_frame_times_from_a_manifest():
    assert FrameTimes.of([1, 2], 7) == FrameTimes((1.0, 2.0), 7.0)
    assert FrameTimes.of([1.5, 2.5, 4.5], None) == FrameTimes((1.5, 2.5, 4.5), 5.0)  # unknown: half a second past the last
    assert FrameTimes.of([1.5, 2.5, 4.5], 0) == FrameTimes((1.5, 2.5, 4.5), 5.0)
    with pytest.raises(ValueError, match="at least one"):
        FrameTimes.of([], None)


def test_clock_text_is_minutes_and_seconds():
    assert [clock_text(t) for t in (0, 9.99, 60, 600, 3599.9, 3661.5)] == ["0:00", "0:09", "1:00", "10:00", "59:59", "61:01"]


def test_plan_on_the_one_fps_grid_shares_frames_between_levels():
    # 5 s video: T = 5; level 2 takes round(linspace(0, 4, 2)) = 0, 4; level 3 takes 0, 2, 4
    plan = plan_frames([2, 3], 5.0, "1fps")
    assert plan.levels[2].grid_indices == [0, 4] and plan.levels[2].timestamps == [0.5, 4.5]
    assert plan.levels[3].grid_indices == [0, 2, 4] and plan.levels[3].timestamps == [0.5, 2.5, 4.5]
    assert plan.levels[3].files == ["3/0000.jpg", "3/0001.jpg", "3/0002.jpg"]
    assert plan.placements == {0: ["2/0000.jpg", "3/0000.jpg"], 4: ["2/0001.jpg", "3/0002.jpg"], 2: ["3/0001.jpg"]}
    assert plan.times == {0: 0.5, 2: 2.5, 4: 4.5}
    assert plan.targets == [0, 2, 4]


def test_plan_over_the_whole_clip_keys_frames_by_millisecond():
    # 3 s clip: level 2 at the centres of two 1.5 s halves, 0.75 and 2.25; level 3 at 0.5, 1.5, 2.5
    plan = plan_frames([2, 3], 3.0, "clip")
    assert plan.levels[2].timestamps == [0.75, 2.25] and plan.levels[2].grid_indices == []
    assert plan.levels[2].files == ["2/0000.jpg", "2/0001.jpg"]
    assert plan.placements == {
        750: ["2/0000.jpg"],
        2250: ["2/0001.jpg"],
        500: ["3/0000.jpg"],
        1500: ["3/0001.jpg"],
        2500: ["3/0002.jpg"],
    }
    assert plan.times[750] == 0.75 and plan.times[2500] == 2.5
    assert plan.targets == [500, 750, 1500, 2250, 2500]
    # 1 s clip, 3 frames: 1/6, 1/2, 5/6 s, written to the millisecond
    assert plan_frames([3], 1.0, "clip").levels[3].timestamps == [0.167, 0.5, 0.833]
    assert plan_frames([3], 1.0, "clip").targets == [167, 500, 833]


def test_a_capped_clip_level_of_a_short_video_takes_one_frame_per_second():
    # 20 s, level 64 capped: 20 frames at the centres of 20 one-second segments
    plan = plan_frames([64], 20.0, "clip-capped")
    assert plan.levels[64].timestamps == [k + 0.5 for k in range(20)]
    assert plan.levels[64].files[-1] == "64/0019.jpg" and plan.levels[64].grid_indices == []
    assert len(plan_frames([64], 20.0, "clip").levels[64].timestamps) == 64


def test_plan_into_a_level_folder_of_its_own_names_the_frames_without_the_level():
    # The workflow's layout: one level, its frames directly in its own folder (results/frames/<video>/<level>/).
    plan = plan_frames([3], 5.0, "1fps", level_folder=True)
    assert plan.levels[3].files == ["0000.jpg", "0001.jpg", "0002.jpg"]
    assert plan.placements == {0: ["0000.jpg"], 2: ["0001.jpg"], 4: ["0002.jpg"]}
