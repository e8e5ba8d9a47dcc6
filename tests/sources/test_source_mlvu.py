"""MLVU adapter (virtuebench.sources.mlvu) on a small dev release in its layout: MLVU/json/<N>_<task>.json
(lists of {video, duration, question, candidates, answer, question_type}) and MLVU/video/<N>_<task>/<video>."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.data import convert_with_cli, excluded_reasons, make_video
from helpers.releases import make_mlvu_release

from virtuebench.sources import REAL_SOURCES, mlvu, real_source


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("mlvu_videos")
    make_video(folder / "a.mp4", 70, fps=1)  # 70 s: level 64 is available, 128 is not
    make_video(folder / "b.mp4", 130, fps=1)  # 130 s: both levels
    return folder / "a.mp4", folder / "b.mp4"


def test_registered():
    assert "mlvu" in REAL_SOURCES and real_source("mlvu") is mlvu
    assert mlvu.SOURCE == "mlvu" and mlvu.RELEASE.repo_id == "MLVU/MVLU" and mlvu.RELEASE.gated
    assert set(mlvu.TASK_CATEGORIES.values()) == {"perception", "reasoning"}
    assert set(mlvu.GENERATION_TASKS) <= set(mlvu.TASK_CATEGORIES)


def test_convert(tmp_path, clips):
    raw = make_mlvu_release(tmp_path / "raw", clips)
    instances, excluded = mlvu.convert(raw, tmp_path / "videos", [64, 128])  # no prepare: links made on demand
    assert [inst.instance_id for inst in instances] == ["mlvu/1_plotQA/0", "mlvu/4_count/0"]
    plot, count = instances
    assert (plot.source, plot.source_id, plot.task_type, plot.category) == ("mlvu", "1_plotQA/0", "plotQA", "reasoning")
    assert (count.task_type, count.category) == ("count", "perception")
    assert plot.question == "Why does the boy run away from the house?"  # the options are not in the question
    assert plot.answer == "He is scared of the dog."
    assert plot.options == ["He is late for school.", "He is scared of the dog.", "He is cold.", "He is hungry."]
    assert (count.answer, count.options) == ("3", ["2", "3", "4", "5"])  # bare numbers kept as text
    assert plot.answers == {64: "He is scared of the dog."}  # the full-video answer at every available level
    assert count.answers == {64: "3", 128: "3"}
    assert plot.duration_s == pytest.approx(70.0) and count.duration_s == pytest.approx(130.0)
    # The same file name in two task folders is two videos: two ids, each linked to its own file.
    assert (plot.video_id, count.video_id) == ("mlvu_1_plotQA__movie101_66", "mlvu_4_count__movie101_66")
    for inst, stem in ((plot, "1_plotQA"), (count, "4_count")):
        linked = Path(inst.video_path)
        assert linked.parent == tmp_path / "videos" and linked.is_symlink()
        assert Path(os.readlink(linked)) == (raw / "MLVU" / "video" / stem / "movie101_66.mp4").resolve()

    reasons = excluded_reasons(excluded)
    missing_video, bad_row = reasons["mlvu:1_plotQA/1"], reasons["mlvu:1_plotQA/2"]
    assert "video file not found" in missing_video and "1_plotQA/movie101_99.mp4" in missing_video
    assert bad_row.startswith("bad row") and "'On the moon.' is not one of the candidates" in bad_row
    assert "task type 'sportsQA' has no category" in reasons["mlvu:4_count/1"]
    assert reasons["mlvu:8_sub_scene"].startswith("2 question(s) of the generation task 'subPlot'")
    assert "unreadable annotation file" in reasons["mlvu:9_summary"]
    missing = {"2_needle", "3_ego", "5_order", "6_anomaly_reco", "7_topic_reasoning"}
    assert all("annotation file not found" in reasons[f"mlvu:{stem}"] for stem in missing)
    assert len(excluded) == 5 + len(missing)


def test_convert_leaves_the_release_folder_untouched(tmp_path, clips):
    raw = make_mlvu_release(tmp_path / "raw", clips)
    before = sorted(str(path.relative_to(raw)) for path in raw.rglob("*"))
    assert mlvu.prepare(raw) == raw
    instances, _ = mlvu.convert(raw, tmp_path / "videos", [64])
    assert len(instances) == 2  # a read-only (shared) release folder works: nothing is written there
    assert sorted(str(path.relative_to(raw)) for path in raw.rglob("*")) == before


def test_no_annotations(tmp_path):
    with pytest.raises(ValueError, match=r"MLVU/json/\*\.json"):
        mlvu.convert(tmp_path, tmp_path / "videos", [64])


def test_cli(tmp_path, clips):
    raw = mlvu.prepare(make_mlvu_release(tmp_path / "raw", clips))
    instances, excluded = convert_with_cli("mlvu", raw, tmp_path)
    assert [inst.source_id for inst in instances] == ["1_plotQA/0", "4_count/0"]
    assert instances[0].options[1] == instances[0].answer == "He is scared of the dog."
    assert len(excluded) == 10
