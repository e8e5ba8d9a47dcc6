"""LongVideoBench adapter: a release in the hub layout (lvb_val.json, a videos tar split into parts) -> instances."""

from __future__ import annotations

import json
import shutil
import tarfile

import pytest
from helpers.releases import LONGVIDEOBENCH_ENTRIES

from virtuebench.sources import longvideobench as lvb
from virtuebench.sources import real_source


@pytest.fixture
def release(tmp_path, video_factory):
    """lvb_val.json (and the answerless test file), videos.tar split into three parts, no videos/ yet."""
    raw = tmp_path / "LongVideoBench"
    staging = tmp_path / "staging" / "videos"
    staging.mkdir(parents=True)
    shutil.copy(video_factory(70, fps=1), staging / "vidAAAAAAAA.mp4")
    raw.mkdir()
    (raw / "lvb_val.json").write_text(json.dumps(LONGVIDEOBENCH_ENTRIES, indent=4))
    test_entry = {k: v for k, v in LONGVIDEOBENCH_ENTRIES[0].items() if k != "correct_choice"}
    (raw / "lvb_test_wo_gt.json").write_text(json.dumps([{**test_entry, "id": "test_only_0"}]))
    with tarfile.open(tmp_path / "videos.tar", "w") as tar:
        tar.add(staging, arcname="videos")
    data = (tmp_path / "videos.tar").read_bytes()
    third = len(data) // 3 + 1
    for suffix, start in zip(("aa", "ab", "ac"), range(0, len(data), third), strict=True):
        (raw / f"videos.tar.part.{suffix}").write_bytes(data[start : start + third])
    return raw


def test_release_is_described():
    assert real_source("longvideobench") is lvb
    assert lvb.SOURCE == "longvideobench"
    assert lvb.RELEASE.repo_id == "longvideobench/LongVideoBench" and lvb.RELEASE.gated
    assert "lvb_val.json" in lvb.RELEASE.allow_patterns and "lvb_test_wo_gt.json" not in lvb.RELEASE.allow_patterns
    assert len(lvb.TASK_CATEGORIES) == 17 and set(lvb.TASK_CATEGORIES.values()) == {"perception", "reasoning"}


def test_prepare_streams_the_parts_and_unpacks_once(release):
    videos = lvb.prepare(release)
    video = videos / "vidAAAAAAAA.mp4"
    assert videos == release / "videos" and video.is_file()
    assert not (release / "videos.tar").exists(), "the parts are streamed into the unpacker, never joined on disk"
    stamp = video.stat().st_mtime_ns
    for part in release.glob("videos.tar.part.*"):
        part.unlink()  # the parts may be deleted once unpacked
    assert lvb.prepare(release) == videos
    assert video.stat().st_mtime_ns == stamp


def test_prepare_needs_parts_or_videos(tmp_path):
    with pytest.raises(ValueError, match="videos.tar.part"):
        lvb.prepare(tmp_path)
    (tmp_path / "videos").mkdir()
    assert lvb.prepare(tmp_path) == tmp_path / "videos"


def test_convert(release, tmp_path):
    with pytest.raises(ValueError, match="unpack them first"):
        lvb.convert(release, tmp_path / "linked", [64])
    lvb.prepare(release)
    instances, excluded = lvb.convert(release, tmp_path / "linked", [8, 64, 128])
    by_id = {inst.source_id: inst for inst in instances}
    assert sorted(by_id) == ["vidAAAAAAAA_0", "vidAAAAAAAA_1"]
    first, second = by_id["vidAAAAAAAA_0"], by_id["vidAAAAAAAA_1"]
    assert first.instance_id == "longvideobench/vidAAAAAAAA_0" and first.source == "longvideobench"
    assert (first.task_type, first.category) == ("T2A", "perception")
    assert (second.task_type, second.category) == ("SSS", "reasoning")
    assert first.question == LONGVIDEOBENCH_ENTRIES[0]["question"]  # with its referring query
    assert first.answer == "blue" and first.options == ["yellow", "green", "blue", "red"]
    assert second.answer == "first a cat, then a dog"
    assert first.answers == {8: "blue", 64: "blue"}  # 128 frames do not exist in 70 s at 1 FPS
    assert first.evidence == [] and first.duration_s == pytest.approx(70.0)
    linked = tmp_path / "linked" / "longvideobench_vidAAAAAAAA.mp4"
    assert first.video_path == str(linked) and first.video_id == "longvideobench_vidAAAAAAAA"
    assert linked.resolve() == (release / "videos" / "vidAAAAAAAA.mp4").resolve()
    reasons = {row["item"]: row["reason"] for row in excluded}
    assert set(reasons) == {
        "longvideobench:vidBBBBBBBB_0",
        "longvideobench:vidAAAAAAAA_2",
        "longvideobench:vidAAAAAAAA_3",
        "longvideobench:vidAAAAAAAA_4",
    }
    assert "video file not found" in reasons["longvideobench:vidBBBBBBBB_0"]
    assert reasons["longvideobench:vidAAAAAAAA_2"].startswith("bad row") and "outside the 3" in reasons["longvideobench:vidAAAAAAAA_2"]
    assert reasons["longvideobench:vidAAAAAAAA_3"].startswith("bad row: 'candidates'")
    assert "no category" in reasons["longvideobench:vidAAAAAAAA_4"]
    assert "test_only_0" not in str(excluded)  # the answerless test split is never read


def test_convert_rejects_a_release_without_annotations(tmp_path):
    with pytest.raises(ValueError, match="lvb_val.json"):
        lvb.convert(tmp_path, tmp_path / "linked", [64])
