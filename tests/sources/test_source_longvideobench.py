"""LongVideoBench adapter: a release in the hub layout (lvb_val.json, a videos tar split into parts) -> instances."""

from __future__ import annotations

import json
import shutil
import tarfile

import pytest
from helpers.releases import LONGVIDEOBENCH_ENTRIES

from virtuebench.sources import longvideobench as lvb
from virtuebench.sources import real_source

#: subtitles/vidAAAAAAAA_en.json: the release's two subtitle formats (whisper-style timestamps, srt-style start/end).
SUBTITLES = [
    {"timestamp": [1.0, 3.0], "text": "hello there"},
    {"timestamp": [20.2, 20.4], "text": "a short line"},
    {"start": "00:00:40.000", "end": "00:00:44.000", "line": "the coat is blue"},
    {"timestamp": [55.0, None], "text": "to the end"},
]


@pytest.fixture
def release(tmp_path, video_factory):
    """lvb_val.json (and the answerless test file), videos.tar split into three parts, no videos/ yet; subtitles.tar."""
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
    subtitles = tmp_path / "staging" / "subtitles"
    subtitles.mkdir()
    (subtitles / "vidAAAAAAAA_en.json").write_text(json.dumps(SUBTITLES))
    with tarfile.open(raw / "subtitles.tar", "w") as tar:
        tar.add(subtitles, arcname="subtitles")
    return raw


def test_release_is_described():
    assert real_source("longvideobench") is lvb
    assert lvb.SOURCE == "longvideobench"
    assert lvb.RELEASE.repo_id == "longvideobench/LongVideoBench" and lvb.RELEASE.gated
    assert "lvb_val.json" in lvb.RELEASE.allow_patterns and "lvb_test_wo_gt.json" not in lvb.RELEASE.allow_patterns
    assert "subtitles.tar" in lvb.RELEASE.allow_patterns  # read only with supplement.longvideobench_subtitles: interleaved
    assert lvb.RELEASE.revision == "60d1c89c1919a198b73be39c2babb213b29d6a5c"  # pinned: a commit, not "main"
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


def test_subtitles_are_interleaved_as_the_release_loader_places_them():
    """insert_subtitles_into_frames (longvideobench_dataset.py): a subtitle goes after every frame at or before its
    midpoint, and only where a frame lies inside it (a line shorter than 1 s widened to 1 s about its midpoint); an
    end that is null is the video's duration; the start/end strings are HH:MM:SS.mmm."""
    times = [2.0, 12.0, 22.0, 32.0, 42.0, 52.0]
    items = lvb.interleave_subtitles(times, SUBTITLES, 0.0, 60.0)
    assert items == [0, "hello there", 1, 2, 3, 4, "the coat is blue", 5]
    assert lvb.subtitles_text(items, len(times)) == (
        "Subtitles, placed by time among the video's 6 frames:\n[after frame 1] hello there\n[after frame 5] the coat is blue"
    )
    # starting_timestamp_for_subtitles shifts every line, the null end (the duration) too: 'the coat is blue' is now
    # 30-34 s, 'to the end' 45-50 s (no frame inside: left out).
    assert lvb.interleave_subtitles(times, SUBTITLES, 10.0, 60.0) == [0, 1, 2, 3, "the coat is blue", 4, 5]
    early = lvb.interleave_subtitles([0.8], [{"timestamp": [0.0, 1.0], "text": "early"}], 0.0, 60.0)
    assert early == ["early", 0] and lvb.subtitles_text(early, 1).endswith("\n[before frame 1] early")
    assert lvb.subtitles_text([0, 1], 2) == ""


