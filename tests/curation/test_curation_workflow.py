"""The curation chain through Snakemake (config source: virtuebench), offline: two real-layout source
fixtures (LVBench, Video-MME) -> convert -> three filters -> per-level drafts -> annotation batches;
then the annotators' verified batches -> instances -> statistics, Fig. 4 and Table 2.

The filter and reference models are scripted test backends (tests/helpers/vb_test_backends.py), so every
decision below is known in advance and each number can be checked exactly.
"""

from __future__ import annotations

import csv
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from helpers.choices import SWITCHES, check_switch, table_settings
from helpers.data import make_video
from helpers.releases import LONGVIDEOBENCH_ENTRIES, make_mlvu_release, make_videoevalpro_release, make_videomme_release
from helpers.workflow import executed, scheduled, snakemake, workflow_with_rules_version

from virtuebench import REFUSAL_ANSWER
from virtuebench.curation.supplement import forms_of as supplement_forms
from virtuebench.instances import read_instances
from virtuebench.sources import videoevalpro, videomme

pytestmark = pytest.mark.workflow
TESTS = Path(__file__).resolve().parents[1]


def _lvbench_release(root: Path) -> Path:
    """One 140 s video (levels 64 and 128) with five questions, each meant for one fate below."""
    (root / "videos").mkdir(parents=True)
    make_video(root / "videos" / "vid_a.mp4", 140, fps=1)
    qa = [
        # kept; its evidence (1:00) is sampled at both levels
        {
            "uid": 1,
            "question": "What colour is the ball?\n(A) red\n(B) blue",
            "answer": "A",
            "question_type": ["entity recognition"],
            "time_reference": "01:00-01:00",
        },
        # removed by the length filter (ten words)
        {
            "uid": 2,
            "question": "What does the chef say?\n(A) He says that the soup needs a lot more salt\n(B) Nothing",
            "answer": "A",
            "question_type": ["reasoning"],
            "time_reference": "",
        },
        # removed by the Keep/Discard filter
        {
            "uid": 3,
            "question": "Which of the following is true?\n(A) x\n(B) y",
            "answer": "A",
            "question_type": ["reasoning"],
            "time_reference": "",
        },
        # removed by the difficulty filter (answered from one frame)
        {
            "uid": 4,
            "question": "What colour is the hat?\n(A) blue\n(B) green",
            "answer": "A",
            "question_type": ["entity recognition"],
            "time_reference": "",
        },
        # kept
        {
            "uid": 5,
            "question": "How many cars pass?\n(A) 3\n(B) 4",
            "answer": "B",
            "question_type": ["event understanding"],
            "time_reference": "00:10-00:20",
        },
    ]
    line = {"key": "vid_a", "type": "tv", "qa": qa, "video_info": {"duration_minutes": 2.33, "fps": 1.0}}
    (root / "video_info.meta.jsonl").write_text(json.dumps(line) + "\n")
    return root


def _registry(path: Path, calls: Path) -> Path:
    entries = yaml.safe_load((TESTS.parent / "config" / "models.yaml").read_text())
    # First match wins, in this order (the Keep/Discard prompt's own examples hold "Which of the following").
    filter_replies = [
        ["question: Which of the following is true?", "Discard"],
        ["Return exactly one word", "Keep"],
        ["What colour is the hat", "Blue."],
    ]
    path.write_text(
        yaml.safe_dump(
            {
                "refuse": entries["refuse"],
                "guess": entries["guess"],
                "Chooser": {
                    "backend": "helpers.vb_test_backends:ScriptedBackend",  # always option B; "red" to anything open-ended
                    "settings": {"replies": [["Answer with the option's letter", "B"]], "default": "red"},
                },
                "Filter": {
                    "backend": "helpers.vb_test_backends:ScriptedBackend",
                    "settings": {"calls_file": str(calls / "filter.txt"), "replies": filter_replies, "default": "I don't know."},
                },
                "Drafter": {
                    "backend": "helpers.vb_test_backends:ScriptedBackend",
                    "settings": {
                        "calls_file": str(calls / "drafter.txt"),
                        "replies": {"ball": "red\nEvidence: 1:00"},
                        "default": f"{REFUSAL_ANSWER}\nEvidence: none",
                    },
                },
            },
            sort_keys=False,
        )
    )
    return path


