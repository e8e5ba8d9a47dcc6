"""virtuebench.sources.hub and its CLI against a fake hub: a local HTTP server that answers the routes
huggingface_hub uses (dataset info, tree listing, file resolve), counts requests and can misbehave."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import socket
import sys
import threading
import time
import types
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from helpers.local_server import serving
from huggingface_hub import constants, file_download
from huggingface_hub.utils import _http

from virtuebench import sources
from virtuebench.sources.archives import part_order
from virtuebench.sources.base import HubRelease
from virtuebench.sources.download import main as download_main
from virtuebench.sources.hub import DownloadError, download_release

SECRET = "hf_TestSecretValue0123456789"


def _git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[str, dict] = {}
        self.requests: list[tuple[str, str, str | None, str | None]] = []  # (method, path, Range, Authorization)
        self.lock = threading.Lock()
        self.drops: dict[str, int] = {}  # file -> times to cut its body off halfway
        self.cuts: dict[str, int] = {}  # file -> times to send its headers and no body at all
        self.listed_size: dict[str, int] = {}  # file -> size the listing claims instead of the real one
        self.token = SECRET
        self.endpoint = ""

    def add(self, repo_id: str, files: dict[str, bytes], lfs: tuple[str, ...] = (), gated: bool = False) -> str:
        commit = hashlib.sha1(repo_id.encode()).hexdigest()
        self.repos[repo_id] = {"commit": commit, "files": files, "lfs": set(lfs), "gated": gated}
        return commit

    def file_requests(self, name: str, method: str = "GET") -> list:
        return [r for r in self.requests if r[0] == method and r[1].endswith("/" + name)]


def _handler(hub: FakeHub) -> type[http.server.BaseHTTPRequestHandler]:
    api = re.compile(r"^/api/datasets/([^/]+/[^/]+)/(revision|tree)/([^/]+)$")
    resolve = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _error(self, status: int, code: str) -> None:
            body = json.dumps({"error": code}).encode()
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, data) -> None:
            body = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _repo(self, repo_id: str, revision: str) -> dict | None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                self._error(404, "RepoNotFound")
                return None
            if repo["gated"] and self.headers.get("Authorization") != f"Bearer {hub.token}":
                self._error(401 if self.headers.get("Authorization") is None else 403, "GatedRepo")
                return None
            if revision not in ("main", repo["commit"]):
                self._error(404, "RevisionNotFound")
                return None
            return repo

        def _serve(self) -> None:
            path = urlsplit(self.path).path
            with hub.lock:
                request = (self.command, unquote(path), self.headers.get("Range"), self.headers.get("Authorization"))
                hub.requests.append(request)
            if match := api.match(path):
                repo_id, kind, revision = unquote(match[1]), match[2], unquote(match[3])
                if (repo := self._repo(repo_id, revision)) is None:
                    return
                if kind == "revision":
                    self._json({"id": repo_id, "sha": repo["commit"], "private": False, "gated": repo["gated"]})
                    return
                tree = []
                for name, data in repo["files"].items():
                    size = hub.listed_size.get(name, len(data))
                    entry = {"type": "file", "path": name, "size": size, "oid": _git_sha1(data)}
                    if name in repo["lfs"]:
                        entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": size, "pointerSize": 130}
                    tree.append(entry)
                self._json(tree)
            elif match := resolve.match(path):
                repo_id, revision, name = unquote(match[1]), unquote(match[2]), unquote(match[3])
                if (repo := self._repo(repo_id, revision)) is None:
                    return
                if name not in repo["files"]:
                    self._error(404, "EntryNotFound")
                    return
                data = repo["files"][name]
                start = int(re.match(r"bytes=(\d+)-", self.headers["Range"])[1]) if self.headers.get("Range") else 0
                self.send_response(206 if start else 200)
                self.send_header("X-Repo-Commit", repo["commit"])
                etag = hashlib.sha256(data).hexdigest() if name in repo["lfs"] else _git_sha1(data)
                self.send_header("ETag", f'"{etag}"')
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(data) - start))
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if self.command == "HEAD":
                    return
                with hub.lock:
                    drop = hub.drops.get(name, 0) > 0 and not start
                    cut = hub.cuts.get(name, 0) > 0
                    hub.drops[name] = hub.drops.get(name, 0) - drop
                    hub.cuts[name] = hub.cuts.get(name, 0) - cut
                # The connection closes after the response (HTTP/1.0): the client sees a short read.
                if cut:
                    return
                if drop:
                    self.wfile.write(data[: len(data) // 2])
                    return
                self.wfile.write(data[start:])
            else:
                self._error(404, "NotFound")

        do_GET = do_HEAD = _serve

    return Handler


@pytest.fixture
def hub(monkeypatch, tmp_path):
    fake = FakeHub()
    with serving(_handler(fake), poll_interval=0.02) as fake.endpoint:
        monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        # A private hub cache, and no waiting between huggingface_hub's retries.
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
        no_sleep = types.SimpleNamespace(sleep=lambda seconds: None)
        monkeypatch.setattr(file_download, "time", no_sleep)
        monkeypatch.setattr(_http, "time", no_sleep)
        monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 1024)  # so a cut-off body has been written in part
        yield fake


FILES = {
    "README.md": b"# tiny\n",
    "videos/a.mp4": bytes(range(256)) * 40,
    "videos/b.mp4": b"b" * 5000,
    "meta/questions.json": b'[{"q": 1}]',
    "extra/skip.bin": b"x" * 100,
}
LFS = ("videos/a.mp4", "videos/b.mp4")
PATTERNS = ("videos/*", "meta/*.json")


def _release(hub: FakeHub, repo_id: str = "test-org/tiny", gated: bool = False, **changes) -> HubRelease:
    if repo_id not in hub.repos:
        hub.add(repo_id, FILES, LFS, gated=gated)
    return HubRelease(**{"repo_id": repo_id, "revision": "main", "allow_patterns": PATTERNS, "gated": gated, **changes})


def test_downloads_only_the_matching_files_and_records_them(hub, tmp_path):
    release = _release(hub)
    out = tmp_path / "raw"
    report = download_release(release, out, verify="sha256")
    commit = hub.repos["test-org/tiny"]["commit"]
    assert report.commit == commit and report.revision == "main" and not report.offline
    wanted = ["videos/a.mp4", "videos/b.mp4", "meta/questions.json"]
    for name in wanted:
        assert (out / name).read_bytes() == FILES[name]
    assert not (out / "README.md").exists() and not (out / "extra").exists()
    assert not hub.file_requests("README.md", "HEAD") and not hub.file_requests("skip.bin", "HEAD")
    record = json.loads((out / "download.json").read_text())
    assert record["repo"] == "test-org/tiny" and record["commit"] == commit and record["verify"] == "sha256"
    assert record["allow_patterns"] == list(PATTERNS)
    assert {f["path"]: (f["size"], f["sha256"]) for f in record["files"]} == {
        name: (len(FILES[name]), hashlib.sha256(FILES[name]).hexdigest()) for name in wanted
    }
    assert report.total_bytes == sum(len(FILES[name]) for name in wanted)
    # The files were fetched at the resolved commit, not at the moving branch.
    assert all(f"/resolve/{commit}/" in r[1] for r in hub.requests if "/resolve/" in r[1])


def test_a_dropped_connection_resumes_within_the_run(hub, tmp_path):
    hub.drops["videos/a.mp4"] = 1
    download_release(_release(hub), tmp_path / "raw")
    assert (tmp_path / "raw" / "videos/a.mp4").read_bytes() == FILES["videos/a.mp4"]
    gets = hub.file_requests("a.mp4")
    assert len(gets) == 2 and gets[1][2] == f"bytes={len(FILES['videos/a.mp4']) // 2}-"


def test_an_interrupted_run_resumes_without_fetching_finished_files_again(hub, tmp_path):
    release, out = _release(hub), tmp_path / "raw"
    hub.cuts["videos/b.mp4"] = 100  # no byte ever arrives: huggingface_hub's retries run out and this run gives up
    with pytest.raises(DownloadError, match=f"cannot reach the hub at {re.escape(hub.endpoint)}.*HF_ENDPOINT.*resume"):
        download_release(release, out)
    assert (out / "videos/a.mp4").exists() and not (out / "videos/b.mp4").exists()
    assert not (out / "download.json").exists()
    hub.cuts.clear()
    before = len(hub.requests)
    report = download_release(release, out)
    second_run = hub.requests[before:]
    assert (out / "videos/b.mp4").read_bytes() == FILES["videos/b.mp4"]
    assert not [r for r in second_run if r[1].endswith("/a.mp4") or r[1].endswith("/questions.json")]
    assert len([r for r in second_run if r[0] == "GET" and r[1].endswith("/b.mp4")]) == 1
    assert len(report.files) == 3


def _damage(path: Path, data: bytes) -> None:
    """Overwrite a downloaded file and keep its mtime: damage huggingface_hub cannot see (it trusts its
    download metadata for a file not modified since), so only download_release's own check can."""
    before = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_size_mismatch_names_the_file(hub, tmp_path):
    release, out = _release(hub), tmp_path / "raw"
    hub.listed_size["videos/b.mp4"] = 4999
    with pytest.raises(DownloadError, match=r"videos/b\.mp4: size mismatch, expected 4999 bytes, found 5000"):
        download_release(release, out)
    assert not (out / "download.json").exists()
    # A finished file damaged afterwards is caught on the next run too: huggingface_hub skips it.
    hub.listed_size.clear()
    download_release(release, out)
    _damage(out / "videos/a.mp4", b"short")
    size = len(FILES["videos/a.mp4"])
    with pytest.raises(DownloadError, match=rf"videos/a\.mp4: size mismatch, expected {size} bytes, found 5"):
        download_release(release, out)
    # One changed after its download (a newer mtime) huggingface_hub checks against the hub and fetches again.
    later = time.time() + 60
    os.utime(out / "videos/a.mp4", (later, later))
    download_release(release, out)
    assert (out / "videos/a.mp4").read_bytes() == FILES["videos/a.mp4"]


