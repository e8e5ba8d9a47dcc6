"""Published numbers checked back to their judgments (virtuebench.provenance), on small CSVs in a results folder's
layout: which judgments files each row rests on, what a stamped file's check finds, and the start-up check's part
(check_published). The workflow's own cases (an edited scores.csv named by verify, rebuilt by a plain rerun, refused
by every writer) are in tests/test_verify.py, on a finished run."""

from __future__ import annotations

import csv
import os
from dataclasses import replace
from pathlib import Path

from virtuebench import provenance, verify

COLUMNS = ["model", "prompt", "level", "subset", "accuracy", "judge"]


def _results(tmp_path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    """A results folder with one judgments file per (model, prompt, level) and a stamped scores.csv of `rows`."""
    for model, prompt, level, _ in rows:
        if level != "all":
            judged = tmp_path / "judgments" / "rules" / model / prompt / f"{level}.jsonl"
            judged.parent.mkdir(parents=True, exist_ok=True)
            judged.write_text(f'{{"model": "{model}", "level": {level}}}\n')
    scores = tmp_path / "scores.csv"
    with scores.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows([model, prompt, level, "overall", accuracy, "rules"] for model, prompt, level, accuracy in rows)
    provenance.stamp(scores)
    return scores


ROWS = [("m", "honest", "64", "10.0"), ("m", "honest", "128", "20.0"), ("m", "honest", "all", "15.0"), ("n", "honest", "64", "30.0")]


def _digests(scores: Path) -> list[str]:
    with scores.open(newline="") as handle:
        return [row["judgments_digest"] for row in csv.DictReader(handle)]


def test_a_pooled_row_rests_on_the_levels_of_its_own_rows(tmp_path):
    scores = _results(tmp_path, ROWS)
    m64, m128, pooled, n64 = _digests(scores)
    assert len({m64, m128, pooled, n64}) == 4 and all(len(digest) == 32 for digest in (m64, m128, pooled, n64))
    assert provenance.problems(scores) == []
    # the same records written again (a rerun of the judge that judged alike): nothing changed
    judged = tmp_path / "judgments/rules/m/honest/128.jsonl"
    judged.write_bytes(judged.read_bytes())
    assert provenance.problems(scores) == []
    judged.write_text('{"model": "m", "level": 128, "judgement": 1}\n')
    found = provenance.problems(scores)
    assert len(found) == 1 and found[0].startswith("2 row(s) (e.g. m:honest level 128 overall) were computed from other judgments")
    assert str(judged) in found[0]


def test_a_missing_judgments_file_and_rows_from_elsewhere_are_named(tmp_path):
    scores = _results(tmp_path, ROWS)
    (tmp_path / "judgments/rules/n/honest/64.jsonl").unlink()
    assert provenance.problems(scores) == [
        f"1 row(s) (e.g. n:honest level 64 overall) were computed from other judgments than those there now "
        f"({tmp_path / 'judgments/rules/n/honest/64.jsonl'})"
    ]
    elsewhere = tmp_path / "other" / "scores.csv"  # its judgments are not beside it: nothing to trace the rows to
    elsewhere.parent.mkdir()
    elsewhere.write_text(scores.read_text())
    provenance.stamp(elsewhere)
    assert _digests(elsewhere) == ["", "", "", ""]
    assert provenance.problems(elsewhere) == [
        f"4 row(s) (e.g. m:honest level 64 overall) were not computed from judgments under {elsewhere.parent}"
    ]


def test_rows_moved_or_a_csv_of_another_kind_are_not_intact(tmp_path):
    scores = _results(tmp_path, ROWS)
    header, *lines = scores.read_text().splitlines(keepends=True)
    scores.write_text("".join([header, lines[1], lines[0], *lines[2:]]))
    assert provenance.problems(scores)[0].startswith("2 row(s) (e.g. line 2, m:honest level 128 overall) do not match their row_digest")
    other = tmp_path / "table2.csv"  # CVRR-ES's layout: no prompt or level
    other.write_text("setting,model,average\nstandard_prompting,m,50.0\n")
    assert provenance.problems(other) == ["is not a scores.csv or comparisons.csv (columns setting, model, average)"]
    assert provenance.problems(tmp_path / "absent.csv")[0].startswith("cannot be read (")
    scores.write_text(header)  # every row removed: no row digest is left to tell (comparisons.csv may hold none)
    assert provenance.problems(scores) == ["holds no row: cut short since it was written"]


def test_the_start_up_check_names_an_edited_file_and_remembers_a_pass(tmp_path):
    scores = _results(tmp_path, ROWS)
    cvrr = tmp_path / "cvrr" / "scores.csv"  # CVRR-ES's scores.csv is not stamped: not checked here
    cvrr.parent.mkdir()
    cvrr.write_text("model,dimension,accuracy\nm,x,1.0\n")
    remembered = verify.Remembered()
    assert provenance.check_published([scores, cvrr], [], remembered) == []
    assert list(remembered.used) == [f"{provenance.PUBLISHED_CHECK}:{scores}"]
    again = verify.Remembered()
    again.passed = dict(remembered.used)
    assert provenance.check_published([scores], [], again) == [] and again.used == remembered.used
    text, stat = scores.read_bytes(), scores.stat()
    scores.write_bytes(text.replace(b",10.0,", b",11.0,"))
    os.utime(scores, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # size and modification time kept: found all the same
    assert (scores.stat().st_size, scores.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    [(path, reason)] = provenance.check_published([scores], [], again)
    assert path == str(scores) and "1 row(s) (e.g. line 2, m:honest level 64 overall) do not match their row_digest" in reason
    assert provenance.check_published([scores], [str(scores)], verify.Remembered()) == []  # already stale: rebuilt anyway


def _supplement(tmp_path: Path) -> tuple[Path, Path]:
    """A supplement cell's responses (two items) and their judgments, as the workflow lays them out."""
    from virtuebench.records import Judgment, Response, line_digest, to_json_line

    responses = tmp_path / "results/supplement/responses/m/lvbench/oe.jsonl"
    judgments = tmp_path / "results/supplement/judgments/m/lvbench/oe.jsonl"
    for path in (responses, judgments):
        path.parent.mkdir(parents=True)
    records = [Response(f"q{k}", "v", "m", "fake", "honest", "h", 64, 64, f"answer {k}", None, 0.1, "f") for k in range(2)]
    lines = [to_json_line(record) for record in records]
    responses.write_text("".join(lines))
    judged = [
        Judgment(f"q{k}", "m", "honest", 64, "rules", "reasoning", "oe", "a", False, f"answer {k}", 0, 1, True, "", None, "f")
        for k in range(2)
    ]
    judgments.write_text("".join(to_json_line(replace(j, response_hash=line_digest(line.encode()))) for j, line in zip(judged, lines)))
    return responses, judgments


def test_the_supplements_judgments_are_checked_against_the_responses_they_judged(tmp_path):
    responses, judgments = _supplement(tmp_path)
    assert provenance.supplement_problems([judgments, tmp_path / "elsewhere/judgments/m/lvbench/oe.jsonl"]) == []
    responses.write_text(responses.read_text().replace('"answer 1"', '"answer one"'))  # asked again since it was judged
    assert provenance.supplement_problems([judgments]) == [
        f"{judgments}: item 'q1' judged another response record than the one in {responses} now"
    ]
    responses.write_text(responses.read_text().splitlines(keepends=True)[0])
    assert provenance.supplement_problems([judgments]) == [
        f"{judgments}: 0 response(s) of {responses} not judged and 1 judgment(s) of no response there"
    ]
    responses.unlink()
    assert provenance.supplement_problems([judgments]) == [f"{judgments}: made from {responses}, which is missing"]


def test_a_judgments_files_digest_is_of_its_verdicts_not_their_order_or_the_response_lines_digest(tmp_path):
    """Two clean runs give the same scores.csv byte for byte (make faults compares them): the judgments' response_hash
    is a digest of the response's line, whose latency differs from run to run, and a resumed judge job writes its
    records in another order. Neither changes the digest; a verdict does. (Each change below changes the file's size:
    a digest is kept per size and modification time.)"""
    judged = tmp_path / "64.jsonl"
    lines = [
        '{"instance_id": "a", "judgement": 1, "raw": "{\\"response_hash\\": \\"x\\"}", "response_hash": "' + "1" * 32 + '", "sample": 0}',
        '{"instance_id": "b", "judgement": 0, "response_hash": null}',
    ]
    judged.write_text("\n".join(lines) + "\n")
    digest = provenance.file_digest(judged)
    judged.write_text("\n".join([lines[1], lines[0].replace("1" * 32, "2" * 32)]) + "\n")
    assert provenance.file_digest(judged) == digest
    judged.write_text("\n".join([lines[1], lines[0].replace('\\"x\\"', '\\"xy\\"')]) + "\n")  # the judge's reply, not the hash
    assert provenance.file_digest(judged) != digest
    judged.write_text("\n".join([lines[1].replace('"judgement": 0', '"judgement": 1, "valid": false'), lines[0]]) + "\n")
    assert provenance.file_digest(judged) != digest
    assert provenance.file_digest(tmp_path / "absent.jsonl") is None
