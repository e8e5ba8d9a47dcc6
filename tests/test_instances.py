"""The instances table's checks: every malformed table is refused with a message naming the file, the row and
what is wrong (instances.py; docs/records.md)."""

import dataclasses
import re

import polars as pl
import pytest

from virtuebench import REFUSAL_ANSWER
from virtuebench.instances import (
    SCHEMA,
    Instance,
    InstancesError,
    items_for_level,
    read_instances,
    to_frame,
    validate,
    videos,
    write_instances,
)


def _instance(instance_id="q1", **changes):
    base = Instance(
        instance_id=instance_id,
        video_id="v1",
        source="demo",
        category="perception",
        task_type="colour",
        question="What colour is the car?",
        answer="red",
        duration_s=70.5,
        video_path="videos/v1.mp4",
        answers={64: "red", 128: REFUSAL_ANSWER},
        evidence=[[3.0, 4.0]],
    )
    return dataclasses.replace(base, **changes)


def test_a_table_round_trips(tmp_path):
    table = [_instance("q1"), _instance("q2", options=["red", "blue"], source_id="src-7", evidence=[])]
    write_instances(table, tmp_path / "instances.parquet")
    assert read_instances(tmp_path / "instances.parquet") == table
    assert not table[0].is_unanswerable(64) and table[0].is_unanswerable(128)


def test_a_table_without_a_column_names_the_missing_ones(tmp_path):
    path = tmp_path / "instances.parquet"
    to_frame([_instance()]).drop("question", "evidence").write_parquet(path)
    with pytest.raises(InstancesError) as raised:
        read_instances(path)
    assert str(raised.value).startswith(f"{path}: missing column(s) ['question', 'evidence']; expected ['instance_id',")


def test_a_table_from_before_source_id_reads_with_it_empty(tmp_path):
    path = tmp_path / "instances.parquet"
    to_frame([_instance()]).drop("source_id").write_parquet(path)
    assert read_instances(path)[0].source_id == ""


def test_a_file_that_is_no_table_is_named(tmp_path):
    with pytest.raises(InstancesError, match=re.escape(f"{tmp_path / 'none.parquet'}: instances table not found")):
        read_instances(tmp_path / "none.parquet")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(InstancesError, match=re.escape(f"{tmp_path / 'bad.parquet'}: not a readable parquet file (")):
        read_instances(tmp_path / "bad.parquet")


def test_a_row_with_a_missing_value_names_the_row(tmp_path):
    path = tmp_path / "instances.parquet"
    frame = to_frame([_instance("q1"), _instance("q2")])
    frame.with_columns(pl.when(pl.col("instance_id") == "q2").then(None).otherwise(pl.col("duration_s")).alias("duration_s")).write_parquet(
        path
    )
    with pytest.raises(InstancesError, match=re.escape(f"{path}: row 1: float() argument")):
        read_instances(path)


def test_a_duplicate_instance_id_is_refused_when_read(tmp_path):
    path = tmp_path / "instances.parquet"
    to_frame([_instance("q1"), _instance("q2"), _instance("q1", video_id="v2")]).write_parquet(path)
    with pytest.raises(InstancesError) as raised:
        read_instances(path)
    assert str(raised.value) == f"{path}: row 2 (instance_id 'q1'): duplicate instance_id"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"instance_id": ""}, "table.parquet: row 1: empty instance_id"),
        ({"question": "  \n"}, "table.parquet: row 1 (instance_id 'q2'): empty question"),
        (
            {"evidence": [[1.0, 2.0], [9.5, 9.0]]},
            "table.parquet: row 1 (instance_id 'q2'): evidence interval [9.5, 9.0] is not [start_s, end_s] with start <= end",
        ),
        (
            {"evidence": [[1.0, 2.0, 3.0]]},
            "table.parquet: row 1 (instance_id 'q2'): evidence interval [1.0, 2.0, 3.0] is not [start_s, end_s] with start <= end",
        ),
        ({"answers": {64: "red", 128: " "}}, "table.parquet: row 1 (instance_id 'q2'): empty answer at level 128"),
        ({"answers": {64: None}}, "table.parquet: row 1 (instance_id 'q2'): empty answer at level 64"),
        ({"category": "colour"}, "table.parquet: row 1 (instance_id 'q2'): category 'colour' is not one of ['perception', 'reasoning', "),
    ],
)
def test_each_bad_row_is_refused_with_its_reason(change, message):
    with pytest.raises(InstancesError) as raised:
        validate([_instance("q1"), _instance(**{"instance_id": "q2", **change})], where="table.parquet")
    assert str(raised.value).startswith(message)


def test_the_boundary_cases_are_allowed():
    # a zero-length interval (start == end) and a question with text around spaces are valid rows
    validate([_instance("q1", evidence=[[5.0, 5.0]], question=" why? ")], where="t")


def test_nothing_malformed_is_ever_written(tmp_path):
    with pytest.raises(InstancesError, match="duplicate instance_id"):
        write_instances([_instance("q1"), _instance("q1")], tmp_path / "instances.parquet")
    assert not (tmp_path / "instances.parquet").exists()


def test_a_levels_items_are_those_with_its_ground_truth_in_id_order():
    table = [_instance("q3"), _instance("q1", answers={128: "red"}), _instance("q2", answers={64: "blue", 256: "blue"})]
    assert [inst.instance_id for inst in items_for_level(table, 64)] == ["q2", "q3"]
    assert [inst.instance_id for inst in items_for_level(table, 128)] == ["q1", "q3"]
    assert items_for_level(table, 512) == []


def test_one_video_id_for_two_files_is_refused():
    assert videos([_instance("q1"), _instance("q2"), _instance("q3", video_id="v2", video_path="videos/v2.mp4")]) == {
        "v1": "videos/v1.mp4",
        "v2": "videos/v2.mp4",
    }
    with pytest.raises(InstancesError) as raised:
        videos([_instance("q1"), _instance("q2", video_path="other/v1.mp4")])
    assert str(raised.value) == "video_id 'v1' points at two files: 'videos/v1.mp4' and 'other/v1.mp4'"


def test_the_schema_is_the_documented_one():
    assert list(SCHEMA) == [
        "instance_id",
        "video_id",
        "source",
        "category",
        "task_type",
        "question",
        "answer",
        "options",
        "duration_s",
        "video_path",
        "answers",
        "evidence",
        "source_id",
    ]
