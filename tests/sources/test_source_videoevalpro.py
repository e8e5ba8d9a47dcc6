"""VideoEval-Pro adapter (virtuebench.sources.videoevalpro) on a small release in its layout:
data/test-00000-of-00001.parquet with the questions, videos/videos_part_*.tar.gz (one tar.gz split in
parts) holding videos_filtered/<video>."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from helpers.data import convert_with_cli, excluded_reasons, make_video
from helpers.releases import OPTIONS, VIDEOEVALPRO_ROWS, make_videoevalpro_release, videoevalpro_row

from virtuebench import sources
from virtuebench.sources import videoevalpro


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("videoevalpro_video") / "clip.mp4"
    make_video(path, 70, fps=1)  # 70 s: level 64 is available, 128 is not
    return path.read_bytes()


def test_module():
    assert videoevalpro.SOURCE == "videoeval-pro"
    assert videoevalpro.RELEASE.repo_id == "TIGER-Lab/VideoEval-Pro" and not videoevalpro.RELEASE.gated
    assert len(videoevalpro.RELEASE.revision) == 40
    assert videoevalpro.TASK_CATEGORIES == {
        "Local Perception": "perception",
        "Holistic Perception": "perception",
        "Local Reasoning": "reasoning",
        "Holistic Reasoning": "reasoning",
    }


def test_prepare_joins_and_unpacks_once(tmp_path, clip):
    raw = make_videoevalpro_release(tmp_path / "raw", clip)
    assert videoevalpro.prepare(raw) == raw / "videos"
    video = raw / "videos" / "videos_filtered" / "fFjv93ACGo8.mp4"
    assert video.read_bytes() == clip and (raw / "videos" / "videos_filtered" / "Zt0pQ3vY9Kc.mp4").exists()
    stamp = video.stat().st_mtime_ns
    (raw / "videos" / "videos_part_aa.tar.gz").write_bytes(b"not a part any more")  # unpacked once: never read again
    videoevalpro.prepare(raw)
    assert video.stat().st_mtime_ns == stamp


def test_convert(tmp_path, clip):
    raw = make_videoevalpro_release(tmp_path / "raw", clip)
    with pytest.raises(ValueError, match="unpack them first"):
        videoevalpro.convert(raw, tmp_path / "videos", [64, 128])
    videoevalpro.prepare(raw)
    instances, excluded = videoevalpro.convert(raw, tmp_path / "videos", [64, 128])
    ids = ["videoeval-pro/0000-C", "videoeval-pro/0001-A", "videoeval-pro/0002-C", "videoeval-pro/0006-A"]
    assert [inst.instance_id for inst in instances] == ids
    count, why, after, music = instances
    assert (music.task_type, music.category) == ("Music Perception", "uncategorized")  # a new qa_type: kept, named
    assert (count.source, count.source_id, count.task_type, count.category) == ("videoeval-pro", "0000-C", "Local Perception", "perception")
    assert (why.task_type, why.category, after.task_type, after.category) == (
        "Holistic Reasoning",
        "reasoning",
        "Local Reasoning",
        "reasoning",
    )
    assert count.question == "How many cups are on the table?"
    assert (count.answer, count.options) == ("Four cups", ["Two.", "Three.", "Four.", "Five."])  # answer_text, letters removed
    assert after.options == ["Sits", "Runs", "Waves", "Sings"] and after.answer == "She waves"  # options without letters kept
    assert count.answers == {64: "Four cups"}  # the full-video answer at every available level; 128 is not
    assert count.duration_s == pytest.approx(70.0) and count.evidence == []
    assert count.video_id == why.video_id == "videoeval-pro_fFjv93ACGo8" and after.video_id == "videoeval-pro_Zt0pQ3vY9Kc"
    linked = Path(count.video_path)
    assert linked.parent == tmp_path / "videos" and linked.is_symlink()
    assert Path(os.readlink(linked)) == (raw / "videos" / "videos_filtered" / "fFjv93ACGo8.mp4").resolve()

    reasons = excluded_reasons(excluded)
    assert set(reasons) == {f"videoeval-pro:row {n}" for n in (3, 4, 5)}
    assert "video file not found" in reasons["videoeval-pro:row 3"] and "NoSuchVideo.mp4" in reasons["videoeval-pro:row 3"]
    assert reasons["videoeval-pro:row 4"].startswith("bad row") and "outside the 4 options" in reasons["videoeval-pro:row 4"]
    assert reasons["videoeval-pro:row 5"].startswith("bad row") and "answer_text" in reasons["videoeval-pro:row 5"]
    assert {row["item"]: row["reason_kind"] for row in excluded} == {
        "videoeval-pro:row 3": "missing_video",
        "videoeval-pro:row 4": "bad_row",
        "videoeval-pro:row 5": "bad_row",
    }


def test_unreadable_video_and_hand_unpacked_release(tmp_path, clip):
    """Videos straight under videos/ (the authors' README) are found too; a broken one is reported."""
    raw = tmp_path / "raw"
    (raw / "data").mkdir(parents=True)
    (raw / "videos").mkdir()
    (raw / "videos" / "good.mp4").write_bytes(clip)
    (raw / "videos" / "broken.mp4").write_bytes(b"not a video")
    rows = [
        videoevalpro_row("good.mp4", "Local Perception", "How many cups?", OPTIONS, "B", "Three"),
        videoevalpro_row("broken.mp4", "Local Perception", "Q?", OPTIONS, "B", "x"),
    ]
    pl.DataFrame(rows).write_parquet(raw / "data" / "test-00000-of-00001.parquet")
    assert videoevalpro.prepare(raw) == raw / "videos"
    instances, excluded = videoevalpro.convert(raw, tmp_path / "videos", [64])
    assert [inst.source_id for inst in instances] == ["0000-B"]
    assert "unreadable video" in excluded_reasons(excluded)["videoeval-pro:row 1"]


def test_missing_or_unreadable_table(tmp_path):
    with pytest.raises(ValueError, match=r"data/test-\*\.parquet"):
        videoevalpro.convert(tmp_path, tmp_path / "videos", [64])
    (tmp_path / "data").mkdir()
    broken = tmp_path / "data" / "test-00000-of-00001.parquet"
    broken.write_text("not parquet")
    with pytest.raises(ValueError, match="not a readable parquet file") as error:
        videoevalpro.convert(tmp_path, tmp_path / "videos", [64])
    assert str(broken) in str(error.value)
    pl.DataFrame([{"video": "a.mp4", "question": "q"}]).write_parquet(broken)
    with pytest.raises(ValueError, match="missing column"):
        videoevalpro.convert(tmp_path, tmp_path / "videos", [64])


def test_cli(tmp_path, clip):
    raw = make_videoevalpro_release(tmp_path / "raw", clip)
    videoevalpro.prepare(raw)
    instances, excluded = convert_with_cli("videoeval-pro", raw, tmp_path)
    assert [inst.source_id for inst in instances] == ["0000-C", "0001-A", "0002-C", "0006-A"]
    assert instances[0].options == ["Two.", "Three.", "Four.", "Five."] and instances[0].answers == {64: "Four cups"}
    assert len(excluded) == 3


def test_clip_sampling_keeps_every_question_of_a_video_shorter_than_the_level(tmp_path):
    from virtuebench.curation.supplement import make_sets

    short = tmp_path / "short.mp4"
    make_video(short, 20, fps=2)
    raw = make_videoevalpro_release(tmp_path / "raw", short.read_bytes())
    videoevalpro.prepare(raw)
    on_the_grid, excluded = videoevalpro.convert(raw, tmp_path / "grid", [64])  # VirtueBench's 1 FPS grid: too short
    assert on_the_grid == [] and sum(row["reason_kind"] == "too_short" for row in excluded) == 4
    instances, _ = videoevalpro.convert(raw, tmp_path / "clip", [64], sampling="clip")  # the supplement's: 64 over any video
    assert [inst.source_id for inst in instances] == ["0000-C", "0001-A", "0002-C", "0006-A"]
    assert all(inst.answers == {64: inst.answer} and inst.duration_s == pytest.approx(20.0) for inst in instances)
    sets = make_sets(instances, 64)
    # The MCQ letter is the release's `answer` (kept in source_id): the open-ended gold is not an option's text.
    assert [inst.answers[64] for inst in sets["mcq"]] == ["C", "A", "C", "A"]
    assert [inst.answers[64] for inst in sets["oe"]] == ["Four cups", "Because he is late", "She waves", "A piano"]
    with pytest.raises(ValueError, match="sampling 'everything' is not one of 1fps, clip"):
        sources.adapter("videoeval-pro")({"raw_dir": str(raw), "sampling": "everything"}, str(tmp_path / "v"), 1)


def test_a_new_spelling_of_a_task_type_still_fills_its_column_with_one_warning(tmp_path, clip, capsys):
    """Release drift: the hub renames 'Local Perception' to 'local_perception'; every row is kept, and one line
    names the spelling (not one per row)."""
    renamed = [{**row, "qa_type": row["qa_type"].lower().replace(" ", "_")} for row in VIDEOEVALPRO_ROWS]
    raw = make_videoevalpro_release(tmp_path / "raw", clip, rows=renamed)
    videoevalpro.prepare(raw)
    instances, excluded = videoevalpro.convert(raw, tmp_path / "videos", [64, 128])
    original = make_videoevalpro_release(tmp_path / "raw2", clip)
    videoevalpro.prepare(original)
    before, _ = videoevalpro.convert(original, tmp_path / "videos2", [64, 128])
    assert [(i.source_id, i.category) for i in instances] == [(i.source_id, i.category) for i in before]
    warnings = [line for line in capsys.readouterr().err.splitlines() if "is read as" in line]
    assert len([w for w in warnings if "'local_perception' is read as 'Local Perception'" in w]) == 1, "one per spelling, not per row"
    assert not [row for row in excluded if row["reason_kind"] == "unknown_task_type"]


def test_a_new_task_type_still_fills_the_supplement_column_with_one_warning(tmp_path, clip, capsys):
    """Release drift beyond spelling: the hub replaces every qa_type by one the adapter has never seen. The table
    never uses VideoEval-Pro's category, so every question stays (category 'uncategorized', the type as given), the
    supplement's open-ended set is the same as before, and one line names the new value."""
    from virtuebench.curation.supplement import make_sets

    original = make_videoevalpro_release(tmp_path / "raw", clip)
    videoevalpro.prepare(original)
    before, _ = videoevalpro.convert(original, tmp_path / "videos", [64])
    renamed = make_videoevalpro_release(
        tmp_path / "raw2", clip, rows=[{**row, "qa_type": "Temporal Counting"} for row in VIDEOEVALPRO_ROWS]
    )
    videoevalpro.prepare(renamed)
    capsys.readouterr()
    instances, excluded = videoevalpro.convert(renamed, tmp_path / "videos2", [64])
    warnings = [line for line in capsys.readouterr().err.splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and "'Temporal Counting' is new" in warnings[0] and "'uncategorized'" in warnings[0]
    assert {(i.task_type, i.category) for i in instances} == {("Temporal Counting", "uncategorized")}
    assert [i.source_id for i in instances] == [i.source_id for i in before]
    assert not [row for row in excluded if row["reason_kind"] == "unknown_task_type"]
    assert [i.instance_id for i in make_sets(instances)["oe"]] == [i.instance_id for i in make_sets(before)["oe"]] != []


def test_a_row_without_options_is_kept_open_ended_and_left_out_of_the_mcq(tmp_path, clip):
    from virtuebench.curation.supplement import correct_index

    rows = [*VIDEOEVALPRO_ROWS[:1], {**VIDEOEVALPRO_ROWS[0], "options": [], "question": "How many plates are there?", "answer": ""}]
    raw = make_videoevalpro_release(tmp_path / "raw", clip, rows=rows)
    videoevalpro.prepare(raw)
    instances, _ = videoevalpro.convert(raw, tmp_path / "videos", [64, 128])
    plain = next(i for i in instances if i.question == "How many plates are there?")
    assert plain.options == [] and plain.source_id == "0001" and correct_index(plain) is None
    assert correct_index(next(i for i in instances if i.source_id.startswith("0000-"))) is not None


def test_a_row_without_options_reaches_the_open_ended_set_and_not_the_mcq(tmp_path, clip):
    """The authors' open-ended scoring reads every row: the supplement's open-ended set of VideoEval-Pro (the column
    the table shows) holds the row without options, judged against its answer_text; the MCQ set leaves it out. A
    source converted from multiple choice still keeps only its questions with options, in both forms."""
    from virtuebench.curation.supplement import make_sets

    rows = [*VIDEOEVALPRO_ROWS[:1], {**VIDEOEVALPRO_ROWS[0], "options": None, "question": "How many plates are there?", "answer": ""}]
    raw = make_videoevalpro_release(tmp_path / "raw", clip, rows=rows)
    videoevalpro.prepare(raw)
    instances, excluded = videoevalpro.convert(raw, tmp_path / "videos", [64], sampling="clip")
    assert excluded == []
    sets = make_sets(instances, 64)
    assert [(i.source_id, i.answers) for i in sets["oe"]] == [("0000-C", {64: "Four cups"}), ("0001", {64: "Four cups"})]
    assert [(i.source_id, i.answers) for i in sets["mcq"]] == [("0000-C", {64: "C"})]
    assert [i.source_id for i in make_sets(instances, 64, max_questions=1, seed=0)["oe"]] != []
    elsewhere = [  # the same two questions as an MCQ source converts them: the answer is an option's text
        replace(inst, source="mlvu", instance_id=f"mlvu/{inst.source_id}", answer=inst.options[2] if inst.options else inst.answer)
        for inst in instances
    ]
    assert [i.source_id for i in make_sets(elsewhere, 64)["oe"]] == [i.source_id for i in make_sets(elsewhere, 64)["mcq"]] == ["0000-C"]
