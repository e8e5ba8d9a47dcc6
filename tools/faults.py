"""The long fault-injection suite (`make faults`, a CI step after `make test`): for each stage (frames, inference,
judge, report) MOMENTS seeded moments x {kill -9, SIGINT} to the run's process group, each in a fresh run; SIGINT
and kill -9 during the re-inference an answer-setting change starts (an API model's max_tokens, against the fake
server); ENOSPC during frame extraction (a small tmpfs at results/frames, as root; then space freed with a remount);
`snakemake --unlock` while another run is live (run A, --unlock, run B: B must be refused, A must finish with
the clean results); and the answer store: damaged entries and killed writers' temporary files (exactly the damaged
items asked again), and two runs in two folders writing one store at once; and first the kinds an independent trial tried (issue 47,
tests/helpers/fault_kinds.py, `--kinds`): SIGKILL or SIGTERM to one frame worker or one job, ENOSPC while judging
or writing the report, a read-only folder, clock skew, flipped verdicts, an edited response or scores.csv, a deleted
judgments file, a foreign host's run lock, two configurations at once. After each fault a plain rerun (`--unlock` first only where Snakemake asks for it) is compared
with an uninterrupted run of the same configuration (tests/helpers/faults.py says how each outcome is decided).

Prints the table and writes it into docs/reliability.md (between its markers), with the date, the machine and the
wall time; every outcome's details go to --json. Exits 1 where any outcome is not as required: every fault must end
`identical`, except SIGINT to a stage, which may also end `failed by name`; `wrong`, `failed unnamed` and `not fired`
fail (ENOSPC where no tmpfs can be mounted is skipped with its reason).

    python tools/faults.py [--moments 5] [--seed 34] [--kinds all|cheap|none|KIND...] [--kind-draws 2] [--kinds-only]
                                [--doc docs/reliability.md] [--json faults.json] [--note TEXT]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers import fault_kinds, faults  # noqa: E402

BEGIN, END = "<!-- faults:begin -->", "<!-- faults:end -->"
SIGNALS = {"kill -9": signal.SIGKILL, "SIGINT": signal.SIGINT}


def enospc(root: Path, server, clean_runs: faults.CleanRuns, fraction: float) -> faults.Outcome:
    """Frame extraction into a tmpfs at results/frames holding `fraction` of the clean run's frames; then the tmpfs
    is grown (space freed) and the run repeated plainly. Root only: otherwise `not fired` with the reason."""
    started = time.monotonic()
    label = f"tmpfs {int(fraction * 100)}% of the frames"
    config = faults.fault_config(clean_runs.root, server)
    clean = clean_runs.get(config, *faults.TARGETS_BOTH_JUDGES)
    if os.geteuid() != 0:
        return faults.Outcome("ENOSPC", label, "not fired", tail="skipped: not root (mounting a tmpfs needs root, as in CI)")
    needed = sum(p.stat().st_size for p in (clean / "results" / "frames").rglob("*") if p.is_file())
    size_kb = max(64, int(needed * fraction) // 1024)
    workdir = root / f"enospc-{int(fraction * 100)}"
    frames = workdir / "results" / "frames"
    frames.mkdir(parents=True)
    faults.write_config(workdir, config)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(frames)], capture_output=True, text=True)
    if mounted.returncode != 0:
        return faults.Outcome("ENOSPC", label, "not fired", tail=f"skipped: mount failed: {mounted.stderr.strip()}")
    try:
        first = faults.run(workdir, *faults.TARGETS_BOTH_JUDGES)
        said = first.stdout + "".join(p.read_text(errors="replace") for p in (workdir / "logs" / "frames").glob("*.log"))
        full = re.search(r"(?i)no space left on device|ENOSPC", said) is not None
        fired = first.returncode != 0 and full
        if first.returncode == 0 and full:
            # The run went on past the full disk and exited 0: wrong where its results differ from the clean run's.
            differing = faults.compare(workdir, clean)
            if differing:
                return faults.Outcome(
                    "ENOSPC",
                    label,
                    "wrong",
                    interrupted_rc=0,
                    differing=differing,
                    tail=faults.tail(first.stdout),
                    seconds=time.monotonic() - started,
                )
        if not fired:
            return faults.Outcome(
                "ENOSPC",
                label,
                "not fired",
                interrupted_rc=first.returncode,
                tail=faults.tail(first.stdout),
                seconds=time.monotonic() - started,
            )
        subprocess.run(["mount", "-o", "remount,size=512m", str(frames)], check=True)
        result, unlocked = faults.plain_rerun(workdir, *faults.TARGETS_BOTH_JUDGES)
        differing = faults.compare(workdir, clean) if result.returncode == 0 else []
        return faults.Outcome(
            "ENOSPC",
            label,
            faults.classify(result, differing),
            needed_unlock=unlocked,
            interrupted_rc=first.returncode,
            rerun_rc=result.returncode,
            differing=differing,
            tail=faults.tail(result.stdout) if result.returncode != 0 or differing else "",
            seconds=time.monotonic() - started,
        )
    finally:
        subprocess.run(["umount", "-l", str(frames)], capture_output=True)


def unlock_while_live(root: Path, server, clean_runs: faults.CleanRuns) -> faults.Outcome:
    """Run A; once it is answering, `snakemake --unlock` and run B (the plain command): B must be refused, and A must
    end with the clean run's results."""
    started = time.monotonic()
    config = faults.fault_config(clean_runs.root, server)
    clean = clean_runs.get(config, *faults.TARGETS_BOTH_JUDGES)
    workdir = root / "unlock-live"
    faults.write_config(workdir, config)
    args = faults.TARGETS_BOTH_JUDGES
    a = subprocess.Popen(
        faults.command(workdir, *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=faults.environment(),
        start_new_session=True,
    )
    while a.poll() is None and faults.progress(workdir, "inference") < 1:
        time.sleep(0.02)
    if a.poll() is not None:
        return faults.Outcome("--unlock while live", "A answering", "not fired", interrupted_rc=a.returncode)
    unlocked = faults.run(workdir, "--unlock", *args)
    b = faults.run(workdir, *args)
    out_a, _ = a.communicate(timeout=600)
    faults.wait_group_gone(a.pid)
    differing = faults.compare(workdir, clean) if a.returncode == 0 else []
    if b.returncode == 0:
        outcome, detail = "wrong", "run B was not refused: it ran beside run A (and exited 0)"
    elif a.returncode != 0:
        outcome, detail = "failed by name", faults.tail(out_a)
    else:
        outcome, detail = ("identical" if not differing else "wrong"), ""
    return faults.Outcome(
        "--unlock while live",
        f"unlock rc {unlocked.returncode}; A answering",
        outcome,
        interrupted_rc=b.returncode,
        rerun_rc=a.returncode,
        differing=differing,
        tail=(detail + "\nB: " + faults.tail(b.stdout, 6)).strip(),
        seconds=time.monotonic() - started,
    )


def store_damaged(root: Path, server, clean_runs: faults.CleanRuns) -> faults.Outcome:
    """A finished run whose responses and judgments are gone and whose answer store holds three damaged entries of the
    API model (one cut short as a torn write would leave it, one with its value edited, one holding another key's
    entry) and two temporary files that killed writers left: the plain rerun must ask exactly those three items
    again and end with the clean run's results."""
    started = time.monotonic()
    config = faults.fault_config(clean_runs.root, server)
    clean = clean_runs.get(config, *faults.TARGETS_BOTH_JUDGES)
    workdir = root / "store-damaged"
    shutil.copytree(clean, workdir, symlinks=True)
    for name in ("results/responses", "results/judgments", "results/judge_agreement"):
        shutil.rmtree(workdir / name, ignore_errors=True)
    for name in faults.REPORT_EVENTS:
        (workdir / name).unlink(missing_ok=True)
    entries = [
        path for path in sorted((workdir / faults.ANSWERS).rglob("*.json")) if json.loads(path.read_text())["about"].get("model") == "api"
    ]
    if len(entries) < 4:
        return faults.Outcome("store: damaged entries", "3 entries", "not fired", tail=f"only {len(entries)} API answers stored")
    text = entries[0].read_text()
    entries[0].write_text(text[: len(text) // 2])
    entries[1].write_text(entries[1].read_text().replace('"response": "', '"response": "edited ', 1))
    entries[2].write_text(entries[3].read_text())
    for number, entry in enumerate(entries[:2]):
        (entry.parent / f".{entry.name}.otherhost.{number}.deadbeef.tmp").write_text(text[:100])
    before = server.backend_requests
    rerun = faults.run(workdir, *faults.TARGETS_BOTH_JUDGES)
    asked = server.backend_requests - before
    differing = faults.compare(workdir, clean) if rerun.returncode == 0 else []
    outcome = faults.classify(rerun, differing)
    if outcome == "identical" and asked != 3:
        outcome = "wrong"
    return faults.Outcome(
        "store: damaged entries",
        "3 damaged, 2 temporary files",
        outcome,
        rerun_rc=rerun.returncode,
        differing=differing,
        tail=f"{asked} model requests (3 expected)\n" + faults.tail(rerun.stdout, 6),
        seconds=time.monotonic() - started,
    )


def shared_store(root: Path, server, clean_runs: faults.CleanRuns) -> faults.Outcome:
    """Two runs of the same configuration in two folders at once, writing one new store (as jobs on many hosts of a
    cluster do): both must end with the clean run's results, and no item is asked more than twice."""
    started = time.monotonic()
    config = faults.fault_config(clean_runs.root, server)
    clean = clean_runs.get(config, *faults.TARGETS_BOTH_JUDGES)
    store = root / "shared-store"
    folders = [root / "shared-a", root / "shared-b"]
    before = server.backend_requests
    processes = []
    for folder in folders:
        faults.write_config(folder, {**config, "store": str(store)})
        processes.append(
            subprocess.Popen(
                faults.command(folder, *faults.TARGETS_BOTH_JUDGES),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=faults.environment(),
                start_new_session=True,
            )
        )
    outputs = [process.communicate(timeout=600)[0] for process in processes]
    asked = server.backend_requests - before
    once = faults.totals(clean)["inference"]
    differing = [f"{folder.name}/{name}" for folder in folders for name in faults.compare(folder, clean)]
    failed = [process.returncode for process in processes if process.returncode != 0]
    if failed:
        outcome = "failed by name" if all(faults._NAMES.search(out[-3000:]) for out in outputs) else "failed unnamed"
    else:
        outcome = "identical" if not differing else "wrong"
    return faults.Outcome(
        "store: two runs at once",
        "one store, two folders",
        outcome,
        rerun_rc=max((process.returncode for process in processes), default=0),
        differing=differing,
        tail=f"{asked} model requests for {once} answer lines of one run\n" + "\n".join(faults.tail(out, 4) for out in outputs),
        seconds=time.monotonic() - started,
    )


def table(outcomes: list[faults.Outcome]) -> str:
    rows: dict[tuple[str, str], Counter] = {}
    for o in outcomes:
        if "@" in o.moment:
            stage = o.moment.split("@")[0]
        elif o.fault in fault_kinds.STAGE:
            stage = fault_kinds.STAGE[o.fault]
        elif o.moment.split(":")[0] in ("judge", "report"):  # fault_kinds' ENOSPC and read-only labels
            stage = o.moment.split(":")[0]
        else:
            stage = {"ENOSPC": "frames", "--unlock while live": "any", "store: two runs at once": "any"}.get(o.fault, "inference")
        rows.setdefault((o.fault, stage), Counter())[o.outcome] += 1
    lines = [
        "| fault | stage | moments tried | identical | failed by name | failed unnamed | wrong | not fired |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (fault, stage), counts in rows.items():
        cells = [str(counts[name]) for name in faults.OUTCOMES]
        lines.append(f"| {fault} | {stage} | {sum(counts.values())} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def details(outcomes: list[faults.Outcome]) -> str:
    """One line per outcome other than identical: what the rerun said or what differed."""
    lines = []
    for o in outcomes:
        if o.outcome == "identical":
            continue
        said = " / ".join(line.strip() for line in o.tail.splitlines()[-3:] if line.strip())[:300]
        lines.append(
            f"- {o.fault}, {o.moment}: **{o.outcome}**"
            + (f"; differing: {', '.join(o.differing)}" if o.differing else "")
            + (f"; {said}" if said else "")
        )
    return "\n".join(lines) or "- none"


def write_doc(doc: Path, text: str) -> None:
    old = doc.read_text() if doc.exists() else ""
    if BEGIN in old and END in old:
        new = old[: old.index(BEGIN)] + text + old[old.index(END) + len(END) :]
    else:
        new = old.rstrip() + ("\n\n" if old else "") + text + "\n"
    doc.write_text(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moments", type=int, default=5, help="seeded moments per stage for kill -9")
    parser.add_argument("--sigint-moments", type=int, default=None, help="seeded moments per stage for SIGINT (default: --moments)")
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--doc", type=Path, default=REPO / "docs" / "reliability.md")
    parser.add_argument("--no-doc", action="store_true", help="print the table only (CI)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--note", default="", help="a line put above the table (e.g. which code was measured)")
    parser.add_argument("--stages", nargs="*", default=list(faults.STAGES))
    parser.add_argument("--no-determinism-check", action="store_true", help="skip the second clean run")
    parser.add_argument(
        "--fresh", action="store_true", help="every fault in a fresh run (default: later stages start from a copy of the clean run)"
    )
    parser.add_argument(
        "--kinds",
        nargs="*",
        default=["all"],
        help=f"the trial's fault kinds (tests/helpers/fault_kinds.py), before the stage faults: all (default), cheap "
        f"({' '.join(fault_kinds.CHEAP)}), none, or names from: {' '.join(fault_kinds.KINDS)}",
    )
    parser.add_argument(
        "--kind-draws",
        type=int,
        default=2,
        help="seeded draws (which frame job and worker, which line) for each kind that signals one worker or job",
    )
    parser.add_argument(
        "--kinds-only",
        action="store_true",
        help="only the kinds of --kinds (no stage faults, store, re-inference, ENOSPC in frames, --unlock)",
    )
    parser.add_argument(
        "--budget-s", type=float, default=None, help="start no fault after this many seconds (those left are counted as skipped)"
    )
    args = parser.parse_args(argv)
    kinds = {"all": list(fault_kinds.KINDS), "cheap": list(fault_kinds.CHEAP), "none": []}
    chosen = [name for given in args.kinds for name in kinds.get(given, [given])]
    unknown = sorted(set(chosen) - set(fault_kinds.KINDS))
    if unknown:
        parser.error(f"--kinds: unknown {', '.join(unknown)}; known: all, cheap, none, {', '.join(fault_kinds.KINDS)}")
    if args.kinds_only:
        args.stages, args.no_determinism_check = [], True
    started = time.monotonic()
    outcomes: list[faults.Outcome] = []

    skipped = Counter()

    def in_budget(what: str) -> bool:
        if args.budget_s is not None and time.monotonic() - started > args.budget_s:
            skipped[what] += 1
            return False
        return True

    def record(outcome: faults.Outcome) -> None:
        outcomes.append(outcome)
        if args.json:
            args.json.write_text(json.dumps([o.as_dict() for o in outcomes], indent=1))
        print(
            f"[{time.monotonic() - started:6.0f} s] {outcome.fault:24} {outcome.moment:34} {outcome.outcome:15} ({outcome.seconds:.0f} s)",
            flush=True,
        )

    root = Path(tempfile.mkdtemp(prefix="virtuebench-faults-"))
    try:
        with faults.SlowFakeOpenAI() as server:
            clean_runs = faults.CleanRuns(root / "clean")
            config = faults.fault_config(clean_runs.root, server)
            targets = faults.TARGETS_BOTH_JUDGES
            clean = clean_runs.get(config, *targets)
            if not args.no_determinism_check:
                again = root / "clean-again"
                faults.write_config(again, config)
                assert faults.run(again, *targets).returncode == 0
                differing = faults.compare(again, clean)
                print(f"two clean runs: {'identical' if not differing else 'DIFFER in ' + ', '.join(differing)}", flush=True)
                shutil.rmtree(again)
            totals = faults.totals(clean)
            print(f"each stage's progress at the end of the clean run: {totals}", flush=True)
            number = 0
            counts = {"kill -9": args.moments, "SIGINT": args.moments if args.sigint_moments is None else args.sigint_moments}
            planned = {
                (stage, fault): faults.moments(stage, totals, counts[fault], args.seed + (sig == signal.SIGINT))
                for stage in args.stages
                for fault, sig in SIGNALS.items()
                if counts[fault]
            }

            def special(index: int) -> None:
                """After the first round of stage faults: the answer store's faults, the re-inference cases, ENOSPC, --unlock beside a live run."""
                nonlocal number
                if index != 0 or args.kinds_only:
                    return
                for name, fault in (("store: damaged entries", store_damaged), ("store: two runs at once", shared_store)):
                    if in_budget(name):
                        record(fault(root, server, clean_runs))
                for k, sig in ((3, signal.SIGINT), (7, signal.SIGINT), (5, signal.SIGKILL)):
                    if in_budget("re-inference"):
                        number += 1
                        record(
                            faults.reinference_after_setting_change(root / f"run{number:03d}", server, clean_runs, k, sig, targets=targets)
                        )
                for fraction in (0.3, 0.7):
                    if in_budget("ENOSPC"):
                        record(enospc(root, server, clean_runs, fraction))
                if in_budget("--unlock while live"):
                    record(unlock_while_live(root, server, clean_runs))

            # The trial's kinds first (under --budget-s in CI, W1-W3 are always tried: each is a copy of the clean run or
            # a run from the frames stage, and one rerun); then round by round (every stage and signal once a round),
            # so a budget cut leaves every stage tried.
            for name in chosen:
                for draw in range(args.kind_draws if name.startswith(("worker-", "job-")) else 1):
                    if in_budget(name):
                        record(fault_kinds.run_kind(name, root, server, clean_runs, args.seed + draw, suffix=f"-{draw}" if draw else ""))
            if not planned:
                special(0)
            for index in range(max(counts.values()) if planned else 0):
                for (stage, fault), drawn in planned.items():
                    if index >= len(drawn):
                        continue
                    if not in_budget(f"{fault} in {stage}"):
                        continue
                    number += 1
                    workdir = root / f"run{number:03d}"
                    late = stage != "frames" and not args.fresh
                    record(faults.inject(workdir, config, clean, drawn[index], SIGNALS[fault], *targets, start_from_clean=late))
                    shutil.rmtree(workdir, ignore_errors=True)
                special(index)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    wall = time.monotonic() - started
    wrong = sum(o.outcome == "wrong" for o in outcomes)
    # Every fault must end identical, but SIGINT to a stage, which may also stop the rerun with a named error; a fault
    # that never fired tested nothing (ENOSPC where no tmpfs can be mounted is skipped, and said so).
    failed = [
        o
        for o in outcomes
        if o.outcome != "identical"
        and not (o.fault == "SIGINT" and o.outcome == "failed by name")
        and not (o.outcome == "not fired" and o.tail.startswith("skipped:"))
        and not fault_kinds.allowed(o)
    ]
    when = datetime.date.today().isoformat()
    cores = os.cpu_count()
    body = table(outcomes)
    text = (
        f"{BEGIN}\n"
        + (f"{args.note}\n\n" if args.note else "")
        + f"Measured {when} with `make faults` (tools/faults.py --moments {args.moments} --sigint-moments {counts['SIGINT']} --seed {args.seed}) on "
        f"{platform.system()} {platform.machine()}, {cores} cores, no GPU: {len(outcomes)} faults in {wall / 60:.1f} min.\n\n"
        f"{body}\n\n"
        + (f"Not tried (past --budget-s {args.budget_s:.0f}): {dict(skipped)}.\n\n" if skipped else "")
        + (
            "Later stages started from a copy of the clean run with that stage's outputs on removed (faults.start_at_stage).\n\n"
            if not args.fresh
            else ""
        )
        + f"What was not identical:\n\n{details(outcomes)}\n{END}"
    )
    print(body)
    print(details(outcomes))
    if skipped:
        print(f"not tried (past --budget-s {args.budget_s:.0f}): {dict(skipped)}")
    print(f"wall time: {wall:.0f} s; wrong: {wrong}; not as required: {len(failed)}")
    if args.doc and not args.no_doc:
        write_doc(args.doc, text)
    if args.json:
        args.json.write_text(json.dumps([o.as_dict() for o in outcomes], indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
