"""What every source adapter shares (virtuebench.sources.base): the correct option read from a letter, an index or
its text; the rows a Conversion leaves out and why; and a video moved under the same id relinked. The archive
unpackers are tested in tests/sources/test_archives.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from virtuebench.sources.base import Conversion, correct_option

OPTIONS = ["red", "green", "blue"]


@pytest.mark.parametrize(
    ("correct", "text"), [(0, "red"), (2, "blue"), ("B", "green"), ("(c)", "blue"), ("c.", "blue"), (" green ", "green")]
)
def test_the_correct_option_from_an_index_a_letter_or_its_text(correct, text):
    assert correct_option(OPTIONS, correct) == text


@pytest.mark.parametrize(
    ("correct", "message"),
    [
        (3, "correct option index 3 is outside the 3 options"),
        (-1, "correct option index -1 is outside the 3 options"),
        ("D", "correct option 'D' is outside the 3 options"),
        ("purple", "correct answer 'purple' is neither an option letter nor one of the options"),
        (True, "correct answer 'True' is neither an option letter nor one of the options"),  # a bool is not an index
    ],
)
def test_a_correct_option_outside_the_options_is_an_error_naming_it(correct, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        correct_option(OPTIONS, correct)


def test_a_conversion_leaves_out_duplicates_empty_rows_and_bad_files_naming_each(tmp_path, video_factory):
    video = video_factory(70.0)
    conversion = Conversion("mysrc", tmp_path / "videos", [64, 128], {"Counting": "reasoning"})
    assert conversion.add("q1", video, "Counting", "How many?", "3")
    assert not conversion.add("q1", video, "Counting", "How many again?", "4")  # the same id: left out
    assert not conversion.add("q2", video, "Counting", "  ", "3")
    assert not conversion.add("q3", video, "Counting", "How many?", "")
    (tmp_path / "list.json").write_text('{"not": "a list"}')
    (tmp_path / "bad.json").write_text("[1, 2")
    assert conversion.read_json("q4", tmp_path / "list.json", "annotation", list, "a list of questions") is None
    assert conversion.read_json("q5", tmp_path / "bad.json", "annotation", list, "a list of questions") is None
    assert conversion.read_json("q6", tmp_path / "list.json", "annotation", dict, "an object") == {"not": "a list"}
    rows = [(row["item"], row["reason_kind"], row["reason"]) for row in conversion.excluded]
    assert rows[:3] == [
        ("mysrc:q1", "duplicate_id", "duplicate question id"),
        ("mysrc:q2", "bad_row", "bad row: empty question or answer"),
        ("mysrc:q3", "bad_row", "bad row: empty question or answer"),
    ]
    assert rows[3] == ("mysrc:q4", "bad_row", f"{tmp_path / 'list.json'}: expected a list of questions")
    assert rows[4][:2] == ("mysrc:q5", "bad_row") and rows[4][2].startswith(f"{tmp_path / 'bad.json'}: unreadable annotation (")
    assert [instance.instance_id for instance in conversion.instances] == ["mysrc/q1"]
    with pytest.raises(ValueError, match="mysrc: exclusion kind 'oops' is not one of missing_video, unreadable_video"):
        conversion.exclude("q7", "why", kind="oops")


def test_a_video_id_linked_to_another_file_is_linked_again(tmp_path, video_factory):
    first, second = video_factory(70.0), video_factory(140.0)
    key_file = tmp_path / "release" / "clip.mp4"
    key_file.parent.mkdir()
    key_file.symlink_to(first)
    stale = tmp_path / "videos" / "mysrc_clip.mp4"
    stale.parent.mkdir()
    stale.symlink_to(second)  # left by an earlier conversion of another release
    conversion = Conversion("mysrc", tmp_path / "videos", [64], {"Counting": "reasoning"})
    assert conversion.add("q1", key_file, "Counting", "How many?", "3")
    assert Path(os.readlink(stale)) == first.resolve() and conversion.instances[0].duration_s == pytest.approx(70.0)
