"""ALLVB adapter (virtuebench.sources.allvb) on a small release in the layout it reads (unconfirmed, see
the module): test_set_movie/<Movie>/<Movie>.mp4 with <Movie>.txt question blocks beside it."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers.data import convert_with_cli, excluded_reasons, make_video

from virtuebench.sources import allvb

WOMAN = "A Fantastic Woman (2017)"
QUESTIONS = """\
Question 1: Scene Recognition
In the dimly lit car, a woman sits beside a man. What is the color of the traffic light
visible through the car window?
- A. Green
- B. Yellow
- C. Red
- D. Blue
- E. White
Answer: C

Question 2: temporal_action_localization
When does the woman leave the hospital?
- A. Before the funeral
- B. After the funeral,
  at night
- C. Never
- D. At the start
- E. At the end
Answer: B. After the funeral, at night

Question 3: Plot Twist Analysis
Who betrays her?
- A. Her brother
- B. Nobody
- C. The doctor
- D. The police
- E. Her boss
Answer: A

Question 4: Action Recognition
What does she carry?
- A. A bag
- B. A dog
- C. A box
- D. A lamp
- E. A plant
Answer: F

Question 5: Action Recognition
What does she drink?
- A. Tea
- B. Water

Question 6: Event Detection
What happens at the party?
- A. A fight
- B. A toast
- C. A song
- D. A fire
- E. A storm
Answer: b
"""


@pytest.fixture(scope="module")
def movie(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("allvb_video") / "movie.mp4"
    make_video(path, 70, fps=1)  # 70 s: level 64 is available, 128 is not
    return path


def make_release(root: Path, movie: Path) -> Path:
    """One movie with six blocks (good, good, unknown task, answer out of range, no answer, good), one
    movie whose video is missing, and a README.txt that is not a question file."""
    woman = root / "test_set_movie" / WOMAN
    woman.mkdir(parents=True)
    shutil.copy(movie, woman / f"{WOMAN}.mp4")
    (woman / f"{WOMAN}.txt").write_text(QUESTIONS)
    lost = root / "test_set_movie" / "Lost (2001)"
    lost.mkdir()
    (lost / "Lost (2001).txt").write_text("Question 1: Scene Recognition\nWhere?\n- A. Home\n- B. Sea\nAnswer: A\n")
    (root / "README.txt").write_text("ALLVB: All-in-One Long Video Understanding Benchmark\n")
    return root


def test_convert_mcq_to_open_ended(tmp_path, movie):
    raw = make_release(tmp_path / "raw", movie)
    instances, excluded = allvb.convert(raw, tmp_path / "videos", [64, 128])
    by_id = {inst.source_id: inst for inst in instances}
    assert sorted(by_id) == [f"{WOMAN}/1", f"{WOMAN}/2", f"{WOMAN}/6"]
    scene = by_id[f"{WOMAN}/1"]
    assert scene.instance_id == f"allvb/{WOMAN}/1"
    assert (scene.source, scene.task_type, scene.category) == ("allvb", "Scene Recognition", "perception")
    assert scene.question == (
        "In the dimly lit car, a woman sits beside a man. What is the color of the traffic light visible through the car window?"
    )
    assert "Green" not in scene.question  # options are not part of the open-ended question
    assert scene.answer == "Red"
    assert scene.options == ["Green", "Yellow", "Red", "Blue", "White"]
    assert (scene.answers, scene.evidence) == ({64: "Red"}, [])
    assert scene.duration_s == pytest.approx(70.0)
    assert scene.video_id == "allvb_A_Fantastic_Woman__2017_"
    linked = Path(scene.video_path)
    assert linked.parent == tmp_path / "videos" and linked.is_symlink()
    assert Path(os.readlink(linked)) == (raw / "test_set_movie" / WOMAN / f"{WOMAN}.mp4").resolve()

    timing = by_id[f"{WOMAN}/2"]
    assert (timing.task_type, timing.category) == ("Temporal Action Localization", "reasoning")
    assert timing.answer == "After the funeral, at night"  # wrapped option joined, letter prefix dropped
    assert by_id[f"{WOMAN}/6"].answer == "A toast"  # lower-case letter

    reasons = excluded_reasons(excluded)
    assert "task type 'Plot Twist Analysis' has no category" in reasons[f"allvb:{WOMAN}/3"]
    assert "bad row" in reasons[f"allvb:{WOMAN}/4"] and "outside the 5 options" in reasons[f"allvb:{WOMAN}/4"]
    assert "bad row" in reasons[f"allvb:{WOMAN}/5"] and "Answer" in reasons[f"allvb:{WOMAN}/5"]
    assert "video file not found" in reasons["allvb:Lost (2001)/1"]
    assert len(excluded) == 4


def test_task_categories_cover_every_task_type():
    assert set(allvb.TASK_CATEGORIES.values()) <= {"perception", "reasoning"}
    assert len(allvb.TASK_CATEGORIES) == 9  # ALLVB's nine tasks
    assert allvb.task_type("needle in a haystack") == "Needle-in-a-Haystack"
    assert allvb.task_type(" Something New ") == "Something New"


def test_layout_that_differs_is_a_clear_error(tmp_path, movie):
    folder = tmp_path / "raw" / "test_set_movie" / "Other (1999)"
    folder.mkdir(parents=True)
    shutil.copy(movie, folder / "Other (1999).mp4")
    (folder / "Other (1999).txt").write_text(json.dumps([{"question": "Q?", "options": ["a", "b"], "answer": "a"}]))
    with pytest.raises(ValueError, match=r"Other \(1999\)\.txt has no 'Question <n>: <task type>' header"):
        allvb.convert(tmp_path / "raw", tmp_path / "videos", [64])
    (folder / "Other (1999).txt").write_text("Question 1: Scene Recognition\nWhere?\n- A. Home\n- B. Sea\n")
    with pytest.raises(ValueError, match=r"Other \(1999\)\.txt has no 'Answer: <letter>' line"):
        allvb.convert(tmp_path / "raw", tmp_path / "videos", [64])
    with pytest.raises(ValueError, match="no question files"):
        allvb.convert(tmp_path / "videos_only", tmp_path / "videos", [64])


def _split(data: bytes, count: int) -> list[bytes]:
    step = -(-len(data) // count)
    return [data[i * step : (i + 1) * step] for i in range(count)]


@pytest.mark.parametrize(
    ("archive_name", "suffixes"),
    [
        ("test_set_movie.zip", ["part.aa", "part.ab"]),  # a zip's index is at its end: read through the chained parts
        ("test_set_movie.tar.gz", [f"{i:03d}" for i in range(1, 13)]),  # 12 parts, streamed into the unpacker
    ],
)
def test_prepare_unpacks_split_archives_without_joining_them_once(tmp_path, movie, archive_name, suffixes):
    staging = make_release(tmp_path / "staging", movie)
    archive = tmp_path / archive_name
    if archive_name.endswith(".zip"):
        with zipfile.ZipFile(archive, "w") as zipped:
            for path in sorted((staging / "test_set_movie").rglob("*")):
                zipped.write(path, path.relative_to(staging))
    else:
        with tarfile.open(archive, "w:gz") as tarred:
            tarred.add(staging / "test_set_movie", arcname="test_set_movie")
    raw = tmp_path / "raw"
    raw.mkdir()
    for suffix, piece in zip(suffixes, _split(archive.read_bytes(), len(suffixes)), strict=True):
        (raw / f"{archive_name}.{suffix}").write_bytes(piece)

    allvb.prepare(raw)
    video = raw / "test_set_movie" / WOMAN / f"{WOMAN}.mp4"
    assert video.read_bytes() == movie.read_bytes()
    assert not (raw / archive_name).exists(), "the parts are read as one archive, never joined on disk"
    stamp = video.stat().st_mtime_ns
    allvb.prepare(raw)  # idempotent: nothing is unpacked again
    assert video.stat().st_mtime_ns == stamp
    instances, _ = allvb.convert(raw, tmp_path / "videos", [64])
    assert len(instances) == 3
    assert allvb.prepare(tmp_path / "staging") == tmp_path / "staging"  # no archives: a no-op


def test_cli_writes_instances_and_report(tmp_path, movie):
    raw = make_release(tmp_path / "raw", movie)
    instances, report = convert_with_cli("allvb", raw, tmp_path)
    assert sorted((inst.source_id, inst.answer) for inst in instances) == [
        (f"{WOMAN}/1", "Red"),
        (f"{WOMAN}/2", "After the funeral, at night"),
        (f"{WOMAN}/6", "A toast"),
    ]
    assert all(inst.options and inst.answers == {64: inst.answer} for inst in instances)
    assert len(report) == 4