def test_a_content_mismatch_is_caught_with_sha256(hub, tmp_path):
    release, out = _release(hub), tmp_path / "raw"
    download_release(release, out)
    _damage(out / "meta/questions.json", b'[{"q": 2}]')  # same size, other content
    download_release(release, out)  # a size check cannot see it
    with pytest.raises(DownloadError, match=r"meta/questions\.json: git blob sha1 mismatch, expected [0-9a-f]{40}"):
        download_release(release, out, verify="sha256")
    _damage(out / "meta/questions.json", FILES["meta/questions.json"])
    _damage(out / "videos/b.mp4", b"c" * 5000)
    sha256 = hashlib.sha256(FILES["videos/b.mp4"]).hexdigest()
    with pytest.raises(DownloadError, match=rf"videos/b\.mp4: sha256 mismatch, expected {sha256}, found [0-9a-f]{{64}} "):
        download_release(release, out, verify="sha256")


def test_a_gated_repo_says_what_to_do_and_never_shows_the_token(hub, tmp_path, monkeypatch):
    release = _release(hub, "test-org/gated", gated=True)
    expected = (
        "test-org/gated is gated: accept its terms at https://huggingface.co/datasets/test-org/gated with "
        "your account and put a token with access in HF_TOKEN"
    )
    with pytest.raises(DownloadError) as unset:
        download_release(release, tmp_path / "raw")
    assert str(unset.value) == f"{expected} (HF_TOKEN is not set)"
    assert unset.value.__cause__ is None and unset.value.__suppress_context__
    monkeypatch.setenv("HF_TOKEN", "hf_WrongSecret987654321")
    with pytest.raises(DownloadError) as wrong:
        download_release(release, tmp_path / "raw")
    assert str(wrong.value) == f"{expected} (HF_TOKEN is set)"
    assert "hf_WrongSecret987654321" not in str(wrong.value)
    assert any(r[3] == "Bearer hf_WrongSecret987654321" for r in hub.requests)  # it was sent, just not shown
    # The token comes from the variable named, and with access the download goes through.
    monkeypatch.setenv("VB_HUB_TOKEN", SECRET)
    report = download_release(release, tmp_path / "raw", token_env="VB_HUB_TOKEN", verify="sha256")
    assert len(report.files) == 3
    assert SECRET not in (tmp_path / "raw" / "download.json").read_text()