@pytest.fixture(scope="module")
def curated(tmp_path_factory):
    root = tmp_path_factory.mktemp("curation")
    calls = root / "calls"
    calls.mkdir()
    clip = root / "clip.mp4"
    make_video(clip, 70, fps=1)
    videomme_raw = make_videomme_release(root / "Video-MME", clip.read_bytes())
    videomme.prepare(videomme_raw)  # a release given by raw_dirs is used as it lies: unpacked, as the download rule leaves it
    # The supplement's other three releases, in their own layouts; videos shorter than 64 s keep their questions there.
    short = root / "short.mp4"
    make_video(short, 20, fps=2)  # 40 frames: the supplement's 64 timestamps show some of them twice
    long_clip = root / "long.mp4"
    make_video(long_clip, 130, fps=1)
    mlvu_raw = make_mlvu_release(root / "MLVU", (short, long_clip))  # plotQA on the 20 s video, count on the 130 s one
    videoevalpro_raw = make_videoevalpro_release(root / "VideoEval-Pro", short.read_bytes())  # four questions, all 20 s
    videoevalpro.prepare(videoevalpro_raw)
    longvideobench_raw = root / "LongVideoBench"  # unpacked, as lvb.prepare leaves it: two good questions on a 70 s video
    (longvideobench_raw / "videos").mkdir(parents=True)
    (longvideobench_raw / "lvb_val.json").write_text(json.dumps(LONGVIDEOBENCH_ENTRIES))
    (longvideobench_raw / "videos" / "vidAAAAAAAA.mp4").write_bytes(clip.read_bytes())
    (longvideobench_raw / "subtitles").mkdir()  # read with supplement.longvideobench_subtitles: interleaved
    (longvideobench_raw / "subtitles" / "vidAAAAAAAA_en.json").write_text(json.dumps([{"timestamp": [10.0, 14.0], "text": "hello there"}]))
    config = {
        "source": {"name": "virtuebench"},
        "curation": {
            "sources": ["lvbench", "video-mme"],
            "raw_dirs": {
                "lvbench": str(_lvbench_release(root / "LVBench")),
                "video-mme": str(videomme_raw),
                "mlvu": str(mlvu_raw),
                "longvideobench": str(longvideobench_raw),
                "videoeval-pro": str(videoevalpro_raw),
            },
            "filter_model": "Filter",
            "reference_model": "Drafter",
            "difficulty_judge": "rules",
        },
        "annotation": {"batch_size": 2, "verified_dir": "annotations/verified"},
        "supplement": {"models": ["refuse", "Chooser"], "sources": ["mlvu", "lvbench", "longvideobench", "videoeval-pro"]},
        "levels": [64, 128],
        "models": ["refuse", "guess", "Chooser"],
        "prompts": ["honest"],
        "judge": "rules",
        "model_registry": str(_registry(root / "registry.yaml", calls)),
    }
    return root, config, calls


@pytest.fixture(scope="module")
def exported(curated):
    root, config, _ = curated
    work = root / "work"
    work.mkdir()
    import os

    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), previous]))
    try:
        result = snakemake(work, "results/annotation/batches", config=config)
        assert result.returncode == 0, result.stderr[-4000:]
        # Without verified annotations the table is not built, and the log says what to do: read now, as the tests
        # that import annotations (the `annotated` fixture) write that log again, in whatever order they come.
        refused = snakemake(work, "results/instances.parquet", config=config)
        yield work, (refused, (work / "logs" / "make_instances.log").read_text())
    finally:
        if previous is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_filters_remove_what_they_should_and_count_it(exported):
    work, _ = exported
    counts = {
        (row["source"], row["stage"]): (int(row["n_in"]), int(row["n_removed"]), int(row["n_out"]))
        for row in _rows(work / "results" / "curation" / "filter_counts.csv")
    }
    assert counts == {
        ("lvbench", "answer_length"): (5, 1, 4),
        ("lvbench", "answerability"): (4, 1, 3),
        ("lvbench", "difficulty"): (3, 1, 2),
        ("video-mme", "answer_length"): (3, 0, 3),
        ("video-mme", "answerability"): (3, 0, 3),
        ("video-mme", "difficulty"): (3, 0, 3),
    }
    removed = {
        row["instance_id"]: row["reason"]
        for stage in ("answer_length", "answerability", "difficulty")
        for row in _rows(work / "results" / "curation" / "lvbench" / f"{stage}_removed.csv")
    }
    assert set(removed) == {"lvbench/2", "lvbench/3", "lvbench/4"}
    assert "10 words" in removed["lvbench/2"] and "answered correctly from one frame" in removed["lvbench/4"]
    kept = read_instances(work / "results" / "curation" / "kept.parquet")
    assert sorted(inst.instance_id for inst in kept) == ["lvbench/1", "lvbench/5", "video-mme/001-1", "video-mme/001-2", "video-mme/002-1"]
    # The funnel, all sources together, beside the paper's counts (VirtueBench, section 3.2).
    paper = {
        (row["stage"], row["measure"]): (row["run"], row["paper"], row["ratio"])
        for row in _rows(work / "results" / "curation" / "paper_counts.csv")
    }
    assert paper == {
        ("collected", "videos"): ("3", "3042", "0.001"),
        ("collected", "questions"): ("8", "33400", "0.000"),
        ("answer_length", "questions"): ("7", "", ""),
        ("answerability", "questions"): ("6", "", ""),
        ("difficulty", "questions"): ("5", "2500", "0.002"),
        ("difficulty", "videos"): ("3", "", ""),
    }
    # The conversion's report: Video-MME's question on a video no chunk holds, and its bad rows.
    excluded = {row["item"] for row in _rows(work / "results" / "sources" / "video-mme" / "excluded.csv")}
    assert "video-mme:003-1" in excluded


