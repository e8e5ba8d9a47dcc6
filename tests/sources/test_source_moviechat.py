"""MovieChat-1K adapter (virtuebench.sources.moviechat) on a small release in its layout: gt/gt/<stem>.json
with the answers, annotations/<stem>.json without them, videos/<info.video_path>."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.data import convert_with_cli, excluded_reasons, make_video

from virtuebench.sources import moviechat


@pytest.fixture(scope="module")
def movie(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("moviechat_video") / "movie.mp4"
    make_video(path, 70, fps=1)  # 70 s: level 64 is available, 128 is not
    return path


def _gt(video_path: str, global_qas: list, breakpoint_qas: list | None = None, **extra) -> dict:
    return {
        "caption": "A woman walks a dog.",
        "info": {"video_path": video_path, "num_frame": 70, "fps": 1, "url": "", "h": 72, "w": 128, "class": "movie"},
        "global": global_qas,
        "breakpoint": breakpoint_qas or [],
        **extra,
    }


def make_release(root: Path, movie: Path) -> Path:
    """Video 1 (present): 2 good global questions, a bad row, 2 breakpoints (one past the end) and an
    unknown question list; video 2: its video is missing; video 3: broken JSON; video 4: no ground truth."""
    gt, annotations, videos = root / "gt" / "gt", root / "annotations", root / "videos"
    for folder in (gt, annotations, videos):
        folder.mkdir(parents=True)
    (root / "gt" / "__init__.py").write_text("")
    shutil.copy(movie, videos / "1.mp4")
    first = _gt(
        "1.mp4",
        [
            {"question": "What animal does the woman walk?", "answer": "A dog."},
            {"question": "How many people appear?", "answer": 2},
            {"question": "Where is this?"},
        ],
        [
            {"time": 30, "question": "What is she doing now?", "answer": "Running."},
            {"time": 100, "question": "What happens now?", "answer": "Nothing."},
        ],
        local=[{"question": "What colour is the leash?", "answer": "Red."}],
        tags=["drama"],
    )
    (gt / "1.json").write_text(json.dumps(first))
    (gt / "2.json").write_text(json.dumps(_gt("2.mp4", [{"question": "Is it raining?", "answer": "No."}])))
    (gt / "3.json").write_text("{not json")
    for stem in ("1", "2", "3", "4"):
        (annotations / f"{stem}.json").write_text(json.dumps(_gt(f"{stem}.mp4", [{"question": "Q?"}])))
    return root


def test_convert_global_questions(tmp_path, movie):
    raw = make_release(tmp_path / "raw", movie)
    instances, excluded = moviechat.convert(raw, tmp_path / "videos", [64, 128])
    assert [inst.instance_id for inst in instances] == ["moviechat-1k/1/global/0", "moviechat-1k/1/global/1"]
    first, second = instances
    assert (first.source, first.source_id, first.task_type) == ("moviechat-1k", "1/global/0", "global")
    assert (first.category, first.question) == ("perception", "What animal does the woman walk?")
    assert (first.answer, first.options, first.evidence) == ("A dog.", [], [])
    assert second.answer == "2"  # a bare count in the JSON is kept as text
    assert first.answers == {64: "A dog."}  # the full-video answer at every available level, 128 is not
    assert first.duration_s == pytest.approx(70.0)
    assert first.video_id == "moviechat-1k_1"
    linked = Path(first.video_path)
    assert linked.parent == tmp_path / "videos" and linked.is_symlink()
    assert Path(os.readlink(linked)) == (raw / "videos" / "1.mp4").resolve()

    reasons = excluded_reasons(excluded)
    assert "bad row" in reasons["moviechat-1k:1/global/2"]
    assert reasons["moviechat-1k:1/breakpoint"].startswith("2 breakpoint question(s) left out")
    assert "task type 'local' has no category" in reasons["moviechat-1k:1/local/0"]
    assert "video file not found" in reasons["moviechat-1k:2/global/0"]
    assert "unreadable ground-truth file" in reasons["moviechat-1k:3"]
    assert "has no ground truth" in reasons["moviechat-1k:4"]
    assert len(excluded) == 6


def test_breakpoints_when_asked_carry_their_moment(tmp_path, movie):
    raw = make_release(tmp_path / "raw", movie)
    instances, excluded = moviechat.convert(raw, tmp_path / "videos", [64], include_breakpoint=True)
    by_id = {inst.source_id: inst for inst in instances}
    moment = by_id["1/breakpoint/0"]
    assert (moment.task_type, moment.category, moment.evidence) == ("breakpoint", "perception", [[30.0, 31.0]])
    assert (moment.question, moment.answer, moment.answers) == ("What is she doing now?", "Running.", {64: "Running."})
    assert "past the end" in excluded_reasons(excluded)["moviechat-1k:1/breakpoint/1"]
    assert "1/breakpoint/1" not in by_id


def test_every_task_type_has_a_category_and_prepare_is_a_no_op(tmp_path, movie):
    assert set(moviechat.TASK_CATEGORIES.values()) <= {"perception", "reasoning"}
    assert {"global", "breakpoint"} <= set(moviechat.TASK_CATEGORIES)
    raw = make_release(tmp_path / "raw", movie)
    before = sorted(str(p.relative_to(raw)) for p in raw.rglob("*"))
    assert moviechat.prepare(raw) == raw
    assert moviechat.prepare(raw) == raw
    assert sorted(str(p.relative_to(raw)) for p in raw.rglob("*")) == before


def test_release_without_ground_truth_is_an_error(tmp_path):
    (tmp_path / "annotations").mkdir()
    with pytest.raises(ValueError, match=r"gt/gt/\*\.json"):
        moviechat.convert(tmp_path, tmp_path / "videos", [64])


def test_cli_writes_instances_and_report(tmp_path, movie):
    raw = make_release(tmp_path / "raw", movie)
    instances, report = convert_with_cli("moviechat-1k", raw, tmp_path)
    assert [(inst.source_id, inst.answer, inst.answers) for inst in instances] == [
        ("1/global/0", "A dog.", {64: "A dog."}),
        ("1/global/1", "2", {64: "2"}),
    ]
    assert len(report) == 6


def test_the_breakpoint_switch_reaches_the_adapter_through_its_settings(tmp_path, movie):
    """curation.moviechat_breakpoint: include becomes the adapter's option include_breakpoint (virtuebench.plan); through
    the source registry, as the convert_source job calls it, the breakpoint question within the video comes in with its
    moment as evidence; without the option it is left out. An option its convert does not take is named."""
    from virtuebench.sources import adapter

    raw = make_release(tmp_path / "raw", movie)
    settings = {"raw_dir": str(raw), "levels": [64]}
    included, excluded = adapter("moviechat-1k")({**settings, "options": {"include_breakpoint": True}}, str(tmp_path / "v1"), 1)
    assert [inst.source_id for inst in included] == ["1/global/0", "1/global/1", "1/breakpoint/0"]
    assert included[-1].evidence == [[30.0, 31.0]] and "moviechat-1k:1/breakpoint" not in excluded_reasons(excluded)
    default, excluded = adapter("moviechat-1k")(settings, str(tmp_path / "v2"), 1)
    assert [inst.source_id for inst in default] == ["1/global/0", "1/global/1"]
    assert excluded_reasons(excluded)["moviechat-1k:1/breakpoint"].startswith("2 breakpoint question(s) left out")
    with pytest.raises(
        ValueError, match=r"moviechat-1k source: unknown option\(s\) \['breakpoints'\]; its convert takes \['include_breakpoint'\]"
    ):
        adapter("moviechat-1k")({**settings, "options": {"breakpoints": True}}, str(tmp_path / "v3"), 1)
    with pytest.raises(ValueError, match=r"lvbench source: unknown option\(s\) \['include_breakpoint'\]; its convert takes none"):
        adapter("lvbench")({**settings, "options": {"include_breakpoint": True}}, str(tmp_path / "v4"), 1)
