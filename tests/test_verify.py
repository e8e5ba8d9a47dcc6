"""The provenance chain (virtuebench.verify) and the workflow's guards around it, on one finished tiny run copied per
test: each test breaks one link (a judgment of another response, a response asked with other frames, a frames folder
without its manifest, a judgments or responses file gone, an item twice) and checks that `verify` names it and what it
makes stale, that a report job refuses to publish over it, and that a plain rerun of the workflow removes what is
stale and rebuilds it to the clean run's bytes. A judgments file the report never showed (a model just added) is not
stale, and a new model whose endpoint dies midway leaves the previous tables in place, with a warning naming what they
lack. The run lock: a live run's lock refuses a second run, even after `snakemake --unlock`; a killed run's lock is
taken over."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO, SCORING_DEFAULTS
from helpers.fake_openai import FakeOpenAI, api_entry
from helpers.workflow import SMALL, executed, snakemake

from virtuebench import check as verify_command
from virtuebench import provenance, verify
from virtuebench.metrics import main as metrics_main
from virtuebench.records import digested_line
from virtuebench.support import runlock

pytestmark = pytest.mark.workflow

CONFIG = {**SMALL, "models": ["guess", "oracle"]}
JUDGMENT = Path("results/judgments/rules/guess/honest/64.jsonl")
RESPONSES = Path("results/responses/guess/honest/64.jsonl")
REPORT = ["results/scores.csv", "results/comparisons.csv", "results/table2.tex"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("clean")
    result = snakemake(workdir, config=CONFIG)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


@pytest.fixture
def run(clean, tmp_path):
    """A copy of the finished run (Snakemake's records included), to break."""
    workdir = tmp_path / "run"
    shutil.copytree(clean, workdir, symlinks=True)
    return workdir


def check(workdir: Path) -> verify.Chain:
    return check_with(workdir, [JUDGMENT])


def check_with(workdir: Path, also: list[Path]) -> verify.Chain:
    """`verify.check` in `workdir` of every judgments file there and of `also` (files that may be missing)."""
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        paths = sorted(str(p) for p in Path("results").glob("judgments/*/*/*/*.jsonl")) + list(map(str, also))
        return verify.check(paths, report_outputs=REPORT)
    finally:
        os.chdir(cwd)


def rewrite(path: Path, change) -> None:
    """Each record of `path` changed as its stage would write it again (its record_digest made anew)."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(digested_line(change(record)) for record in records))


def test_a_finished_run_has_nothing_stale(clean):
    assert check(clean).problems == []
    result = subprocess.run(
        [sys.executable, "-m", "virtuebench.verify", "--configfile", "config.yaml"], cwd=clean, capture_output=True, text=True
    )
    assert result.returncode == 0 and "nothing is stale" in result.stdout, result.stdout + result.stderr


def test_verify_names_a_report_zip_made_before_a_configuration_change_and_not_the_one_made_after(run):
    """Snakemake's report right after it is made packs the results as they are; a configuration change that rewrites
    the tables (intervals printed) leaves it packing the old ones, which verify names, and `--report` makes it anew."""

    def verify_run() -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "virtuebench.verify", "--configfile", "config.yaml"]
        return subprocess.run(command, cwd=run, capture_output=True, text=True)

    made = snakemake(run, "--report", "results/report.zip", config=CONFIG)
    assert made.returncode == 0, made.stderr[-3000:]
    fresh = verify_run()
    assert fresh.returncode == 0 and "results/report.zip packs them as they are" in fresh.stdout, fresh.stdout + fresh.stderr
    changed = {**CONFIG, "report": {"intervals": True}}
    rerun = snakemake(run, config=changed)
    assert executed(rerun)["make_tables"] == 1
    said = "virtuebench WARNING: results/report.zip is not the report of these results (its copy of results/table"
    assert said in rerun.stderr and "differs from the file there now and 5 more): `make report` makes it again" in rerun.stderr, (
        rerun.stderr[-3000:]
    )
    stale = verify_run()
    named = [line for line in stale.stdout.splitlines() if line.startswith("stale: results/report.zip: ")]
    assert stale.returncode == 1 and "stale: results/report.zip: its copy of results/table2.html differs from the file there now" in named
    assert {line.rsplit(" of ", 1)[1].split()[0] for line in named} == {
        f"results/{t}.{kind}" for t in ("table1", "table2", "table2_trust") for kind in ("tex", "html")
    }
    assert stale.stdout.rstrip().endswith("snakemake --configfile config.yaml --report results/report.zip"), stale.stdout
    remade = snakemake(run, "--report", "results/report.zip", config=changed)
    assert remade.returncode == 0 and verify_run().returncode == 0, remade.stderr[-3000:]


@pytest.mark.parametrize(
    ("breakage", "named", "stale"),
    [
        ("judgment-of-other-response", JUDGMENT, [JUDGMENT, *REPORT]),
        ("response-with-other-frames", RESPONSES, [RESPONSES, JUDGMENT, *REPORT]),
        ("judgment-missing", JUDGMENT, REPORT),
        ("responses-missing", JUDGMENT, [JUDGMENT, *REPORT]),
        ("item-twice", RESPONSES, [RESPONSES, JUDGMENT, *REPORT]),
        ("truncated-manifest", "results/frames/syn00/64", ["results/frames/syn00/64"]),  # that level's job alone
        ("judged-under-another-name", JUDGMENT, [JUDGMENT, *REPORT]),
    ],
)
def test_each_broken_link_is_named_with_what_it_makes_stale(run, breakage, named, stale):
    if breakage == "judgment-of-other-response":
        rewrite(run / RESPONSES, lambda r: {**r, "latency_s": r["latency_s"] + 1})  # asked again since it was judged
    elif breakage == "response-with-other-frames":
        rewrite(run / RESPONSES, lambda r: {**r, "item_hash": "0" * 12})
    elif breakage == "judgment-missing":
        (run / JUDGMENT).unlink()
    elif breakage == "responses-missing":
        (run / RESPONSES).unlink()
    elif breakage == "item-twice":
        lines = (run / RESPONSES).read_text().splitlines(keepends=True)
        (run / RESPONSES).write_text("".join([*lines, lines[0]]))
    elif breakage == "truncated-manifest":
        manifest = run / "results/frames/syn00/64/manifest.json"
        manifest.write_text(manifest.read_text()[:200])
    elif breakage == "judged-under-another-name":  # as a rules judge under another name was recorded before
        rewrite(run / JUDGMENT, lambda r: {**r, "judge": "strict"})
    chain = check(run)
    assert [problem.path for problem in chain.problems] == [str(named)]
    assert sorted(chain.stale) == sorted(map(str, stale))


def test_a_judgments_file_the_report_never_showed_is_not_stale(run):
    """A model added to the configuration has no judgments yet (nor responses), and scores.csv has none of its rows:
    nothing is stale. Nor is a judgments file that is gone where scores.csv has no row of it (a judge job that failed
    after its model's first run): the report was not made from it. Where scores.csv has its rows, it is (above)."""
    new = Path("results/judgments/rules/new-model/honest/64.jsonl")
    assert check_with(run, [new]).problems == []
    (run / JUDGMENT).unlink()
    scores = run / "results/scores.csv"
    lines = scores.read_text().splitlines(keepends=True)
    assert [problem.path for problem in check_with(run, [new, JUDGMENT]).problems] == [str(JUDGMENT)]
    scores.write_text("".join(line for line in lines if not line.startswith("guess,honest,64,")))
    comparisons = run / "results/comparisons.csv"  # nor do the comparisons (guess against oracle, at 64 frames)
    kept = [line for line in comparisons.read_text().splitlines(keepends=True) if line.split(",")[2] != "64"]
    comparisons.write_text("".join(kept))
    for path in (scores, comparisons):  # as if computed without it: each row's digests are of what it was made from
        provenance.stamp(path)
    assert check_with(run, [new, JUDGMENT]).problems == []
    assert verify.Shown.read(scores).holds("rules", "guess", "honest", 128) and not verify.Shown.read(scores).holds(
        "rules", "guess", "honest", 64
    )
    # A judge defined anew and made the report's: the rows scores.csv shows are another judge's.
    assert not verify.Shown.read(scores).holds("llm-2", "guess", "honest", 128)
    assert check_with(run, [Path("results/judgments/llm-2/guess/honest/128.jsonl")]).problems == []


def test_a_report_job_refuses_to_publish_over_a_stale_judgment(run, capsys):
    rewrite(run / JUDGMENT, lambda r: {**r, "answer": "something else"})
    os.chdir(run)
    paths = sorted(str(p) for p in Path("results/judgments").rglob("*.jsonl"))
    arguments = [*paths, "--chain-root", "results", "--out", "new.csv", "--resamples", "10", "--seed", "0"]
    arguments += list(SCORING_DEFAULTS)
    assert metrics_main(arguments) == 1
    error = capsys.readouterr().err
    assert f"{JUDGMENT}: item" in error and "another ground truth" in error and "rerun the workflow" in error
    assert not Path("new.csv").exists()
    assert metrics_main([a for a in arguments if a not in ("--chain-root", "results")]) == 0  # outside the workflow: no chain


def test_a_plain_rerun_removes_what_is_stale_and_rebuilds_the_clean_runs_bytes(clean, run):
    """Two faults at once: a judgments file gone (the judge failing on a garbled line used to leave it so, and the old
    scores.csv standing: 'Nothing to be done', since a deleted intermediate is not rebuilt while its downstream output
    is newer) and another model's responses file holding an item twice."""
    (run / JUDGMENT).unlink()
    other = Path("results/responses/oracle/honest/128.jsonl")
    lines = (run / other).read_text().splitlines(keepends=True)
    (run / other).write_text("".join([*lines, lines[0]]))
    dry = snakemake(run, "-n", config=CONFIG)
    assert dry.returncode == 0 and "a real run removes 2 stale record(s)" in dry.stderr, dry.stderr[-2000:]
    assert str(JUDGMENT) in dry.stderr and f"{other}: records 1 and" in dry.stderr
    result = snakemake(run, config=CONFIG)
    assert result.returncode == 0 and "stale results" in result.stderr, result.stderr[-3000:]
    for name in ["results/scores.csv", "results/comparisons.csv", "results/table1.tex", "results/table2.tex", JUDGMENT, other]:
        assert (run / name).read_bytes() == (clean / name).read_bytes(), name
    again = snakemake(run, "-n", config=CONFIG)
    assert "Nothing to be done" in again.stdout + again.stderr and "stale" not in again.stderr


def keep_stamp(path: Path, edit) -> None:
    """`edit(path)`, keeping the file's size and modification time (os.utime, as `touch -r` does)."""
    before = path.stat()
    edit(path)
    assert path.stat().st_size == before.st_size, "the edit must keep the size"
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def flip_verdicts(path: Path, count: int = 5) -> None:
    """The trial's W3: `count` verdicts flipped by hand (`"judgement": 0` to `1` and back), the record_digest left."""
    lines = path.read_text().splitlines(keepends=True)
    for at in range(min(count, len(lines))):
        lines[at] = lines[at].replace('"judgement": 0', '"judgement": 2').replace('"judgement": 1', '"judgement": 0')
        lines[at] = lines[at].replace('"judgement": 2', '"judgement": 1')
    path.write_text("".join(lines))


def restyle_one_response(path: Path, by_hand: bool = True) -> None:
    """One response's text changed to another of the same length (its case swapped): by hand, the record_digest left
    as it was, or written again as its stage writes it (the digest made anew)."""
    lines = path.read_text().splitlines(keepends=True)
    at, record = next((at, r) for at, line in enumerate(lines) if (r := json.loads(line))["response"] != (r["response"] or "").swapcase())
    text = record["response"]
    lines[at] = (
        lines[at].replace(json.dumps(text), json.dumps(text.swapcase()))
        if by_hand
        else digested_line({**record, "response": text.swapcase()})
    )
    path.write_text("".join(lines))


OTHER = Path("results/responses/oracle/honest/128.jsonl")
TRIAL_EDITS = {
    # edit: (what is edited, how), the file each check must name
    "flipped-verdicts": (JUDGMENT, lambda path: keep_stamp(path, flip_verdicts), JUDGMENT),
    "response-text-edited": (RESPONSES, lambda path: rewrite_text(path, '"response": "', '"response": "edited '), RESPONSES),
    "responses-file-size-and-mtime-kept": (RESPONSES, lambda path: keep_stamp(path, restyle_one_response), RESPONSES),
    # as a stage would write it (a valid record_digest): the judgments made from the file judged another record
    "responses-rewritten-size-and-mtime-kept": (
        RESPONSES,
        lambda path: keep_stamp(path, lambda file: restyle_one_response(file, by_hand=False)),
        JUDGMENT,
    ),
    "judgments-file-deleted": (JUDGMENT, Path.unlink, JUDGMENT),
    "line-duplicated": (RESPONSES, lambda path: path.write_text(path.read_text() + path.read_text().splitlines(True)[0]), RESPONSES),
}


def rewrite_text(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new, 1))


@pytest.mark.parametrize("edit", sorted(TRIAL_EDITS))
def test_verify_and_the_start_give_the_same_verdict_on_the_trials_record_edits(run, edit, capsys, monkeypatch):
    """Issue 47: the start-up check (verify.check_configuration, as guard_run calls it, with the checks remembered on
    the files before the edit) and `python -m virtuebench.verify` name the same files, each once, and verify's last
    line is the command that rebuilds them."""
    monkeypatch.chdir(run)
    plan = verify_command.load_plan(["config.yaml"])
    outputs = [f"{plan.results}/{name}" for name in verify.REPORT_FILES]
    state = verify.remembered_path(plan.results)
    remembered = verify.Remembered(state)
    assert verify.check_configuration(plan, outputs, remembered).problems == []
    remembered.save()
    target, change, named = TRIAL_EDITS[edit]
    change(target)
    start = verify.check_configuration(plan, outputs, verify.Remembered(state))
    assert verify_command.main(["--configfile", "config.yaml"]) == 1
    lines = capsys.readouterr().out.splitlines()
    listed = [line.removeprefix("stale: ").split(": ", 1)[0] for line in lines if line.startswith("stale: ")]
    assert [problem.path for problem in start.problems] == listed == [str(named)]
    assert sum(str(named) in line for line in lines) == 1  # each path once
    assert lines[-1] == "snakemake --configfile config.yaml"


def test_verdicts_flipped_with_the_mtime_kept_are_rejudged_to_the_clean_runs_bytes(clean, run):
    """W3: five verdicts flipped in a judgments file and a responses file edited, both keeping size and modification
    time, after a start remembered the checks of both. A plain rerun re-judges (and re-asks) exactly these and ends
    with the clean run's tables and scores, byte for byte; nothing exits 0 over the changed numbers."""
    assert snakemake(run, "-n", config=CONFIG).returncode == 0  # the start-up check remembers every file as it is
    assert verify.remembered_path("results") and (run / verify.remembered_path("results")).exists()
    keep_stamp(run / JUDGMENT, flip_verdicts)
    keep_stamp(run / OTHER, restyle_one_response)
    result = snakemake(run, config=CONFIG)
    assert result.returncode == 0 and "stale results (2 problem(s))" in result.stderr, result.stderr[-3000:]
    assert f"{JUDGMENT}: record 1 was changed after it was written" in result.stderr
    assert f"{OTHER}: record " in result.stderr and "was changed after it was written" in result.stderr
    for name in ["results/scores.csv", "results/comparisons.csv", "results/table1.tex", "results/table2.tex", JUDGMENT, OTHER]:
        assert (run / name).read_bytes() == (clean / name).read_bytes(), name
    again = snakemake(run, "-n", config=CONFIG)
    assert "Nothing to be done" in again.stdout + again.stderr and "stale" not in again.stderr


def test_a_new_model_whose_endpoint_dies_midway_leaves_the_previous_tables(clean, run):
    """The issue's case: a model is added to a finished run, and its endpoint fails from its third answer on. The run
    fails; the tables, scores and figures are the earlier run's, byte for byte, with one warning naming what they
    lack; nothing is called stale, nothing removed. Once the endpoint answers again, the plain rerun completes and
    the tables show the new model."""
    published = ["results/table1.tex", "results/table2.tex", "results/scores.csv", "results/fig6.png"]
    with FakeOpenAI(backend_faults={n: "500" for n in range(3, 200)}) as server:
        registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
        entry = api_entry(server)  # at 64 frames only: one inference job, to keep the test short
        registry["api"] = {**entry, "max_level": 64, "settings": {**entry["settings"], "max_retries": 0}}
        (run / "models.yaml").write_text(yaml.safe_dump(registry))
        config = {**CONFIG, "models": [*CONFIG["models"], "api"], "model_registry": str(run / "models.yaml")}
        failed = snakemake(run, config=config)
        assert failed.returncode != 0, failed.stderr[-3000:]
        for name in published:
            assert (run / name).read_bytes() == (clean / name).read_bytes(), name
        assert "stale" not in failed.stderr and "removed" not in failed.stderr and "is missing" not in failed.stderr
        (warning,) = [line for line in failed.stderr.splitlines() if "from an earlier run" in line]
        assert "results/table1.tex, results/table2.tex" in warning and "do not show model api (its judgments" in warning, warning
        assert "see the failed job above" in warning
        server.backend_faults.clear()  # the endpoint answers again
        fixed = snakemake(run, config=config)
        assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert "from an earlier run" not in fixed.stderr and "stale" not in fixed.stderr
    assert verify.Shown.read(run / "results/scores.csv").holds("rules", "api", "honest", 64)
    assert "api" in (run / "results/table2.tex").read_text() and "api" not in (clean / "results/table2.tex").read_text()


def test_a_live_runs_lock_refuses_a_second_run_even_after_unlock(run):
    # A live holder until the test ends it: it waits on a pipe, not for a time a slow run could outlast.
    holder = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        lock = run / runlock.LOCK_PATH
        lock.parent.mkdir(parents=True, exist_ok=True)
        held = runlock.Holder(holder.pid, os.uname().nodename, "now", runlock.process_start(holder.pid), "snakemake (another run)")
        lock.write_text(json.dumps(held.__dict__))
        assert snakemake(run, "--unlock", config=CONFIG).returncode == 0
        refused = snakemake(run, config=CONFIG)
        assert refused.returncode != 0 and f"pid {holder.pid}" in refused.stderr and "ps -p" in refused.stderr, refused.stderr[-2000:]
        assert lock.exists()
        assert snakemake(run, "-n", config=CONFIG).returncode == 0  # a dry run writes nothing: it needs no lock
    finally:
        holder.kill()
        holder.wait()
    taken = snakemake(run, config=CONFIG)  # the holder is gone: its lock is taken over, and released at the end
    assert taken.returncode == 0 and "was taken over" in taken.stderr, taken.stderr[-2000:]
    assert not lock.exists()


def test_a_reused_pid_does_not_hold_the_lock(tmp_path):
    """A lock whose pid now belongs to another process (another start time) is a dead run's."""
    me = runlock.Holder.this_process()
    lock = tmp_path / "run.lock"
    lock.write_text(json.dumps({**me.__dict__, "pid": os.getppid(), "process_start": "1"}))
    ours, note = runlock.acquire(lock)
    assert "taken over" in note and runlock.read_holder(lock) == ours
    runlock.release(lock, ours)
    assert not lock.exists()


def test_verify_without_the_configuration_says_which_file_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert verify_command.main([]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("virtuebench.verify: config/config.yaml: cannot be read") and "--configfile FILE" in line
    (tmp_path / "bad.yaml").write_text("models: [guess\n")
    assert verify_command.main(["--configfile", "bad.yaml"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("virtuebench.verify: bad.yaml: not valid YAML")
    (tmp_path / "wrong.yaml").write_text(yaml.safe_dump({**CONFIG, "models": ["no-such-model"]}))
    assert verify_command.main(["--configfile", "wrong.yaml"]) == 2
    assert "no-such-model" in capsys.readouterr().err
    (tmp_path / "right.yaml").write_text(yaml.safe_dump(CONFIG))
    assert verify_command.main(["--configfile", "right.yaml", "--report-zip", "results/none.zip"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == "virtuebench.verify: --report-zip results/none.zip: no such file (make it with `make report`)"


# Published numbers checked back to their judgments (virtuebench.provenance): scores.csv and comparisons.csv carry
# each row's judgments digest and its own digest.
REBUILT_BY = {"results/scores.csv": "compute_scores", "results/comparisons.csv": "compare_arms"}


def edit_number(path: Path, column: str) -> None:
    """A hand edit: one number of the first row changed, everything else as written."""
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns, rows = reader.fieldnames, list(reader)
    rows[0][column] = str(float(rows[0][column]) + 5)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def test_an_edited_number_is_stale_and_a_plain_rerun_restores_the_clean_bytes(clean, run):
    """W2 of issue 47: a number edited in scores.csv (and one in comparisons.csv) was published by the rerun, and `make
    verify` said nothing was stale. Now verify names both, and a plain rerun rebuilds them and what was drawn from them
    to the clean run's bytes."""
    edit_number(run / "results/scores.csv", "accuracy")
    edit_number(run / "results/comparisons.csv", "difference")
    listed = subprocess.run(
        [sys.executable, "-m", "virtuebench.verify", "--configfile", "config.yaml"], cwd=run, capture_output=True, text=True
    )
    assert listed.returncode == 1, listed.stdout + listed.stderr
    for name in REBUILT_BY:
        assert f"stale: {name}: 1 row(s) (e.g. line 2, guess:" in listed.stdout and "do not match their row_digest" in listed.stdout
    result = snakemake(run, config=CONFIG)
    assert result.returncode == 0 and "stale results (2 problem(s))" in result.stderr, result.stderr[-3000:]
    assert {"compute_scores", "compare_arms", "make_tables", "make_fig6", "make_fig_levels"} <= set(executed(result))
    for name in [
        *REBUILT_BY,
        "results/table1.tex",
        "results/table2.tex",
        "results/table2_trust.tex",
        "results/fig6.csv",
        "results/fig_levels.csv",
    ]:
        assert (run / name).read_bytes() == (clean / name).read_bytes(), name
    again = subprocess.run(
        [sys.executable, "-m", "virtuebench.verify", "--configfile", "config.yaml"], cwd=run, capture_output=True, text=True
    )
    assert again.returncode == 0 and "nothing is stale" in again.stdout


def _writers(run: Path) -> dict[str, tuple[list[str], Path]]:
    """Each writer of a table or figure drawn from scores.csv (and comparisons.csv), with what it would write."""
    results, out = run / "results", run / "out"
    out.mkdir(exist_ok=True)
    common = ["--scores", str(results / "scores.csv"), "--models", "guess", "oracle", "--judge", "rules"]
    trust = list(SCORING_DEFAULTS)
    return {
        "tables": (
            [
                "tables",
                *common,
                "--levels",
                "64",
                "128",
                "--prompt",
                "honest",
                "--table1",
                str(out / "t1.tex"),
                "--table2",
                str(out / "t2.tex"),
                *trust,
            ],
            out / "t1.tex",
        ),
        "levels": (
            ["levels", *common, "--levels", "64", "128", "--prompt", "honest", "--out", str(out / "l.png"), "--csv", str(out / "l.csv")],
            out / "l.png",
        ),
        "paper-vs-run": (
            ["paper-vs-run", *common, "--levels", "64", "128", "--paper-name", "oracle=Qwen3VL-32B"]
            + ["--csv", str(out / "p.csv"), "--tex", str(out / "p.tex")],
            out / "p.csv",
        ),
        "fig6": (
            ["fig6", *common, "--comparisons", str(results / "comparisons.csv"), "--prompts", "honest", "--out", str(out / "6.png")]
            + ["--pooled-levels", "all", "--invalid", "wrong"]
            + ["--csv", str(out / "6.csv")],
            out / "6.png",
        ),
    }


@pytest.mark.parametrize(
    ("breakage", "named", "said"),
    [
        ("intact", None, None),
        ("number", "scores.csv", "1 row(s) (e.g. line 2, guess:honest level 64 overall) do not match their row_digest"),
        ("row-removed", "scores.csv", "do not match their row_digest: edited, moved or removed"),
        ("judgments-changed", "scores.csv", "were computed from other judgments than those there now"),
        ("before-digests", "scores.csv", "has no row_digest column"),
        ("comparisons-number", "comparisons.csv", "1 row(s) (e.g. line 2, guess:honest vs oracle:honest level 64 overall) do not"),
    ],
)
def test_a_writer_refuses_published_numbers_that_are_not_intact_naming_the_file(run, capsys, breakage, named, said):
    from virtuebench.report.__main__ import main as report_main

    scores = run / "results/scores.csv"
    if breakage == "number":
        edit_number(scores, "n_correct")
    elif breakage == "row-removed":
        lines = scores.read_text().splitlines(keepends=True)
        scores.write_text("".join(lines[:-1]))
    elif breakage == "judgments-changed":  # judged again since the scores were computed
        rewrite(run / JUDGMENT, lambda r: {**r, "reason": f"{r['reason']} (again)"})
    elif breakage == "before-digests":  # a scores.csv written before its rows carried digests
        with scores.open(newline="") as handle:
            rows = [dict(row) for row in csv.DictReader(handle)]
        kept = [name for name in rows[0] if name not in ("judgments_digest", "row_digest")]
        with scores.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=kept, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    elif breakage == "comparisons-number":
        edit_number(run / "results/comparisons.csv", "difference")
    for command, (arguments, written) in _writers(run).items():
        if named is None:
            assert report_main(arguments) == 0 and written.exists(), command
            continue
        if named == "comparisons.csv" and command != "fig6":
            assert report_main(arguments) == 0, command  # only Fig. 6 reads the comparisons
            continue
        assert report_main(arguments) == 1 and not written.exists(), command
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1, error
        path = run / "results" / named
        assert error.startswith(f"error: refusing to write {written}: {path} ") and said in error, error
        assert error.endswith(f"(or `snakemake --forcerun {REBUILT_BY[f'results/{named}']}`)"), error
