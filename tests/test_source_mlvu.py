"""MLVU adapter (virtuebench.sources.mlvu) on a small dev release in its layout: MLVU/json/<N>_<task>.json
(lists of {video, duration, question, candidates, answer, question_type}) and MLVU/video/<N>_<task>/<video>."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.data import convert_with_cli, excluded_reasons, make_video

from virtuebench.sources import REAL_SOURCES, mlvu, real_source


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("mlvu_videos")
    make_video(folder / "a.mp4", 70, fps=1)  # 70 s: level 64 is available, 128 is not
    make_video(folder / "b.mp4", 130, fps=1)  # 130 s: both levels
    return folder / "a.mp4", folder / "b.mp4"


def _entry(video: str, question: str, candidates: list, answer, question_type: str, duration: float = 70.0) -> dict:
    return {
        "video": video,
        "duration": duration,
        "question": question,
        "candidates": candidates,
        "answer": answer,
        "question_type": question_type,
    }


def make_release(root: Path, clips: tuple[Path, Path]) -> Path:
    """plotQA: 1 good question, a missing video, a bad row; count: a good question on a different video of
    the same file name, an unknown question type; sub_scene: 2 generation questions; summary: broken JSON.
    The other five multiple-choice files are absent."""
    json_dir, video_dir = root / "MLVU" / "json", root / "MLVU" / "video"
    json_dir.mkdir(parents=True)
    for stem, clip in (("1_plotQA", clips[0]), ("4_count", clips[1]), ("8_sub_scene", clips[0])):
        (video_dir / stem).mkdir(parents=True)
        shutil.copy(clip, video_dir / stem / "movie101_66.mp4")
    plot = [
        _entry(
            "movie101_66.mp4",
            "Why does the boy run away from the house?",
            ["He is late for school.", "He is scared of the dog.", "He is cold.", "He is hungry."],
            "He is scared of the dog.",
            "plotQA",
        ),
        _entry("movie101_99.mp4", "Who opens the door?", ["The boy.", "The girl.", "The dog.", "Nobody."], "The girl.", "plotQA"),
        _entry(
            "movie101_66.mp4", "Where does the story take place?", ["A farm.", "A city.", "A ship.", "A school."], "On the moon.", "plotQA"
        ),
    ]
    count = [
        _entry("movie101_66.mp4", "How many times does the man jump?", [2, 3, 4, 5], 3, "count", 130.0),
        _entry("movie101_66.mp4", "Which sport?", ["Tennis.", "Golf.", "Chess.", "Polo."], "Golf.", "sportsQA"),
    ]
    sub_scene = [
        {
            "video": "movie101_66.mp4",
            "duration": 70.0,
            "question": "Please describe the scene when the boy leaves.",
            "answer": "The boy opens the door, looks back at the dog and runs down the road in the rain.",
            "question_type": "subPlot",
            "scoring_points": ["opens the door", "runs in the rain"],
        },
        {
            "video": "movie101_66.mp4",
            "duration": 70.0,
            "question": "Please describe the scene at the table.",
            "answer": "A family eats dinner while the radio plays.",
            "question_type": "subPlot",
        },
    ]
    (json_dir / "1_plotQA.json").write_text(json.dumps(plot))
    (json_dir / "4_count.json").write_text(json.dumps(count))
    (json_dir / "8_sub_scene.json").write_text(json.dumps(sub_scene))
    (json_dir / "9_summary.json").write_text("[{not json")
    return root


def test_registered():
    assert REAL_SOURCES["mlvu"] == "mlvu" and real_source("mlvu") is mlvu
    assert mlvu.SOURCE == "mlvu" and mlvu.RELEASE.repo_id == "MLVU/MVLU" and mlvu.RELEASE.gated
    assert set(mlvu.TASK_CATEGORIES.values()) == {"perception", "reasoning"}
    assert set(mlvu.GENERATION_TASKS) <= set(mlvu.TASK_CATEGORIES)


def test_convert(tmp_path, clips):
    raw = make_release(tmp_path / "raw", clips)
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
    raw = make_release(tmp_path / "raw", clips)
    before = sorted(str(path.relative_to(raw)) for path in raw.rglob("*"))
    assert mlvu.prepare(raw) == raw
    instances, _ = mlvu.convert(raw, tmp_path / "videos", [64])
    assert len(instances) == 2  # a read-only (shared) release folder works: nothing is written there
    assert sorted(str(path.relative_to(raw)) for path in raw.rglob("*")) == before


def test_no_annotations(tmp_path):
    with pytest.raises(ValueError, match=r"MLVU/json/\*\.json"):
        mlvu.convert(tmp_path, tmp_path / "videos", [64])


def test_cli(tmp_path, clips):
    raw = mlvu.prepare(make_release(tmp_path / "raw", clips))
    instances, excluded = convert_with_cli("mlvu", raw, tmp_path)
    assert [inst.source_id for inst in instances] == ["1_plotQA/0", "4_count/0"]
    assert instances[0].options[1] == instances[0].answer == "He is scared of the dog."
    assert len(excluded) == 10
