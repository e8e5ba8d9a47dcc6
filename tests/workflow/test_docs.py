"""The docs a newcomer reads: a README short enough to read in one sitting, papers cited by title and arXiv id rather
than by a path only the project's authors have, every relative link pointing at a file (and heading) that exists,
and the README's Layout table naming every module of the package."""

from __future__ import annotations

import re
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


def layout_rows() -> list[tuple[str, str]]:
    text = README.read_text()
    section = text[text.index("## Layout") :]
    section = section[: section.index("\n## ", 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and not set(cells[0]) <= set("-"):
            rows.append((cells[0], cells[1]))
    return rows


def test_the_layout_names_every_module():
    package = REPO / "src" / "virtuebench"
    rows = layout_rows()
    missing = []
    for module in sorted(package.rglob("*.py")):
        if module.stem.startswith("__"):
            continue
        parent = module.parent.relative_to(package).as_posix()
        if parent == ".":
            owners = [what for path, what in rows if path == "`src/virtuebench/`"]
        else:
            owners = [what for path, what in rows if f"`{parent}/`" in path or f"/{parent}/`" in path]
        if not any(f"`{module.stem}`" in what for what in owners):
            missing.append(module.relative_to(package).as_posix())
    assert not missing, f"README.md's Layout table does not name {missing}"
