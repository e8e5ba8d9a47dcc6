"""The five adapters on a few real rows of each release (tests/sources/data/, provenance in its README.md), with the
quirks issue 50 found in the real files: MLVU's empty candidates, MovieChat-1K's breakpoints at the last frame,
LVBench's reversed and open-ended time references. Where a release cannot be copied or fetched, the README says which
rows are transcribed (from a paper's figure or issue 50) or only shaped like the real ones."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from helpers.data import convert_with_cli, excluded_reasons

from virtuebench.report.summary import summarize_excluded
from virtuebench.sources import longvideobench, lvbench, mlvu, moviechat, videomme

DATA = Path(__file__).parent / "data"


def _release(name: str, tmp_path: Path) -> Path:
    """A writable copy of the committed rows of one release (videos are linked into it by each test)."""
    raw = tmp_path / name
    shutil.copytree(DATA / name, raw)
    return raw


def _link(clip: Path, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(clip, path)


@pytest.fixture
def clip(video_factory) -> Path:
    return video_factory(70, fps=1)  # 70 s: level 64 is available


# ---------------------------------------------------------------------------------------------------------------------
# MLVU: real rows of JUNJIE99/MLVU data/*.json


@pytest.fixture
def mlvu_release(tmp_path, clip) -> Path:
    raw = _release("mlvu", tmp_path)
    for path in (raw / mlvu.JSON_DIR).glob("*.json"):
        for entry in json.loads(path.read_text()):
            if entry["video"] and not (raw / mlvu.VIDEO_DIR / path.stem / entry["video"]).exists():
                _link(clip, raw / mlvu.VIDEO_DIR / path.stem / entry["video"])
    return raw


def test_mlvu_real_rows_keep_the_usable_options_of_plotqa_23(mlvu_release, tmp_path):
    instances, excluded = mlvu.convert(mlvu_release, tmp_path / "videos", [64])
    by_id = {inst.source_id: inst for inst in instances}
    archery = by_id["1_plotQA/23"]  # candidates ['', 'There is an archery scene', 'There is no archery scene', '']
    assert archery.question == "Is there a scene of archery in the video?"
    assert archery.options == ["There is an archery scene", "There is no archery scene"]
    assert archery.answer == "There is an archery scene"
    assert archery.video_id == "mlvu_1_plotQA__movie101_5" and archery.category == "reasoning"
    first = by_id["1_plotQA/0"]
    assert (first.question, first.answer) == ("What color is the main male character in the video?", "Yellow")
    assert first.options == ["Yellow", "Red", "Green", "Blue"]
    assert sorted(by_id) == sorted([f"1_plotQA/{index}" for index in range(24)] + ["2_needle/0", "3_ego/0", "7_topic_reasoning/0"])

    rows = {(row["item"], row["unit"]): row for row in excluded}
    dropped = rows["mlvu:1_plotQA/23", "option list"]  # the report names what was dropped, and the question stays
    assert dropped["reason_kind"] == "bad_row"
    assert "2 empty candidate(s) ''" in dropped["reason"] and "kept with its 2 other options" in dropped["reason"]
    # The release's other broken rows stay out, each named: an answer that is no candidate, an empty answer, an empty row.
    assert "'Catching a flying drone quadcopter' is not one of the candidates" in rows["mlvu:2_needle/1", "item"]["reason"]
    assert "needs a text 'video', 'question' and 'answer'" in rows["mlvu:3_ego/1", "item"]["reason"]  # ['..', '', '..'], answer ''
    assert "needs a text 'video', 'question' and 'answer'" in rows["mlvu:3_ego/2", "item"]["reason"]
    assert "needs a text 'video', 'question' and 'answer'" in rows["mlvu:7_topic_reasoning/1", "item"]["reason"]
    assert rows["mlvu:8_sub_scene", "task"]["reason_kind"] == "out_of_scope"
    assert {row["item"] for row in excluded if row["unit"] == "option list"} == {"mlvu:1_plotQA/23"}


def test_mlvu_candidates_with_too_few_texts_or_the_answer_dropped_stay_bad_rows():
    row = {"video": "v.mp4", "question": "Q?", "answer": "There is an archery scene", "question_type": "plotQA"}
    assert mlvu._mc_row({**row, "candidates": ["", "There is an archery scene", "There is no archery scene", ""]})[3:] == (
        ["There is an archery scene", "There is no archery scene"],
        2,
    )
    assert "fewer than two non-empty texts" in mlvu._mc_row({**row, "candidates": ["", "There is an archery scene", " "]})
    assert "is not one of the candidates" in mlvu._mc_row({**row, "candidates": ["", "Yes", "No"]})
    assert "not a list of texts" in mlvu._mc_row({**row, "candidates": ["There is an archery scene", None, "No"]})


def test_mlvu_real_rows_through_the_cli(mlvu_release, tmp_path, capsys):
    instances, excluded = convert_with_cli("mlvu", mlvu_release, tmp_path / "work")
    # The CLI's line counts the listing by unit: the kept question's dropped options are no item left out.
    assert "left out: 4 items, 4 annotation files, 1 option list, 1 task (listed in" in capsys.readouterr().err
    assert "mlvu/1_plotQA/23" in {inst.instance_id for inst in instances}
    assert {(row["item"], row["unit"]) for row in excluded} >= {("mlvu:1_plotQA/23", "option list")}
    # The run's closing warning counts the row as what it is (the fixture holds 5 of the 9 annotation files).
    warning = summarize_excluded(tmp_path / "work" / "excluded.csv")
    assert warning.startswith("4 items, 4 annotation files, 1 option list and 1 task of the source were left out")


# ---------------------------------------------------------------------------------------------------------------------
# MovieChat-1K: the paper's example file MI6-19 (10,500 frames at 25 fps = 420 s), and a breakpoint at time == num_frame


@pytest.fixture
def moviechat_release(tmp_path, video_factory) -> Path:
    raw = _release("moviechat", tmp_path)
    _link(video_factory(420, fps=1), raw / moviechat.VIDEOS_DIR / "MI6-19.mp4")  # 10,500 frames / 25 fps = 420 s
    return raw


def test_moviechat_keeps_a_breakpoint_at_the_last_frame(moviechat_release, tmp_path):
    instances, excluded = moviechat.convert(moviechat_release, tmp_path / "videos", [64, 256], include_breakpoint=True)
    by_id = {inst.source_id: inst for inst in instances}
    assert sorted(by_id) == ["MI6-19/breakpoint/0", "MI6-19/breakpoint/1", "MI6-19/breakpoint/2", "MI6-19/global/0", "MI6-19/global/1"]
    assert by_id["MI6-19/breakpoint/0"].evidence == [[30.0, 31.0]]  # frame 750 at 25 fps
    assert by_id["MI6-19/breakpoint/1"].evidence == [[390.0, 391.0]]  # frame 9,750
    end = by_id["MI6-19/breakpoint/2"]  # frame 10,500 of 10,500: the video's end, read as its last second
    assert end.duration_s == pytest.approx(420.0)
    assert end.evidence == [[pytest.approx(419.0), pytest.approx(420.0)]]
    assert by_id["MI6-19/global/0"].answer == "Modern age." and by_id["MI6-19/global/1"].evidence == []
    assert not [row for row in excluded if "past the end" in row["reason"]]


def test_moviechat_default_still_leaves_the_breakpoints_out(moviechat_release, tmp_path):
    instances, excluded = moviechat.convert(moviechat_release, tmp_path / "videos", [64])
    assert [inst.source_id for inst in instances] == ["MI6-19/global/0", "MI6-19/global/1"]
    assert excluded_reasons(excluded)["moviechat-1k:MI6-19/breakpoint"].startswith("3 breakpoint question(s) left out")


@pytest.mark.parametrize(
    ("seconds", "duration_s", "fps", "expected"),
    [
        (30.0, 420.0, 25, 30.0),  # inside: as given
        (420.0, 420.0, 25, 419.0),  # time == num_frame: the last second
        (420.04, 420.0, 25, 419.0),  # one frame past the probed end (a probe a frame short): still the end
        (420.0, 419.96, 25, pytest.approx(418.96)),  # the probe a frame short of num_frame / fps
        (420.2, 420.0, 25, None),  # five frames past: past the end, a bad row
        (0.5, 0.5, 25, 0.0),  # a video shorter than a second: its start
    ],
)
def test_a_moment_at_the_end_is_the_last_second(seconds, duration_s, fps, expected):
    assert moviechat.at_the_end(seconds, duration_s, fps) == expected


def test_moviechat_breakpoint_well_past_the_end_is_still_named(moviechat_release, tmp_path):
    gt = moviechat_release / moviechat.GT_DIR / "MI6-19.json"
    data = json.loads(gt.read_text())
    data["breakpoint"][2]["time"] = 10600  # 4 s past the end: a real fault (MovieChat issue #68), not the end frame
    gt.write_text(json.dumps(data))
    instances, excluded = moviechat.convert(moviechat_release, tmp_path / "videos", [64], include_breakpoint=True)
    assert "MI6-19/breakpoint/2" not in {inst.source_id for inst in instances}
    assert "breakpoint at 424.0 s is past the end" in excluded_reasons(excluded)["moviechat-1k:MI6-19/breakpoint/2"]


# ---------------------------------------------------------------------------------------------------------------------
# LVBench: real questions in the release's line format, and the time references issue 50 quotes


@pytest.fixture
def lvbench_release(tmp_path, clip) -> Path:
    raw = _release("lvbench", tmp_path)
    for _, entry in lvbench.read_annotations(raw)[0]:
        _link(clip, lvbench.video_file(raw, entry["key"]))
    return raw


def test_lvbench_reads_reversed_ranges_in_order_and_names_a_none_bound(lvbench_release, tmp_path, capsys):
    instances, excluded = lvbench.convert(lvbench_release, tmp_path / "videos", [64])
    by_id = {inst.source_id: inst for inst in instances}
    assert sorted(by_id) == ["v00000000q0", "v00000000q1", "v00000000q16", "v00000001q0", "v00000002q10", "v00000025q11"]
    year = by_id["v00000000q0"]
    assert (year.question, year.answer) == ("What year appears in the opening caption of the video?", "1633")
    assert year.options == ["1636", "1366", "1363", "1633"] and year.evidence == [[15.0, 20.0]]
    assert (by_id["v00000000q16"].task_type, by_id["v00000000q16"].category) == ("entity recognition", "perception")  # the first
    assert by_id["v00000001q0"].evidence == [[61.0, 62.0]]  # '01:01-01:01': a zero-length range is its second
    boat = by_id["v00000002q10"]  # '33:52-33:46', read in order
    assert (boat.question, boat.answer, boat.evidence) == ("How many people are leaving by boat in the video?", "1", [[2026.0, 2033.0]])
    meal = by_id["v00000025q11"]  # '116:50-108:00'
    assert (meal.answer, meal.evidence) == ("Incheon", [[6480.0, 7011.0]])
    reasons = excluded_reasons(excluded)  # no end annotated: no evidence; each named
    assert "time_reference '08:17-None' has a bound 'None'" in reasons["lvbench:v00000044q1"]
    assert "time_reference 'None-None' has a bound 'None'" in reasons["lvbench:v00000085q3"]
    assert [row["reason_kind"] for row in excluded] == ["bad_row", "bad_row"]
    assert "did not parse" not in capsys.readouterr().err  # nothing left silently empty


@pytest.mark.parametrize(
    ("text", "expected"),
    [("08:17-None", True), ("None-None", True), ("00:01-00:02, 08:17-none", True), ("00:15-00:19", False), ("soon", False), (None, False)],
)
def test_missing_bound(text, expected):
    assert lvbench.missing_bound(text) is expected


# ---------------------------------------------------------------------------------------------------------------------
# LongVideoBench: real rows of lvb_val.json


def test_longvideobench_real_rows(tmp_path, clip):
    raw = _release("longvideobench", tmp_path)
    entries = json.loads((raw / longvideobench.ANNOTATIONS).read_text())
    for entry in entries:
        _link(clip, raw / longvideobench.VIDEOS / entry["video_path"])
    instances, excluded = longvideobench.convert(raw, tmp_path / "videos", [64])
    assert excluded == []
    by_id = {inst.source_id: inst for inst in instances}
    assert sorted(by_id) == sorted(entry["id"] for entry in entries)
    for entry in entries:
        inst = by_id[entry["id"]]
        assert inst.question == entry["question"]  # with its referring query
        assert inst.answer == entry["candidates"][entry["correct_choice"]] and inst.options == entry["candidates"]
        assert inst.task_type == entry["question_category"]
    assert by_id["QJ6sjg7SXOQ_0"].answer == "Extending his palm forward while facing the camera"  # the fifth of five
    assert by_id["86CxyhFV9MI_0"].category == "reasoning" and by_id["9PD3ciudpIE_0"].category == "perception"


# ---------------------------------------------------------------------------------------------------------------------
# Video-MME: the authors' template's shape, invented content (the licence forbids copying rows)


def test_videomme_rows_in_the_release_shape(tmp_path, clip):
    raw = tmp_path / "videomme"
    videos = json.loads((DATA / "videomme" / "questions.json").read_text())
    rows = [
        {key: value for key, value in video.items() if key != "questions"} | question for video in videos for question in video["questions"]
    ]
    (raw / "videomme").mkdir(parents=True)
    pl.DataFrame(rows).write_parquet(raw / "videomme" / "test-00000-of-00001.parquet")
    _link(clip, raw / "data" / "fixtureVid01.mp4")
    instances, excluded = videomme.convert(raw, tmp_path / "videos", [64])
    assert excluded == []
    assert [inst.source_id for inst in instances] == ["001-1", "001-2", "001-3"]
    count, synopsis, action = instances
    assert count.answer == "Four." and count.options[3] == "The lanterns and the flags are of the same number."
    assert [inst.category for inst in instances] == [videomme.TASK_CATEGORIES[row["task_type"]] for row in rows]
    assert synopsis.question == "What is the genre of this fixture video?" and action.answer == "The market closes."
    assert count.video_id == "video-mme_fixtureVid01"
