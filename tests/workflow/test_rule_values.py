"""One path from the configuration to the rules (docs/workflow.md): rules/common.smk checks the configuration and builds
the plan (PLAN); every rule file reads its values from PLAN and from common.smk's functions, never from `config[...]`,
and the Snakefile sets no global a rule file would read implicitly. Static checks of the rule files' text, read as
Snakemake compiles them (snakemake.parser) and then as Python (symtable)."""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from pathlib import Path

import pytest
from helpers.data import REPO
from snakemake import parser

RULES = sorted((REPO / "rules").glob("*.smk"))
COMMON = REPO / "rules" / "common.smk"

#: Names Snakemake puts in every Snakefile's namespace that the rule files use (its directives and helpers), and the
#: names the compiled rule code itself refers to.
SNAKEMAKE_NAMES = {"workflow", "rules", "checkpoints", "shell", "expand", "ancient", "directory", "report", "temp"}
SNAKEMAKE_NAMES |= {"protected", "touch", "pipe", "service", "multiext", "glob_wildcards", "storage", "__name__"}


class _Source:
    def __init__(self, path: Path):
        self.path = path

    def get_path_or_uri(self, secret_free: bool = True) -> str:
        return str(self.path)


class _SourceCache:
    def open(self, source: _Source):
        return open(source.path, encoding="utf-8")


class _Workflow:
    sourcecache = _SourceCache()


def compiled(path: Path) -> str:
    """A Snakefile's text as the Python Snakemake runs (its rules become decorated functions)."""
    code, _ = parser.parse(_Source(path), _Workflow(), {})
    return code


def global_reads(code: str) -> set[str]:
    """Every global name the code reads, at module level or inside a function or lambda."""
    names: set[str] = set()

    def visit(table: symtable.SymbolTable) -> None:
        for symbol in table.get_symbols():
            if not symbol.is_referenced():
                continue
            if table.get_type() == "module" or symbol.is_global():
                names.add(symbol.get_name())
        for child in table.get_children():
            visit(child)

    visit(symtable.symtable(code, "<rules>", "exec"))
    return names


def defined_here(code: str) -> set[str]:
    """Names the file itself binds at module level (assignments, imports, functions), each read explicitly where used."""
    table = symtable.symtable(code, "<rules>", "exec")
    return {symbol.get_name() for symbol in table.get_symbols() if symbol.is_assigned() or symbol.is_imported()}


def common_functions() -> set[str]:
    """The functions rules/common.smk defines, and PLAN."""
    tree = ast.parse(compiled(COMMON))
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("__rule_")}
    return functions | {"PLAN"}


def test_the_checks_see_what_a_rule_file_reads():
    """The check reads names inside lambdas and rule parameters, and tells a file's own names from the others'."""
    code = compiled(REPO / "rules" / "report.smk")
    assert {"PLAN", "judgments", "res", "logpath", "show_in_browser", "rules"} <= global_reads(code)
    assert "INSTANCES_STEP" in defined_here(compiled(REPO / "rules" / "sources.smk"))
    assert {"start_plan", "res", "judgments", "on_start"} <= common_functions()


@pytest.mark.parametrize("path", [REPO / "Snakefile", *RULES], ids=lambda path: path.name)
def test_no_rule_file_reads_config(path):
    """The plan is the one reader of the configuration: a rule reads PLAN (through common.smk's functions)."""
    text = path.read_text()
    assert not re.search(r"\bconfig\s*\[", text), f"{path.relative_to(REPO)} reads config[...]: ask the plan (virtuebench.plan)"
    if path.name != "common.smk":  # common.smk hands the configuration to the config check and the plan
        assert "config" not in global_reads(compiled(path)), f"{path.relative_to(REPO)} reads config: ask the plan"


@pytest.mark.parametrize("path", [path for path in RULES if path != COMMON], ids=lambda path: path.name)
def test_a_rule_file_reads_only_plan_common_functions_and_its_own_names(path):
    code = compiled(path)
    allowed = common_functions() | defined_here(code) | SNAKEMAKE_NAMES | set(dir(builtins))
    implicit = sorted(global_reads(code) - allowed)
    assert not implicit, f"{path.relative_to(REPO)} reads {implicit}, set elsewhere: make them plan methods or common.smk functions"


def test_the_snakefile_sets_no_global_but_includes_and_targets():
    """The Snakefile is config, includes, the `all` target and the run's start and end: it binds no name of its own
    (the plan is built in rules/common.smk), so no rule file reads a global it set."""
    code = compiled(REPO / "Snakefile")
    assert {name for name in defined_here(code) if not name.startswith("__")} <= {"sys", "Path", "min_version"}, defined_here(code)
    assert len(REPO.joinpath("Snakefile").read_text().splitlines()) <= 60


def test_every_common_function_is_read_by_some_rule_file():
    """common.smk holds adapters the rules use, no dead ones: each function is read in the Snakefile or a rules file."""
    reads = set().union(*(global_reads(compiled(path)) for path in [REPO / "Snakefile", *RULES]))
    assert not sorted(common_functions() - reads)