def test_drafts_are_asked_at_every_level_with_that_levels_frames(exported, curated):
    calls = curated[2]
    lines = [line.split("\t") for line in (calls / "drafter.txt").read_text().splitlines()]
    asked = {(instance_id, int(n_frames)) for instance_id, n_frames in lines}
    # The 140 s LVBench video has levels 64 and 128; Video-MME's 70 s videos have 64 only.
    assert asked == {
        ("lvbench/1", 64),
        ("lvbench/1", 128),
        ("lvbench/5", 64),
        ("lvbench/5", 128),
        ("video-mme/001-1", 64),
        ("video-mme/001-2", 64),
        ("video-mme/002-1", 64),
    }
    assert len(lines) == len(asked)  # each once


def test_without_verified_annotations_the_table_is_refused(exported):
    _, (refused, log) = exported
    assert refused.returncode != 0
    assert "no verified annotations in annotations/verified" in log and "docs/annotation.md" in log


@pytest.fixture(scope="module")
def annotated(exported, curated):
    """The annotators: accept each draft, but mark the ball unanswerable at 64 frames (against its evidence); every row
    carries evidence timestamps, an annotator and a reviewer, as import requires."""
    work, _ = exported
    _, config, _ = curated
    verified = work / "annotations" / "verified"
    verified.mkdir(parents=True)
    batches = sorted((work / "results" / "annotation" / "batches").glob("batch_*.csv"))
    assert len(batches) == 3  # five questions, two per batch
    for batch in batches:
        rows = _rows(batch)
        for row in rows:
            for level in (64, 128):
                if row[f"frames_{level}"]:
                    row[f"answer_{level}"] = row[f"draft_{level}"]
            # The drafts' evidence where they give any, else the source's own timestamps (export's), else a moment seen;
            # annotated by one person and reviewed by another (the paper's two annotators).
            drafted = row["draft_evidence_128"] or row["draft_evidence_64"]
            row["evidence"] = drafted if drafted != "none" else row["evidence"] or "0:05"
            row.update(annotator="ann1", reviewer="rev1")
            if row["instance_id"] == "lvbench/1":
                row["answer_64"] = REFUSAL_ANSWER
            if row["instance_id"] == "video-mme/002-1":
                row["decision"] = "discard"
        with open(verified / batch.name, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    import os

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    result = snakemake(
        work, "results/table2.tex", "results/fig4.png", "results/stats/sources.csv", "results/supplement/table1.tex", config=config
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return work


def test_verified_answers_become_the_instances_and_the_evidence_check_flags_disagreement(annotated):
    instances = {inst.instance_id: inst for inst in read_instances(annotated / "results" / "instances.parquet")}
    assert sorted(instances) == ["lvbench/1", "lvbench/5", "video-mme/001-1", "video-mme/001-2"]  # 002-1 discarded
    ball = instances["lvbench/1"]
    assert ball.answers == {64: REFUSAL_ANSWER, 128: "red"} and ball.evidence == [[60.0, 61.0]]
    assert ball.source_id == "1" and ball.options == ["red", "blue"] and ball.answer == "red"
    assert instances["lvbench/5"].answers == {64: REFUSAL_ANSWER, 128: REFUSAL_ANSWER}
    check = _rows(annotated / "results" / "annotation" / "answerability_check.csv")
    # The ball marked unanswerable at 64 against its evidence; and the drafts' refusals the annotators accepted where
    # the evidence they gave (now required) is among the level's frames.
    disagreeing = [("lvbench/1", "64", "1:00"), ("lvbench/5", "64", "0:10-0:20"), ("lvbench/5", "128", "0:10-0:20")]
    disagreeing += [("video-mme/001-1", "64", "0:05"), ("video-mme/001-2", "64", "0:05")]
    assert check == [
        {"instance_id": instance_id, "level": level, "annotated": "unanswerable", "evidence_says": "answerable", "evidence": evidence}
        for instance_id, level, evidence in disagreeing
    ]
    report = {row["instance_id"]: row["status"] for row in _rows(annotated / "results" / "instances_excluded.csv")}
    assert report["video-mme/002-1"] == "discarded" and report["lvbench/1"] == "verified"


def test_statistics_and_tables_come_from_the_curated_instances(annotated):
    sources = {row["source"]: row for row in _rows(annotated / "results" / "stats" / "sources.csv")}
    assert (sources["lvbench"]["n_questions"], sources["video-mme"]["n_questions"], sources["total"]["n_questions"]) == ("2", "2", "4")
    # The whole comparison with the paper: the funnel's rows, then the instances table's (section 3.3).
    paper = _rows(annotated / "results" / "stats" / "paper_counts.csv")
    table = read_instances(annotated / "results" / "instances.parquet")
    unanswerable = {level: str(sum(inst.is_unanswerable(level) for inst in table if level in inst.answers)) for level in (64, 128)}
    assert paper[:6] == _rows(annotated / "results" / "curation" / "paper_counts.csv")
    assert {(row["level"], row["measure"]): (row["run"], row["paper"]) for row in paper[6:]} == {
        ("all", "instances"): ("4", "1328"),
        ("all", "videos"): ("2", "901"),  # vid_a and Video-MME's 001
        ("64", "instances"): ("4", "1328"),  # beside it, the counts the paper's Tables 1 and 2 imply
        ("64", "unanswerable instances"): (unanswerable[64], "510"),
        ("128", "instances"): ("2", "1191"),  # the 140 s LVBench video; Video-MME's are 70 s
        ("128", "unanswerable instances"): (unanswerable[128], "376"),
        ("256", "instances"): ("0", "1180"),
        ("256", "unanswerable instances"): ("0", "262"),
        ("512", "instances"): ("0", "915"),
        ("512", "unanswerable instances"): ("0", "148"),
        ("1024", "instances"): ("0", "587"),
        ("1024", "unanswerable instances"): ("0", "87"),
        ("all", "perception questions"): (sources["total"]["perception"], "767"),
        ("all", "reasoning questions"): (sources["total"]["reasoning"], "561"),
        ("64", "perception questions"): (sources["total"]["perception"], "751"),  # every instance reaches 64: Table 1's fit
        ("64", "reasoning questions"): (sources["total"]["reasoning"], "577"),
    }
    fig4 = _rows(annotated / "results" / "fig4.csv")
    assert fig4, "fig4.csv is empty"
    table2 = (annotated / "results" / "table2.tex").read_text()
    assert "refuse &" in table2 and "guess &" in table2
    # Every kept video had its frames extracted at each level it has (a manifest per level folder).
    manifests = sorted({path.parent.parent.name for path in (annotated / "results" / "frames").glob("*/*/manifest.json")})
    assert manifests == ["lvbench_vid_a", "video-mme_Zt0pQ3vY9Kc", "video-mme_fFjv93ACGo8"]


def test_supplement_table_scores_mcq_by_letter_and_oe_by_the_judge(annotated):
    rows = {row["model"]: row for row in _rows(annotated / "results" / "supplement" / "table1.csv")}
    # Every question with options, 64 frames over every video: MLVU's two (correct letters B, B; one on the
    # 20 s video), LVBench's five (A, A, A, A, B), LongVideoBench's two (C, B) and VideoEval-Pro's four
    # (all on 20 s videos, one with a qa_type the adapter does not know, kept; open-ended only, as in the paper's
    # table, against the release's own gold text).
    # Chooser always says "B"; to open-ended questions it says "red", LVBench question 1's answer.
    chooser = rows["Chooser"]
    sources = ("mlvu", "lvbench", "longvideobench", "videoeval-pro")
    assert [chooser[f"{source}_oe_n"] for source in sources] == ["2", "5", "2", "4"]
    assert [chooser[f"{source}_mcq"] for source in sources[:3]] == ["100.0", "20.0", "50.0"]
    assert [chooser[f"{source}_oe"] for source in sources] == ["0.0", "20.0", "0.0", "0.0"]
    assert "videoeval-pro_mcq" not in chooser
    assert rows["refuse"]["lvbench_mcq"] == "0.0" and rows["refuse"]["lvbench_oe"] == "0.0"
    # The VirtueBench column is each model's overall at 64 frames in scores.csv.
    scores = [
        row
        for row in _rows(annotated / "results" / "scores.csv")
        if row["model"] == "Chooser" and row["level"] == "64" and row["subset"] == "overall" and row["prompt"] == "honest"
    ]
    assert float(chooser["virtuebench_overall"]) == float(scores[0]["accuracy"])
    table = (annotated / "results" / "supplement" / "table1.tex").read_text()
    assert f"Chooser & 0.00 & 100.00 & 20.00 & 20.00 & 0.00 & 50.00 & 0.00 & {float(scores[0]['accuracy']):.2f}" in table
    assert r"\multicolumn{1}{c}{VideoEval-Pro}" in table and r"& OE & MCQ & OE & MCQ & OE & MCQ & OE & Overall \\" in table
    for name in ("MLVU", "LVBench", "LongVideoBench", "VideoEval-Pro", "VirtueBench"):
        assert name in table, name
    # A 20 s video gets 64 frames over its whole length (clip sampling), apart from VirtueBench's 1 FPS frames.
    manifest = json.loads(
        (annotated / "results" / "supplement" / "frames" / "videoeval-pro" / "videoeval-pro_fFjv93ACGo8" / "manifest.json").read_text()
    )
    assert manifest["sampling"] == "clip" and manifest["duration_s"] < 64 and len(manifest["levels"]["64"]["files"]) == 64
    assert not (annotated / "results" / "frames" / "videoeval-pro_fFjv93ACGo8").exists()


def _supplement_commands(result, module: str) -> list[str]:
    """The shell commands a dry run (-n -p) would run for the supplement with `python -m <module>`."""
    text = result.stdout + result.stderr
    return [line for line in text.splitlines() if f"-m {module} " in line and "results/supplement/" in line]


def test_the_supplement_prompt_settings_are_the_prompts_its_inference_jobs_ask_with(annotated, curated):
    """supplement.oe_prompt changed: exactly the open-ended inference jobs (two models, four sources) run again, each
    asking with the new prompt; the MCQ ones (mcq_prompt unchanged) do not. And the other way round."""
    _, config, _ = curated
    models, sources = config["supplement"]["models"], config["supplement"]["sources"]
    for key, form, other in (("oe_prompt", "oe", "mcq"), ("mcq_prompt", "mcq", "oe")):
        changed = {**config, "supplement": {**config["supplement"], key: "plain"}}
        result = snakemake(annotated, "-n", "-p", "results/supplement/table1.tex", config=changed)
        assert result.returncode == 0, result.stderr[-3000:]
        asked = {
            (re.search(r"--out results/supplement/responses/(\S+)\.jsonl", command)[1], re.search(r"--prompt (\S+)", command)[1])
            for command in _supplement_commands(result, "virtuebench.inference")
        }
        print(f"\nsupplement.{key}: plain -> {sorted(asked)}")
        # VideoEval-Pro has no MCQ column
        expected = {(f"{m}/{s}/{form}", "plain") for m in models for s in sources if form in supplement_forms(s)}
        assert asked == expected and not [name for name, _ in asked if name.endswith(f"/{other}")]


def test_the_short_video_frame_rule_changes_the_supplement_frames_extracted(annotated, curated):
    """short_video_frames: cap re-extracts every supplement video's frames with clip-capped sampling (one per whole
    second of a video shorter than the level: tests/test_frames.py) and asks the models again; repeat, the
    default, is what the run used (clip)."""
    _, config, _ = curated
    changed = {**config, "supplement": {**config["supplement"], "short_video_frames": "cap"}}
    result = snakemake(annotated, "-n", "-p", "results/supplement/table1.tex", config=changed)
    assert result.returncode == 0, result.stderr[-3000:]
    frames = _supplement_commands(result, "virtuebench.frames")
    extracted = {re.search(r"(results/supplement/frames/\S+)", command)[1] for command in frames}
    existing = {str(path.relative_to(annotated)) for path in (annotated / "results" / "supplement" / "frames").glob("*/*") if path.is_dir()}
    print(f"\nshort_video_frames cap: {len(frames)} frame jobs, e.g. {frames[0][:200]}")
    assert extracted == existing and all("--sampling clip-capped" in command for command in frames)
    assert len(_supplement_commands(result, "virtuebench.inference")) == sum(
        len(supplement_forms(source)) for source in config["supplement"]["sources"]
    ) * len(config["supplement"]["models"])
    manifest = json.loads(next((annotated / "results" / "supplement" / "frames").glob("*/*/manifest.json")).read_text())
    assert manifest["sampling"] == "clip"


def test_the_filtered_question_pool_runs_the_curation_filters_for_each_source_and_sets_only_what_they_keep(annotated, curated):
    """question_pool: filtered. The answer-length and Keep/Discard filters run on each source's supplement candidates
    (clip sampling: a question on a video shorter than the smallest level is filtered, not dropped), not on the
    curation's 1 FPS ones, so they run for all three sources with options, curation source (LVBench) or not; each
    makes its sets from that source's kept questions (--pool); VideoEval-Pro, open-ended by design, keeps every
    question, so its sets are not made again. The curation's own filters do not run again."""
    from helpers.workflow import scheduled

    _, config, _ = curated
    changed = {**config, "supplement": {**config["supplement"], "question_pool": "filtered"}}
    result = snakemake(annotated, "-n", "-p", "results/supplement/table1.tex", config=changed)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = scheduled(result)
    print(f"\nquestion_pool filtered: {dict(jobs)}")
    assert jobs["filter_supplement_answer_length"] == jobs["filter_supplement_answerability"] == 3  # mlvu, lvbench, longvideobench
    assert not jobs["filter_answer_length"] and not jobs["filter_answerability"]
    sets = {
        re.search(r"--out-mcq results/supplement/(\S+)/mcq\.parquet", command)[1]: re.search(r"--pool (\S+)", command)
        for command in _supplement_commands(result, "virtuebench.curation")
        if "supplement-sets" in command
    }
    assert {source: pool[1] if pool else None for source, pool in sets.items()} == {
        "mlvu": "results/supplement/mlvu/pool/answerability.parquet",
        "lvbench": "results/supplement/lvbench/pool/answerability.parquet",
        "longvideobench": "results/supplement/longvideobench/pool/answerability.parquet",
    }  # VideoEval-Pro's sets are unchanged: not made again


def test_longvideobench_subtitles_reconvert_and_ask_only_longvideobench_again(annotated, curated):
    """supplement.longvideobench_subtitles: interleaved. LongVideoBench alone is converted again with the release's
    durations, its sets are made with its subtitles (the release folder and the frame sampling they are placed
    against), and nothing of the other sources runs; false, the default, is what the run used."""
    from helpers.workflow import scheduled

    _, config, _ = curated
    changed = {**config, "supplement": {**config["supplement"], "longvideobench_subtitles": "interleaved"}}
    result = snakemake(annotated, "-n", "-p", "results/supplement/table1.tex", config=changed)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = scheduled(result)
    print(f"\nlongvideobench_subtitles interleaved: {dict(jobs)}")
    assert jobs["convert_supplement_source"] == jobs["make_supplement_sets"] == 1
    commands = _supplement_commands(result, "virtuebench.curation") + _supplement_commands(result, "virtuebench.sources")
    converted = [command for command in commands if "--out results/supplement/" in command]
    assert len(converted) == 1 and "results/supplement/longvideobench/candidates.parquet" in converted[0]
    assert '"durations": "release"' in converted[0]
    made = [command for command in commands if "supplement-sets" in command]
    raw = config["curation"]["raw_dirs"]["longvideobench"]
    assert len(made) == 1 and f"--subtitles {raw} --frame-sampling clip --out-mcq results/supplement/longvideobench/" in made[0]


def test_videoevalpros_authors_grader_rejudges_only_its_open_ended_answers_and_their_suffix_asks_them_again(annotated, curated):
    """supplement.videoevalpro_grader: authors, with a made-up prompt file (the authors' text is not in the repository):
    VideoEval-Pro's open-ended answers are judged again by their grader, and asked again with their suffix
    (videoevalpro_suffix: null follows the grader); with videoevalpro_suffix: false, only judged again. No other
    source's or form's job runs; the table is remade (its caption names the choices)."""
    from helpers.workflow import scheduled

    _, config, _ = curated
    models = config["supplement"]["models"]
    # Where docs/supplement.md suggests, relative to the working directory (git ignores it there).
    prompt = annotated / "config" / "videoevalpro_grader_prompt.txt"
    prompt.parent.mkdir(exist_ok=True)
    prompt.write_text("A made-up grading prompt.\nQuestion: {question}\nTarget to match: {target}\nReply to grade: {predicted_answer}\n")
    for suffix, prompt_asked in ((None, "honest+concise"), (False, None)):
        supplement = {
            **config["supplement"],
            "videoevalpro_grader": "authors",
            "authors_grader_prompt": "config/videoevalpro_grader_prompt.txt",
        }
        if suffix is not None:
            supplement["videoevalpro_suffix"] = suffix
        result = snakemake(annotated, "-n", "-p", "results/supplement/table1.tex", config={**config, "supplement": supplement})
        assert result.returncode == 0, result.stderr[-3000:]
        jobs = scheduled(result)
        print(f"\nvideoevalpro_grader authors, videoevalpro_suffix {suffix}: {dict(jobs)}")
        judged = {
            (re.search(r"--out results/supplement/judgments/(\S+)\.jsonl", command)[1], re.search(r"--judge (\S+)", command)[1])
            for command in _supplement_commands(result, "virtuebench.judge")
        }
        assert judged == {(f"{model}/videoeval-pro/oe", "videoevalpro-authors") for model in models}
        assert all(
            '"kind": "letter-grade"' in command and "prompt_sha256" in command
            for command in _supplement_commands(result, "virtuebench.judge")
        )
        asked = {
            (re.search(r"--out results/supplement/responses/(\S+)\.jsonl", command)[1], re.search(r"--prompt (\S+)", command)[1])
            for command in _supplement_commands(result, "virtuebench.inference")
        }
        assert asked == ({(f"{model}/videoeval-pro/oe", prompt_asked) for model in models} if prompt_asked else set())
        expected = {"judge_supplement": len(models), "make_supplement_table": 1}
        if prompt_asked:
            expected["run_supplement_inference"] = len(models)
        assert dict(jobs) == expected
        table = _supplement_commands(result, "virtuebench.curation")
        assert len(table) == 1 and "--videoevalpro-grader authors" in table[0]
        assert f"--videoevalpro-suffix {'yes' if prompt_asked else 'no'}" in table[0]
    prompt.unlink()  # the later tests keep the default grader


#: The targets the annotated run made: a dry run for them plans what a change reruns.
TABLE_TARGETS = ("results/table2.tex", "results/fig4.png", "results/stats/sources.csv", "results/supplement/table1.tex")


@pytest.mark.parametrize(
    "setting", [setting for setting in table_settings() if setting in SWITCHES and SWITCHES[setting].family == "curated"]
)
def test_a_curation_or_supplement_switch_of_docs_choices_reruns_what_reads_it(annotated, curated, setting):
    """docs/choices.md's curation and supplement settings, each flipped on the annotated run: the dry run plans exactly
    the rules its case in tests/helpers/choices.py names (tests/workflow/test_choices_dryrun.py checks that every
    setting of the table has a case)."""
    _, config, _ = curated
    for name, text in (("grader_a.txt", "Prompt A."), ("grader_b.txt", "Prompt B.")):  # the grader's prompt, two ways
        (annotated / "config").mkdir(exist_ok=True)
        (annotated / "config" / name).write_text(f"{text}\nQuestion: {{question}}\nTarget: {{target}}\nReply: {{predicted_answer}}\n")
    check_switch(setting, SWITCHES[setting], annotated, config, TABLE_TARGETS)


def test_the_supplements_seed_alone_reruns_nothing(annotated, curated):
    """supplement.seed draws the sample of max_questions_per_source; without a sample size it reaches no command, so a
    changed seed remakes no set and asks no model again (it once reran the whole supplement for nothing)."""
    _, config, _ = curated
    flipped = {**config, "supplement": {**config["supplement"], "seed": config["supplement"].get("seed", 0) + 1}}
    assert not config["supplement"].get("max_questions_per_source")
    assert scheduled(snakemake(annotated, "-n", *TABLE_TARGETS, config=flipped)) == {}


def test_paper_config_dry_run_shows_the_whole_curation_chain_for_all_six_sources(tmp_path, monkeypatch):
    for variable in ("OPENAI_API_KEY", "GEMINI_API_KEY", "HF_TOKEN"):
        monkeypatch.delenv(variable, raising=False)  # a dry run needs no key
    config = yaml.safe_load((TESTS.parent / "config" / "paper.yaml").read_text())
    result = snakemake(tmp_path, "-n", "results/paper/instances.parquet", config=config)  # config.results: results/paper
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, re.MULTILINE))
    sources = len(config["curation"]["sources"])
    assert sources == 6
    assert {
        name: int(jobs[name])
        for name in (
            "download_source",
            "convert_source",
            "filter_answer_length",
            "filter_answerability",
            "filter_difficulty",
            "merge_kept",
            "draft_reference_answers",
            "export_annotation",
            "make_instances",
        )
    } == {
        "download_source": 6,
        "convert_source": 6,
        "filter_answer_length": 6,
        "filter_answerability": 6,
        "filter_difficulty": 6,
        "merge_kept": 1,
        "draft_reference_answers": 5,
        "export_annotation": 1,
        "make_instances": 1,
    }
    for source in config["curation"]["sources"]:
        assert f"Downloading the {source} release" in result.stdout


