"""The SLURM profile: it parses without a scheduler, `make slurm-profile` fits it to the cluster it finds (conda or
not, accounting or not), and the README's cluster commands, read from the README and run as written on a fresh copy
of the repository, run the demo's results/table2.tex through a real one-node SLURM (Debian's slurm-wlm, started by
the README's own `make slurm-local`). That last test runs only where VB_TEST_SLURM=1 (set by .ci/run) and as
root; elsewhere it skips with the reason."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO
from helpers.workflow import TINY

from virtuebench import cluster
from virtuebench.cluster import Cluster, detect, install_profile

pytestmark = pytest.mark.workflow
ENV = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}


def _run(command: list[str] | str, cwd: Path, timeout: int, env: dict | None = None) -> subprocess.CompletedProcess:
    """A command in its own process group, killed hard (with everything it started) at the timeout."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env or ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        shell=isinstance(command, str),
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"{command} did not finish in {timeout} s:\n{output[-3000:]}")
    return subprocess.CompletedProcess(command, process.returncode, output, "")


def test_profile_parses_without_a_scheduler(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(TINY))
    # No conda on this machine: --sdm env-modules stands in for the profile's conda (no rule uses modules).
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--profile", str(REPO / "profiles" / "slurm")]
    result = _run([*command, "--sdm", "env-modules", "--configfile", "config.yaml", "-n", "results/table2.tex"], tmp_path, 120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "make_instances" in result.stdout


def fake_cluster(conda: bool, mamba: bool, sacct: str | None):
    """`which` and `run` of a machine with the given commands; sacct answers, or fails with the given text."""

    def which(name):
        return {"conda": "/opt/conda/bin/conda" if conda else None, "mamba": "/opt/conda/bin/mamba" if mamba else None}.get(
            name, "/usr/bin/sacct" if name == "sacct" and sacct is not None else None
        )

    def run(command, **kwargs):
        error = "" if sacct == "works" else sacct
        return subprocess.CompletedProcess(command, 0 if sacct == "works" else 1, "", error)

    return which, run


def test_the_profile_fits_the_cluster_it_finds(tmp_path):
    disabled = "sacct: error: Slurm accounting storage is disabled"
    # Nothing but SLURM, without accounting: the current environment, squeue, no account.
    bare = detect(*fake_cluster(conda=False, mamba=False, sacct=disabled))
    assert bare == Cluster(None, False, False, disabled)
    values = install_profile(REPO / "profiles" / "slurm", tmp_path / "bare", {}, bare)
    profile = yaml.safe_load((tmp_path / "bare" / "config.yaml").read_text())
    assert "software-deployment-method" not in profile and profile["slurm-status-command"] == "squeue"
    assert profile["slurm-no-account"] is True and "make envs" in values["software"] and "squeue" in values["accounting"]
    # conda and mamba, accounting, an account from the environment.
    full = detect(*fake_cluster(conda=True, mamba=True, sacct="works"))
    values = install_profile(REPO / "profiles" / "slurm", tmp_path / "full", {"VB_SLURM_ACCOUNT": "acct42"}, full)
    profile = yaml.safe_load((tmp_path / "full" / "config.yaml").read_text())
    assert profile["software-deployment-method"] == "conda" and profile["conda-frontend"] == "mamba"
    assert "slurm-status-command" not in profile and "slurm-no-account" not in profile
    assert profile["default-resources"]["slurm_account"] == "acct42"
    # No accounting but an account given: squeue for states, the account kept.
    install_profile(REPO / "profiles" / "slurm", tmp_path / "mixed", {"VB_SLURM_ACCOUNT": "acct42"}, bare)
    profile = yaml.safe_load((tmp_path / "mixed" / "config.yaml").read_text())
    assert profile["slurm-status-command"] == "squeue" and "slurm-no-account" not in profile
    # No sacct at all.
    assert detect(*fake_cluster(conda=False, mamba=False, sacct=None)).accounting_note == "no sacct command"


def test_install_profile_fills_names_from_the_environment(tmp_path):
    cluster = Cluster("/opt/conda/bin/conda", False, True, "sacct answers")
    values = install_profile(
        REPO / "profiles" / "slurm", tmp_path / "slurm", {"VB_SLURM_ACCOUNT": "acct42", "VB_SLURM_GPU_PARTITION": "a100"}, cluster
    )
    installed = yaml.safe_load((tmp_path / "slurm" / "config.yaml").read_text())
    assert values["slurm_account"] == "acct42" and installed["default-resources"]["slurm_account"] == "acct42"
    assert installed["set-resources"]["run_inference"]["slurm_partition"] == "a100"
    assert "slurm_partition" not in installed["default-resources"]
    assert installed["executor"] == "slurm"


def readme_cluster_commands(page: str = "README.md", heading: str = "## Running on a cluster (SLURM)") -> list[str]:
    """The shell block of the README's cluster section, command by command, comments dropped."""
    text = (REPO / page).read_text()
    section = text[text.index(heading) :]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL).group(1)
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def test_the_readme_gives_the_cluster_commands():
    assert readme_cluster_commands() == ["make slurm-local", "make slurm-profile", ".venv/bin/snakemake --profile slurm results/table2.tex"]


def test_the_cluster_guide_gives_the_readmes_commands():
    """docs/cluster.md repeats the README's block for its reader: the two stay the same commands."""
    assert readme_cluster_commands("docs/cluster.md", "# Running on a cluster (SLURM)") == readme_cluster_commands()


