"""Keye-VL 1.5's frames through keye-vl-utils itself (PyPI 1.5.2, the version Keye's README installs): for every
level and thousands of video durations from N to 20,000 s, the message our adapter builds makes keye-vl-utils keep
exactly the level's N frames. The adapter's earlier message (fps = N / T) lost a frame at about 7% of durations,
which the same check finds, so the check can see the failure it guards against. Needs the hf extra."""

import pytest

torch = pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
keye_vl_utils = pytest.importorskip("keye_vl_utils", reason="keye-vl-utils is not installed (the hf extra)")

from helpers import remote_standins  # noqa: E402
from keye_vl_utils.vision_process import FPS, smart_nframes  # noqa: E402
from PIL import Image  # noqa: E402

from virtuebench.levels import (  # noqa: E402
    LEVELS,  # noqa: E402
    grid_size,
    level_timestamps,
)
from virtuebench.models import backend_class  # noqa: E402
from virtuebench.models.base import Request  # noqa: E402


def keye_backend(**settings):
    return backend_class("keye")(
        settings, model=remote_standins.KeyeModelStandIn(), tokenizer=object(), processor=remote_standins.KeyeProcessorStandIn()
    )


def durations(level: int) -> list[float]:
    """Every whole second from N to N + 2,000 s, then every 7th to 20,000 s, each with a fraction of a second."""
    return [t + 0.4 for t in [*range(level, level + 2000), *range(level + 2000, 20_000, 7)]]


def frames_kept(element: dict, n_frames: int) -> int:
    """How many of a frame list keye-vl-utils keeps: its fetch_video's own call for a list of frames."""
    return smart_nframes(element, total_frames=n_frames, video_fps=element.get("fps", FPS))


@pytest.mark.parametrize("level", LEVELS)
def test_every_frame_is_kept_at_every_duration(level):
    backend = keye_backend(max_pixels=200704)
    paths = [f"frame{i:05d}.jpg" for i in range(level)]
    lost_before = 0
    for duration in durations(level):
        request = Request("q", "q", "Question: q", paths, level_timestamps(level, duration), level, duration)
        (turn,) = backend.messages(request)
        element = turn["content"][0]
        assert frames_kept(element, level) == level, f"{level} frames of a {duration} s video"
        # The earlier message: the level's sampling rate as `fps`.
        lost_before += frames_kept({**element, "fps": level / grid_size(duration)}, level) != level
    share = lost_before / len(durations(level))
    print(f"\nlevel {level}: {len(durations(level))} durations, all {level} frames kept; fps = N / T lost a frame at {share:.1%}")
    assert lost_before > 0


def test_keye_vl_utils_keeps_all_1024_frames_and_the_adapter_times_them(tmp_path):
    """process_vision_info end to end on 1024 real JPEGs of a 5.5-hour video (a duration where fps = N / T lost one)."""
    duration = next(d for d in durations(1024) if frames_kept({"fps": 1024 / grid_size(d)}, 1024) != 1024)
    paths = []
    for i in range(1024):
        paths.append(tmp_path / f"{i:05d}.jpg")
        Image.new("RGB", (96, 54), (i % 256, 40, 200)).save(paths[-1])
    processor = remote_standins.KeyeProcessorStandIn()
    backend = backend_class("keye")(
        {"max_pixels": 200704}, model=remote_standins.KeyeModelStandIn(), tokenizer=object(), processor=processor
    )
    request = Request("q", "q", "Question: q", paths, level_timestamps(1024, duration), 1024, duration)
    backend.prepare(request)
    (call,) = processor.calls
    assert call["videos"][0].shape[0] == 1024 and len(call["kwargs"]["frame_types"][0]) == 1024
    assert call["kwargs"]["timestamps"][0].tolist() == pytest.approx(request.timestamps)
