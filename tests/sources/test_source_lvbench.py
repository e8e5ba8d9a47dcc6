"""LVBench adapter: video_info.meta.jsonl + videos/<key>.mp4 -> instances; fetching videos with a fake downloader."""

from __future__ import annotations

import csv
import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from helpers.data import convert_with_cli, excluded_reasons

from virtuebench.sources import lvbench, real_source


def _qa(uid, question, answer, types, time_reference):
    return {"uid": uid, "question": question, "answer": answer, "question_type": types, "time_reference": time_reference}


OPTIONS = "\n(A) 1636\n(B) 1366\n(C) 1363\n(D) 1633"
VIDEO_INFO = {"duration_minutes": 1.17, "fps": 1.0, "resolution": {"width": 128, "height": 72}}
LINES = [
    {
        "key": "kept_vid_01",
        "type": "cartoon",
        "video_info": VIDEO_INFO,
        "qa": [
            _qa(101, "What year appears in the opening caption?" + OPTIONS, "D", ["key information retrieval"], "00:15-00:19"),
            _qa(102, "How many cups are on the table?\n(A) 2\n(B) 3", "A", ["entity recognition", "reasoning"], "01:01-01:01"),
            _qa(
                103,
                "Why does she leave?\n(A) She is late\n(B) She is\nangry\n(C) It rains\n(D) No reason",
                "B",
                ["reasoning"],
                "0:00:30-0:00:45",
            ),
            _qa(104, "What happens first?" + OPTIONS, "C", ["event understanding"], "around a minute in"),
            _qa(105, "What year is shown?" + OPTIONS, "E", ["key information retrieval"], "00:10-00:12"),
            _qa(106, "What year is shown, with no options?", "A", ["key information retrieval"], "00:10-00:12"),
            _qa(107, "What is the story?" + OPTIONS, "A", ["summarization"], "00:50-00:40"),
        ],
    },
    {
        "key": "gone_vid_01",
        "type": "sport",
        "video_info": VIDEO_INFO,
        "qa": [
            _qa(201, "Who scores?\n(A) Red\n(B) Blue", "B", ["temporal grounding"], "00:05-00:09"),
        ],
    },
    {
        "key": "fetch_vid_1",
        "type": "tv",
        "video_info": VIDEO_INFO,
        "qa": [
            _qa(301, "What is on the wall?\n(A) A clock\n(B) A map", "A", ["entity recognition"], "1:00:05-1:00:09"),
        ],
    },
]

FAKE_DOWNLOADER = """\
import shutil, sys
out, key, source = sys.argv[1], sys.argv[2], sys.argv[3]
if key == "fetch_vid_1":
    shutil.copy(source, out)
    sys.exit(0)
print(f"ERROR: [youtube] {key}: Video unavailable", file=sys.stderr)
sys.exit(1)
"""


@pytest.fixture
def release(tmp_path, video_factory):
    raw = tmp_path / "LVBench"
    (raw / "videos").mkdir(parents=True)
    text = "\n".join(json.dumps(line) for line in LINES)
    (raw / "video_info.meta.jsonl").write_text(text + "\n{not json\n")
    shutil.copy(video_factory(70, fps=1), raw / "videos" / "kept_vid_01.mp4")
    return raw


