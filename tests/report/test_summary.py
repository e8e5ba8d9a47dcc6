"""The end-of-run summary (virtuebench.report.summary): the judged items without a valid verdict, a few distinct
errors shown, and the items left out of the instances table counted by reason (the file a reason names left out)
and, for missing videos, by source."""

from __future__ import annotations

from virtuebench.metrics import INVALID_FIELDS
from virtuebench.report.summary import summarize_excluded, summarize_invalid
from virtuebench.support.tabular import write_csv


def _invalid(path, errors):
    """A listing of invalid items as metrics.write_invalid writes it, one row per (error, reason)."""
    rows = [
        {"judge": "rules", "model": "m", "prompt": "honest", "level": 64, "instance_id": f"i{k}", "reason": reason, "error": error}
        for k, (error, reason) in enumerate(errors)
    ]
    write_csv(path, rows, INVALID_FIELDS)
    return path


def test_invalid_items_are_summarized(tmp_path):
    errors = [("timeout", "reason 0"), ("timeout", "reason 1"), ("", "reason 2"), ("no verdict", "reason 3"), ("HTTP 500", "reason 4")]
    listed = _invalid(tmp_path / "invalid.csv", errors)
    # four distinct messages (the error, or the reason where there is none), sorted; three shown
    assert summarize_invalid(listed) == "\n".join(
        [
            f"5 judged items have no valid verdict and count as wrong (listed in {listed}):",
            "  HTTP 500",
            "  no verdict",
            "  reason 2",
            "  ... and 1 more distinct errors",
        ]
    )
    assert summarize_invalid(listed, examples=4).splitlines()[-1] == "  timeout"  # all shown: no "and more"
    assert summarize_invalid(str(tmp_path / "none.csv")) is None
    assert summarize_invalid(_invalid(tmp_path / "empty.csv", [])) is None
    # an error message of several lines comes back whole
    assert summarize_invalid(_invalid(tmp_path / "lines.csv", [("line 1\r\nline 2", "r")])).splitlines(keepends=True)[1] == "  line 1\r\n"


def test_excluded_items_are_counted_by_reason_without_the_file_named(tmp_path):
    path = tmp_path / "excluded.csv"
    reasons = ["videos/a.mp4: missing video"] * 3 + ["data\\b.mp4: missing video", "no answer", "no answer", "x" * 90, "bad evidence"]
    write_csv(path, [{"instance_id": f"q{k}", "reason": reason} for k, reason in enumerate(reasons)])
    assert summarize_excluded(str(path)) == (
        f"8 items of the source were left out of the instances table (4: missing video; 2: no answer; 1: {'x' * 80}): listed in {path}"
    )
    write_csv(tmp_path / "nothing.csv", [], ["instance_id", "reason"])
    assert summarize_excluded(tmp_path / "nothing.csv") is None and summarize_excluded(tmp_path / "none.csv") is None
    write_csv(tmp_path / "noreason.csv", [{"instance_id": "q"}])
    assert summarize_excluded(tmp_path / "noreason.csv").startswith("1 items of the source were left out of the instances table (1: ):")


def test_questions_lost_to_missing_videos_are_counted_per_source(tmp_path):
    path = tmp_path / "excluded.csv"
    rows = [
        {"item": "lvbench:1", "source": "lvbench", "reason_kind": "missing_video", "reason": "video not downloaded (gone)"},
        {"item": "lvbench:2", "source": "lvbench", "reason_kind": "missing_video", "reason": "video not downloaded (gone)"},
        {"item": "mlvu:7", "source": "mlvu", "reason_kind": "missing_video", "reason": "video file not found"},
        {"item": "lvbench:3", "source": "lvbench", "reason_kind": "unknown_task_type", "reason": "task type has no category"},
    ]
    write_csv(path, rows)
    assert summarize_excluded(path) == (
        "4 items of the source were left out of the instances table (2: video not downloaded (gone); 1: video file not found; "
        f"1: task type has no category); questions lost to missing videos: lvbench 2, mlvu 1: listed in {path}"
    )
    write_csv(path, [{"item": "q1", "reason_kind": "missing_video", "reason": "video file not found"}])  # no source column
    assert "; questions lost to missing videos: unknown source 1: listed in" in summarize_excluded(path)
