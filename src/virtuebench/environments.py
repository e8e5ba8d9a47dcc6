"""Each route's environment file (envs/*.yaml) as a Python virtual environment, and a check that every one of them
builds and imports its route.

- `make envs` (`build`): one virtual environment per env file under .envs/<name>/, for a machine or a cluster
  without conda. Without conda, each inference job runs with its model's .envs/<name>/bin/python where that exists
  (rules/common.smk), so the routes' conflicting pins (transformers 4.40 for the OpenGVLab video models, 5.23 for
  the rest, vLLM's own torch) never meet.
- `make env-check` (`check`, CI): each env file built in a scratch folder, then its route's modules and upstream
  packages imported with the repository's src/ on the path, then the folder removed; a table of what each took.

The pip packages are the env file's; its conda packages (envs/core.yaml) are taken from PyPI at the same version.
An `--extra-index-url` (the PyTorch CUDA wheel indexes) that cannot be reached is left out: PyPI's wheels of the
same versions are CUDA builds too, and import without a GPU. A requirement from a host that cannot be reached
(LLaVA-NeXT from GitHub) is skipped with that reason, and so are the imports that need it.

    python -m virtuebench.environments build [NAME ...] [--into .envs]
    python -m virtuebench.environments check [NAME ...]
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
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import yaml

REPO = Path(__file__).resolve().parents[2]
ENVS_DIR = REPO / "envs"

#: What an environment must import for the stages that are no model backend: the CPU stages (core) and the LLM judge
#: (api, beside the openai backend's route).
STAGE_IMPORTS: dict[str, list[str]] = {
    "core": ["virtuebench.sources", "virtuebench.frames", "virtuebench.inference", "virtuebench.judge.run", "virtuebench.metrics"]
    + [
        "virtuebench.report.figures",
        "virtuebench.curation.filters",
        "av",
        "polars",
        "matplotlib",
        "huggingface_hub",
        "jsonschema",
        "scipy.special",
    ],
    "api": ["virtuebench.judge.llm"],
}


def route_imports(registry: Path | None = None) -> dict[str, list[str]]:
    """What each env file must import, by its name: STAGE_IMPORTS, and for every model registry entry (config/models.yaml)
    its `env`'s share: the backend's module, the inference stage and what the backend class declares (`env_imports`).
    Derived from the backend registry, so a model family's env needs no line here."""
    from virtuebench.models import backend_class

    imports = {name: list(targets) for name, targets in STAGE_IMPORTS.items()}
    entries = yaml.safe_load((registry or REPO / "config" / "models.yaml").read_text()) or {}
    for entry in entries.values():
        if not entry.get("env"):
            continue
        cls = backend_class(entry["backend"])
        wanted = imports.setdefault(Path(entry["env"]).stem, [])
        wanted += [target for target in (cls.__module__, "virtuebench.inference", *cls.env_imports) if target not in wanted]
    return imports


CONDA_TO_PIP = {"matplotlib-base": "matplotlib"}  # conda package names that differ on PyPI


@dataclass
class EnvSpec:
    """What an env file asks for, as pip sees it."""

    name: str
    python: str | None
    packages: list[str]
    indexes: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> EnvSpec:
        data = yaml.safe_load(path.read_text()) or {}
        python, packages, indexes = None, [], []
        for dependency in data.get("dependencies", []):
            if isinstance(dependency, dict):
                for line in dependency.get("pip", []):
                    option, _, value = str(line).partition(" ")
                    if option in ("--extra-index-url", "--index-url"):
                        indexes.append(value.strip())
                    else:
                        packages.append(str(line))
                continue
            name, _, version = str(dependency).partition("=")
            if name == "python":
                python = version
            elif name != "pip":
                pinned = f"=={version}" if version.count(".") >= 2 else f"=={version}.*" if version else ""
                packages.append(CONDA_TO_PIP.get(name, name) + pinned)
        if not packages:
            raise ValueError(f"{path}: no packages under dependencies")
        return cls(path.stem, python, packages, indexes)


def reachable(url: str, timeout_s: float = 10.0) -> bool:
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout_s).close()
    except urllib.error.HTTPError:
        return True  # the host answered
    except (OSError, ValueError):
        return False
    return True


def url_host(requirement: str) -> str | None:
    """The host of a direct-URL requirement (`name @ git+https://host/...`), else None."""
    if "@" not in requirement or "://" not in requirement:
        return None
    return urlsplit(requirement.split("@", 1)[1].strip().removeprefix("git+")).hostname


@dataclass
class Built:
    name: str
    folder: Path
    seconds: float
    notes: list[str]  # indexes left out, requirements skipped
    skipped_imports: list[str]


def build(spec: EnvSpec, folder: Path, quiet: bool = True) -> Built:
    """The env file's packages in a fresh virtual environment at `folder` (PyPI and the file's indexes only)."""
    started = time.monotonic()
    wanted = spec.python
    if wanted and f"{sys.version_info.major}.{sys.version_info.minor}" != wanted:
        raise RuntimeError(f"envs/{spec.name}.yaml asks for Python {wanted}; run this with python{wanted}")
    notes, packages, skipped_imports = [], [], []
    for requirement in spec.packages:
        host = url_host(requirement)
        if host and not reachable(f"https://{host}"):
            notes.append(f"skipped {requirement.split('@')[0].strip()} ({host} cannot be reached)")
            skipped_imports.append(requirement.split("@")[0].strip())
            continue
        packages.append(requirement)
    indexes = []
    for index in spec.indexes:
        if reachable(index):
            indexes += ["--extra-index-url", index]
        else:
            notes.append(f"{index} cannot be reached: PyPI's wheels of the same versions instead")
    if folder.exists():
        shutil.rmtree(folder)
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    install = install_command(folder)
    for _ in range(2):  # once more after a failure: a download cut short is not a broken env file
        result = subprocess.run([*install, *(["--quiet"] if quiet else []), *indexes, *packages], capture_output=quiet, text=True)
        if result.returncode == 0:
            break
    if result.returncode != 0:
        raise RuntimeError(f"envs/{spec.name}.yaml did not install:\n{(result.stderr or '')[-3000:]}")
    return Built(spec.name, folder, time.monotonic() - started, notes, skipped_imports)


