"""virtuebench.support.video: a generated video's duration, the frame on screen at a time, and one error naming a
file PyAV cannot read."""

from __future__ import annotations

import bisect

import pytest
from helpers.data import make_frame_coded_video, make_video

from virtuebench.sources.synthetic import read_second_code
from virtuebench.support.video import VideoError, duration_s, frame_at, open_video, probe_duration


@pytest.mark.parametrize(("seconds", "fps"), [(12.4, 10), (7.0, 8), (9.3, 25)])
def test_duration_of_a_generated_video(tmp_path, seconds, fps):
    plan = make_video(tmp_path / "v.mp4", seconds, fps=fps)
    assert probe_duration(tmp_path / "v.mp4") == pytest.approx(plan.duration_s, abs=1e-3)
    with open_video(tmp_path / "v.mp4") as container:
        stream = container.streams.video[0]
        assert duration_s(container, stream) == duration_s(container) == probe_duration(tmp_path / "v.mp4")


def test_frame_at_a_time_shows_that_second(tmp_path):
    make_video(tmp_path / "v.mp4", 20.0, fps=8)
    for second in (0, 3, 11, 19):
        image = frame_at(tmp_path / "v.mp4", second + 0.5)
        assert read_second_code(image) == second
        assert image.size == (128, 72)


def test_frame_at_is_the_last_frame_presented_at_or_before_the_time(tmp_path):
    # A variable frame rate with a long gap, frames exactly on some times, and B-frames (decode order
    # differs from presentation order); keyframes every 12 frames, so most times need a seek.
    times = [0.0, 0.3, 0.35, 1.0, 1.5, 4.0, 4.04, 4.08, 6.5, 7.25] + [8 + i / 10 for i in range(60)]
    stored = make_frame_coded_video(tmp_path / "v.mp4", times, gop=12)
    for t in (0.0, 0.1, 0.3, 0.34, 0.99, 1.0, 2.7, 3.999, 4.05, 6.4, 6.5, 7.9, 9.55, 13.9, 20.0):
        expected = max(0, bisect.bisect_right(stored, t + 1e-6) - 1)
        assert read_second_code(frame_at(tmp_path / "v.mp4", t)) == expected, f"t = {t}"


def test_a_time_before_the_first_frame_gets_the_first_frame(tmp_path):
    stored = make_frame_coded_video(tmp_path / "v.mp4", [0.6 + i / 5 for i in range(20)], gop=5)
    assert stored[0] == 0.6
    assert read_second_code(frame_at(tmp_path / "v.mp4", 0.2)) == 0


def test_a_broken_file_raises_one_error_naming_it(tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"this is not a video" * 100)
    for read in (probe_duration, open_video, lambda path: frame_at(path, 1.0)):
        with pytest.raises(VideoError) as caught:
            read(broken)
        assert str(caught.value).startswith(f"{broken}: cannot open as a video (")
        assert caught.value.path == str(broken) and caught.value.problem.startswith("cannot open as a video")
        # No traceback from inside PyAV: the PyAV error is neither the cause nor shown as the context.
        assert caught.value.__cause__ is None and caught.value.__suppress_context__
    with pytest.raises(VideoError, match=r"nothere\.mp4: video file not found"):
        probe_duration(tmp_path / "nothere.mp4")


def test_a_file_without_a_video_stream_is_named(tmp_path):
    import av
    import numpy as np

    audio = tmp_path / "sound.wav"
    with av.open(str(audio), mode="w") as container:
        stream = container.add_stream("pcm_s16le", rate=8000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 800), np.int16), format="s16", layout="mono")
        frame.sample_rate = 8000
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    with pytest.raises(VideoError, match=r"sound\.wav: holds no video stream"):
        probe_duration(audio)
