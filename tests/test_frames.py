import errno
import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest
from PIL import Image

from virtuebench import frames as frames_module
from virtuebench.frames import FramesError, Manifest, extract, extract_or_record, plan_runs
from virtuebench.levels import level_indices
from virtuebench.sources.synthetic import read_second_code


def _check_every_frame(outdir, manifest):
    checked = 0
    for level, frames in manifest.levels.items():
        assert frames.grid_indices == level_indices(int(level), manifest.duration_s)
        assert frames.files == sorted(frames.files), "file names sort in time order"
        for timestamp, name in zip(frames.timestamps, frames.files):
            second = read_second_code(Image.open(outdir / name))
            # The frame displayed at t = k + 0.5 belongs to second k.
            assert second == int(timestamp - 0.5), f"{name}: shows second {second}, expected {timestamp}"
            checked += 1
    return checked


@pytest.mark.parametrize(
    "duration,fps",
    [(70.4, Fraction(30000, 1001)), (133.7, Fraction(24000, 1001)), (66.0, 25), (257.3, 6), (129.9, Fraction(25, 2))],
)
def test_each_jpeg_shows_the_second_its_timestamp_names(tmp_path, video_factory, duration, fps):
    video = video_factory(duration, fps)
    manifest = extract(video, tmp_path, levels=[64, 128, 256, 512])
    assert abs(manifest.duration_s - duration) < 1 / float(fps) + 1e-6
    assert manifest.error is None
    expected = [level for level in (64, 128, 256, 512) if level <= int(manifest.duration_s)]
    assert sorted(int(level) for level in manifest.levels) == expected
    assert manifest.unavailable_levels == [level for level in (64, 128, 256, 512) if level not in expected]
    for level in (64, 128, 256, 512):
        assert (tmp_path / str(level)).is_dir() == (level in expected), "a folder only for available levels"
    assert _check_every_frame(tmp_path, manifest) == sum(expected)


def test_shared_frames_are_stored_once(tmp_path, video_factory):
    manifest = extract(video_factory(257.3, 6), tmp_path, levels=[64, 128, 256])
    unique = set().union(*(set(frames.grid_indices) for frames in manifest.levels.values()))
    assert manifest.frames_written == len(unique)
    inodes = {os.stat(tmp_path / name).st_ino for frames in manifest.levels.values() for name in frames.files}
    assert len(inodes) == len(unique)


def test_manifest_round_trips_and_resizes(tmp_path, video_factory):
    extract(video_factory(70.4, 8), tmp_path, levels=[64], max_side=64, jpeg_quality=80)
    manifest = Manifest.read(tmp_path)
    assert manifest.frame_size == [64, 36]
    assert Image.open(manifest.frame_paths(tmp_path, 64)[0]).size == (64, 36)
    assert json.loads((tmp_path / "manifest.json").read_text())["settings"] == {"max_side": 64, "jpeg_quality": 80}
    assert _check_every_frame(tmp_path, manifest) == 64


def test_frames_are_stored_within_a_pixel_cap(tmp_path, video_factory):
    # The configured models' largest cap (frames.max_pixels: auto): area, not side, so any aspect fits.
    extract(video_factory(70.4, 8), tmp_path, levels=[64], max_pixels=64 * 36)
    manifest = Manifest.read(tmp_path)
    width, height = manifest.frame_size
    assert width * height <= 64 * 36 and abs(width / height - 16 / 9) < 0.05 and width >= 62
    assert manifest.settings == {"max_side": None, "jpeg_quality": 90, "max_pixels": 64 * 36}
    assert Image.open(manifest.frame_paths(tmp_path, 64)[-1]).size == (width, height)


