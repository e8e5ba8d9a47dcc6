"""Video-MME adapter (virtuebench.sources.videomme) on a small release in its layout:
videomme/test-00000-of-00001.parquet with the questions, videos_chunked_NN.zip holding data/<videoID>.mp4."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.data import convert_with_cli, excluded_reasons, make_video
from helpers.releases import make_videomme_release

from virtuebench.sources import REAL_SOURCES, real_source, videomme


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("videomme_video") / "clip.mp4"
    make_video(path, 70, fps=1)  # 70 s: level 64 is available, 128 is not
    return path.read_bytes()


def test_registered():
    assert "video-mme" in REAL_SOURCES and real_source("video-mme") is videomme
    assert videomme.SOURCE == "video-mme"
    assert len(videomme.RELEASE.revision) == 40 and not videomme.RELEASE.gated
    assert set(videomme.TASK_CATEGORIES.values()) == {"perception", "reasoning"}
    assert len(videomme.TASK_CATEGORIES) == 12


def test_prepare_unzips_chunks_once(tmp_path, clip):
    raw = make_videomme_release(tmp_path / "raw", clip)
    assert videomme.prepare(raw) == raw
    video = raw / "data" / "fFjv93ACGo8.mp4"
    assert video.read_bytes() == clip and (raw / "data" / "Zt0pQ3vY9Kc.mp4").exists()
    stamp = video.stat().st_mtime_ns
    (raw / "videos_chunked_01.zip").write_bytes(b"not a zip any more")  # unzipped once: never read again
    videomme.prepare(raw)
    assert video.stat().st_mtime_ns == stamp


def test_convert(tmp_path, clip):
    raw = videomme.prepare(make_videomme_release(tmp_path / "raw", clip))
    instances, excluded = videomme.convert(raw, tmp_path / "videos", [64, 128])
    assert [inst.instance_id for inst in instances] == ["video-mme/001-1", "video-mme/001-2", "video-mme/002-1"]
    count, order, ocr = instances
    assert (count.source, count.source_id, count.category) == ("video-mme", "001-1", "perception")
    assert count.task_type == "Counting Problem"
    assert (order.task_type, order.category, ocr.category) == ("Temporal Reasoning", "reasoning", "perception")
    assert count.question == "How many cups are on the table?"  # the options are not in the question
    assert (count.answer, count.options) == ("Four.", ["Two.", "Three.", "Four.", "Five."])
    assert (order.answer, ocr.answer) == ("He drinks it.", "Closed.")
    assert count.answers == {64: "Four."}  # the full-video answer at every available level; 128 is not
    assert count.duration_s == pytest.approx(70.0) and count.evidence == []
    assert count.video_id == order.video_id == "video-mme_fFjv93ACGo8" and ocr.video_id == "video-mme_Zt0pQ3vY9Kc"
    linked = Path(count.video_path)
    assert linked.parent == tmp_path / "videos" and linked.is_symlink()
    assert Path(os.readlink(linked)) == (raw / "data" / "fFjv93ACGo8.mp4").resolve()

    reasons = excluded_reasons(excluded)
    assert set(reasons) == {"video-mme:003-1", "video-mme:004-1", "video-mme:004-2", "video-mme:004-3"}
    assert "video file not found" in reasons["video-mme:003-1"] and "NoSuchVideo.mp4" in reasons["video-mme:003-1"]
    assert reasons["video-mme:004-1"].startswith("bad row") and "outside the 4 options" in reasons["video-mme:004-1"]
    assert reasons["video-mme:004-2"].startswith("bad row") and "'A. <text>'" in reasons["video-mme:004-2"]
    assert "task type 'Music Perception' has no category" in reasons["video-mme:004-3"]
    # A curation source: VirtueBench's tables split by category, so an unknown task type is still left out, by kind.
    kinds = {row["item"]: row["reason_kind"] for row in excluded}
    assert kinds["video-mme:004-3"] == "unknown_task_type" and kinds["video-mme:003-1"] == "missing_video"


def test_missing_or_unreadable_table(tmp_path):
    with pytest.raises(ValueError, match=r"videomme/test-\*\.parquet"):
        videomme.convert(tmp_path, tmp_path / "videos", [64])
    (tmp_path / "videomme").mkdir()
    broken = tmp_path / "videomme" / "test-00000-of-00001.parquet"
    broken.write_text("not parquet")
    with pytest.raises(ValueError, match="not a readable parquet file") as error:
        videomme.convert(tmp_path, tmp_path / "videos", [64])
    assert str(broken) in str(error.value)


def test_cli(tmp_path, clip):
    raw = videomme.prepare(make_videomme_release(tmp_path / "raw", clip))
    instances, excluded = convert_with_cli("video-mme", raw, tmp_path)
    assert [inst.source_id for inst in instances] == ["001-1", "001-2", "002-1"]
    assert instances[0].options == ["Two.", "Three.", "Four.", "Five."] and instances[0].answers == {64: "Four."}
    assert len(excluded) == 4
