"""Is a Snakemake report (the zip `snakemake --report results/report.zip` writes) made from the results there now?

The zip says what it packed: its report.html lists each result's path and where its copy lies in the zip (Snakemake's
`var results = {...}`: path -> data_uri), and a folder's files lie beside its page's copy. Each copy is compared with
the file at its path now, by size and CRC-32 (the zip's own checksum of each member): by content, so a report made a
moment ago is current and a touch changes nothing, while a table rewritten by a changed configuration makes it stale.
Nothing records when or how the zip was made: a report made by `snakemake --report` alone, or before this check, is
checked the same way. A result added since is found only where it is a table's page beside a packed .tex (a report
made before the pages were written); another (a figure a new setting draws) is not: the zip names only what it packed.
"""

from __future__ import annotations

import json
import posixpath
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

#: How report.html names the results it packed (snakemake.report.html_reporter: `var results = {...};` on one line).
RESULTS_SCRIPT, RESULTS_LINE = '<script id="results">', "var results = "


class UnreadableReport(ValueError):
    """A zip whose packed results cannot be told: not a zip, or no report.html listing its results."""


@dataclass(frozen=True)
class Packed:
    """One file packed in the report: where it came from (`path`, as Snakemake named it) and its member in the zip."""

    path: str
    member: zipfile.ZipInfo


def packed_files(report_zip: str | Path) -> list[Packed]:
    """Every file the report packed: each result, and each file of a result that is a folder (the results browser),
    with the path it was copied from. UnreadableReport where the zip or its list of results cannot be read."""
    try:
        with zipfile.ZipFile(report_zip) as archive:
            members = archive.infolist()
            pages = [m for m in members if PurePosixPath(m.filename).name == "report.html" and len(PurePosixPath(m.filename).parts) == 2]
            if len(pages) != 1:
                raise UnreadableReport(f"{report_zip}: holds no report.html at its top folder: not a report `snakemake --report` wrote")
            page = archive.read(pages[0]).decode("utf-8", errors="replace")
    except (OSError, zipfile.BadZipFile) as error:
        raise UnreadableReport(f"{report_zip}: cannot be read as a zip ({error})") from None
    results = _results(page, report_zip)
    top = PurePosixPath(pages[0].filename).parent
    by_name = {member.filename: member for member in members if not member.is_dir()}
    found: list[Packed] = []
    for path, entry in results.items():
        uri = entry.get("data_uri") if isinstance(entry, dict) else None
        if not isinstance(uri, str) or uri.startswith("data:"):
            continue  # embedded in the page: nothing packed beside it
        copy = str(top / uri)
        if copy not in by_name:
            raise UnreadableReport(f"{report_zip}: lists {path} at {uri}, which it does not hold")
        found.append(Packed(path, by_name[copy]))
        folder = posixpath.dirname(copy) + "/"
        for name, member in by_name.items():  # a folder's other files, beside its page (Snakemake's aux files)
            if name.startswith(folder) and name != copy:
                found.append(Packed(posixpath.join(posixpath.dirname(path), name[len(folder) :]), member))
    return found


def _results(page: str, report_zip: str | Path) -> dict:
    """The `results` the page's script of that id declares (the page's scripts declare other `var results`)."""
    start = page.find(RESULTS_SCRIPT)
    for line in page[start if start >= 0 else 0 :].splitlines():
        line = line.strip()
        if line.startswith(RESULTS_LINE):
            try:
                results = json.loads(line[len(RESULTS_LINE) :].rstrip(";"))
            except ValueError:
                continue
            if isinstance(results, dict):
                return results
    raise UnreadableReport(f"{report_zip}: its report.html lists no results this check can read (`{RESULTS_LINE}{{...}}`)")


def _crc32(path: Path) -> int:
    crc = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def report_problems(report_zip: str | Path, base: str | Path = ".", stale: Iterable[str] = ()) -> list[str]:
    """Why `report_zip` is not the report of the results there now, one reason per line; none where every file it
    packed is there with the same content. `base`: the folder Snakemake ran in (its paths are relative to it);
    `stale`: files the provenance check found stale (virtuebench.verify), which a packed copy of is stale with."""
    try:
        packed = packed_files(report_zip)
    except UnreadableReport as error:
        return [str(error).removeprefix(f"{report_zip}: ")]
    stale = {str(Path(path)) for path in stale}
    problems: list[str] = []
    for item in packed:
        current = Path(base) / item.path
        if not current.is_file():
            problems.append(f"packs {item.path}, which is no longer there")
        elif current.stat().st_size != item.member.file_size or _crc32(current) != item.member.CRC:
            problems.append(f"its copy of {item.path} differs from the file there now")
        elif str(Path(item.path)) in stale:
            problems.append(f"packs {item.path}, which is stale")
    paths = {item.path for item in packed}
    for path in sorted(paths):
        page = str(PurePosixPath(path).with_suffix(".html"))
        if path.endswith(".tex") and page not in paths and (Path(base) / page).is_file():
            problems.append(f"lacks {page}, the page of {path} (made since)")
    return problems


def summarize_report(report_zip: str | Path) -> str | None:
    """The end of a run's word on Snakemake's report, where there is one and it no longer packs these results."""
    if not Path(report_zip).is_file():
        return None
    problems = report_problems(report_zip)
    if not problems:
        return None
    more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
    return f"{report_zip} is not the report of these results ({problems[0]}{more}): `make report` makes it again"
