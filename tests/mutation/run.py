"""`make mutation`: mutmut on the modules whose mistakes change published numbers, and its report (build/mutation.md).

Each target (module and the fast unit-test files that cover it) runs in a scratch copy of the working tree, so
no mutants/ folder is ever left in the checkout. Surviving mutants are looked up in tests/mutation/verdicts.toml,
keyed by what cannot shift between runs (the file, the function, the original and the mutated line, not mutmut's
numeric suffix): each is either `equivalent` (with the reason) or was `killed` by a named test (kept, so the report
can show what each new test catches). A survivor without a verdict fails the run and is printed as a stub to add.
The report is generated, so it goes to an ignored folder (build/), never docs/: docs/mutation.md says how to run
this and what it found.

    python tests/mutation/run.py [--targets levels metrics ...] [--max-children N] [--report build/mutation.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = ROOT / "tests" / "mutation" / "verdicts.toml"
#: Where the generated report goes by default: git-ignored (.gitignore's /build/), not docs/.
REPORT = ROOT / "build" / "mutation.md"
#: The report's first lines; tests/workflow/test_docs.py checks that no page in docs/ starts like this.
REPORT_HEADER = ("# Mutation testing report", "", "Written by `make mutation` (`tests/mutation/run.py`); do not edit by hand.")
MUTMUT = Path(sys.executable).with_name("mutmut")


@dataclass(frozen=True)
class Target:
    """A module (or part of one) and the unit tests that are meant to catch its mistakes."""

    name: str
    paths: tuple[str, ...]
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()  # where set, only these top-level functions/classes are mutated
    complete: bool = True  # every survivor has a test or an `equivalent` verdict: a new one fails the run


TARGETS = (
    Target("levels", ("src/virtuebench/levels.py",), ("tests/test_levels.py",)),
    Target("metrics", ("src/virtuebench/metrics.py",), ("tests/test_metrics.py",)),
    Target("summary", ("src/virtuebench/report/summary.py",), ("tests/report/test_summary.py",)),
    Target("records", ("src/virtuebench/records.py",), ("tests/test_records.py", "tests/test_records_doc.py")),
    Target("refusal", ("src/virtuebench/judge/refusal.py",), ("tests/judge/test_judge.py", "tests/judge/test_refusal.py")),
    # Case A's matching: hundreds of mutants in word lists and phrasings; its survivors are listed, not all killed yet
    Target(
        "matching",
        ("src/virtuebench/judge/matching.py", "src/virtuebench/judge/numbers.py"),
        ("tests/judge/test_judge.py", "tests/judge/test_numbers.py"),
        complete=False,
    ),
    Target(
        "timing",
        ("src/virtuebench/models/timing.py", "src/virtuebench/frames.py"),
        ("tests/models/test_model_inputs.py", "tests/models/test_timing.py"),
        functions=("FrameTimes", "clock_text", "plan_frames"),
    ),
    # the cluster bootstrap: its survivors are listed; the ones left are mostly numerical guards and seeds
    Target(
        "bootstrap",
        ("src/virtuebench/support/bootstrap.py",),
        # the two calibration tests (16 s and 2 s) are left to `make test`: every mutant would rerun them
        (
            "tests/support/test_bootstrap.py",
            "-k",
            "not covers_a_known_rate and not uniform_under_no_difference",
        ),
        complete=False,
    ),
)


#: Run in the scratch copy after `mutmut run`: [name, status, diff (survivors only)] of every mutant, as JSON.
LIST_MUTANTS = """
import json
from mutmut.__main__ import SourceFileMutationData, walk_mutatable_files
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
found = []
for path in walk_mutatable_files():
    data = SourceFileMutationData(path=path)
    data.load()
    for name, code in data.exit_code_by_key.items():
        status = status_by_exit_code[code]
        found.append([name, status, "" if status == "killed" else get_diff_for_mutant(name, path=path)])
