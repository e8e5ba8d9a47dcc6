"""Frames and inference jobs track content, not dates (docs/reruns.md, "Frames"): on one finished run of a small demo,
a level added extracts only that level and asks only that level; levels dropped and put back, videos touched, the
project copied with `cp -r` (new dates everywhere) schedule no frames job and no inference job; a removed level
folder is extracted again to the same frames (its digest)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.workflow import executed, scheduled, snakemake

pytestmark = pytest.mark.workflow

#: Three videos, the longest reaching 256 frames (the synthetic source's durations cycle through the top levels).
CONFIG = {
    "source": {"name": "synthetic", "settings": {"seed": 5, "n_videos": 3, "max_duration_s": 300, "width": 64, "height": 36}},
    "levels": [64, 128],
    "models": ["refuse", "guess"],
    "prompts": ["honest"],
    "judge": "rules",
}
COSTLY = ("extract_frames", "run_inference")


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("frame-reruns") / "project"
    workdir.mkdir()
    result = snakemake(workdir, config=CONFIG)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


def _copy(done: Path, target: Path, *flags: str) -> Path:
    """The finished project copied by `cp -r` (`flags`: -p keeps the dates, for a copy that only isolates a test)."""
    subprocess.run(["cp", "-r", *flags, str(done), str(target)], check=True)
    return target


def _costly(jobs) -> dict:
    return {name: jobs[name] for name in COSTLY if jobs[name]}


def _digests(workdir: Path) -> dict:
    return {
        str(path.relative_to(workdir)): json.loads(path.read_text())["levels"]
        for path in sorted((workdir / "results" / "frames").glob("*/*/manifest.json"))
    }


def test_a_new_level_extracts_and_asks_only_that_level_and_levels_dropped_and_put_back_rerun_nothing_costly(done, tmp_path):
    workdir = _copy(done, tmp_path / "project", "-p")
    before = _digests(workdir)
    added = {**CONFIG, "levels": [64, 128, 256]}
    ran = executed(snakemake(workdir, config=added))
    print(f"\nlevel 256 added: {dict(ran)}")
    assert _costly(ran) == {"extract_frames": 1, "run_inference": 2}  # one video reaches 256; two models at 256
    after = _digests(workdir)
    assert {path: levels for path, levels in after.items() if path in before} == before, "the levels there are not rewritten"
    assert [path for path in after if path not in before] == [p for p in after if p.endswith("/256/manifest.json")]
    # Two levels dropped (a real run: the report without them), then put back.
    dropped = executed(snakemake(workdir, config={**CONFIG, "levels": [64]}))
    print(f"levels 128 and 256 dropped: {dict(dropped)}")
    assert _costly(dropped) == {}
    jobs = scheduled(snakemake(workdir, "-n", config=added))
    print(f"levels 128 and 256 put back: {dict(jobs)}")
    assert _costly(jobs) == {}


def test_touching_every_video_reruns_nothing(done, tmp_path):
    workdir = _copy(done, tmp_path / "project", "-p")
    videos = sorted((workdir / "results" / "videos").glob("*.mp4"))
    assert videos
    for video in videos:
        video.touch()
    jobs = scheduled(snakemake(workdir, "-n", config=CONFIG))
    print(f"\nvideos touched: {dict(jobs) or 'nothing to be done'}")
    assert _costly(jobs) == {}


def test_a_copy_of_the_project_with_new_dates_reruns_nothing_costly(done, tmp_path):
    copy = _copy(done, tmp_path / "copy")  # cp -r: every file dated now, in the order cp wrote them
    jobs = scheduled(snakemake(copy, "-n", config=CONFIG))
    print(f"\ncp -r: {dict(jobs) or 'nothing to be done'}")
    assert _costly(jobs) == {}


def test_a_removed_level_folder_is_extracted_again_to_the_same_frames(done, tmp_path):
    """Snakemake rebuilds no removed folder whose readers are up to date (snakemake/snakemake#1978): the folder comes
    back when a job needs it or when it is asked for, with the same digests."""
    workdir = _copy(done, tmp_path / "project", "-p")
    before = _digests(workdir)
    folder = sorted((workdir / "results" / "frames").glob("*/64"))[0]
    shutil.rmtree(folder)
    jobs = scheduled(snakemake(workdir, "-n", config=CONFIG))
    print(f"\n{folder.parent.name}/64 removed: {dict(jobs) or 'nothing to be done'}")
    assert _costly(jobs) == {}
    ran = executed(snakemake(workdir, str(folder.relative_to(workdir)), config=CONFIG))
    assert ran == {"extract_frames": 1}
    assert _digests(workdir) == before, "the same frames, digest for digest"
    jobs = scheduled(snakemake(workdir, "-n", config=CONFIG))
    print(f"extracted again: {dict(jobs) or 'nothing to be done'}")
    # The folder holds what it held (its provenance, rules/common.smk frames_for_level): its new date reruns nothing.
    assert _costly(jobs) == {}
