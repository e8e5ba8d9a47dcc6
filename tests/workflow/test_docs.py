"""The docs a newcomer reads: a README short enough to read in one sitting, whose set-up commands, stage table and
layout say what the repository holds; papers cited by title and arXiv id rather than by a path only the project's
authors have; every relative link pointing at a file (and heading) that exists; the README's commands not repeated
in docs/workflow.md; and no generated report in docs/."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.data import REPO

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, REPO / "CHANGELOG.md", *DOCS]
#: Where a reader of the repository looks; none of it may send them to ../shared/, which users do not have.
CITING = ["src", "config", "rules", "docs", "report", "profiles", "envs", "tools"]
CITING_FILES = ["README.md", "CHANGELOG.md", "Makefile", "Snakefile"]
TEXT = {".py", ".md", ".yaml", ".yml", ".smk", ".rst", ".toml", ".txt", ".json", ".jsonl", ".sh", ".cfg", ""}
#: The project-internal names of the papers and the contract, from before they were cited by title and arXiv id.
UNCITABLE = re.compile(r"shared/|seeds?/00\d|\bseed 00\d|CONTRACT\.md")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def test_the_readme_is_read_in_one_sitting():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail into docs/"


def cited_files() -> list[Path]:
    files = [REPO / name for name in CITING_FILES if (REPO / name).is_file()]
    for folder in CITING:
        files += [
            p
            for p in (REPO / folder).rglob("*")
            if p.is_file() and p.suffix in TEXT and "__pycache__" not in p.parts and not any(part.endswith(".egg-info") for part in p.parts)
        ]
    return files


def test_no_path_only_the_authors_have_is_cited():
    found = []
    for path in cited_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if UNCITABLE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not found, "cite the paper by title and arXiv id (docs/papers.md), the contract as docs/contract.md:\n" + "\n".join(found)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.MULTILINE)}


def links(page: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer(FENCE.sub("", page.read_text()))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_what_exists(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}:\n" + "\n".join(broken)


def section(heading: str, page: Path = README) -> str:
    """The text under a `## heading` of `page`, up to the next `## `."""
    text = page.read_text()
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def table_rows(text: str, columns: int) -> list[list[str]]:
    """The body rows of the markdown tables in `text` with `columns` cells, each cell stripped."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == columns and not set("".join(cells)) <= set("-:"):
            rows.append(cells)
    return rows[1:] if rows and rows[0][0] in ("stage", "path") else rows


def fenced_commands(text: str) -> list[str]:
    """Each command line of the ```sh blocks in `text`, without its comment."""
    commands = []
    for block in FENCE.findall(text):
        for line in block.splitlines()[1:-1]:
            command = line.split("  #")[0].strip()
            if command:
                commands.append(command)
    return commands


def test_the_two_set_up_commands_are_make_targets():
    assert fenced_commands(section("Set-up: two commands")) == ["make demo", "make test"]
    makefile = (REPO / "Makefile").read_text()
    for target in ("demo", "test"):
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), f"the Makefile has no `{target}` target"


def stage_rows() -> list[tuple[str, str, str, str]]:
    rows = table_rows(section("Stages"), 4)
    assert rows, "README.md's Stages section has no stage | rule file | module | output table"
    return [tuple(cell.strip("`") for cell in row) for row in rows]


def declared_output(output: str) -> re.Pattern:
    """A quoted path in a rule file that ends the way the table's output does: each `<name>` a `{wildcard}`, the
    results folder (`results/`, `results/paper/`, ...) left out, and at least one part of it named, not a wildcard
    (`frames/{video_id}/{level}`, not `{video_id}/{level}`)."""
    parts = output.strip("/").split("/")[1:]
    tails = ["/".join(parts[i:]) for i in range(len(parts)) if any(not re.fullmatch(r"<\w+>", p.split(".")[0]) for p in parts[i:])]
    escaped = [re.sub(r"<\w+>", r"\\{[^{}\"]+\\}", re.escape(tail)) for tail in tails]
    return re.compile('"(?:' + "|".join(escaped) + ')"')


