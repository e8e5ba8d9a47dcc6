"""Reading one video with PyAV: opening it (one error that names the file, never a traceback from inside
PyAV), its duration, and the frame on screen at a time. The frame extractor (frames.py), the source
adapters (sources/base.py) and the curation's difficulty filter (curation/filters.py) build on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from av.container import InputContainer
    from av.video.stream import VideoStream
    from PIL.Image import Image


class VideoError(ValueError):
    """A video cannot be read: the message is `<path>: <problem>`."""

    def __init__(self, path: str | Path, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = str(path), problem


def open_video(path: str | Path) -> InputContainer:
    """The opened container of `path` (close it: `with open_video(path) as container`), which holds at
    least one video stream; VideoError when the file is missing, no video, or holds no video stream."""
    import av

    path = Path(path)
    if not path.is_file():
        raise VideoError(path, "video file not found")
    try:
        container = av.open(str(path))
    except Exception as error:  # PyAV raises many types for a file it cannot read
        raise VideoError(path, f"cannot open as a video ({error})") from None
    if not container.streams.video:
        container.close()
        raise VideoError(path, "holds no video stream")
    return container


def duration_s(container: InputContainer, stream: VideoStream | None = None) -> float:
    """Seconds: the video stream's duration x its time base, else the container's duration, else VideoError."""
    stream = stream if stream is not None else container.streams.video[0]
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    raise VideoError(container.name, "the container states no duration")


def probe_duration(path: str | Path) -> float:
    """The duration of the video at `path` in seconds (see `duration_s`); VideoError when it cannot be read."""
    with open_video(path) as container:
        return duration_s(container)


def frame_at(path: str | Path, time_s: float) -> Image:
    """The frame on screen at `time_s` (seconds, on the stream's clock): the last decoded frame whose time
    is <= time_s, or the first frame for a time before it. Seeks to the keyframe before `time_s` and
    decodes on from there."""
    import av

    with open_video(path) as container:
        stream = container.streams.video[0]
        chosen = None
        try:
            container.seek(int(time_s / stream.time_base) if stream.time_base else 0, stream=stream, backward=True)
            for frame in container.decode(stream):
                if frame.time is not None and frame.time > time_s + 1e-6 and chosen is not None:
                    break
                chosen = frame
        except av.error.FFmpegError as error:
            raise VideoError(path, f"decoding near {time_s:.1f} s failed ({error})") from None
        if chosen is None:
            raise VideoError(path, f"no frame decoded near {time_s:.1f} s")
        return chosen.to_image()
