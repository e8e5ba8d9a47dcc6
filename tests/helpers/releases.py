"""Small releases of the real sources in their own layouts, built by the source adapters' tests and by the curation
workflow's test (tests/sources/, tests/curation/test_curation_workflow.py)."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import polars as pl

#: The four options of the VideoEval-Pro and Video-MME questions below.
OPTIONS = ["A. Two.", "B. Three.", "C. Four.", "D. Five."]


# --- mlvu ---


def mlvu_entry(video: str, question: str, candidates: list, answer, question_type: str, duration: float = 70.0) -> dict:
    return {
        "video": video,
        "duration": duration,
        "question": question,
        "candidates": candidates,
        "answer": answer,
        "question_type": question_type,
    }


def make_mlvu_release(root: Path, clips: tuple[Path, Path]) -> Path:
    """plotQA: 1 good question, a missing video, a bad row; count: a good question on a different video of
    the same file name, an unknown question type; sub_scene: 2 generation questions; summary: broken JSON.
    The other five multiple-choice files are absent."""
    json_dir, video_dir = root / "MLVU" / "json", root / "MLVU" / "video"
    json_dir.mkdir(parents=True)
    for stem, clip in (("1_plotQA", clips[0]), ("4_count", clips[1]), ("8_sub_scene", clips[0])):
        (video_dir / stem).mkdir(parents=True)
        shutil.copy(clip, video_dir / stem / "movie101_66.mp4")
    plot = [
        mlvu_entry(
            "movie101_66.mp4",
            "Why does the boy run away from the house?",
            ["He is late for school.", "He is scared of the dog.", "He is cold.", "He is hungry."],
            "He is scared of the dog.",
            "plotQA",
        ),
        mlvu_entry("movie101_99.mp4", "Who opens the door?", ["The boy.", "The girl.", "The dog.", "Nobody."], "The girl.", "plotQA"),
        mlvu_entry(
            "movie101_66.mp4", "Where does the story take place?", ["A farm.", "A city.", "A ship.", "A school."], "On the moon.", "plotQA"
        ),
    ]
    count = [
        mlvu_entry("movie101_66.mp4", "How many times does the man jump?", [2, 3, 4, 5], 3, "count", 130.0),
        mlvu_entry("movie101_66.mp4", "Which sport?", ["Tennis.", "Golf.", "Chess.", "Polo."], "Golf.", "sportsQA"),
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


# --- videoevalpro ---


def videoevalpro_row(video: str, qa_type: str, question: str, options: list[str], answer: str, answer_text: str) -> dict:
    return {
        "video": video,
        "question": question,
        "options": options,
        "answer": answer,
        "answer_text": answer_text,
        "meta": '{"duration": 70}',
        "source": "Video-MME",
        "qa_subtype": "Counting Problem",
        "qa_type": qa_type,
    }


VIDEOEVALPRO_ROWS = [
    videoevalpro_row("fFjv93ACGo8.mp4", "Local Perception", "How many cups are on the table?", OPTIONS, "C", "Four cups"),
    videoevalpro_row(
        "fFjv93ACGo8.mp4",
        "Holistic Reasoning",
        "Why does the man leave at the end?",
        ["A. He is late.", "B. He is tired.", "C. He is sad.", "D. He is bored."],
        "A",
        "Because he is late",
    ),
    videoevalpro_row(
        "Zt0pQ3vY9Kc.mp4",
        "Local Reasoning",
        "What does she do after opening the door?",
        ["Sits", "Runs", "Waves", "Sings"],
        "C",
        "She waves",
    ),
    videoevalpro_row("NoSuchVideo.mp4", "Holistic Perception", "What is the video about?", OPTIONS, "A", "Cooking"),
    videoevalpro_row("fFjv93ACGo8.mp4", "Local Perception", "What colour is the cup?", OPTIONS, "E", "Red"),  # letter outside the options
    videoevalpro_row("fFjv93ACGo8.mp4", "Local Perception", "What colour is the pot?", OPTIONS, "A", " "),  # no open-ended answer
    videoevalpro_row("fFjv93ACGo8.mp4", "Music Perception", "Which instrument plays?", OPTIONS, "A", "A piano"),  # unknown qa_type
]


def make_videoevalpro_release(root: Path, clip: bytes, rows: list[dict] = VIDEOEVALPRO_ROWS) -> Path:
    """The rows above (or `rows`); the two videos in one tar.gz split into two parts under videos/."""
    (root / "data").mkdir(parents=True)
    (root / "videos").mkdir()
    pl.DataFrame(rows).write_parquet(root / "data" / "test-00000-of-00001.parquet")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tarred:
        for video in ("fFjv93ACGo8.mp4", "Zt0pQ3vY9Kc.mp4"):
            member = tarfile.TarInfo(f"videos_filtered/{video}")
            member.size = len(clip)
            tarred.addfile(member, io.BytesIO(clip))
    data = buffer.getvalue()
    (root / "videos" / "videos_part_aa.tar.gz").write_bytes(data[: len(data) // 2])
    (root / "videos" / "videos_part_ab.tar.gz").write_bytes(data[len(data) // 2 :])
    return root


# --- videomme ---


def videomme_row(question_id: str, video: str, task_type: str, question: str, options: list[str], answer: str) -> dict:
    number = question_id.split("-")[0]
    return {
        "video_id": number,
        "duration": "short",
        "domain": "Life Record",
        "sub_category": "Food",
        "url": f"https://www.youtube.com/watch?v={video}",
        "videoID": video,
        "question_id": question_id,
        "task_type": task_type,
        "question": question,
        "options": options,
        "answer": answer,
    }


def make_videomme_release(root: Path, clip: bytes) -> Path:
    """Questions on two videos in two chunks, one on a video no chunk holds, two bad rows and an unknown task type."""
    (root / "videomme").mkdir(parents=True)
    rows = [
        videomme_row("001-1", "fFjv93ACGo8", "Counting Problem", "How many cups are on the table?", OPTIONS, "C"),
        videomme_row(
            "001-2",
            "fFjv93ACGo8",
            "Temporal Reasoning",
            "What does the man do after pouring the tea?",
            ["A. He drinks it.", "B. He leaves.", "C. He sings.", "D. He sleeps."],
            "A",
        ),
        videomme_row(
            "002-1",
            "Zt0pQ3vY9Kc",
            "OCR Problems",
            "What word is written on the sign?",
            ["A. Open.", "B. Closed.", "C. Exit.", "D. Sale."],
            "B",
        ),
        videomme_row("003-1", "NoSuchVideo", "Object Recognition", "What is on the shelf?", OPTIONS, "D"),
        videomme_row("004-1", "fFjv93ACGo8", "Attribute Perception", "What colour is the cup?", OPTIONS, "E"),
        videomme_row("004-2", "fFjv93ACGo8", "Attribute Perception", "What colour is the pot?", ["Red.", "Blue.", "Green.", "White."], "A"),
        videomme_row("004-3", "fFjv93ACGo8", "Music Perception", "Which instrument plays?", OPTIONS, "A"),
    ]
    pl.DataFrame(rows).write_parquet(root / "videomme" / "test-00000-of-00001.parquet")
    for number, video in (("01", "fFjv93ACGo8"), ("02", "Zt0pQ3vY9Kc")):
        with zipfile.ZipFile(root / f"videos_chunked_{number}.zip", "w") as chunk:
            chunk.writestr("data/", "")
            chunk.writestr(f"data/{video}.mp4", clip)
    return root


# --- longvideobench ---


def longvideobench_entry(qid, video_id, category, level, question, candidates, correct, **extra):
    """One lvb_val.json object with the release's fields."""
    row = {
        "video_id": video_id,
        "question": question,
        "question_wo_referring_query": question.split(", ")[-1],
        "candidates": candidates,
        "correct_choice": correct,
        "position": [12],
        "topic_category": "NP-News-Programs",
        "question_category": category,
        "level": level,
        "id": qid,
        "video_path": f"{video_id}.mp4",
        "subtitle_path": f"{video_id}_en.json",
        "duration_group": 600,
        "starting_timestamp_for_subtitles": 0,
        "duration": 70.0,
        "view_count": 1234,
    }
    row.update(extra)
    return row


