"""The end-of-run summary (virtuebench.report.summary): the judged items without a valid verdict, a few distinct
errors shown, and the items left out of the instances table counted by reason (the file a reason names left out)
and, for missing videos, by source; after a failed run, the report outputs kept from an earlier run, with what they do
not show."""

from __future__ import annotations

import os

from virtuebench.metrics import INVALID_FIELDS
from virtuebench.report.summary import summarize_excluded, summarize_invalid, summarize_outdated
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
    assert summarize_excluded(tmp_path / "noreason.csv").startswith("1 item of the source was left out of the instances table (1: ):")


def test_excluded_rows_are_counted_by_their_unit(tmp_path):
    """CVRR-ES's listing without 9 of its dimensions' annotation files, one missing video and one bad row (the workflow
    test's release, tests/workflow/test_workflow_runs.py): 9 dimensions and 2 items, not 11 items. A listing written
    before the `unit` column counts its rows as items, as it did."""
    path = tmp_path / "excluded.csv"
    rows = [
        {
            "item": d,
            "source": "cvrr-es",
            "reason_kind": "missing_annotation",
            "reason": f"{d}/annotations_{d}.json: annotation file not found",
            "unit": "dimension",
        }
        for d in ("d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9")
    ]
    rows += [
        {
            "item": "a.json#3",
            "source": "cvrr-es",
            "reason_kind": "missing_video",
            "reason": "p/404.mp4: video file not found",
            "unit": "item",
        },
        {"item": "a.json#4", "source": "cvrr-es", "reason_kind": "bad_row", "reason": "bad row: needs VideoID", "unit": "item"},
    ]
    write_csv(path, rows)
    assert summarize_excluded(path) == (
        "9 dimensions and 2 items of the source were left out of the instances table (9 dimensions: annotation file not "
        "found; 1 item: video file not found; 1 item: bad row: needs VideoID); questions lost to missing videos: cvrr-es 1: "
        f"listed in {path}"
    )
    write_csv(path, [{key: value for key, value in row.items() if key != "unit"} for row in rows])
    assert summarize_excluded(path).startswith("11 items of the source were left out of the instances table (9: annotation file not found;")


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


def test_report_outputs_kept_from_an_earlier_run_name_what_they_do_not_show(tmp_path):
    """A model whose judgments were not made (the failed job), one whose judgments are newer than the tables, and
    one up to date: a line per thing lacking, naming the outputs (tables and figures first) and the model."""
    results = tmp_path / "results"
    judgments = {
        f"{model}/honest/{level}": results / f"judgments/rules/{model}/honest/{level}.jsonl"
        for model in ("old", "new", "api")
        for level in (64, 128)
    }
    for key, path in judgments.items():
        if not key.startswith("api"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}\n")
            os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    write_csv(results / "scores.csv", [{"model": m, "prompt": "honest", "level": lv} for m in ("old", "new") for lv in (64, 128)])
    outputs = [results / "scores.csv", results / "table2.tex", results / "fig6.png"]
    for path in outputs[1:]:
        path.write_text("x")
    for path in outputs:
        os.utime(path, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    newer = judgments["new/honest/64"]
    os.utime(newer, ns=(3_000_000_000_000_000_000, 3_000_000_000_000_000_000))
    (line,) = summarize_outdated(outputs, list(judgments.values()), results / "scores.csv").splitlines()
    assert line == (
        f"{results}/table2.tex, {results}/fig6.png and {results}/scores.csv are from an earlier run: they do not show "
        "the judgments of model new there now (its judgments at honest/64 were made after it); nor model api (its "
        "judgments were not made; see the failed job above)"
    )
    os.utime(newer, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    judgments["api/honest/128"].parent.mkdir(parents=True)
    judgments["api/honest/128"].write_text("{}\n")
    os.utime(judgments["api/honest/128"], ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    assert "model api (its judgments at honest/64 were not made" in summarize_outdated(
        outputs, list(judgments.values()), results / "scores.csv"
    )
    judgments["api/honest/64"].write_text("{}\n")
    os.utime(judgments["api/honest/64"], ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    assert summarize_outdated(outputs, list(judgments.values()), results / "scores.csv") is None