def fresh_copy(target: Path) -> Path:
    """The repository's tracked files (as a clone has them) with this checkout's installed .venv beside them."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(REPO / ".venv")
    # As after `make install`: the install stamp is newer than pyproject.toml, so make installs nothing again.
    stamp = (REPO / ".venv" / ".installed").stat().st_mtime
    os.utime(target / "pyproject.toml", (stamp - 60, stamp - 60))
    return target


def test_the_readme_cluster_commands_run_the_demo_through_slurm(tmp_path):
    if os.environ.get("VB_TEST_SLURM") != "1":
        pytest.skip("the real-SLURM test runs only with VB_TEST_SLURM=1 (.ci/run sets it); it installs and starts slurm as root")
    if os.geteuid() != 0:
        pytest.skip("a single-node SLURM needs root to start")
    if not (REPO / ".venv" / ".installed").exists():
        pytest.skip("the README's commands need the installed .venv (make install)")
    clone = fresh_copy(tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    # A new user's shell: no virtual environment on the PATH, a home of its own (where the profile is installed).
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    log = []
    for command in readme_cluster_commands():
        started = time.monotonic()
        result = _run(command, clone, 1500, env)
        log.append(f"$ {command}  -> exit {result.returncode} in {time.monotonic() - started:.0f} s")
        # Asked for (VB_TEST_SLURM=1): a SLURM that does not start fails the test rather than skipping it, so that a
        # green CI means the README's cluster commands ran.
        assert result.returncode == 0, "\n".join(log) + "\n" + result.stdout[-4000:]
        if command == "make slurm-profile":
            assert "run: .venv/bin/snakemake --profile slurm results/table2.tex" in result.stdout
    print("\n" + "\n".join(log))
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", result.stdout, re.IGNORECASE)
    print(f"{len(submitted)} SLURM jobs")
    assert len(submitted) >= 6, result.stdout[-3000:]
    for name in ("table2.tex", "scores.csv", "instances.parquet"):  # what results/table2.tex is made from
        assert (clone / "results" / name).stat().st_size > 0
    assert "\\begin{tabular}" in (clone / "results" / "table2.tex").read_text()


# --- `python -m virtuebench.cluster`: the commands behind `make slurm-profile` and `make slurm-local` ---


def _commands_on_path(tmp_path: Path, monkeypatch, **scripts: str) -> None:
    """A PATH holding only the given commands (name -> shell body), and no account or partition in the environment."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    for variable in ("VB_SLURM_ACCOUNT", "VB_SLURM_PARTITION", "VB_SLURM_GPU_PARTITION"):
        monkeypatch.delenv(variable, raising=False)


def test_install_profile_command_needs_sbatch_and_says_what_it_chose(tmp_path, monkeypatch, capsys):
    target = tmp_path / "home" / "slurm"
    _commands_on_path(tmp_path, monkeypatch)
    assert cluster.main(["install-profile", "--source", str(REPO / "profiles" / "slurm"), "--target", str(target)]) == 1
    assert "error: no sbatch on this machine" in capsys.readouterr().err and not target.exists()

    _commands_on_path(tmp_path, monkeypatch, sbatch="exit 0", sacct="echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1")
    monkeypatch.setenv("VB_SLURM_PARTITION", "short")
    assert cluster.main(["install-profile", "--source", str(REPO / "profiles" / "slurm"), "--target", str(target)]) == 0
    said = capsys.readouterr().err.splitlines()
    assert said == [
        f"installed {target}/config.yaml",
        "  slurm_partition=short",
        "  software: no conda: the jobs run in the environment that runs Snakemake (.venv), each inference job in its "
        "route's virtual environment where one is built (.envs/<name>/: `make envs` builds one per envs/*.yaml)",
        "  no accounting (sacct: error: Slurm accounting storage is disabled): job states from squeue, no account asked for",
        "run: .venv/bin/snakemake --profile slurm results/table2.tex",
    ]
    installed = yaml.safe_load((target / "config.yaml").read_text())
    assert installed["default-resources"]["slurm_partition"] == "short" and installed["slurm-no-account"] is True

    # A local.yaml with a misspelt key: an error naming the file and the allowed keys, nothing written.
    source = tmp_path / "profile"
    shutil.copytree(REPO / "profiles" / "slurm", source)
    (source / "local.yaml").write_text("slurm_acount: acct42\n")
    assert cluster.main(["install-profile", "--source", str(source), "--target", str(tmp_path / "other")]) == 1
    error = capsys.readouterr().err
    assert f"error: {source}/local.yaml: unknown setting(s) ['slurm_acount']" in error and "slurm_account" in error
    assert not (tmp_path / "other").exists()


def test_a_sacct_that_hangs_means_no_accounting():
    def run(command, **kwargs):
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    found = detect(lambda name: f"/usr/bin/{name}" if name == "sacct" else None, run)
    assert found == Cluster(
        None,
        False,
        False,
        "sacct did not answer (Command '['/usr/bin/sacct', '-n', '-X', '--format=JobID', '-S', 'now']' timed out after 30 seconds)",
    )


def test_start_local_needs_root_and_runs_the_script(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(cluster.subprocess, "run", lambda command: ran.append(command) or subprocess.CompletedProcess(command, 3))
    monkeypatch.setattr(cluster.os, "geteuid", lambda: 1000)
    assert cluster.main(["start-local"]) == 1 and ran == []
    assert f"error: starting SLURM needs root: sudo bash {cluster.START_LOCAL}" in capsys.readouterr().err
    monkeypatch.setattr(cluster.os, "geteuid", lambda: 0)
    assert cluster.main(["start-local"]) == 3  # the script's own exit status
    assert ran == [["bash", str(REPO / "profiles" / "slurm" / "start-local.sh")]]