def test_release_is_described():
    assert real_source("lvbench") is lvbench
    assert lvbench.RELEASE.repo_id == "THUDM/LVBench" and len(lvbench.RELEASE.revision) == 40
    assert set(lvbench.TASK_CATEGORIES) == {
        "entity recognition",
        "event understanding",
        "key information retrieval",
        "temporal grounding",
        "reasoning",
        "summarization",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("00:15-00:19", [[15.0, 20.0]]),
        ("01:01-01:01", [[61.0, 62.0]]),
        ("77:02-77:15", [[4622.0, 4636.0]]),
        ("1:02:03 - 1:02:05", [[3723.0, 3726.0]]),
        ("00:01-00:02, 00:10-00:11", [[1.0, 3.0], [10.0, 12.0]]),
        ("00:50-00:40", [[40.0, 51.0]]),  # reversed, as the release's "33:52-33:46": read in order
        ("08:17-None", None),
        ("00:61-00:62", None),
        ("1:60:00-1:61:00", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_time_reference(text, expected):
    assert lvbench.parse_time_reference(text) == expected


def test_prepare_is_offline_and_idempotent(release):
    assert lvbench.prepare(release) == release / "videos"
    assert lvbench.prepare(release) == release / "videos"
    assert (release / "videos" / "kept_vid_01.mp4").is_file()


def test_convert(release, tmp_path, capsys):
    instances, excluded = lvbench.convert(release, tmp_path / "linked", [8, 64, 128])
    by_id = {inst.source_id: inst for inst in instances}
    assert sorted(by_id) == ["101", "102", "103", "104", "107"]
    kir = by_id["101"]
    assert kir.instance_id == "lvbench/101" and kir.video_id == "lvbench_kept_vid_01"
    assert (kir.task_type, kir.category) == ("key information retrieval", "perception")
    assert kir.question == "What year appears in the opening caption?"
    assert kir.answer == "1633" and kir.options == ["1636", "1366", "1363", "1633"]
    assert kir.answers == {8: "1633", 64: "1633"} and kir.evidence == [[15.0, 20.0]]
    assert (by_id["102"].task_type, by_id["102"].category) == ("entity recognition", "perception")  # first type
    assert by_id["102"].evidence == [[61.0, 62.0]] and by_id["102"].options == ["2", "3"]
    assert by_id["103"].category == "reasoning" and by_id["103"].answer == "She is angry"  # a wrapped option
    assert by_id["103"].evidence == [[30.0, 46.0]]
    assert by_id["104"].evidence == []  # unparseable: kept, no evidence
    assert by_id["107"].evidence == [[40.0, 51.0]]  # a reversed range ('00:50-00:40') is read in order
    assert by_id["107"].category == "reasoning"
    assert (tmp_path / "linked" / "lvbench_kept_vid_01.mp4").resolve() == (release / "videos" / "kept_vid_01.mp4").resolve()
    assert "1 time_reference value(s) did not parse" in capsys.readouterr().err
    reasons = {row["item"]: row["reason"] for row in excluded}
    assert set(reasons) == {"lvbench:105", "lvbench:106", "lvbench:201", "lvbench:301", "lvbench:video_info.meta.jsonl:4"}
    assert reasons["lvbench:105"].startswith("bad row") and "outside the 4 options" in reasons["lvbench:105"]
    assert reasons["lvbench:106"].startswith("bad row") and "options" in reasons["lvbench:106"]
    assert "video file not found" in reasons["lvbench:201"] and "video file not found" in reasons["lvbench:301"]
    assert reasons["lvbench:video_info.meta.jsonl:4"].startswith("bad line: not valid JSON")
    kinds = {row["item"]: row["reason_kind"] for row in excluded}
    assert kinds == {"lvbench:105": "bad_row", "lvbench:106": "bad_row", "lvbench:201": "missing_video", "lvbench:301": "missing_video"} | {
        "lvbench:video_info.meta.jsonl:4": "bad_row"
    }


def test_fetch_videos_with_a_fake_downloader(release, tmp_path, video_factory):
    script = tmp_path / "fake_ytdlp.py"
    script.write_text(FAKE_DOWNLOADER)
    source = video_factory(70, fps=1)
    template = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{out}} {{key}} {shlex.quote(str(source))}"
    assert lvbench.main(["fetch", str(release), "--command", template]) == 0
    videos = release / "videos"
    assert sorted(p.name for p in videos.iterdir()) == ["fetch_vid_1.mp4", "kept_vid_01.mp4"]  # no partial files left
    with open(release / "videos_missing.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["key"] for row in rows] == ["gone_vid_01"]
    assert "status 1" in rows[0]["reason"] and "Video unavailable" in rows[0]["reason"]
    # Missing downloader: reported per video, never raised.
    missing = lvbench.fetch_videos(release, "no-such-downloader-xyz -o {out} {key}")
    assert [row["key"] for row in missing] == ["gone_vid_01"] and "not found" in missing[0]["reason"]

    # The CLI of all sources: the fetched video converts, the gone one is reported with the fetch reason.
    converted, report = convert_with_cli("lvbench", release, tmp_path)
    instances = {inst.source_id: inst for inst in converted}
    assert sorted(instances) == ["101", "102", "103", "104", "107", "301"]
    fetched = instances["301"]
    assert (fetched.task_type, fetched.category, fetched.answer) == ("entity recognition", "perception", "A clock")
    assert fetched.answers == {64: "A clock"} and fetched.evidence == [[3605.0, 3610.0]]
    assert fetched.options == ["A clock", "A map"] and fetched.source == "lvbench"
    excluded = excluded_reasons(report)
    assert "video not downloaded" in excluded["lvbench:201"] and "not found" in excluded["lvbench:201"]
    assert {row["item"]: row["reason_kind"] for row in report}["lvbench:201"] == "missing_video"


def test_fetch_cli_passes_the_downloader_line_apart_from_the_subcommand(tmp_path, monkeypatch):
    """`--command` (the downloader line) is stored apart from `command` (the subcommand), with its default."""
    asked = []
    monkeypatch.setattr(lvbench, "fetch_videos", lambda raw_dir, command, timeout: asked.append((command, timeout)) or [])
    assert lvbench.main(["fetch", str(tmp_path)]) == 0
    assert lvbench.main(["fetch", str(tmp_path), "--command", "dl {out} {key}", "--timeout", "5"]) == 0
    assert asked == [(lvbench.DEFAULT_COMMAND, None), ("dl {out} {key}", 5.0)]


def _v2d_meta(key: str, number: int, status: str = "success", error: str | None = None) -> str:
    """The JSON video2dataset writes beside sample `number` (its `files` output): the row's url, the key, the status."""
    meta = {"url": f"https://www.youtube.com/watch?v={key}", "key": f"{number:08d}", "status": status, "error_message": error}
    return json.dumps({**meta, "yt_meta_dict": {}}, indent=4)


@pytest.fixture
def official_release(tmp_path, video_factory):
    """LVBench as its official script leaves it (scripts/download.sh: save_video_txt.py, then video2dataset
    --output_format files): videos/00000/<number:08d>.mp4 and .json, numbered in the order of the metadata's keys.
    The metadata's second line is not JSON (save_video_txt.py skips it: it takes no number). Sample 0 (kept_vid_01)
    was downloaded, sample 1 (gone_vid_01) failed, sample 2 (fetch_vid_1) came without its JSON."""
    raw = tmp_path / "LVBench"
    shard = raw / "videos" / "00000"
    shard.mkdir(parents=True)
    lines = [json.dumps(LINES[0]), "{not json", json.dumps(LINES[1]), json.dumps(LINES[2])]
    (raw / "video_info.meta.jsonl").write_text("\n".join(lines) + "\n")
    clip = video_factory(70, fps=1)
    shutil.copy(clip, shard / "00000000.mp4")
    (shard / "00000000.json").write_text(_v2d_meta("kept_vid_01", 0))
    (shard / "00000001.json").write_text(_v2d_meta("gone_vid_01", 1, "failed_to_download", "ERROR: [youtube]: Video unavailable"))
    shutil.copy(clip, shard / "00000002.mp4")
    (raw / "videos" / "00000.parquet").write_bytes(b"PAR1")  # video2dataset's shard table and stats, not read
    (raw / "videos" / "00000_stats.json").write_text("{}")
    return raw


def test_the_official_download_layout_maps_numbered_files_to_keys(official_release, tmp_path, capsys):
    """Numbered files become the keys' videos: through the URL in each file's JSON, or without one through the position
    of the key in the metadata; the failed download is reported with video2dataset's status and message."""
    assert lvbench.download_order(official_release) == ["kept_vid_01", "gone_vid_01", "fetch_vid_1"]
    found, failed = lvbench.official_videos(official_release)
    shard = official_release / "videos" / "00000"
    assert found == {"kept_vid_01": shard / "00000000.mp4", "fetch_vid_1": shard / "00000002.mp4"}
    assert failed == {"gone_vid_01": "video2dataset: failed_to_download (ERROR: [youtube]: Video unavailable)"}

    instances, excluded = lvbench.convert(official_release, tmp_path / "linked", [64])
    by_id = {inst.source_id: inst for inst in instances}
    assert sorted(by_id) == ["101", "102", "103", "104", "107", "301"]
    assert Path(by_id["101"].video_path).resolve() == (shard / "00000000.mp4").resolve()
    assert Path(by_id["301"].video_path).resolve() == (shard / "00000002.mp4").resolve()
    assert by_id["301"].video_id == "lvbench_fetch_vid_1" and by_id["301"].answers == {64: "A clock"}
    reasons = excluded_reasons(excluded)
    assert reasons["lvbench:201"].endswith("video not downloaded (video2dataset: failed_to_download (ERROR: [youtube]: Video unavailable))")
    assert {row["item"]: row["reason_kind"] for row in excluded}["lvbench:201"] == "missing_video"
    assert reasons["lvbench:video_info.meta.jsonl:2"].startswith("bad line: not valid JSON")

    # fetch leaves the official download's videos alone and asks only for the missing one.
    missing = lvbench.fetch_videos(official_release, "no-such-downloader-xyz -o {out} {key}")
    assert [row["key"] for row in missing] == ["gone_vid_01"]
    assert sorted(path.name for path in (official_release / "videos").iterdir()) == ["00000", "00000.parquet", "00000_stats.json"]


def test_a_numbered_file_follows_the_url_in_its_json_over_its_position(official_release, tmp_path, capsys):
    """The JSON records what was downloaded: a videos.txt made from another copy of the metadata (other order) still maps
    right. A number past the metadata's keys without a JSON matches nothing and is named on stderr."""
    shard = official_release / "videos" / "00000"
    (shard / "00000000.json").write_text(_v2d_meta("fetch_vid_1", 0))
    (shard / "00000002.json").write_text(_v2d_meta("kept_vid_01", 2))
    shutil.copy(shard / "00000000.mp4", shard / "00000007.mp4")
    found, _ = lvbench.official_videos(official_release)
    assert found == {"fetch_vid_1": shard / "00000000.mp4", "kept_vid_01": shard / "00000002.mp4"}
    assert f"{shard / '00000007.mp4'} matches no key of video_info.meta.jsonl" in capsys.readouterr().err
    # videos/<key>.mp4, where fetch or the user put one, comes first.
    shutil.copy(shard / "00000000.mp4", official_release / "videos" / "kept_vid_01.mp4")
    paths, _ = lvbench.locate_videos(official_release, ["kept_vid_01", "fetch_vid_1", "gone_vid_01"])
    assert paths == {
        "kept_vid_01": official_release / "videos" / "kept_vid_01.mp4",
        "fetch_vid_1": shard / "00000000.mp4",
        "gone_vid_01": official_release / "videos" / "gone_vid_01.mp4",
    }