def test_broken_and_missing_videos_name_the_file(tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42 this is not a video" * 10)
    with pytest.raises(FramesError, match="broken.mp4"):
        extract(broken, tmp_path / "out")
    with pytest.raises(FramesError, match="nothere.mp4: video file not found"):
        extract(tmp_path / "nothere.mp4", tmp_path / "out")
    manifest = extract_or_record(broken, tmp_path / "recorded", on_error="record")
    assert "broken.mp4" in manifest.error and manifest.levels == {}
    assert Manifest.read(tmp_path / "recorded").error == manifest.error


def test_truncated_video_is_an_error_not_a_short_video(tmp_path, video_factory):
    data = video_factory(133.7, Fraction(24000, 1001)).read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(FramesError, match="cut.mp4"):
        extract(cut, tmp_path / "out", levels=[64])


def test_cli_contract(tmp_path, video_factory):
    video = video_factory(133.7, Fraction(24000, 1001))
    run = subprocess.run(
        [sys.executable, "-m", "virtuebench.frames", str(video), str(tmp_path / "out"), "--levels", "64", "128", "256"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["128", "64", "manifest.json"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["levels"]["128"]["timestamps"]) == 128
    bad = subprocess.run(
        [sys.executable, "-m", "virtuebench.frames", str(tmp_path / "missing.mp4"), str(tmp_path / "o2")], capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert "missing.mp4" in bad.stderr and "Traceback" not in bad.stderr


def _expected_frame(times, t):
    """The frame displayed at t: the last one presented at or before t (the first, before it)."""
    import bisect

    return max(0, bisect.bisect_right(times, t + 1e-9) - 1)


@pytest.mark.parametrize(
    "kind,fps,duration,gop",
    [("cfr", 30000 / 1001, 130.3, 30), ("cfr", 24000 / 1001, 133.1, 240), ("cfr", 25.0, 129.6, 12), ("vfr", None, 131.7, 45)],
)
@pytest.mark.parametrize("strategy,threads", [("sequential", 1), ("seek", 1), ("auto", 1), ("sequential", 2), ("auto", 2)])
def test_every_path_takes_the_frame_displayed_at_each_timestamp(tmp_path_factory, monkeypatch, kind, fps, duration, gop, strategy, threads):
    import random

    import virtuebench.frames

    monkeypatch.setattr(virtuebench.frames, "MIN_TARGETS_PER_WORKER", 16)  # make two worker processes engage

    from helpers.data import make_frame_coded_video

    root = tmp_path_factory.getbasetemp() / f"coded_{kind}_{duration}_{gop}"
    video = root / "v.mp4"
    if kind == "cfr":
        times = [i / fps for i in range(int(duration * fps))]
    else:  # variable frame rate: gaps between 10 ms and 90 ms
        rng, times, t = random.Random(3), [], 0.0
        while t < duration:
            times.append(round(t, 3))
            t += rng.uniform(0.01, 0.09)
    if not video.exists():
        root.mkdir(parents=True, exist_ok=True)
        make_frame_coded_video(video, times, gop)
    stored = [round(t * 1000) / 1000 for t in times]
    outdir = tmp_path_factory.mktemp("out")
    manifest = extract(video, outdir, levels=[64, 128], strategy=strategy, threads=threads)
    checked = 0
    for frames in manifest.levels.values():
        for t, name in zip(frames.timestamps, frames.files):
            shown = read_second_code(Image.open(outdir / name))
            assert shown == _expected_frame(stored, t), f"{strategy}: t={t} got frame {shown}"
            checked += 1
    assert checked == 64 + 128
    if strategy == "seek":
        assert manifest.strategy.startswith("seek")
    if strategy == "sequential" and threads == 1:
        assert manifest.strategy == "sequential"
    if threads == 2:
        assert manifest.strategy.endswith("2 processes")


@pytest.mark.parametrize("per_second", [2, 0.5])
def test_slow_streams_and_frames_exactly_at_a_timestamp(tmp_path, per_second):
    from helpers.data import make_frame_coded_video

    # 2 fps: frames land exactly on every k + 0.5 s timestamp; 0.5 fps: a frame stays up for 2 s.
    times = [i / per_second for i in range(int(per_second * 70))]
    make_frame_coded_video(tmp_path / "v.mp4", times, gop=10)
    for strategy in ("sequential", "seek"):
        manifest = extract(tmp_path / "v.mp4", tmp_path / strategy, levels=[64], strategy=strategy)
        for t, name in zip(manifest.levels["64"].timestamps, manifest.levels["64"].files):
            assert read_second_code(Image.open(tmp_path / strategy / name)) == _expected_frame(times, t)


def test_a_long_gap_in_a_variable_rate_stream_keeps_the_frame_on_screen(tmp_path):
    from helpers.data import make_frame_coded_video

    # 30 fps up to 9.933 s, then nothing until 14.0 s: the frame at 9.933 s stays on screen for 4 s.
    times = [i / 30 for i in range(299)] + [14.0 + i / 30 for i in range(1800)]
    make_frame_coded_video(tmp_path / "v.mp4", times, gop=60)
    for threads in (1, 2):
        manifest = extract(tmp_path / "v.mp4", tmp_path / f"out{threads}", levels=[64], threads=threads)
        for t, name in zip(manifest.levels["64"].timestamps, manifest.levels["64"].files):
            assert read_second_code(Image.open(tmp_path / f"out{threads}" / name)) == _expected_frame(times, t), t


def test_extracting_again_into_the_same_folder_replaces_the_frames(tmp_path, video_factory):
    video = video_factory(133.7, Fraction(24000, 1001))
    for levels in (["64", "128"], ["64", "64"]):
        run = subprocess.run(
            [sys.executable, "-m", "virtuebench.frames", str(video), str(tmp_path / "out"), "--levels", *levels],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["64", "manifest.json"]
    assert len(list((tmp_path / "out" / "64").iterdir())) == 64


def test_a_two_second_clip_gets_every_level_over_the_whole_clip(video_factory, tmp_path):
    """CVRR-ES sampling: N segment centres over the clip, whatever its length (docs/frames.md)."""
    from virtuebench.levels import clip_timestamps, sampled_levels

    video = video_factory(2.0, fps=10)
    manifest = extract(video, tmp_path / "f", levels=[8, 16], sampling="clip")
    assert manifest.sampling == "clip" and manifest.unavailable_levels == []
    assert (
        manifest.levels["8"].timestamps
        == clip_timestamps(8, manifest.duration_s)
        == [0.125, 0.375, 0.625, 0.875, 1.125, 1.375, 1.625, 1.875]
    )
    for level in ("8", "16"):
        files = [tmp_path / "f" / name for name in manifest.levels[level].files]
        assert len(files) == int(level) and all(path.stat().st_size > 0 for path in files)
    assert sampled_levels(2.0, [8], "1fps") == [] and sampled_levels(2.0, [8], "clip") == [8]


@pytest.mark.parametrize(("sampling", "expected"), [("clip", 64), ("clip-capped", 20)])
def test_a_clip_shorter_than_the_level_gets_the_level_or_one_frame_per_second(video_factory, tmp_path, sampling, expected):
    """The supplement's short-video rule (supplement.short_video_frames): `clip` shows a 20.5 s clip 64 frames
    (some repeated in content), `clip-capped` one per whole second, as LongVideoBench's loader caps them at
    min(64, int(duration)); both at the centres of equal segments, and both under level 64."""
    from virtuebench.levels import clip_timestamps

    video = video_factory(20.5, fps=4)
    manifest = extract(video, tmp_path / "f", levels=[64], sampling=sampling)
    stamps = manifest.levels["64"].timestamps
    assert manifest.sampling == sampling and len(stamps) == expected == len(manifest.levels["64"].files)
    assert stamps == clip_timestamps(expected, manifest.duration_s)
    assert len(list((tmp_path / "f" / "64").iterdir())) == expected
    assert (min(b - a for a, b in zip(stamps, stamps[1:])) >= 1.0) == (sampling == "clip-capped")


def test_a_stated_duration_samples_within_it(video_factory, tmp_path):
    """--duration (LongVideoBench's stated `duration`, supplement.longvideobench_subtitles: interleaved): the clip's
    frames are placed over the stated length where it is shorter than the file, and never past the file's end."""
    from virtuebench.frames import main
    from virtuebench.levels import clip_timestamps

    video = video_factory(20.5, fps=4)
    manifest = extract(video, tmp_path / "a", levels=[4], sampling="clip", stated_duration_s=10.0)
    assert manifest.duration_s == 10.0 and manifest.levels["4"].timestamps == clip_timestamps(4, 10.0) == [1.25, 3.75, 6.25, 8.75]
    longer = extract(video, tmp_path / "b", levels=[4], sampling="clip", stated_duration_s=99.0)
    assert longer.duration_s == pytest.approx(20.5)
    assert main([str(video), str(tmp_path / "c"), "--levels", "4", "--sampling", "clip", "--duration", "10"]) == 0
    assert Manifest.read(tmp_path / "c").levels["4"].timestamps == [1.25, 3.75, 6.25, 8.75]


def test_a_manifest_that_is_missing_broken_or_of_another_format_is_named(tmp_path):
    with pytest.raises(FramesError, match=rf"^{tmp_path}/manifest.json: frame manifest not found$"):
        Manifest.read(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": ')
    with pytest.raises(FramesError, match=rf"^{tmp_path}/manifest.json: not valid JSON \(Expecting value\)$"):
        Manifest.read(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "frames/0", "levels": {}}')
    with pytest.raises(FramesError, match=r"manifest.json: format 'frames/0' is not 'virtuebench"):
        Manifest.read(tmp_path)


def test_an_unknown_strategy_or_sampling_and_a_file_without_video_are_refused(tmp_path, video_factory):
    import av

    video = video_factory(70.4, 8)
    with pytest.raises(ValueError, match=r"strategy 'fastest' is not one of \['auto', "):
        extract(video, tmp_path / "a", strategy="fastest")
    with pytest.raises(ValueError, match=r"sampling '2fps' is not one of \["):
        extract(video, tmp_path / "a", sampling="2fps")
    audio = tmp_path / "sound.mp4"
    with av.open(str(audio), "w") as container:
        stream = container.add_stream("aac", rate=8000)
        frame = av.AudioFrame.from_ndarray(__import__("numpy").zeros((1, 1024), dtype="float32"), format="fltp", layout="mono")
        frame.sample_rate = 8000
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            container.mux(packet)
    with pytest.raises(FramesError, match=rf"^{audio}: holds no video stream$"):
        extract(audio, tmp_path / "b")


def test_the_decode_plan_without_targets_or_keyframes():
    assert plan_runs([], [0.0, 10.0], 8.0) == []
    assert plan_runs([1.0, 2.5, 9.0], [], 8.0) == [(0.0, 3)]  # no keyframe index: one run from the start


def test_frames_are_copied_where_the_file_system_has_no_hard_links(tmp_path, video_factory, monkeypatch):
    def no_links(source, target):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(frames_module.os, "link", no_links)
    extract(video_factory(70.4, 8), tmp_path, levels=[64])
    paths = Manifest.read(tmp_path).frame_paths(tmp_path, 64)
    assert len(paths) == 64 and all(path.stat().st_nlink == 1 for path in paths)
    assert [read_second_code(Image.open(path)) for path in paths] == [int(t) for t in Manifest.read(tmp_path).levels["64"].timestamps]


def test_an_unforeseen_error_fails_the_job_naming_the_video_and_is_never_recorded(tmp_path, video_factory, monkeypatch, capsys):
    """Only the video's own decode errors are recorded: a recorded error counts the video's items as wrong and no rerun
    retries it, so an error whose cause no one foresaw fails the job instead (issue 47, W1)."""
    video = video_factory(70.4, 8)

    def bad_image(*args, **kwargs):
        raise OSError("image file is truncated")  # no errno of the disk: not an environment error either

    monkeypatch.setattr(frames_module, "extract", bad_image)
    with pytest.raises(OSError, match="^image file is truncated$"):
        extract_or_record(video, tmp_path / "a", on_error="record")
    assert not (tmp_path / "a").exists() and _leftovers(tmp_path) == []
    out = tmp_path / "b"
    assert frames_module.main([str(video), str(out), "--levels", "64", "--on-error", "record"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {video}: OSError: image file is truncated (an unforeseen error while extracting into {out}, not "
        f"recorded as the video's); rerun the same command, and report it if it comes again"
    )
    assert not out.exists()


@pytest.mark.parametrize("threads", [1, 2])
def test_memory_running_out_fails_the_job_and_is_never_the_videos_error(tmp_path, video_factory, monkeypatch, capsys, threads):
    """MemoryError (in the job, or in a worker, pickled back) is the machine's: exit 1, one line, nothing recorded."""
    from PIL import Image as PILImage

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(PILImage.Image, "save", no_memory)
    video, out = video_factory(70.4, 8), tmp_path / "frames" / "syn03"
    code = frames_module.main([str(video), str(out), "--levels", "64", "--on-error", "record", "--threads", str(threads)])
    assert code == 1
    assert capsys.readouterr().err.strip() == (
        f"error: out of memory while extracting the frames of {video} into {out}; free memory or run fewer jobs at once, "
        f"and rerun the same command"
    )
    assert not out.exists() and _leftovers(out.parent) == []


def test_a_decoder_out_of_memory_is_not_the_videos_error():
    """PyAV's MemoryError (ENOMEM from FFmpeg) is an FFmpegError too: it is raised as it is, never made a FramesError."""
    import av

    memory = av.error.MemoryError(errno.ENOMEM, "Cannot allocate memory")
    assert frames_module._video_error("v.mp4: decoding failed", memory) is memory
    broken = frames_module._video_error("v.mp4: decoding failed", av.error.InvalidDataError(errno.EINVAL, "Invalid data"))
    assert isinstance(broken, FramesError) and str(broken) == "v.mp4: decoding failed"


@pytest.mark.parametrize(
    ("exitcodes", "told"),
    [
        ([-15, -9], "signal 9, SIGKILL: the OOM killer?"),  # the pool ends the others with SIGTERM once one has died
        ([None, -15], "signal 15, SIGTERM"),
        ([0, 1], "exit code 1"),
        ([None, 0], "how could not be told"),
    ],
)
def test_a_dead_workers_exit_is_told_in_words(exitcodes, told):
    from types import SimpleNamespace

    code = frames_module._dead_worker_exitcode([SimpleNamespace(exitcode=code) for code in exitcodes])
    assert frames_module.describe_exit(code) == told


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


@pytest.mark.parametrize(("fails", "threads"), [("save", 1), ("save", 2), ("link", 1)])
def test_a_full_disk_fails_the_job_even_when_errors_are_recorded(tmp_path, video_factory, monkeypatch, capsys, fails, threads):
    """ENOSPC is the disk's fault, not the video's: never a recorded error, exit 1 naming the folder, nothing left.
    With two threads it is raised in a worker process and comes back pickled."""
    from PIL import Image as PILImage

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(frames_module, "MIN_TARGETS_PER_WORKER", 16)
    if fails == "save":
        monkeypatch.setattr(PILImage.Image, "save", full_disk)
    else:
        monkeypatch.setattr(frames_module.os, "link", full_disk)
    out = tmp_path / "frames" / "syn03"
    video = video_factory(133.7, Fraction(24000, 1001))
    code = frames_module.main([str(video), str(out), "--levels", "64", "128", "--on-error", "record", "--threads", str(threads)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip() == f"error: no space left on device while writing {out} (ENOSPC); free space and rerun the same command"
    assert not out.exists() and _leftovers(out.parent) == []


def test_a_failed_rerun_leaves_the_earlier_complete_folder(tmp_path, video_factory, monkeypatch, capsys):
    from PIL import Image as PILImage

    video, out = video_factory(70.4, 8), tmp_path / "out"
    assert frames_module.main([str(video), str(out), "--levels", "64"]) == 0
    before = (out / "manifest.json").read_text()

    def no_access(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(PILImage.Image, "save", no_access)
    assert frames_module.main([str(video), str(out), "--levels", "64", "--on-error", "record"]) == 1
    assert f"permission denied while writing {out} (EACCES)" in capsys.readouterr().err
    assert (out / "manifest.json").read_text() == before and len(list((out / "64").iterdir())) == 64
    assert _leftovers(tmp_path) == []


def test_a_real_full_disk_fails_the_job(tmp_path, video_factory):
    """A small tmpfs: the real write errors (PIL's, the manifest's), not a monkeypatched one."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(disk)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        out = disk / "syn03"
        run = subprocess.run(
            [sys.executable, "-m", "virtuebench.frames", str(video_factory(133.7, Fraction(24000, 1001))), str(out)]
            + ["--levels", "64", "128", "--on-error", "record"],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 1, run.stderr
        assert run.stderr.strip().endswith(f"while writing {out} (ENOSPC); free space and rerun the same command"), run.stderr
        assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
        assert not out.exists() and _leftovers(disk) == []
    finally:
        subprocess.run(["umount", str(disk)], check=True)


#: The frames CLI whose every process (worker processes too: they are forked) writes 10 JPEGs and then waits for ever
#: (until the test signals or kills it), so a test stops it midway whatever the machine's load: the extraction
#: cannot end first, as it could when each write was only slowed.
SLOW_FRAMES = """
import sys, time
from PIL import Image
save, written = Image.Image.save, [0]
def slow_save(self, *args, **kwargs):
    if written[0] == 10:
        while True:
            time.sleep(0.05)
    written[0] += 1
    return save(self, *args, **kwargs)
Image.Image.save = slow_save
from virtuebench.frames import main
sys.exit(main(sys.argv[1:]))
"""


def _start_and_wait_for_frames(command, parent, name, at_least=10):
    import time

    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        staged = list(parent.glob(f".{name}.tmp-*/*/*.jpg")) if parent.exists() else []
        if len(staged) >= at_least:
            return process
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"ended (exit {process.wait()}) or hung before writing {at_least} frames: {process.stderr.read()}")
        time.sleep(0.01)


def _manifest_without_timing(folder):
    data = json.loads((folder / "manifest.json").read_text())
    return {key: value for key, value in data.items() if key not in ("seconds",)}


def test_kill_minus_nine_midway_leaves_no_folder_and_a_rerun_completes_it(tmp_path, video_factory):
    import signal

    video = video_factory(257.3, 6)
    levels = ["--levels", "64", "128", "256"]
    out, reference = tmp_path / "frames" / "syn03", tmp_path / "reference"
    process = _start_and_wait_for_frames([sys.executable, "-c", SLOW_FRAMES, str(video), str(out), *levels], out.parent, out.name)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not out.exists(), "a killed run must leave no folder Snakemake could take as done"
    assert _leftovers(out.parent)  # its half-written sibling, for the next run to remove
    for folder in (out, reference):
        run = subprocess.run([sys.executable, "-m", "virtuebench.frames", str(video), str(folder), *levels], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
    assert _leftovers(out.parent) == []
    assert _manifest_without_timing(out) == _manifest_without_timing(reference)
    files = sorted(p.relative_to(out) for p in out.rglob("*.jpg"))
    assert len(files) == 64 + 128 + 256 and files == sorted(p.relative_to(reference) for p in reference.rglob("*.jpg"))
    assert all((out / name).read_bytes() == (reference / name).read_bytes() for name in files)


@pytest.mark.parametrize(("signal_name", "code", "threads"), [("SIGINT", 130, 1), ("SIGTERM", 143, 2)])
def test_a_stopped_extraction_says_so_in_one_line_and_writes_nothing(tmp_path, video_factory, signal_name, code, threads):
    import signal

    video = video_factory(257.3, 6)
    out = tmp_path / "syn03"
    command = [sys.executable, "-c", SLOW_FRAMES, str(video), str(out), "--levels", "64", "128", "256", "--threads", str(threads)]
    process = _start_and_wait_for_frames(command, tmp_path, out.name)
    process.send_signal(getattr(signal, signal_name))
    assert process.wait(timeout=60) == code
    err = process.stderr.read()
    assert err.strip() == f"interrupted ({signal_name}): nothing was written to {out}; rerun the same command", err
    assert not out.exists() and _leftovers(tmp_path) == []


def test_the_cli_refuses_a_level_that_is_not_positive(tmp_path, video_factory, capsys):
    with pytest.raises(SystemExit) as stopped:
        frames_module.main([str(video_factory(70.4, 8)), str(tmp_path / "out"), "--levels", "64", "0"])
    assert stopped.value.code == 2 and "--levels must be positive, got [64, 0]" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# --- Per-level folders and digests (docs/frames.md, "One job per level") ---------------------------------------------


def test_each_level_records_the_digest_of_its_files_and_the_same_video_gives_the_same_digests(tmp_path, video_factory):
    video = video_factory(133.7, Fraction(24000, 1001))
    first = extract(video, tmp_path / "a", levels=[64, 128], threads=2)
    again = extract(video, tmp_path / "b", levels=[64, 128], strategy="sequential")
    for level, frames in first.levels.items():
        assert frames.digest and frames.digest.startswith("sha256:")
        assert frames.digest == frames_module.level_digest(tmp_path / "a", frames), "the digest is of the files written"
        assert again.levels[level].digest == frames.digest, "extraction is deterministic, whatever the path"
    assert first.levels["64"].digest != first.levels["128"].digest
    # The same level extracted on its own, in its own folder: the same bytes.
    alone = extract_or_record(video, tmp_path / "c" / "64", levels=[64], level_folder=True)
    assert alone.levels["64"].digest == first.levels["64"].digest


def test_a_level_folder_holds_its_frames_and_a_manifest_of_that_level_alone(tmp_path, video_factory):
    video = video_factory(133.7, Fraction(24000, 1001))
    folder = tmp_path / "v1"
    for level in (64, 128):
        run = subprocess.run(
            [sys.executable, "-m", "virtuebench.frames", str(video), str(folder / str(level)), "--levels", str(level), "--level-folder"],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
    own = json.loads((folder / "64" / "manifest.json").read_text())
    assert list(own["levels"]) == ["64"] and own["levels"]["64"]["files"][0] == "0000.jpg"
    assert sorted(p.name for p in (folder / "64").iterdir())[-1] == "manifest.json" and len(list((folder / "64").iterdir())) == 65
    assert not (folder / "manifest.json").exists()
    # Read as one video: the levels merged, the files named from the video's folder, every frame where it says.
    merged = Manifest.read(folder)
    assert sorted(merged.levels) == ["128", "64"] and merged.error is None and merged.frame_size
    assert merged.frames_written == own["frames_written"] + json.loads((folder / "128" / "manifest.json").read_text())["frames_written"]
    assert _check_every_frame(folder, merged) == 64 + 128
    assert Manifest.read(folder, 128).levels.keys() == {"128"}
    assert merged.frame_paths(folder, 128)[0] == folder / "128" / "0000.jpg"
    # The same frames hash alike in both layouts (what a response's item_hash holds).
    whole = extract(video, tmp_path / "whole", levels=[64, 128])
    assert {key: (f.timestamps, f.digest) for key, f in whole.levels.items()} == {
        key: (f.timestamps, f.digest) for key, f in merged.levels.items()
    }
    refused = subprocess.run(
        [sys.executable, "-m", "virtuebench.frames", str(video), str(tmp_path / "x"), "--levels", "64", "128", "--level-folder"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "exactly one level" in refused.stderr


def test_a_level_the_video_is_too_short_for_gets_a_folder_saying_so(tmp_path, video_factory):
    manifest = extract_or_record(video_factory(70.4, 8), tmp_path / "v" / "128", levels=[128], level_folder=True)
    assert manifest.levels == {} and manifest.unavailable_levels == [128]
    assert sorted(p.name for p in (tmp_path / "v" / "128").iterdir()) == ["manifest.json"]
    extract_or_record(video_factory(70.4, 8), tmp_path / "v" / "64", levels=[64], level_folder=True)
    merged = Manifest.read(tmp_path / "v")
    assert list(merged.levels) == ["64"] and merged.unavailable_levels == [128]


def test_a_broken_video_is_recorded_in_each_level_folder_and_is_the_videos_error(tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42 this is not a video" * 10)
    for level in (64, 128):
        recorded = extract_or_record(broken, tmp_path / "v" / str(level), on_error="record", levels=[level], level_folder=True)
        assert "broken.mp4" in recorded.error
    assert "broken.mp4" in Manifest.read(tmp_path / "v").error
    assert "broken.mp4" in Manifest.read(tmp_path / "v", 64).error


def test_an_older_manifest_without_digests_reads_and_a_level_added_beside_it_too(tmp_path, video_factory):
    """Results written before the per-level layout: one manifest per video, no digests. They read as they are; the
    digest is computed from the files where it is needed; a level extracted later in its own folder joins them."""
    video = video_factory(133.7, Fraction(24000, 1001))
    folder = tmp_path / "v"
    extract(video, folder, levels=[64])
    data = json.loads((folder / "manifest.json").read_text())
    digest = data["levels"]["64"].pop("digest")
    (folder / "manifest.json").write_text(json.dumps(data))
    old = Manifest.read(folder, 64)
    assert old.levels["64"].digest is None
    assert frames_module.level_digest(folder, old.levels["64"]) == digest
    extract_or_record(video, folder / "128", levels=[128], level_folder=True)
    both = Manifest.read(folder)
    assert sorted(both.levels) == ["128", "64"] and _check_every_frame(folder, both) == 64 + 128
    assert Manifest.read(folder, 128).levels.keys() == {"128"}
    assert frames_module.manifest_path(folder, 128) == folder / "128" / "manifest.json"
    assert frames_module.manifest_path(folder, 64) == folder / "manifest.json"


# --- Frame workers: a killed worker fails the job; workers die with the job (issue 47, W1) -----------------------------

#: The frames CLI (argv: HELD_DIR, then the CLI's arguments) whose worker processes each write HELD_DIR/worker-<pid>
#: before their first frame and then wait there (for ever: the test kills them or their parent).
HELD_FRAMES = """
import os, sys, time
from pathlib import Path
from PIL import Image
main_pid, held = os.getpid(), Path(sys.argv[1])
save = Image.Image.save
def held_save(self, *args, **kwargs):
    if os.getpid() != main_pid:
        (held / f"worker-{os.getpid()}").touch()
        while True:
            time.sleep(0.05)
    return save(self, *args, **kwargs)
Image.Image.save = held_save
from virtuebench.frames import main
sys.exit(main(sys.argv[2:]))
"""


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _start_held(command, held, workers=2):
    """Start `command` (HELD_FRAMES) and return it with the pids of its `workers` held workers, once all are held."""
    import time

    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # an upper bound on an event that must come, not the synchronisation
    while len(pids := [int(path.name.split("-")[1]) for path in held.glob("worker-*")]) < workers:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"ended (exit {process.wait()}) or hung before its workers were held: {process.stderr.read()}")
        time.sleep(0.01)
    return process, pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and the parent-death signal are Linux's")
@pytest.mark.parametrize(("signal_name", "told"), [("SIGKILL", "signal 9, SIGKILL: the OOM killer?"), ("SIGTERM", "signal 15, SIGTERM")])
def test_a_killed_frame_worker_fails_the_job_records_nothing_and_the_rerun_extracts_the_same_frames(
    tmp_path, video_factory, signal_name, told
):
    """The OOM killer's kill of one worker is no decode error of the video: exit 1 with one line, no folder and no
    manifest (so nothing records an error), and the rerun writes the frames a clean extraction writes, byte for byte."""
    import signal

    video = video_factory(70.4, 8)
    options = ["--levels", "64", "--threads", "2", "--on-error", "record", "--level-folder"]
    held, out, reference = tmp_path / "held", tmp_path / "frames" / "syn03" / "64", tmp_path / "reference" / "64"
    held.mkdir()
    process, pids = _start_held([sys.executable, "-c", HELD_FRAMES, str(held), str(video), str(out), *options], held)
    try:
        os.kill(pids[0], getattr(signal, signal_name))
        assert process.wait(timeout=120) == 1
        err = process.stderr.read()
        assert err.strip() == f"error: a frame worker of {out} was killed ({told}); rerun the same command", err
        assert not out.exists() and _leftovers(out.parent) == []
        assert not [path for path in tmp_path.rglob("manifest.json")], "nothing may record the kill as the video's error"
        assert not any(_alive(pid) for pid in pids)
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    for folder in (out, reference):
        run = subprocess.run(
            [sys.executable, "-m", "virtuebench.frames", str(video), str(folder), *options], capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
    assert _manifest_without_timing(out) == _manifest_without_timing(reference)
    files = sorted(p.name for p in out.glob("*.jpg"))
    assert len(files) == 64 and files == sorted(p.name for p in reference.glob("*.jpg"))
    assert all((out / name).read_bytes() == (reference / name).read_bytes() for name in files)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and the parent-death signal are Linux's")
def test_frame_workers_die_with_a_job_killed_by_kill_minus_nine(tmp_path, video_factory):
    """kill -9 of the job while its workers decode: the workers end too (the parent-death signal), not minutes later
    (held here: without it they would wait for ever)."""
    import signal
    import time

    held, out = tmp_path / "held", tmp_path / "syn03"
    held.mkdir()
    command = [sys.executable, "-c", HELD_FRAMES, str(held), str(video_factory(70.4, 8)), str(out), "--levels", "64", "--threads", "2"]
    process, pids = _start_held(command, held)
    try:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 60  # the kernel signals them at once; this bounds a failure, it is not the wait
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not [pid for pid in pids if _alive(pid)], "a killed job's frame workers must not run on"
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_bad_frame_names_its_file_and_survives_a_trip_between_processes(tmp_path):
    import pickle

    frame = tmp_path / "0003.jpg"
    frame.write_bytes(b"\xff\xd8\xff\xe0 cut short")
    with pytest.raises(frames_module.BadFrame) as raised:
        frames_module.read_frame(frame)
    assert raised.value.path == frame and str(raised.value).startswith(f"{frame}: cannot be read as an image (")
    again = pickle.loads(pickle.dumps(raised.value))
    assert (type(again), again.path, str(again)) == (frames_module.BadFrame, frame, str(raised.value))