LONGVIDEOBENCH_ENTRIES = [
    longvideobench_entry(
        "vidAAAAAAAA_0",
        "vidAAAAAAAA",
        "T2A",
        "L1-Perception",
        "When the subtitle says 'hello there', what color is the woman's coat?",
        ["yellow", "green", "blue", "red"],
        2,
    ),
    longvideobench_entry(
        "vidAAAAAAAA_1",
        "vidAAAAAAAA",
        "SSS",
        "L2-Relation",
        "Which of the following sequences of scenes is correct?",
        ["first a dog, then a cat", "first a cat, then a dog"],
        1,
    ),
    longvideobench_entry("vidBBBBBBBB_0", "vidBBBBBBBB", "O2E", "L1-Perception", "What is he doing?", ["running", "sitting"], 0),
    longvideobench_entry("vidAAAAAAAA_2", "vidAAAAAAAA", "E2O", "L1-Perception", "Which one carries a gun?", ["a", "b", "c"], 7),
    longvideobench_entry("vidAAAAAAAA_3", "vidAAAAAAAA", "S2O", "L1-Perception", "What objects are present?", "a lamp", 0),
    longvideobench_entry("vidAAAAAAAA_4", "vidAAAAAAAA", "XYZ", "L1-Perception", "Unknown category?", ["x", "y"], 0),
]
