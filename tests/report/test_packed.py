"""virtuebench.report.packed: is a report zip (laid out as `snakemake --report x.zip` lays it out: x/report.html, whose
`results` script names each result's copy, and the copies under x/data/raw/<id>/, a folder's files beside its page)
made from the files there now? The real Snakemake's zip is checked in tests/test_verify.py."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from virtuebench.report.packed import UnreadableReport, packed_files, report_problems

FILES = {"results/table2.html": "<table></table>", "results/fig4.png": "png", "results/report/browser/index.html": "site"}
FILES |= {"results/report/browser/items/a.html": "item a"}


def make_report(base: Path, files: dict[str, str] = FILES, results_line: str | None = None) -> Path:
    """The files under `base`, and a report zip of them there (results/report.zip) as Snakemake packs them."""
    for path, text in files.items():
        (base / path).parent.mkdir(parents=True, exist_ok=True)
        (base / path).write_text(text)
    shown = [path for path in files if "/items/" not in path]  # a folder's page is the result, its files ride along
    results = {path: {"name": Path(path).name, "data_uri": f"data/raw/{i:016x}/{Path(path).name}"} for i, path in enumerate(shown)}
    report_zip = base / "results" / "report.zip"
    with zipfile.ZipFile(report_zip, "w") as archive:
        for path, entry in results.items():
            archive.writestr(f"report/{entry['data_uri']}", files[path])
        folder = os.path.dirname(results["results/report/browser/index.html"]["data_uri"])
        archive.writestr(f"report/{folder}/items/a.html", files["results/report/browser/items/a.html"])
        line = results_line if results_line is not None else f"    var results = {json.dumps(results)};"
        archive.writestr("report/report.html", f'<script>var results = new Array(3);</script>\n<script id="results">\n{line}\n</script>')
    return report_zip


def test_a_report_of_the_files_there_now_is_current_and_names_every_file_it_packed(tmp_path):
    report_zip = make_report(tmp_path)
    assert sorted(item.path for item in packed_files(report_zip)) == sorted(FILES)
    assert report_problems(report_zip, tmp_path) == []
    os.utime(tmp_path / "results" / "table2.html", (1, 1))  # a touch: the same content
    assert report_problems(report_zip, tmp_path) == []


def test_a_changed_removed_or_stale_packed_file_makes_the_report_stale(tmp_path):
    report_zip = make_report(tmp_path)
    (tmp_path / "results" / "table2.html").write_text("<table>new</table>")
    (tmp_path / "results" / "report" / "browser" / "items" / "a.html").write_text("item A")  # same size, other bytes
    (tmp_path / "results" / "fig4.png").unlink()
    assert report_problems(report_zip, tmp_path) == [
        "its copy of results/table2.html differs from the file there now",
        "packs results/fig4.png, which is no longer there",
        "its copy of results/report/browser/items/a.html differs from the file there now",
    ]
    made_before = make_report(tmp_path / "before", {**FILES, "results/table1.tex": "LaTeX"})
    assert report_problems(made_before, tmp_path / "before") == []
    (tmp_path / "before" / "results" / "table1.html").write_text("<table></table>")
    assert report_problems(made_before, tmp_path / "before") == ["lacks results/table1.html, the page of results/table1.tex (made since)"]
    fresh = make_report(tmp_path / "again")
    assert report_problems(fresh, tmp_path / "again", stale=["results/fig4.png"]) == ["packs results/fig4.png, which is stale"]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda path: path.write_text("not a zip"), "cannot be read as a zip"),
        (lambda path: zipfile.ZipFile(path, "w").close(), "holds no report.html at its top folder"),
        (lambda path: make_report(path.parent.parent, results_line="var results = {broken"), "lists no results this check can read"),
        (lambda path: make_report(path.parent.parent, results_line='var results = {"r/x": {"data_uri": "data/raw/9/x"}};'), "lists r/x"),
    ],
    ids=["not-a-zip", "no-page", "unreadable-list", "copy-missing"],
)
def test_a_zip_that_is_not_a_readable_report_is_named_in_one_line(tmp_path, make, said):
    report_zip = tmp_path / "results" / "report.zip"
    report_zip.parent.mkdir()
    make(report_zip)
    with pytest.raises(UnreadableReport, match=f"^{report_zip}: .*{said}"):
        packed_files(report_zip)
    (problem,) = report_problems(report_zip, tmp_path)
    assert said in problem and "\n" not in problem
