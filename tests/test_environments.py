"""The env files read as pip sees them (virtuebench.environments), and every route's env has its import check.
Building them for real is `make env-check` (.ci/run): minutes of downloads, not part of the test suite; here pip is
faked and the rest (what is left out, the retry, the import checks in the built environment, the table) runs."""

import http.server
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO
from helpers.local_server import serving

from virtuebench import environments
from virtuebench.environments import EnvSpec, env_files, route_imports, url_host


def test_every_env_file_reads_and_has_its_route_imports():
    files = env_files([])
    assert {path.stem for path in files} == set(route_imports())
    for path in files:
        spec = EnvSpec.read(path)
        assert spec.python == "3.11" and spec.packages, path
        assert all(not package.startswith("-") for package in spec.packages), path
    core = EnvSpec.read(REPO / "envs" / "core.yaml")
    assert "matplotlib==3.10.*" in core.packages and "av==15.1.*" in core.packages  # conda names and versions, as pip's
    assert EnvSpec.read(REPO / "envs" / "transformers.yaml").indexes == ["https://download.pytorch.org/whl/cu128"]
    llava = EnvSpec.read(REPO / "envs" / "llava.yaml")
    assert [url_host(p) for p in llava.packages if url_host(p)] == ["github.com"]


def test_every_registry_env_is_an_env_file_with_an_import_check():
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    used = {entry["env"] for entry in registry.values() if entry.get("env")}
    assert used and all((REPO / env).is_file() and (REPO / env).stem in route_imports() for env in used)


def test_each_routes_imports_are_derived_from_its_backends():
    """The backend registry says what a route imports (each class's module and env_imports), as the list kept by hand did."""
    imports = route_imports()
    assert imports["vllm"] == ["virtuebench.models.vllm_engine", "virtuebench.inference", "vllm", "transformers", "torch"]
    assert imports["api"] == ["virtuebench.judge.llm", "virtuebench.models.openai_api", "virtuebench.inference", "openai", "av", "polars"]
    assert "keye_vl_utils" in imports["keye"] and "decord" in imports["videochat"] and "llava.model.builder" in imports["llava"]
    assert "virtuebench.models.rope" in imports["transformers"] and "virtuebench.inference" in imports["core"]


# --- building and checking (`make envs`, `make env-check`) with pip faked: what is left out, the retry, the table ---


def _fake_pip(monkeypatch, failures: dict[str, int], calls: list[list[str]]):
    """subprocess.run as `build` meets it: `python -m venv` makes the folder with a python that is this one; pip fails
    `failures[name]` times for envs/<name>.yaml, then succeeds; anything else (the import checks) runs for real."""
    real_run = subprocess.run

    def run(command, *args, **kwargs):
        command = [str(part) for part in command]
        if command[1:3] == ["-m", "venv"]:
            (Path(command[3]) / "bin").mkdir(parents=True)
            (Path(command[3]) / "bin" / "python").symlink_to(sys.executable)
            return subprocess.CompletedProcess(command, 0)
        if command[1:3] in (["-m", "pip"], ["pip", "install"]):  # pip, or uv (virtuebench.environments.install_command)
            calls.append(command)
            python = command[command.index("--python") + 1] if "--python" in command else command[0]
            name = Path(python).parents[1].name
            if failures.get(name, 0) > 0:
                failures[name] -= 1
                return subprocess.CompletedProcess(command, 1, "", "Collecting x\nERROR: No matching distribution found for x==9")
            return subprocess.CompletedProcess(command, 0, "", "")
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(environments.subprocess, "run", run)


@pytest.fixture(params=["uv", "pip"])
def installer(request, monkeypatch):
    """Each build test with uv (the `test` extra's, where installed) and with pip (uv not importable)."""
    if request.param == "uv":
        pytest.importorskip("uv", reason="uv is in the test extra: `make install`")
    else:
        monkeypatch.setitem(sys.modules, "uv", None)
    return request.param


def test_install_command_is_uv_with_pips_index_choice_or_isolated_pip(tmp_path, installer):
    command = environments.install_command(tmp_path / "env")
    if installer == "uv":
        assert Path(command[0]).name == "uv" and command[1:3] == ["pip", "install"]
        assert command[command.index("--python") + 1] == str(tmp_path / "env" / "bin" / "python")
        assert command[command.index("--index-strategy") + 1] == "unsafe-best-match" and "--no-config" in command
    else:
        assert command == [str(tmp_path / "env" / "bin" / "python"), "-m", "pip", "--isolated", "install", "--disable-pip-version-check"]


def test_build_leaves_out_what_cannot_be_reached_and_tries_pip_twice(tmp_path, monkeypatch, installer):
    calls: list[list[str]] = []
    _fake_pip(monkeypatch, {"route": 1}, calls)
    monkeypatch.setattr(environments, "reachable", lambda url, timeout_s=10.0: "pypi" in url)
    spec = EnvSpec("route", f"{sys.version_info.major}.{sys.version_info.minor}", ["a==1", "llava @ git+https://github.com/x/y.git"])
    spec.indexes = ["https://download.pytorch.org/whl/cu128", "https://pypi.example/simple"]
    built = environments.build(spec, tmp_path / "route")
    assert len(calls) == 2 and calls[0] == calls[1]  # once more after the failure, the same command
    assert calls[0][-3:] == ["--extra-index-url", "https://pypi.example/simple", "a==1"]  # github requirement and dead index left out
    assert ("--isolated" if installer == "pip" else "--no-config") in calls[0] and "--quiet" in calls[0]
    assert built.skipped_imports == ["llava"]
    assert built.notes == [
        "skipped llava (github.com cannot be reached)",
        "https://download.pytorch.org/whl/cu128 cannot be reached: PyPI's wheels of the same versions instead",
    ]
    assert (tmp_path / "route" / "bin" / "python").exists()