def install_command(folder: Path) -> list[str]:
    """The installer's command line for the virtual environment at `folder`, packages to follow.

    uv (the `uv` package, pinned in the `test` extra) where it is installed: it keeps one cache of unpacked wheels
    and links from it, so the three envs that pin torch 2.9.1 unpack its 7 GB of CUDA wheels once, not three times;
    `make env-check` took 16 to 26 minutes with pip. `--index-strategy unsafe-best-match` makes it pick across PyPI
    and the PyTorch index as pip does (uv's default takes a package from the first index that has it at all), and
    `--no-config` ignores any uv.toml, as `pip --isolated` ignores pip.conf. Without uv: pip, as before."""
    python = str(folder / "bin" / "python")
    try:
        from uv import find_uv_bin
    except ImportError:
        return [python, "-m", "pip", "--isolated", "install", "--disable-pip-version-check"]
    return [find_uv_bin(), "pip", "install", "--no-config", "--python", python, "--index-strategy", "unsafe-best-match"]


#: Run by the built environment's python: tries each import given as argv (`module` or `module:name,name`) and prints
#: one JSON object, each target with None or its error's last line. One process for all of a route's imports, as each
#: of them apart started torch again: the checks took longer than the builds.
_IMPORT_CHECK = """
import importlib, json, sys, traceback
problems = {}
for target in sys.argv[1:]:
    module, _, names = target.partition(":")
    try:
        loaded = importlib.import_module(module)
        for name in filter(None, names.split(",")):  # as `from module import name`: an attribute or a submodule
            if not hasattr(loaded, name):
                try:
                    importlib.import_module(module + "." + name)
                except ModuleNotFoundError:
                    raise ImportError(f"cannot import name {name!r} from {module!r}") from None
        problems[target] = None
    except BaseException as error:
        problems[target] = traceback.format_exception_only(type(error), error)[-1].strip()
print("\\n" + json.dumps(problems))
"""


def import_problems(built: Built) -> tuple[list[str], list[str]]:
    """(imports that failed, imports skipped because their package could not be had here) in the built env."""
    targets, skipped = [], []
    for target in route_imports().get(built.name, []):
        module = target.partition(":")[0]
        if any(module == package or module.startswith(package + ".") for package in built.skipped_imports):
            skipped.append(module)
        else:
            targets.append(target)
    if not targets:
        return [], skipped
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "PYTHONNOUSERSITE": "1"}
    run = subprocess.run(
        [str(built.folder / "bin" / "python"), "-c", _IMPORT_CHECK, *targets], capture_output=True, text=True, env=env, timeout=1200
    )
    try:
        problems = json.loads(run.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):  # the interpreter died (a crash in an extension module): every import fails
        last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"
        problems = {target: last for target in targets}
    return [f"{target}: {problems.get(target) or 'not reported'}" for target in targets if problems.get(target, "") is not None], skipped


def env_files(names: list[str]) -> list[Path]:
    files = sorted(ENVS_DIR.glob("*.yaml"))
    known = {path.stem: path for path in files}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"no env file for {unknown}; known: {sorted(known)}")
    return [known[name] for name in names] if names else files


def _build_and_check(args: argparse.Namespace) -> int:
    """`build` (into args.into, kept) and `check` (args.into None: a scratch folder, removed): build, then import."""
    try:
        files = env_files(args.names)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    rows, bad = [], 0
    for path in files:
        spec = EnvSpec.read(path)
        with tempfile.TemporaryDirectory(prefix=f"env-{spec.name}-") as scratch:
            folder = Path(args.into or scratch) / spec.name
            print(f"[{spec.name}] building {folder} from {path.relative_to(REPO)} ...", file=sys.stderr, flush=True)
            try:
                built = build(spec, folder)
            except RuntimeError as error:
                bad += 1
                lines = str(error).splitlines()
                rows.append((spec.name, "-", "did not build", next((line for line in lines if line.startswith("ERROR")), lines[0])))
                print(f"[{spec.name}] {error}", file=sys.stderr)
                continue
            failed, skipped = import_problems(built)
            bad += bool(failed)
            # A route whose package could not be had here imported only in part: the table says so, never plain "imports".
            status = ("imports in part" if skipped else "imports") if not failed else "import failed: " + "; ".join(failed)
            notes = "; ".join(built.notes + ([f"not imported: {', '.join(skipped)}"] if skipped else []))
            rows.append((spec.name, f"{built.seconds:.0f} s", status, notes))
            print(f"[{spec.name}] {built.seconds:.0f} s, {status}{'; ' + notes if notes else ''}", file=sys.stderr, flush=True)
    print("| env | build time | result | notes |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.environments", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser("build", help="a virtual environment per env file, kept under --into")
    build_command.add_argument("names", nargs="*")
    build_command.add_argument("--into", default=str(REPO / ".envs"))
    build_command.set_defaults(func=_build_and_check)
    check_command = commands.add_parser("check", help="build each env file in a scratch folder and import its route")
    check_command.add_argument("names", nargs="*")
    check_command.set_defaults(func=_build_and_check, into=None)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
