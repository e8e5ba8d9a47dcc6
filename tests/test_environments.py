"""The env files read as pip sees them (virtuebench.environments), and every route's env has its import check.
Building them is `make env-check` (.ci/run): minutes of downloads, not part of the test suite."""

import yaml
from helpers.data import REPO

from virtuebench.environments import ROUTE_IMPORTS, EnvSpec, env_files, url_host


def test_every_env_file_reads_and_has_its_route_imports():
    files = env_files([])
    assert {path.stem for path in files} == set(ROUTE_IMPORTS)
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
    assert used and all((REPO / env).is_file() and (REPO / env).stem in ROUTE_IMPORTS for env in used)