print(json.dumps(found))
"""


@dataclass
class Mutant:
    name: str  # mutmut's, e.g. virtuebench.levels.x_is_available__mutmut_3 (its number shifts with the code)
    status: str
    path: str = ""
    function: str = ""
    line: str = ""
    mutated: str = ""
    diff: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.path, self.function, self.line, self.mutated)


@dataclass
class Outcome:
    target: Target
    seconds: float
    mutants: list[Mutant] = field(default_factory=list)

    def count(self, *statuses: str) -> int:
        return sum(m.status in statuses for m in self.mutants)


def copy_tree(scratch: Path) -> None:
    """The working tree as git sees it (tracked and untracked, not ignored), so uncommitted tests count."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, check=True, capture_output=True
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        source = ROOT / raw.decode()
        if source.is_file():
            destination = scratch / raw.decode()
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)


def restrict_to(source: str, keep: tuple[str, ...]) -> str:
    """`source` with every top-level statement except the `keep` functions/classes inside a `no mutate` region."""
    import ast

    body = ast.parse(source).body
    lines = source.splitlines(keepends=True)
    kept = [(node.lineno - len(node.decorator_list), node.end_lineno) for node in body if getattr(node, "name", None) in keep]
    missing = set(keep) - {getattr(node, "name", None) for node in body}
    if missing and not kept:
        return source  # none of them in this file: mutate all of it
    # region boundaries: comment lines placed at module level before a kept block and after it
    out, cursor = [], 0
    for start, end in kept:
        out += ["# pragma: no mutate start\n", *lines[cursor : start - 1], "# pragma: no mutate end\n", *lines[start - 1 : end]]
        cursor = end
    out += ["# pragma: no mutate start\n", *lines[cursor:], "# pragma: no mutate end\n"]
    return "".join(out)


def mutmut_config(target: Target) -> str:
    paths = [p for p in target.tests if p.startswith("tests/")]
    options = [p for p in target.tests if not p.startswith("tests/")]
    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["src/"]\n'
        f"only_mutate = {json.dumps(list(target.paths))}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(paths + options)}\n"
        'pytest_add_cli_args = ["-p", "no:xdist", "-q", "-p", "no:cacheprovider"]\n'
        'also_copy = ["config/", "docs/"]\n'
    )


def function_of(name: str) -> str:
    """`virtuebench.metrics.xǁTrustWeightsǁvalue__mutmut_4` -> `TrustWeights.value`."""
    local = name.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]
    if local.startswith("xǁ"):
        return ".".join(part for part in local[2:].split("ǁ") if part)
    return local.removeprefix("x_")