def test_missing_repo_revision_and_patterns(hub, tmp_path):
    not_found = f"^test-org/nothing not found on {re.escape(hub.endpoint)} .*HF_TOKEN is not set"
    with pytest.raises(DownloadError, match=not_found):
        download_release(HubRelease("test-org/nothing", "main"), tmp_path / "a")
    release = _release(hub)
    with pytest.raises(
        DownloadError, match="^test-org/tiny has no revision 'v9' on .*set it with `curation: {revisions: {<source>: <revision>}}`"
    ):
        download_release(release, tmp_path / "b", revision="v9")
    with pytest.raises(DownloadError, match=r"has no revision 'gone' \(the adapter's pinned one\)"):
        download_release(HubRelease(release.repo_id, "gone", release.allow_patterns), tmp_path / "b2")
    with pytest.raises(DownloadError, match=r"no file matches allow_patterns \['\*\.tar'\]"):
        download_release(_release(hub, allow_patterns=("*.tar",)), tmp_path / "c")
    with pytest.raises(DownloadError, match="verify must be one of size, sha256"):
        download_release(release, tmp_path / "d", verify="md5")


def test_too_little_free_space_stops_before_any_byte_is_fetched_and_names_the_bytes(hub, tmp_path, monkeypatch):
    """A fake small disk (900 bytes free): the check runs on the hub's listed sizes before the download, names
    the bytes needed (archives count again for unpacking) and the free bytes, and fetches nothing."""
    import shutil

    from virtuebench.sources.archives import readable_bytes

    files = {**FILES, "videos/videos.tar.part.aa": b"t" * 3000, "videos/videos.tar.part.ab": b"u" * 2000}
    hub.add("test-org/parts", files, LFS)
    release = _release(hub, "test-org/parts")
    wanted = [name for name in files if name.startswith("videos/") or name.startswith("meta/")]
    download = sum(len(files[name]) for name in wanted)
    unpack = len(files["videos/videos.tar.part.aa"]) + len(files["videos/videos.tar.part.ab"])
    real_usage = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: real_usage(path)._replace(free=900))
    expected = (
        rf"^downloading {len(wanted)} file\(s\) of test-org/parts@\w{{12}} \({readable_bytes(download)}, then about "
        rf"{readable_bytes(unpack)} to unpack the archives among them\) needs {readable_bytes(download + unpack)} "
        rf"\({download + unpack:,} bytes\) free in .*raw, but only 900 B \(900 bytes\) are"
    )
    with pytest.raises(DownloadError, match=expected):
        download_release(release, tmp_path / "raw")
    assert not [request for request in hub.requests if "/resolve/" in request[1]], "nothing fetched"
    assert "0.0 GB" not in readable_bytes(download)
    monkeypatch.setattr(shutil, "disk_usage", real_usage)
    download_release(release, tmp_path / "raw")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: real_usage(path)._replace(free=0))
    assert download_release(release, tmp_path / "raw").commit  # all there already: nothing to fetch, nothing needed