def test_starting_the_paper_config_without_hf_token_stops_before_any_job(tmp_path, monkeypatch):
    """The paper's config with `curation: {seed: 0}`: the six sources come from the schema's default, two of them
    gated (MLVU, LongVideoBench). Without HF_TOKEN, starting the run stops before its first job and names both; a
    dry run, which needs no key, plans the downloads."""
    for variable in ("OPENAI_API_KEY", "GEMINI_API_KEY", "HF_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    config = yaml.safe_load((TESTS.parent / "config" / "paper.yaml").read_text())
    config["curation"] = {"seed": 0}
    started = snakemake(tmp_path, config=config, timeout=120)
    assert started.returncode != 0
    assert "virtuebench: invalid configuration" in started.stderr
    gated = [line for line in started.stderr.splitlines() if "is gated" in line]
    assert len(gated) == 2 and all("set HF_TOKEN" in line for line in gated), gated
    assert "mlvu (MLVU/MVLU) is gated" in gated[0] and "longvideobench (longvideobench/LongVideoBench) is gated" in gated[1]
    assert "Finished jobid" not in started.stdout + started.stderr and not (tmp_path / "results").exists()  # no job ran
    planned = snakemake(tmp_path, "-n", config=config, timeout=120)
    assert scheduled(planned)["download_source"] == 7  # the six curation sources and the supplement's VideoEval-Pro


def test_a_corrected_verified_batch_is_imported_again(annotated, curated, tmp_path):
    """In a copy of the annotated run: the other tests read it as it was made, in whatever order they come."""
    _, config, _ = curated
    annotated = shutil.copytree(annotated, tmp_path / "work", symlinks=True)
    verified = annotated / "annotations" / "verified"
    for path in sorted(verified.glob("*.csv")):
        rows = _rows(path)
        if any(row["instance_id"] == "lvbench/1" for row in rows):
            for row in rows:
                if row["instance_id"] == "lvbench/1":
                    row["answer_128"] = "blue"
            with open(path, "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    result = snakemake(annotated, "results/instances.parquet", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    instances = {inst.instance_id: inst for inst in read_instances(annotated / "results" / "instances.parquet")}
    assert instances["lvbench/1"].answers[128] == "blue"


def test_a_new_rules_version_rejudges_every_rules_judgment_and_nothing_else(annotated, curated, tmp_path):
    """The rules judge judges three things here: Table 2's responses, the supplement's open-ended answers and the
    difficulty filter's one-frame answers. A new rules version re-judges all three (a real run, on a copy of the
    annotated run): the filter's decisions are merged again into the same kept questions, so nothing that reads them
    (reference drafts, annotation batches, the instances table, inference) runs again; the supplement's MCQ answers
    (judged by letter) are left as they are. A change in the kept questions still reruns what reads them."""
    _, config, calls = curated
    work = tmp_path / "work"
    shutil.copytree(annotated, work, symlinks=True)
    asked = {name: (calls / name).read_text() for name in ("filter.txt", "drafter.txt")}
    snakefile = workflow_with_rules_version(tmp_path / "workflow", "rules/next")
    try:
        # Up to date first: the copy is the annotated run as the tests left it (none of them changes it).
        assert snakemake(work, *TABLE_TARGETS, config=config).returncode == 0
        assert scheduled(snakemake(work, "-n", *TABLE_TARGETS, config=config)) == {}
        jobs = executed(snakemake(work, *TABLE_TARGETS, config=config, snakefile=snakefile))
        print(f"\nrules version bumped, jobs run: {dict(jobs)}")
        assert jobs == {
            "filter_difficulty": 2,  # both curation sources' decisions
            "merge_kept": 1,  # the decisions merged again: the same questions
            # The instances table is imported again (a second's work; rules/sources.smk says why): the same rows, so no
            # inference runs again (it tracks the rows) and its readers by date see the same checksum (Fig. 4, statistics).
            "make_instances": 1,
            "judge_responses": 6,  # Table 2: three models x one prompt x levels 64 and 128
            "judge_supplement": 8,  # the open-ended form of two models on four sources; no MCQ form
            "compute_scores": 1,
            "make_tables": 1,
            "make_supplement_table": 1,
        }
        assert (calls / "drafter.txt").read_text() == asked["drafter.txt"]  # no draft asked again
        assert scheduled(snakemake(work, "-n", *TABLE_TARGETS, config=config, snakefile=snakefile)) == {}

        # Longer answers allowed: LVBench's ten-word question now passes every filter, and the kept set grows by it.
        longer = {**config, "curation": {**config["curation"], "max_answer_words": 12}}
        jobs = executed(snakemake(work, "results/annotation/batches", config=longer, snakefile=snakefile))
        print(f"kept set changed, jobs run: {dict(jobs)}")
        assert jobs == {
            "filter_answer_length": 2,  # its setting changed, for both sources
            "filter_answerability": 2,
            "filter_difficulty": 2,
            "merge_kept": 1,
            "draft_reference_answers": 2,  # the new kept question is drafted at both levels
            "export_annotation": 1,
        }
        assert "lvbench/2" in {inst.instance_id for inst in read_instances(work / "results" / "curation" / "kept.parquet")}
    finally:
        for name, text in asked.items():  # the scripted models' call logs belong to the other tests
            (calls / name).write_text(text)


def test_a_hybrid_difficulty_judge_reaches_the_filter_resolved(tmp_path, monkeypatch):
    """A hybrid curation.difficulty_judge that Table 2 does not use: the filter's command carries its LLM judge's
    settings (check_config resolves `llm`), and the judge builds from them as the job builds it (a dry run)."""
    from virtuebench.judge import get_judge
    from virtuebench.judge.hybrid import HybridJudge
    from virtuebench.support.settings import merge_settings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = yaml.safe_load((TESTS.parent / "config" / "paper.yaml").read_text())
    config["judge"] = "rules"
    config["judges"]["both"] = {"kind": "hybrid", "llm": "gpt-4o"}
    config["curation"] = {**config["curation"], "sources": ["lvbench"], "raw_dirs": {"lvbench": str(tmp_path)}, "difficulty_judge": "both"}
    result = snakemake(tmp_path, "-n", "--printshellcmds", "results/paper/curation/lvbench/difficulty.parquet", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    (command,) = [line for line in result.stdout.splitlines() if "virtuebench.curation difficulty" in line]
    words = shlex.split(command.removeprefix("Shell command:"))
    option = {name: words[words.index(name) + 1] for name in ("--judge", "--judge-config", "--judge-run-config")}
    settings = merge_settings(json.loads(option["--judge-config"]), json.loads(option["--judge-run-config"]))
    judge = get_judge(option["--judge"], settings)
    assert isinstance(judge, HybridJudge) and judge.llm.settings.model == "gpt-4o-2024-08-06"


def test_the_moviechat_breakpoint_switch_converts_moviechat_again_and_nothing_else(tmp_path):
    """curation.moviechat_breakpoint: a converted MovieChat-1K (the default, exclude) is up to date; include converts
    it again with the option (and what reads it: its length filter), and the breakpoint question comes in; the other
    curation source's jobs stay as they are."""
    release = tmp_path / "MovieChat-1K"
    (release / "gt" / "gt").mkdir(parents=True)
    (release / "videos").mkdir()
    make_video(release / "videos" / "1.mp4", 70, fps=1)
    gt = {
        "info": {"video_path": "1.mp4", "fps": 1},
        "global": [{"question": "What animal appears?", "answer": "A dog."}],
        "breakpoint": [{"time": 30, "question": "What is she doing now?", "answer": "Running."}],
    }
    (release / "gt" / "gt" / "1.json").write_text(json.dumps(gt))
    work = tmp_path / "work"
    work.mkdir()
    config = {
        "source": {"name": "virtuebench"},
        "curation": {
            "sources": ["moviechat-1k", "lvbench"],
            "raw_dirs": {"moviechat-1k": str(release), "lvbench": str(_lvbench_release(tmp_path / "LVBench"))},
            "filter_model": "refuse",
            "reference_model": "refuse",
            "difficulty_judge": "rules",
        },
        "levels": [64],
        "models": ["refuse"],
        "prompts": ["honest"],
        "judge": "rules",
    }
    targets = [f"results/curation/{source}/answer_length.parquet" for source in ("moviechat-1k", "lvbench")]
    assert executed(snakemake(work, *targets, config=config)) == {"convert_source": 2, "filter_answer_length": 2}
    assert scheduled(snakemake(work, "-n", *targets, config=config)) == {}
    explicit = {**config, "curation": {**config["curation"], "moviechat_breakpoint": "exclude"}}
    assert scheduled(snakemake(work, "-n", *targets, config=explicit)) == {}  # the default, written out: nothing to do
    include = {**config, "curation": {**config["curation"], "moviechat_breakpoint": "include"}}
    planned = snakemake(work, "-n", "-p", *targets, config=include)
    assert scheduled(planned) == {"convert_source": 1, "filter_answer_length": 1}
    (command,) = [line for line in planned.stdout.splitlines() if "-m virtuebench.sources " in line]
    assert "moviechat-1k" in command and '"options": {"include_breakpoint": true}' in command
    assert executed(snakemake(work, *targets, config=include)) == {"convert_source": 1, "filter_answer_length": 1}
    converted = read_instances(work / "results" / "sources" / "moviechat-1k" / "candidates.parquet")
    assert [inst.source_id for inst in converted] == ["1/global/0", "1/breakpoint/0"]