def test_every_stage_row_names_a_rule_file_a_module_and_an_output_that_rule_file_declares():
    wrong = []
    for stage, rule_file, module, output in stage_rows():
        path = REPO / rule_file
        if not path.is_file():
            wrong.append(f"{stage}: no rule file {rule_file}")
            continue
        if importlib.util.find_spec(module) is None:
            wrong.append(f"{stage}: no module {module}")
        if not declared_output(output).search(path.read_text()):
            wrong.append(f"{stage}: {rule_file} declares no output like {output}")
    assert not wrong, "README.md's stage table:\n" + "\n".join(wrong)


def test_every_rule_file_is_a_row_of_the_stage_table():
    named = {rule_file for _, rule_file, _, _ in stage_rows()}
    rule_files = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "rules").glob("*.smk")
        if re.search(r"^(?:rule|checkpoint) (?!all:)\w+", path.read_text(), re.MULTILINE)
    }
    assert not rule_files - named, f"README.md's stage table lacks a row for {sorted(rule_files - named)}"


def test_the_readme_names_every_module_of_the_package():
    """Each top-level module and subpackage, in the stage table (`virtuebench.x`) or a Layout row of
    `src/virtuebench/`; the files inside a subpackage are left to its own docs (a new judge kind needs no README row)."""
    package = REPO / "src" / "virtuebench"
    staged = {module.removeprefix("virtuebench.").split(".")[0] for _, _, module, _ in stage_rows()}
    laid_out = " ".join(what for path, what in table_rows(section("Layout"), 2) if path == "`src/virtuebench/`")
    tops = {p.stem for p in package.glob("*.py") if not p.stem.startswith("__")}
    tops |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    missing = sorted(name for name in tops if name not in staged and f"`{name}`" not in laid_out and f"`{name}/`" not in laid_out)
    assert not missing, f"README.md names neither in its stage table nor in its Layout table: {missing}"


def test_where_to_go_next_links_every_guide_under_a_task():
    text = section("Where to go next")
    groups = re.findall(r"^- \*\*([^*]+)\*\*:", text, re.MULTILINE)
    assert len(groups) >= 3, "README.md's 'Where to go next' is grouped by task: `- **task**: links`"
    linked = {Path(target).name for target in links(README) if target.startswith("docs/") and target in text}
    unlinked = sorted(page.name for page in DOCS if page.name not in linked)
    assert not unlinked, f"README.md's 'Where to go next' does not link {unlinked}"


def test_the_readme_commands_are_not_repeated_in_the_workflow_guide():
    workflow = fenced_commands((REPO / "docs" / "workflow.md").read_text())
    repeated = sorted(set(fenced_commands(README.read_text())) & set(workflow))
    assert not repeated, f"docs/workflow.md repeats README.md's commands (link to them instead): {repeated}"


@pytest.fixture(scope="module")
def mutation_runner():
    spec = importlib.util.spec_from_file_location("mutation_run", REPO / "tests" / "mutation" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_the_mutation_report_is_written_to_an_ignored_folder_not_docs(mutation_runner, tmp_path, monkeypatch):
    makefile = re.search(r"^MUTATION_REPORT \?= (\S+)$", (REPO / "Makefile").read_text(), re.MULTILINE).group(1)
    for report in (makefile, mutation_runner.REPORT.relative_to(REPO).as_posix()):
        assert not report.startswith("docs/"), report
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", report], cwd=REPO)
        assert ignored.returncode == 0, f"{report} is not ignored by git: a generated report would be committed"
    # The report starts with its header, in a folder the writer makes (build/ is absent in a fresh clone).
    monkeypatch.setattr(mutation_runner, "MUTMUT", Path("/bin/true"))  # `mutmut --version`, installed by `make mutation` only
    report = tmp_path / "build" / "mutation.md"
    assert mutation_runner.write_report([], ({}, {}), report, 0.0, 1) == []
    assert tuple(report.read_text().splitlines()[: len(mutation_runner.REPORT_HEADER)]) == mutation_runner.REPORT_HEADER


def test_docs_hold_no_generated_report(mutation_runner):
    generated = [page.name for page in DOCS if mutation_runner.REPORT_HEADER[-1] in page.read_text()]
    assert not generated, f"docs/ holds the generated mutation report: {generated} (make mutation writes build/mutation.md)"