def test_an_unreachable_hub_falls_back_to_a_finished_download(hub, tmp_path, monkeypatch):
    release, out = _release(hub), tmp_path / "raw"
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(DownloadError, match=f"cannot reach the hub at {re.escape(dead)} .*Connection refused"):
        download_release(release, out, endpoint=dead)
    first = download_release(release, out)
    again = download_release(release, out, endpoint=dead, verify="sha256")
    assert again.offline and again.commit == first.commit
    assert [f["path"] for f in again.files] == [f["path"] for f in first.files]
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # HF_HUB_OFFLINE=1, as huggingface_hub read it
    assert download_release(release, out).offline
    with pytest.raises(DownloadError, match=r"cannot reach the hub at .* \(HF_HUB_OFFLINE is set\)"):
        download_release(release, tmp_path / "elsewhere")
    (out / "videos/b.mp4").unlink()
    with pytest.raises(DownloadError, match=r"offline, from download\.json\): 1 expected file\(s\) missing .*b\.mp4"):
        download_release(release, out, endpoint=dead)


@pytest.fixture
def dummy_source(hub, monkeypatch):
    """A real-source adapter defined here, reached through virtuebench.sources.real_source like the others."""
    parts = {"videos.tar.part.aa": b"first half|", "videos.tar.part.ab": b"second half", "notes.txt": b"not wanted"}
    hub.add("test-org/dummy", parts, lfs=("videos.tar.part.aa", "videos.tar.part.ab"))
    module = types.ModuleType("virtuebench.sources._test_dummy")
    module.SOURCE = "dummy"
    module.RELEASE = HubRelease("test-org/dummy", "main", allow_patterns=("videos.tar.part.*",))
    module.prepared = []

    def prepare(raw_dir):
        module.prepared.append(Path(raw_dir))
        parts = sorted(Path(raw_dir).glob("videos.tar.part.*"), key=part_order)
        (Path(raw_dir) / "prepared.txt").write_bytes(b"".join(part.read_bytes() for part in parts))

    module.prepare = prepare
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(sources.SOURCES.targets, "dummy", module.__name__)
    monkeypatch.setattr(sources, "REAL_SOURCES", (*sources.REAL_SOURCES, "dummy"))
    return module