def test_durations_from_the_release(release, tmp_path):
    """durations: release takes lvb_val.json's `duration` (the loader samples within it), no longer than the file;
    a question without one is a bad row. The default probes the file, as every source."""
    lvb.prepare(release)
    assert (release / "subtitles" / "vidAAAAAAAA_en.json").is_file()  # prepare unpacks subtitles.tar too
    entries = json.loads((release / "lvb_val.json").read_text())
    entries[0]["duration"] = 60.0
    entries[1]["duration"] = 100.0  # longer than the 70 s file: its length
    entries.append({**entries[0], "id": "vidAAAAAAAA_9", "duration": None})
    (release / "lvb_val.json").write_text(json.dumps(entries))
    probed, _ = lvb.convert(release, tmp_path / "a", [64], sampling="clip")
    assert {inst.source_id: inst.duration_s for inst in probed} == pytest.approx(
        {"vidAAAAAAAA_0": 70.0, "vidAAAAAAAA_1": 70.0, "vidAAAAAAAA_9": 70.0}
    )
    stated, excluded = lvb.convert(release, tmp_path / "b", [64], sampling="clip", durations="release")
    assert {inst.source_id: inst.duration_s for inst in stated} == pytest.approx({"vidAAAAAAAA_0": 60.0, "vidAAAAAAAA_1": 70.0})
    reasons = {row["item"]: row["reason"] for row in excluded}
    assert reasons["longvideobench:vidAAAAAAAA_9"] == "bad row: 'duration' None is not a positive number of seconds"
    with pytest.raises(ValueError, match="durations 'stated' is not one of probed, release"):
        lvb.convert(release, tmp_path / "c", [64], durations="stated")


def test_durations_setting_through_the_adapter(release, tmp_path):
    """The adapter's `durations` setting reaches LongVideoBench; a source whose release states no lengths refuses it."""
    from virtuebench import sources

    lvb.prepare(release)
    settings = {"raw_dir": str(release), "levels": [64], "sampling": "clip", "durations": "release"}
    instances, _ = sources.adapter("longvideobench")(settings, str(tmp_path / "v"), 1)
    assert [inst.source_id for inst in instances] == ["vidAAAAAAAA_0", "vidAAAAAAAA_1"]
    with pytest.raises(ValueError, match="mlvu source: durations 'release' is not one of probed$"):
        sources.adapter("mlvu")({**settings, "raw_dir": str(tmp_path)}, str(tmp_path / "w"), 1)


def test_the_supplement_sets_carry_the_subtitles_before_each_longvideobench_question(release, tmp_path):
    """supplement.longvideobench_subtitles: interleaved, on the release layout: the sets job writes each question's
    subtitles before it, placed against the frame times its frame job samples (`level` frames over the release's
    duration), in both forms (the MCQ's options and instruction after the question, as the loader's inputs end)."""
    from virtuebench.curation.supplement import make_sets, with_subtitles
    from virtuebench.levels import clip_timestamps

    lvb.prepare(release)
    entries = json.loads((release / "lvb_val.json").read_text())
    entries[0]["duration"] = entries[1]["duration"] = 60.0
    (release / "lvb_val.json").write_text(json.dumps(entries))
    instances, _ = lvb.convert(release, tmp_path / "v", [6], sampling="clip", durations="release")
    sets = make_sets(instances, 6)
    assert clip_timestamps(6, 60.0) == [5.0, 15.0, 25.0, 35.0, 45.0, 55.0]
    # No frame lies inside 'hello there' (1-3 s), 'a short line' (19.8-20.8 s), 'the coat is blue' (40-44 s) or 'to the
    # end' (55-60 s): at 6 frames none is shown. At 12 (every 5 s from 2.5 s) three are: 2.5 s falls inside the first
    # (before frame 1, its midpoint 2 s coming first), 42.5 s inside the third, 57.5 s inside the last.
    assert with_subtitles(sets["oe"], release, 6, "clip") == sets["oe"]
    instances, _ = lvb.convert(release, tmp_path / "w", [12], sampling="clip", durations="release")
    sets = make_sets(instances, 12)
    block = (
        "Subtitles, placed by time among the video's 12 frames:\n[before frame 1] hello there\n[after frame 8] the coat is blue\n"
        "[after frame 12] to the end"
    )
    for form in ("oe", "mcq"):
        shown = with_subtitles(sets[form], release, 12, "clip")
        assert [inst.question for inst in shown] == [f"{block}\n\n{inst.question}" for inst in sets[form]]
    (release / "subtitles" / "vidAAAAAAAA_en.json").unlink()
    with pytest.raises(ValueError, match=r"vidAAAAAAAA_en.json not found: download subtitles.tar"):
        with_subtitles(sets["oe"], release, 12, "clip")
