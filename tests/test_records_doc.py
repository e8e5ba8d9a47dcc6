"""docs/records.md describes every field of every record format: each dataclass field (and each column
of the instances table) is named in its section, so the page cannot drift from the code."""

import dataclasses
import re

import pytest
from helpers.data import REPO

from virtuebench.comparisons import Comparison
from virtuebench.frames import Manifest
from virtuebench.instances import SCHEMA
from virtuebench.metrics import Score
from virtuebench.records import Judgment, Response
from virtuebench.sources.base import EXCLUDED_COLUMNS, EXCLUSION_KINDS, EXCLUSION_UNITS

DOC = (REPO / "docs" / "records.md").read_text()


def section(title_start: str) -> str:
    match = re.search(rf"^## {re.escape(title_start)}.*?(?=^## |\Z)", DOC, re.MULTILINE | re.DOTALL)
    assert match, f"docs/records.md has no section starting '## {title_start}'"
    return match.group(0)


@pytest.mark.parametrize(
    ("title", "names"),
    [
        ("Instances table", list(SCHEMA)),
        ("Frame manifest", [field.name for field in dataclasses.fields(Manifest)]),
        ("Responses", [field.name for field in dataclasses.fields(Response)]),
        ("Judgments", [field.name for field in dataclasses.fields(Judgment)]),
        ("Scores", [field.name for field in dataclasses.fields(Score)]),
        ("Comparisons", [field.name for field in dataclasses.fields(Comparison)]),
        ("Excluded items", [*EXCLUDED_COLUMNS, *EXCLUSION_KINDS, *EXCLUSION_UNITS]),
    ],
)
def test_every_field_is_documented(title, names):
    text = section(title)
    missing = [name for name in names if not re.search(rf"`[^`]*\b{re.escape(name)}\b[^`]*`", text)]
    assert not missing, f"docs/records.md, section {title!r}, does not name: {missing}"
