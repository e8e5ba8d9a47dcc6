"""The curation stages (virtuebench.curation): the three filters, the annotation round trip, the
evidence check and the statistics, on instances and videos the tests make themselves."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from helpers.data import SHARED, make_video
from helpers.vb_test_backends import ScriptedBackend
from PIL import Image

from virtuebench import REFUSAL_ANSWER
from virtuebench.curation import annotation, filters, stats
from virtuebench.curation.__main__ import main as curation_main
from virtuebench.curation.prompts import ANSWERABILITY, DIFFICULTY
from virtuebench.instances import Instance, read_instances, write_instances
from virtuebench.judge.cache import VerdictCache
from virtuebench.judge.rules import RulesJudge
from virtuebench.levels import available_levels
from virtuebench.sources.synthetic import read_second_code


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    root = tmp_path_factory.mktemp("curation_videos")
    short, long = root / "short.mp4", root / "long.mp4"
    make_video(short, 70, fps=1)  # levels: 64
    make_video(long, 140, fps=1)  # levels: 64, 128
    return {"short": (short, 70.0), "long": (long, 140.0)}


def _inst(number: int, videos, answer="red", video="short", question=None, evidence=(), source="mlvu") -> Instance:
    path, duration = videos[video]
    levels = available_levels(duration, [64, 128, 256])
    return Instance(
        instance_id=f"{source}/q{number}",
        video_id=f"{source}_{video}",
        source=source,
        category="perception",
        task_type="colour",
        question=question or f"What colour is object {number}?",
        answer=answer,
        duration_s=duration,
        video_path=str(path),
        answers=dict.fromkeys(levels, answer),
        evidence=[list(e) for e in evidence],
        options=["red", "blue"],
        source_id=f"q{number}",
    )


def _llm(tmp_path, stage="answerability", **settings) -> filters.LlmFilter:
    backend = ScriptedBackend({"calls_file": str(tmp_path / "calls.txt"), **settings})
    return filters.LlmFilter(stage, "scripted", "fp1", backend, VerdictCache(tmp_path / "cache"), max_concurrency=2)


def _calls(tmp_path) -> list[str]:
    path = tmp_path / "calls.txt"
    return [line.split("\t")[0] for line in path.read_text().splitlines()] if path.exists() else []


def test_answer_length_filter_keeps_six_words_and_removes_seven(videos):
    kept = _inst(1, videos, answer="one two three four five six")
    removed = _inst(2, videos, answer="one two three four five six seven")
    result = filters.filter_answer_length([kept, removed], max_words=6)
    assert [inst.instance_id for inst in result.kept] == ["mlvu/q1"]
    assert result.removed == [{"instance_id": "mlvu/q2", "source": "mlvu", "decision": "discard", "reason": "answer has 7 words (> 6)"}]
    assert result.summary() == {"stage": "answer_length", "n_in": 2, "n_removed": 1, "n_invalid": 0, "n_out": 1}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Keep", "keep"),
        ("Discard.", "discard"),
        ('"keep"', "keep"),
        ("**Discard**", "discard"),
        ("Keep or Discard", None),
        ("I think this question should be kept: Keep", None),
        ("", None),
        ("Maybe", None),
    ],
)
def test_keep_discard_parsing_accepts_only_one_decision(reply, expected):
    assert filters.parse_keep_discard(reply) == expected


def test_answerability_filter_decides_records_invalid_replies_and_caches(tmp_path, videos):
    instances = [_inst(i, videos, question=f"Question {i}?") for i in range(4)]
    replies = {"Question 0?": "Keep", "Question 1?": "Discard", "Question 2?": "It depends on the options."}
    result = filters.filter_answerability(instances, _llm(tmp_path, replies=replies, default="keep"))
    assert [inst.instance_id for inst in result.kept] == ["mlvu/q0", "mlvu/q3"]
    removed = {row["instance_id"]: row for row in result.removed}
    assert removed["mlvu/q1"]["decision"] == "discard"
    assert removed["mlvu/q2"]["decision"] == "invalid" and "neither Keep nor Discard" in removed["mlvu/q2"]["reason"]
    assert result.summary()["n_invalid"] == 1
    # The prompt sent is the supplementary's, filled with the question and the full-video answer.
    assert sorted(_calls(tmp_path)) == [f"mlvu/q{i}" for i in range(4)]
    decisions = {record["instance_id"]: record for record in result.decisions}
    assert decisions["mlvu/q2"]["reply"] == "It depends on the options."
    # An unchanged rerun asks nothing: every decision, the invalid one included, is cached.
    again = filters.filter_answerability(instances, _llm(tmp_path, replies={}, default="Discard"))
    assert [inst.instance_id for inst in again.kept] == ["mlvu/q0", "mlvu/q3"] and len(_calls(tmp_path)) == 4
    # A changed question is asked again.
    changed = [*instances[:3], _inst(3, videos, question="A new question?")]
    filters.filter_answerability(changed, _llm(tmp_path, default="Discard"))
    assert _calls(tmp_path)[4:] == ["mlvu/q3"]


def test_answerability_prompt_is_filled_verbatim(videos):
    request = filters.answerability_request(_inst(1, videos, answer="blue", question="What colour is the car?"))
    assert request.frames == []
    assert request.prompt == ANSWERABILITY.replace("{question}", "What colour is the car?").replace("{answer}", "blue")
    assert request.prompt.endswith("Here is the question: What colour is the car?\n\nReference answer: blue")


def test_a_failed_request_fails_the_filter_and_a_rerun_asks_only_it(tmp_path, videos):
    instances = [_inst(i, videos) for i in range(5)]
    with pytest.raises(filters.FilterRequestsFailed, match=r"1 request\(s\) to scripted failed .*mlvu/q2.*rerun"):
        filters.filter_answerability(instances, _llm(tmp_path, default="Keep", fail_on=["mlvu/q2"]))
    assert sorted(_calls(tmp_path)) == [f"mlvu/q{i}" for i in range(5)]
    result = filters.filter_answerability(instances, _llm(tmp_path, default="Keep"))
    assert _calls(tmp_path)[5:] == ["mlvu/q2"] and len(result.kept) == 5


def test_difficulty_filter_asks_with_one_random_frame_and_discards_correct_answers(tmp_path, videos):
    instances = [
        _inst(1, videos, answer="red", question="What colour is the ball?"),
        _inst(2, videos, answer="blue", question="What colour is the hat?"),
        _inst(3, videos, answer="three", question="How many cars pass?", video="long"),
        _inst(4, videos, answer="a dog", question="What animal appears?", video="long"),
    ]
    replies = {"ball": "Red.", "hat": "green", "cars": "I don't know.", "animal": "I DON'T KNOW"}
    llm = _llm(tmp_path, stage="difficulty", replies=replies)
    result = filters.filter_difficulty(instances, llm, RulesJudge(), "rules", tmp_path / "frames", seed=7)
    assert [inst.instance_id for inst in result.kept] == ["mlvu/q2", "mlvu/q3", "mlvu/q4"]
    assert result.removed[0]["instance_id"] == "mlvu/q1" and "answered correctly from one frame" in result.removed[0]["reason"]
    # One frame per video, the one the seed picks, read back from the second code it carries.
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert all(line.endswith("\t1") for line in calls)
    for video in ("short", "long"):
        second = filters.random_second(f"mlvu_{video}", videos[video][1], seed=7)
        assert read_second_code(Image.open(tmp_path / "frames" / f"mlvu_{video}_{second:05d}_448.jpg")) == second
    # The seed decides the frame; another seed picks another one for at least one video, and shows it.
    other = next(
        seed for seed in range(8, 40) if filters.random_second("mlvu_short", 70.0, seed) != filters.random_second("mlvu_short", 70.0, 7)
    )
    filters.filter_difficulty(
        instances[:1], _llm(tmp_path, stage="difficulty", replies=replies), RulesJudge(), "rules", tmp_path / "frames", seed=other
    )
    second = filters.random_second("mlvu_short", 70.0, other)
    assert read_second_code(Image.open(tmp_path / "frames" / f"mlvu_short_{second:05d}_448.jpg")) == second
    assert {filters.random_second(f"v{i}", 3600, 7) for i in range(5)} != {filters.random_second(f"v{i}", 3600, 8) for i in range(5)}


def test_the_single_frames_size_is_a_setting_that_asks_again(tmp_path, videos):
    """curation.filter_frame_max_side: the frame shrunk to the size (128x72 -> 32x18), kept as decoded with None; each
    size is its own file and its own cached decision, so a new size asks the model again and the default asks nothing."""
    instances = [_inst(1, videos, answer="blue", question="What colour is the hat?")]
    second = filters.random_second("mlvu_short", 70.0, seed=0)
    sizes = {}
    for max_side in (filters.FILTER_FRAME_MAX_SIDE, 32, None, filters.FILTER_FRAME_MAX_SIDE):
        filters.filter_difficulty(instances, _llm(tmp_path, stage="difficulty"), RulesJudge(), "rules", tmp_path / "f", max_side=max_side)
        with Image.open(tmp_path / "f" / filters.single_frame_name("mlvu_short", second, max_side)) as image:
            sizes[max_side] = image.size
    assert sizes == {448: (128, 72), 32: (32, 18), None: (128, 72)}  # the test video is smaller than 448 px
    assert sorted(path.name for path in (tmp_path / "f").iterdir()) == [
        f"mlvu_short_{second:05d}_{suffix}.jpg" for suffix in ("32", "448", "full")
    ]
    assert _calls(tmp_path) == ["mlvu/q1"] * 3  # 448, 32, as decoded; 448 again is cached


def test_the_cli_reads_the_frame_size_or_none(tmp_path, capsys):
    from virtuebench.curation.__main__ import _max_side

    assert (_max_side("448"), _max_side("none"), _max_side("None")) == (448, None, None)
    with pytest.raises(SystemExit):
        curation_main(["difficulty", "x.parquet", "--frame-max-side", "8"])
    assert "'8' is not a size of at least 16 px, nor none" in capsys.readouterr().err


def test_difficulty_filter_records_a_broken_video_as_invalid(tmp_path, videos):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video")
    inst = Instance("mlvu/b", "mlvu_broken", "mlvu", "perception", "colour", "Q?", "red", 70.0, str(broken), {64: "red"})
    result = filters.filter_difficulty([inst, _inst(1, videos)], _llm(tmp_path, stage="difficulty"), RulesJudge(), "rules", tmp_path / "f")
    assert result.removed[0]["instance_id"] == "mlvu/b" and result.removed[0]["decision"] == "invalid"
    assert "single frame unavailable" in result.removed[0]["reason"] and _calls(tmp_path) == ["mlvu/q1"]


@pytest.mark.skipif(not (SHARED / "seeds").is_dir(), reason="needs shared/seeds beside the repository")
def test_curation_prompts_are_the_supplementarys_verbatim():
    (seed,) = (SHARED / "seeds").glob("004_*.txt")
    text = re.sub(r"\s+", " ", seed.read_text())
    for prompt in (ANSWERABILITY, DIFFICULTY):
        assert re.sub(r"\s+", " ", prompt) in text


# ---------------------------------------------------------------------------------------------
# Annotation round trip


def test_evidence_timestamps_parse_into_half_open_second_intervals():
    for text in ("0:15-0:19; 1:20", "1:02:03-1:02:09", "0:01.5-0:02.25"):
        assert annotation.format_evidence(annotation.parse_evidence(text)) == text
    assert annotation.parse_evidence("0:15-0:19; 1:20, 1:02:03") == [[15, 20], [80, 81], [3723, 3724]]
    assert annotation.parse_evidence("") == [] and annotation.parse_evidence("none") == []
    assert annotation.parse_evidence("1:20.5") == [[80.5, 81.5]] and annotation.parse_evidence("0:10-0:10") == [[10, 11]]
    with pytest.raises(ValueError, match="'ab' is not a time"):
        annotation.parse_evidence("ab")
    with pytest.raises(ValueError, match="ends before it starts"):
        annotation.parse_evidence("0:20-0:10")


def _drafts(kept, level_answers):
    return {
        (inst.instance_id, level): {"instance_id": inst.instance_id, "level": level, "response": level_answers(inst, level), "error": None}
        for inst in kept
        for level in inst.answers
    }


def _read_batch(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _write_batch(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_export_import_round_trip_with_evidence_check(tmp_path, videos):
    kept = [_inst(1, videos), _inst(2, videos, video="long", evidence=[[60, 63]]), _inst(3, videos, video="long"), _inst(4, videos)]
    drafts = _drafts(kept, lambda inst, level: f"Answer: green\nEvidence: 0:{level % 60:02d}")
    files = annotation.export_batches(kept, drafts, [64, 128], "results/frames", tmp_path / "batches", batch_size=3)
    assert [path.name for path in files] == ["batch_001.csv", "batch_002.csv"]
    rows = _read_batch(files[0]) + _read_batch(files[1])
    by_id = {row["instance_id"]: row for row in rows}
    assert set(by_id) == {"mlvu/q1", "mlvu/q2", "mlvu/q3", "mlvu/q4"}
    long_row = by_id["mlvu/q2"]
    assert long_row["draft_64"] == "green" and long_row["draft_evidence_128"] == "0:08"
    assert long_row["frames_128"] == str(Path("results/frames/mlvu_long/128")) and long_row["full_video_answer"] == "red"
    assert by_id["mlvu/q1"]["draft_128"] == "" and by_id["mlvu/q1"]["frames_128"] == ""  # 70 s: no level 128
    assert long_row["options"] == "red | blue" and long_row["decision"] == "keep" and long_row["answer_64"] == ""
    assert long_row["evidence"] == "1:00-1:02" and by_id["mlvu/q1"]["evidence"] == ""  # the source's timestamps

    # The annotators' work: answers per level, evidence, one question discarded; each row annotated and reviewed.
    for row in rows:
        row.update(annotator="ann1", reviewer="rev1")
    by_id["mlvu/q1"].update(answer_64="Red", evidence="0:30")
    # Level 64 of a 140 s video samples every ~2.2 s; evidence at 0:01-0:01 is seen at 128 only if sampled.
    by_id["mlvu/q2"].update(answer_64="the video does not provide enough information", answer_128="red", evidence="2:15-2:19")
    by_id["mlvu/q3"].update(decision="discard")
    by_id["mlvu/q4"].update(answer_64="blue")  # not in a verified file: left out
    verified = tmp_path / "verified"
    verified.mkdir()
    _write_batch(verified / "a.csv", [by_id["mlvu/q1"], by_id["mlvu/q2"]])
    _write_batch(verified / "b.csv", [by_id["mlvu/q3"]])
    result = annotation.import_annotations(kept, verified, [64, 128])
    final = {inst.instance_id: inst for inst in result.instances}
    assert set(final) == {"mlvu/q1", "mlvu/q2"}
    assert final["mlvu/q1"].answers == {64: "Red"} and final["mlvu/q1"].evidence == [[30.0, 31.0]]
    assert final["mlvu/q2"].answers == {64: REFUSAL_ANSWER, 128: "red"}
    status = {row["instance_id"]: row["status"] for row in result.report}
    assert status == {"mlvu/q1": "verified", "mlvu/q2": "verified", "mlvu/q3": "discarded", "mlvu/q4": "left_out"}
    # The evidence check: 2:15-2:19 holds a 64-frame timestamp of a 140 s video (every ~2.2 s), so the
    # annotated refusal at 64 disagrees with the evidence; 0:30 is seen at 64 (answer given): agrees.
    from virtuebench.levels import evidence_is_seen, level_timestamps

    assert evidence_is_seen([[135, 140]], level_timestamps(64, 140.0))
    assert result.checks == [
        {"instance_id": "mlvu/q2", "level": 64, "annotated": "unanswerable", "evidence_says": "answerable", "evidence": "2:15-2:19"}
    ]


#: A row as an annotator returns it: answered, with evidence, annotated and reviewed by two people.
GOOD = {"answer_64": "red", "evidence": "0:30", "annotator": "ann1", "reviewer": "rev1"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"instance_id": "mlvu/q9"}, "a.csv:2: instance_id 'mlvu/q9' is not among the kept questions"),
        ({"answer_64": ""}, "a.csv:2: column answer_64: empty, but level 64 is available for mlvu_short"),
        ({"answer_128": "red"}, "a.csv:2: column answer_128: level 128 is unavailable for mlvu_short"),
        ({"evidence": "soon"}, "a.csv:2: column evidence: 'soon' is not a time"),
        ({"decision": "maybe"}, "a.csv:2: column decision: 'maybe' is not one of"),
        # The paper's evidence timestamps (section 3.2): required, and within the 70 s video (seconds 0:00 to 1:09).
        ({"evidence": ""}, "a.csv:2: column evidence: empty, but the evidence's timestamps are required"),
        ({"evidence": "none"}, "a.csv:2: column evidence: 'none', but the evidence's timestamps are required"),
        ({"evidence": "1:05-1:10"}, "a.csv:2: column evidence: 1:05-1:10 is past the end of mlvu_short (1:10, 70.0 s)"),
        ({"evidence": "0:10; 2:00"}, "a.csv:2: column evidence: 2:00 is past the end of mlvu_short"),
        # The paper's two annotators: the first annotates, a second verifies.
        ({"annotator": " "}, "a.csv:2: column annotator: empty, but the first annotator must be named"),
        ({"reviewer": ""}, "a.csv:2: column reviewer: empty, but a second annotator must verify the row"),
        ({"reviewer": "ANN1"}, "a.csv:2: column reviewer: 'ANN1' names the annotator 'ann1', but the reviewer must be a second person"),
    ],
)
def test_a_malformed_verified_batch_names_file_row_and_column(tmp_path, videos, edit, message):
    kept = [_inst(1, videos)]
    (path,) = annotation.export_batches(kept, {}, [64, 128], "frames", tmp_path / "batches")
    row = {**_read_batch(path)[0], **GOOD, **edit}
    (tmp_path / "v").mkdir()
    _write_batch(tmp_path / "v" / "a.csv", [row])
    with pytest.raises(annotation.AnnotationError, match=re.escape(message)):
        annotation.import_annotations(kept, tmp_path / "v", [64, 128])


def test_every_bad_row_is_named_once_before_anything_is_imported(tmp_path, videos):
    """Three rows wrong in several ways, one good, a file without the reviewer column: one line per bad row (each
    naming its file, line and every column at fault) and one for the file, all in one error."""
    kept = [_inst(n, videos) for n in range(1, 5)]
    (path,) = annotation.export_batches(kept, {}, [64], "frames", tmp_path / "batches")
    rows = [{**row, **GOOD} for row in _read_batch(path)]
    rows[0].update(evidence="", reviewer="")
    rows[2].update(answer_64="", annotator="")
    rows[3].update(decision="discard", evidence="", answer_64="")  # a discarded row needs no evidence, but two people
    rows[3].update(reviewer="ann1")
    (tmp_path / "v").mkdir()
    _write_batch(tmp_path / "v" / "a.csv", rows)
    _write_batch(tmp_path / "v" / "b.csv", [{k: v for k, v in rows[1].items() if k != "reviewer"}])
    with pytest.raises(annotation.AnnotationError) as error:
        annotation.import_annotations(kept, tmp_path / "v", [64])
    lines = str(error.value).splitlines()
    assert lines[0] == "4 rows or files need fixing (docs/annotation.md):"
    where = str(tmp_path / "v")
    assert [line.strip() for line in lines[1:]] == [
        f"{where}/a.csv:2: column reviewer: empty, but a second annotator must verify the row; "
        "column evidence: empty, but the evidence's timestamps are required (e.g. 0:15-0:19)",
        f"{where}/a.csv:4: column annotator: empty, but the first annotator must be named; "
        "column answer_64: empty, but level 64 is available for mlvu_short",
        f"{where}/a.csv:5: column reviewer: 'ann1' names the annotator 'ann1', but the reviewer must be a second person",
        f"{where}/b.csv: missing column(s) ['reviewer']",
    ]
    rows[0].update(evidence="0:30", reviewer="rev1; rev2")  # two reviewers are fine
    rows[2].update(answer_64="red", annotator="ann2")
    rows[3].update(reviewer="rev1")
    _write_batch(tmp_path / "v" / "a.csv", rows)
    (tmp_path / "v" / "b.csv").unlink()
    result = annotation.import_annotations(kept, tmp_path / "v", [64])
    assert {row["instance_id"]: row["status"] for row in result.report} == {
        "mlvu/q1": "verified",
        "mlvu/q2": "verified",
        "mlvu/q3": "verified",
        "mlvu/q4": "discarded",
    }


def test_a_batch_saved_in_another_encoding_is_named(tmp_path, videos):
    kept = [_inst(1, videos)]
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "excel.csv").write_bytes("instance_id,decision,evidence,answer_64\nmlvu/q1,keep,,it\u2019s red\n".encode("cp1252"))
    with pytest.raises(annotation.AnnotationError, match=r"excel.csv: not UTF-8 .*save it as 'CSV UTF-8'"):
        annotation.import_annotations(kept, tmp_path / "v", [64])


def test_a_question_annotated_twice_is_refused(tmp_path, videos):
    kept = [_inst(1, videos)]
    (path,) = annotation.export_batches(kept, {}, [64], "frames", tmp_path / "batches")
    row = {**_read_batch(path)[0], **GOOD}
    (tmp_path / "v").mkdir()
    _write_batch(tmp_path / "v" / "a.csv", [row])
    _write_batch(tmp_path / "v" / "b.csv", [row])
    with pytest.raises(annotation.AnnotationError, match=r"b.csv:2: instance_id 'mlvu/q1' is also annotated at .*a.csv:2"):
        annotation.import_annotations(kept, tmp_path / "v", [64])


def test_import_cli_needs_verified_files_unless_drafts_are_allowed(tmp_path, videos, capsys):
    kept = [_inst(1, videos), _inst(2, videos, video="long")]
    write_instances(kept, tmp_path / "kept.parquet")
    drafts_file = tmp_path / "drafts.jsonl"
    with open(drafts_file, "w") as handle:
        for record in _drafts(kept, lambda inst, level: "blue" if level == 64 else f"{REFUSAL_ANSWER}\nEvidence: none").values():
            handle.write(json.dumps(record) + "\n")
    outputs = ["--out", str(tmp_path / "i.parquet"), "--report", str(tmp_path / "r.csv"), "--check", str(tmp_path / "c.csv")]
    common = [
        "import",
        "--kept",
        str(tmp_path / "kept.parquet"),
        "--verified",
        str(tmp_path / "none"),
        "--drafts",
        str(drafts_file),
        "--batches",
        str(tmp_path / "batches"),
        "--levels",
        "64",
        "128",
        *outputs,
    ]
    assert curation_main(common) == 1
    assert "no verified annotations in" in capsys.readouterr().err
    assert curation_main([*common, "--allow-drafts"]) == 0
    assert "2 instances carry UNVERIFIED draft answers" in capsys.readouterr().err
    final = {inst.instance_id: inst.answers for inst in read_instances(tmp_path / "i.parquet")}
    assert final == {"mlvu/q1": {64: "blue"}, "mlvu/q2": {64: "blue", 128: REFUSAL_ANSWER}}


def test_statistics_count_sources_categories_and_unanswerable_clips(videos):
    one = _inst(1, videos, video="long")
    two = Instance(
        **{
            **one.__dict__,
            "instance_id": "lvbench/x",
            "source": "lvbench",
            "category": "reasoning",
            "answers": {64: REFUSAL_ANSWER, 128: "red"},
        }
    )
    three = Instance(
        **{
            **one.__dict__,
            "instance_id": "lvbench/y",
            "source": "lvbench",
            "video_id": "other",
            "duration_s": 70.0,
            "answers": {64: REFUSAL_ANSWER},
        }
    )
    rows = stats.composition([one, two, three])
    assert rows == [
        {
            "source": "lvbench",
            "category": "perception",
            "task_type": "colour",
            "n_questions": 1,
            "n_videos": 1,
            "n_clips": 1,
            "n_unanswerable_clips": 1,
        },
        {
            "source": "lvbench",
            "category": "reasoning",
            "task_type": "colour",
            "n_questions": 1,
            "n_videos": 1,
            "n_clips": 2,
            "n_unanswerable_clips": 1,
        },
        {
            "source": "mlvu",
            "category": "perception",
            "task_type": "colour",
            "n_questions": 1,
            "n_videos": 1,
            "n_clips": 2,
            "n_unanswerable_clips": 0,
        },
    ]
    summary = {row["source"]: row for row in stats.source_summary([one, two, three])}
    assert summary["lvbench"]["n_questions"] == 2 and summary["lvbench"]["n_videos"] == 2
    assert summary["lvbench"]["mean_duration_s"] == 105.0 and summary["lvbench"]["share_percent"] == 66.67
    assert summary["total"]["n_questions"] == 3 and summary["total"]["perception"] == 2
    assert "lvbench & 2 & 2 & 1 & 1 & 105.0 & 66.67" in stats.summary_tex(list(summary.values()), "c")


def test_the_papers_counts_stand_beside_the_runs_at_each_stage_and_level(tmp_path, videos):
    """The funnel (merge) and the instances table (stats) counted as the paper counts them, each count beside the
    paper's figure (VirtueBench (arXiv:2603.07071), sections 3.2 and 3.3) with run / paper; written by the CLI as the
    merge_kept and make_stats rules call it."""
    candidates = [_inst(1, videos), _inst(2, videos), _inst(3, videos, video="long"), _inst(4, videos, video="long")]
    kept = candidates[2:]
    summaries = [
        {"source": "mlvu", "stage": "answer_length", "n_in": 4, "n_removed": 1, "n_invalid": 0, "n_out": 3},
        {"source": "mlvu", "stage": "answerability", "n_in": 3, "n_removed": 0, "n_invalid": 0, "n_out": 3},
        {"source": "mlvu", "stage": "difficulty", "n_in": 3, "n_removed": 1, "n_invalid": 0, "n_out": 2},
    ]
    funnel = stats.beside_paper(stats.funnel_counts(candidates, summaries, kept))
    assert [(row["stage"], row["measure"], row["run"], row["paper"], row["ratio"]) for row in funnel] == [
        ("collected", "videos", 2, 3042, "0.001"),
        ("collected", "questions", 4, 33400, "0.000"),
        ("answer_length", "questions", 3, "", ""),
        ("answerability", "questions", 3, "", ""),
        ("difficulty", "questions", 2, 2500, "0.001"),
        ("difficulty", "videos", 1, "", ""),
    ]
    assert "approximately 2,500" in funnel[4]["paper_says"] and funnel[4]["paper_says"].startswith("section 3.2")
    instances = [*kept, _inst(5, videos, source="lvbench")]
    instances[0] = Instance(**{**instances[0].__dict__, "category": "reasoning"})
    instances[1] = Instance(**{**instances[1].__dict__, "answers": {64: REFUSAL_ANSWER, 128: "red"}})  # unanswerable at 64 only
    annotated = {(row["level"], row["measure"]): row for row in stats.beside_paper(stats.annotated_counts(instances))}
    # Beside each level's instances and unanswerable instances, the counts the paper's Tables 1 and 2 imply (issue 50).
    assert {key: (row["run"], row["paper"]) for key, row in annotated.items()} == {
        ("all", "instances"): (3, 1328),
        ("all", "videos"): (2, 901),
        ("64", "instances"): (3, 1328),  # the 70 s and the 140 s videos reach 64 frames, only the 140 s one 128
        ("64", "unanswerable instances"): (1, 510),
        ("128", "instances"): (2, 1191),
        ("128", "unanswerable instances"): (0, 376),
        ("256", "instances"): (0, 1180),
        ("256", "unanswerable instances"): (0, 262),
        ("512", "instances"): (0, 915),
        ("512", "unanswerable instances"): (0, 148),
        ("1024", "instances"): (0, 587),
        ("1024", "unanswerable instances"): (0, 87),
        ("all", "perception questions"): (2, 767),
        ("all", "reasoning questions"): (1, 561),
        ("64", "perception questions"): (2, 751),  # Table 1's implied counts, beside section 3.3's
        ("64", "reasoning questions"): (1, 577),
    }
    assert annotated[("64", "perception questions")]["paper_says"].startswith("implied, not stated: Table 1's 64-frame P / R")
    # report.categories counts a task type in another category, as the scores do; the adapters' otherwise
    remapped = stats.with_categories(instances, {instances[1].task_type: "reasoning"})
    assert [inst.category for inst in remapped] == ["reasoning"] * 3 and [inst.category for inst in instances][1:] == ["perception"] * 2
    assert stats.with_categories(instances, {}) == instances
    assert annotated[("all", "instances")]["ratio"] == "0.002" and annotated[("512", "instances")]["ratio"] == "0.000"
    assert annotated[("64", "unanswerable instances")]["ratio"] == "0.002"
    # Stated and implied alike (section 3.3's 915), said so; the Gemini anomaly named beside the 64-frame counts.
    assert annotated[("512", "instances")]["paper_says"].startswith("section 3.3:")
    assert annotated[("512", "instances")]["paper_says"].endswith(
        "Tables 1 and 2, implied: the count most of their rows at 512 frames fit (each percentage k/n): the same"
    )
    assert "Gemini-2.5-Flash: fits 460 unanswerable of 1,328" in annotated[("64", "unanswerable instances")]["paper_says"]
    assert "rows that fit other counts" not in annotated[("512", "unanswerable instances")]["paper_says"]  # every row fits 148 of 915
    # Every count the paper states has its row; a stage measured without one of them is refused.
    stated = {(count.stage, count.level, count.measure) for count in stats.PAPER_COUNTS}
    assert stated <= {(row["stage"], row["level"], row["measure"]) for row in [*funnel, *annotated.values()]}
    with pytest.raises(ValueError, match=r"the paper's counts \[\('annotated', 'all', 'videos'\)\] have no measured row"):
        stats.beside_paper([row for row in stats.annotated_counts(instances) if row["measure"] != "videos"])

    # Through the CLI, as merge_kept and make_stats run it: the funnel's rows, then the instances'.
    for name, table in (("candidates", candidates), ("kept", kept), ("instances", instances)):
        write_instances(table, tmp_path / f"{name}.parquet")
    for summary in summaries:
        (tmp_path / f"{summary['stage']}.json").write_text(json.dumps(summary))
    merged = [str(tmp_path / "kept.parquet"), "--summaries", *(str(tmp_path / f"{stage}.json") for stage in stats.FILTER_STAGES)]
    out = ["--out", str(tmp_path / "merged.parquet"), "--paper-counts", str(tmp_path / "funnel.csv")]
    assert curation_main(["merge", *merged, *out, "--candidates", str(tmp_path / "candidates.parquet")]) == 0
    assert curation_main(["merge", *merged, *out]) == 1  # the funnel needs the collected candidates
    stat_outputs = [
        "--composition",
        str(tmp_path / "c.csv"),
        "--summary-csv",
        str(tmp_path / "s.csv"),
        "--summary-tex",
        str(tmp_path / "s.tex"),
    ]
    paper = ["--funnel", str(tmp_path / "funnel.csv"), "--paper-counts", str(tmp_path / "paper.csv")]
    mapped = ["--categories", '{"colour": "reasoning"}']  # report.categories, as make_stats passes it
    assert curation_main(["stats", str(tmp_path / "instances.parquet"), *stat_outputs, *paper, *mapped]) == 0
    counted = {(row["level"], row["measure"]): row["run"] for row in _read_batch(tmp_path / "paper.csv")}
    assert counted[("all", "perception questions")] == counted[("64", "perception questions")] == "0"
    assert counted[("all", "reasoning questions")] == "3"
    for bad in ("{", '{"colour": "story"}'):
        assert curation_main(["stats", str(tmp_path / "instances.parquet"), *stat_outputs, *paper, "--categories", bad]) == 2
    assert curation_main(["stats", str(tmp_path / "instances.parquet"), *stat_outputs, *paper]) == 0
    written = _read_batch(tmp_path / "paper.csv")
    assert list(written[0]) == stats.PAPER_COUNT_COLUMNS == ["stage", "level", "measure", "run", "paper", "ratio", "paper_says"]
    assert [row["stage"] for row in written] == ["collected"] * 2 + list(stats.FILTER_STAGES) + ["difficulty"] + ["annotated"] * 16
    assert written[1] == {
        "stage": "collected",
        "level": "all",
        "measure": "questions",
        "run": "4",
        "paper": "33400",
        "ratio": "0.000",
        "paper_says": "section 3.2, Data Collection: the initial collection comprises 3,042 videos and 33,400 questions",
    }