def changed_lines(diff: str) -> tuple[str, str]:
    removed = [line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return "\n".join(removed), "\n".join(added)


def run_target(target: Target, scratch: Path, max_children: int) -> Outcome:
    pyproject = scratch / "pyproject.toml"
    original = (ROOT / "pyproject.toml").read_text()
    pyproject.write_text(original + mutmut_config(target))
    for path in target.paths:
        text = (ROOT / path).read_text()
        (scratch / path).write_text(restrict_to(text, target.functions) if target.functions else text)
    shutil.rmtree(scratch / "mutants", ignore_errors=True)
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    started = time.monotonic()
    run = subprocess.run(
        [str(MUTMUT), "run", "--max-children", str(max_children)], cwd=scratch, env=environment, capture_output=True, text=True
    )
    seconds = time.monotonic() - started
    if run.returncode != 0:
        sys.stderr.write(run.stdout[-4000:] + run.stderr[-4000:])
        raise SystemExit(f"mutmut run failed for {target.name} (exit {run.returncode})")
    # statuses and diffs in one process (`mutmut results` and one `mutmut show` per survivor take a second each)
    listed = subprocess.run([sys.executable, "-c", LIST_MUTANTS], cwd=scratch, env=environment, capture_output=True, text=True, check=True)
    outcome = Outcome(target, seconds)
    module_paths = {p.removeprefix("src/").removesuffix(".py").replace("/", "."): p for p in target.paths}
    for name, status, diff in json.loads(listed.stdout):
        mutant = Mutant(name, status, diff=diff)
        mutant.path = module_paths.get(name.rsplit(".", 1)[0], name.rsplit(".", 1)[0])
        mutant.function = function_of(name)
        mutant.line, mutant.mutated = changed_lines(diff)
        outcome.mutants.append(mutant)
    shutil.rmtree(scratch / "mutants", ignore_errors=True)
    print(
        f"{target.name}: {len(outcome.mutants)} mutants, {outcome.count('killed')} killed, {outcome.count('survived')} survived, "
        f"{outcome.count('no tests')} no tests, {outcome.count('timeout')} timeouts ({seconds:.0f} s)",
        flush=True,
    )
    return outcome


def load_verdicts() -> tuple[dict[tuple[str, str, str, str], str], dict[tuple[str, str], dict]]:
    """The `equivalent` mutants (key -> reason) and, per (path, function), the tests written to kill its mutants."""
    data = tomllib.loads(VERDICTS.read_text()) if VERDICTS.exists() else {}
    equivalent = {(e["path"], e["function"], e["line"], e["mutated"]): e["reason"] for e in data.get("equivalent", [])}
    tests_for = {(e["path"], e["function"]): e for e in data.get("tests_for", [])}
    return equivalent, tests_for


def stub(mutant: Mutant) -> str:
    """A verdicts.toml entry to fill in, for a mutant no test can tell apart (json strings are valid TOML strings)."""
    return (
        f"[[equivalent]]\npath = {json.dumps(mutant.path)}\nfunction = {json.dumps(mutant.function)}\n"
        f"line = {json.dumps(mutant.line, ensure_ascii=False)}\nmutated = {json.dumps(mutant.mutated, ensure_ascii=False)}\n"
        'reason = ""\n'
    )


def _code(text: str) -> str:
    return "`" + text.replace("`", "'").replace("\n", " / ") + "`"


def write_report(outcomes: list[Outcome], verdicts: tuple[dict, dict], path: Path, minutes: float, max_children: int) -> list[Mutant]:
    """The report (build/mutation.md by default); returns the survivors of `complete` targets without an `equivalent`
    verdict."""
    equivalent, tests_for = verdicts
    version = subprocess.run([str(MUTMUT), "--version"], capture_output=True, text=True).stdout.strip() or "mutmut"
    lines = [
        *REPORT_HEADER,
        "mutmut changes each module below one small thing at a time (an operator, a constant, a comparison, a dropped",
        "argument) and runs the unit tests listed for it; a mutant the tests do not fail on *survived*. `no tests`: no listed",
        "test calls the mutated function (counted as surviving). Each survivor is either equivalent (no input can tell it",
        "from the original: the reason is given) or a missing test, listed as such. Verdicts and the tests written for each",
        "function: `tests/mutation/verdicts.toml`, keyed by file, function and the line's text (not mutmut's numbers, which",
        "shift). How to run it: docs/mutation.md.",
        "",
        f"{version}; {max_children} worker(s); {minutes:.1f} minutes in all.",
        "",
        "| target | module(s) | tests | mutants | killed | survived | no tests | timeouts | surviving share | equivalent | missing a test |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    open_survivors: list[Mutant] = []
    sections: list[str] = []
    for outcome in outcomes:
        target = outcome.target
        survivors = [m for m in outcome.mutants if m.status not in ("killed", "timeout")]
        explained = [m for m in survivors if m.key in equivalent]
        unexplained = [m for m in survivors if m.key not in equivalent]
        open_survivors += unexplained if target.complete else []
        total = len(outcome.mutants)
        share = f"{100 * len(survivors) / total:.1f}%" if total else "-"
        tests = " ".join(f"`{t}`" for t in target.tests if t.startswith("tests/"))
        only = f" ({', '.join(target.functions)})" if target.functions else ""
        modules = " ".join(f"`{p.removeprefix('src/virtuebench/')}`" for p in target.paths) + only
        lines.append(
            f"| {target.name} | {modules} | {tests} | {total} | {outcome.count('killed')} | {outcome.count('survived')} | "
            f"{outcome.count('no tests')} | {outcome.count('timeout')} | {share} | {len(explained)} | {len(unexplained)} |"
        )
        sections += ["", f"## {target.name}", ""]
        if not target.complete:
            sections += ["Not yet complete: its surviving mutants are listed, each a test still to write (they do not fail the run).", ""]
        written = [e for (p, _), e in sorted(tests_for.items()) if p in target.paths]
        if written:
            sections += ["Survivors of the first run (before issue 28's tests) and the tests written to kill them:", ""]
            sections += ["| function | survived before | surviving now | tests |", "|---|---:|---:|---|"]
            for entry in written:
                now = sum(m.function == entry["function"] and m.path == entry["path"] for m in survivors)
                named = ", ".join(f"`{t}`" for t in entry["tests"])
                sections.append(f"| `{entry['function']}` | {entry['survived_before']} | {now} | {named} |")
            sections.append("")
        if not survivors:
            sections.append("No mutant survives.")
            continue
        if not target.complete:  # hundreds: one line each (the changed line before and after)
            sections += ["Surviving mutants (function: line -> mutated):", ""]
            for mutant in sorted(survivors, key=lambda m: (m.path, m.function)):
                said = f": equivalent: {equivalent[mutant.key]}" if mutant.key in equivalent else ""
                place = f"{mutant.path.removeprefix('src/virtuebench/')} `{mutant.function}`"
                sections.append(f"- {place} ({mutant.status}): {_code(mutant.line)} -> {_code(mutant.mutated)}{said}")
            continue
        sections += ["Surviving mutants:", ""]
        for mutant in sorted(survivors, key=lambda m: (m.key not in equivalent, m.path, m.function)):
            said = f"equivalent: {equivalent[mutant.key]}" if mutant.key in equivalent else "**missing a test**"
            sections += [
                f"- `{mutant.function}` ({mutant.status}): {_code(mutant.line)} -> {_code(mutant.mutated)}: {said}",
                "",
                "  ```diff",
                *[f"  {line}" for line in mutant.diff.splitlines() if not line.startswith(("---", "+++"))],
                "  ```",
            ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines + sections) + "\n")
    return open_survivors


def _load_raw(path: Path) -> tuple[list[Outcome], float]:
    data = json.loads(path.read_text())
    by_name = {t.name: t for t in TARGETS}
    outcomes = [
        Outcome(by_name[o["target"]], o["seconds"], [Mutant(**m) for m in o["mutants"]]) for o in data["outcomes"] if o["target"] in by_name
    ]
    return outcomes, data["minutes"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", nargs="*", choices=[t.name for t in TARGETS], help="default: all")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--report", default=str(REPORT))
    parser.add_argument("--raw", help="also write every mutant's status and diff here (JSON)")
    parser.add_argument("--from-raw", help="write the report from an earlier --raw file, running nothing")
    args = parser.parse_args(argv)
    if args.from_raw:
        outcomes, minutes = _load_raw(Path(args.from_raw))
    else:
        chosen = [t for t in TARGETS if not args.targets or t.name in args.targets]
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="vb-mutation-") as folder:
            scratch = Path(folder)
            copy_tree(scratch)
            outcomes = [run_target(target, scratch, args.max_children) for target in chosen]
        minutes = (time.monotonic() - started) / 60
        if args.raw:
            raw = {
                "minutes": minutes,
                "outcomes": [{"target": o.target.name, "seconds": o.seconds, "mutants": [vars(m) for m in o.mutants]} for o in outcomes],
            }
            Path(args.raw).write_text(json.dumps(raw, indent=1))
    open_survivors = write_report(outcomes, load_verdicts(), Path(args.report), minutes, args.max_children)
    print(f"report: {args.report} ({minutes:.1f} minutes)")
    if open_survivors:
        print(f"\n{len(open_survivors)} surviving mutants have neither a test nor an `equivalent` verdict:\n")
        print("\n".join(stub(m) for m in open_survivors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