def test_cli_downloads_and_prepares(dummy_source, tmp_path, capsys):
    out = tmp_path / "raw"
    assert download_main(["dummy", "--out", str(out), "--verify", "sha256"]) == 0
    assert (out / "prepared.txt").read_bytes() == b"first half|second half"
    assert dummy_source.prepared == [out] and not (out / "notes.txt").exists()
    summary = capsys.readouterr().err.strip().splitlines()[-1]
    assert summary.startswith("dummy: 2 files, 22 B from test-org/dummy@") and "checked sha256" in summary


def test_cli_errors_are_one_line(dummy_source, hub, tmp_path, capsys, monkeypatch):
    assert download_main(["nope", "--out", str(tmp_path / "x")]) == 1
    assert capsys.readouterr().err.strip() == "error: unknown source 'nope'; known: " + ", ".join(sources.REAL_SOURCES)
    monkeypatch.setitem(sources.SOURCES.targets, "ghost", "virtuebench.sources._test_no_such_adapter")
    monkeypatch.setattr(sources, "REAL_SOURCES", (*sources.REAL_SOURCES, "ghost"))
    assert download_main(["ghost", "--out", str(tmp_path / "x")]) == 1
    assert (
        capsys.readouterr()
        .err.strip()
        .startswith("error: source 'ghost': virtuebench.sources._test_no_such_adapter cannot be imported (No module named")
    )
    hub.repos["test-org/dummy"]["gated"] = True
    monkeypatch.setenv("HF_TOKEN", "hf_NotTheRightOne")
    assert download_main(["dummy", "--out", str(tmp_path / "y")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: test-org/dummy is gated: accept its terms at") and err.endswith("(HF_TOKEN is set)")
    assert "\n" not in err and "Traceback" not in err and "hf_NotTheRightOne" not in err
    assert dummy_source.prepared == []


@pytest.mark.parametrize("name", list(sources.REAL_SOURCES))
def test_each_sources_gated_download_names_its_repository(name, hub, tmp_path, capsys):
    """Every adapter's pinned release, served gated by the fake hub: one line naming that repository."""
    release = sources.real_source(name).RELEASE
    hub.add(release.repo_id, FILES, LFS, gated=True)
    assert download_main([name, "--out", str(tmp_path / "raw")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {release.repo_id} is gated: accept its terms at https://huggingface.co/datasets/{release.repo_id} "
        "with your account and put a token with access in HF_TOKEN (HF_TOKEN is not set)"
    )
