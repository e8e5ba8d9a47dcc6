"""The SLURM profile: it parses without a scheduler, installs where `--profile slurm` finds it, and runs the
demo through a real single-node SLURM (Debian's slurm 22.05, started by tests/slurm/start_slurm.sh as root).
That test runs only where VB_TEST_SLURM=1 (set by .ci/run); elsewhere, or where no scheduler can be had (not
root, no apt), it skips with the reason."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from test_workflow import TINY

pytestmark = pytest.mark.workflow
ENV = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}


def _snakemake(*args, cwd: Path, timeout: int) -> subprocess.CompletedProcess:
    """Snakemake in its own process group, killed hard (with everything it started) at the timeout."""
    process = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), *args],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"snakemake did not finish in {timeout} s:\n{output[-3000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, output, "")


def test_profile_parses_without_a_scheduler(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(TINY))
    # No conda on this machine: --sdm env-modules stands in for the profile's conda (no rule uses modules).
    result = _snakemake(
        "--profile",
        str(REPO / "profiles" / "slurm"),
        "--sdm",
        "env-modules",
        "--configfile",
        "config.yaml",
        "-n",
        "results/table2.tex",
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "make_instances" in result.stdout


def test_install_profile_fills_names_from_the_environment(tmp_path):
    from virtuebench.cluster import install_profile

    values = install_profile(
        REPO / "profiles" / "slurm", tmp_path / "slurm", {"VB_SLURM_ACCOUNT": "acct42", "VB_SLURM_GPU_PARTITION": "a100"}
    )
    installed = yaml.safe_load((tmp_path / "slurm" / "config.yaml").read_text())
    assert values["slurm_account"] == "acct42" and installed["default-resources"]["slurm_account"] == "acct42"
    assert installed["set-resources"]["run_inference"]["slurm_partition"] == "a100"
    assert "slurm_partition" not in installed["default-resources"]
    assert installed["executor"] == "slurm"


@pytest.fixture(scope="module")
def scheduler():
    # Starting SLURM installs Debian packages and daemons: only where asked for (.ci/run sets VB_TEST_SLURM=1).
    if os.environ.get("VB_TEST_SLURM") != "1":
        pytest.skip("the real-SLURM test runs only with VB_TEST_SLURM=1 (.ci/run sets it); it installs and starts slurm as root")
    if os.geteuid() != 0:
        pytest.skip("a single-node SLURM needs root to start")
    started = subprocess.run(["bash", str(REPO / "tests" / "slurm" / "start_slurm.sh")], capture_output=True, text=True, timeout=300)
    if started.returncode != 0:
        pytest.skip(f"no SLURM scheduler on this machine: {started.stdout.strip() or started.stderr.strip()}")
    return True


def test_demo_through_real_slurm(scheduler, tmp_path):
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    profile.pop("software-deployment-method")  # no conda here: the jobs use this environment
    profile.update(
        {
            "slurm-status-command": "squeue",
            "slurm-no-account": True,
            "slurm-init-seconds-before-status-checks": 1,
            "jobs": 6,
            "latency-wait": 5,
            "group-components": {"frames": 2},
        }
    )
    (tmp_path / "profile").mkdir()
    (tmp_path / "profile" / "config.yaml").write_text(yaml.safe_dump(profile))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({**TINY, "prompts": ["honest"]}))
    started = time.monotonic()
    result = _snakemake("--profile", str(tmp_path / "profile"), "--configfile", "config.yaml", cwd=tmp_path, timeout=900)
    wall = time.monotonic() - started
    assert result.returncode == 0, result.stdout[-4000:]
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", result.stdout, re.IGNORECASE)
    print(f"\ndemo through SLURM: {wall:.1f} s, {len(submitted)} SLURM jobs")
    assert len(submitted) >= 6, result.stdout[-3000:]
    for name in ("table1.tex", "table2.tex", "fig4.png", "fig6.png", "scores.csv"):
        assert (tmp_path / "results" / name).stat().st_size > 0