def test_build_names_the_env_file_when_pip_fails_twice_or_python_differs(tmp_path, monkeypatch, installer):
    calls: list[list[str]] = []
    _fake_pip(monkeypatch, {"broken": 2}, calls)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    with pytest.raises(RuntimeError, match=r"(?s)envs/broken.yaml did not install:\n.*ERROR: No matching distribution found for x==9"):
        environments.build(EnvSpec("broken", version, ["x==9"]), tmp_path / "broken")
    assert len(calls) == 2
    with pytest.raises(RuntimeError, match=r"envs/old.yaml asks for Python 2.7; run this with python2.7"):
        environments.build(EnvSpec("old", "2.7", ["x==9"]), tmp_path / "old")
    assert len(calls) == 2 and not (tmp_path / "old").exists()  # nothing built for the wrong Python


def test_import_problems_runs_each_import_in_the_built_environment(tmp_path, monkeypatch):
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "bin" / "python").symlink_to(sys.executable)
    imports = ["json", "json:loads,dumps", "json:no_such_name", "no_such_module_vb", "llava.model.builder", "llavax"]
    monkeypatch.setattr(environments, "route_imports", lambda: {"route": imports})
    failed, skipped = environments.import_problems(environments.Built("route", tmp_path / "env", 1.0, [], ["llava"]))
    assert skipped == ["llava.model.builder"]  # its package could not be installed here; `llavax` is not that package
    assert [line.split(":")[0] for line in failed] == ["json", "no_such_module_vb", "llavax"]
    assert "cannot import name 'no_such_name'" in failed[0] and "No module named 'no_such_module_vb'" in failed[1]


def test_import_problems_runs_a_routes_imports_in_one_process_and_survives_its_crash(tmp_path, monkeypatch):
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "bin" / "python").symlink_to(sys.executable)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "counted_vb.py").write_text("import os\nprint('imported', os.getpid())\n")
    (tmp_path / "src" / "crash_vb.py").write_text("import os, sys\nprint('dying', file=sys.stderr)\nos._exit(3)\n")
    monkeypatch.setattr(environments, "REPO", tmp_path)  # its src/ is the checks' PYTHONPATH
    monkeypatch.setattr(environments, "route_imports", lambda: {"route": ["counted_vb", "json:loads", "json.decoder:JSONDecoder"]})
    assert environments.import_problems(environments.Built("route", tmp_path / "env", 1.0, [], [])) == ([], [])
    monkeypatch.setattr(environments, "route_imports", lambda: {"route": ["json", "crash_vb"]})
    failed, _ = environments.import_problems(environments.Built("route", tmp_path / "env", 1.0, [], []))
    assert failed == ["json: dying", "crash_vb: dying"]  # no report from a dead interpreter: none of its imports passes


def test_check_and_build_print_a_row_per_env_and_fail_on_a_broken_one(tmp_path, monkeypatch, capsys):
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (tmp_path / "envs").mkdir()
    for name in ("good", "broken", "partial"):
        pip = ["json5==0.9.0"] + (["partly @ git+https://github.com/x/partly.git"] if name == "partial" else [])
        (tmp_path / "envs" / f"{name}.yaml").write_text(yaml.safe_dump({"dependencies": [f"python={version}", "pip", {"pip": pip}]}))
    monkeypatch.setattr(environments, "REPO", tmp_path)
    monkeypatch.setattr(environments, "ENVS_DIR", tmp_path / "envs")
    monkeypatch.setattr(environments, "reachable", lambda url, timeout_s=10.0: "github" not in url)
    monkeypatch.setattr(environments, "route_imports", lambda: {name: ["json", "partly.sub"] for name in ("good", "broken", "partial")})
    calls: list[list[str]] = []
    _fake_pip(monkeypatch, {"broken": 2}, calls)

    assert environments.main(["check"]) == 1
    out, err = capsys.readouterr()
    rows = [line.removeprefix("| ").removesuffix(" |").split(" | ") for line in out.splitlines()[2:]]
    assert [row[0] for row in rows] == ["broken", "good", "partial"]
    assert rows[0][1:3] == ["-", "did not build"] and rows[0][3].startswith("ERROR: No matching distribution found")
    assert rows[1][2] == "import failed: partly.sub: ModuleNotFoundError: No module named 'partly'"
    assert rows[2][2:] == ["imports in part", "skipped partly (github.com cannot be reached); not imported: partly.sub"]
    assert "[broken] envs/broken.yaml did not install" in err
    assert not (tmp_path / ".envs").exists()  # check builds in scratch folders only

    assert environments.main(["build", "partial", "--into", str(tmp_path / ".envs")]) == 0
    assert (tmp_path / ".envs" / "partial" / "bin" / "python").exists()  # build keeps what it built
    assert environments.main(["check", "nosuch"]) == 2
    assert "no env file for ['nosuch']; known: ['broken', 'good', 'partial']" in capsys.readouterr().err


def test_reachable_is_true_when_the_host_answers_even_with_an_error(tmp_path):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(200 if self.path == "/ok" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    with serving(Handler) as base:
        assert environments.reachable(base + "/ok") and environments.reachable(base + "/missing")
    assert not environments.reachable(base + "/ok", timeout_s=2)  # nothing listens any more
    assert not environments.reachable("not a url")
