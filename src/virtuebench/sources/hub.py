"""Download an adapter's pinned `HubRelease` from the Hugging Face hub into a plain folder, and check it.

`download_release` fetches the files the release names at its pinned revision (an interrupted run picks
up where it stopped: finished files are kept), checks every file against the hub's own listing (size,
and with verify="sha256" the content hash) and records what it got in `<out_dir>/download.json`.
Every failure is a `DownloadError` with a one-line message; the token never appears in one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from virtuebench.sources.archives import check_free_space, readable_bytes
from virtuebench.sources.base import HubRelease

RECORD = "download.json"
VERIFY_MODES = ("size", "sha256")
#: A file the source's prepare() unpacks beside itself (a whole archive or a part of one): about its size again.
_ARCHIVE = re.compile(r"\.(?:zip|tar|tgz)(?:$|\.)")


class DownloadError(ValueError):
    """A release could not be downloaded, or what arrived does not match the hub's listing."""


@dataclass(frozen=True)
class DownloadReport:
    repo_id: str
    revision: str  # as asked for (branch, tag or sha)
    commit: str  # the sha it resolved to
    out_dir: Path
    files: tuple[dict[str, Any], ...]  # {"path", "size"[, "sha256"]}, in listing order
    verify: str
    time: str  # UTC, ISO 8601
    allow_patterns: tuple[str, ...] = ()
    offline: bool = False  # the hub was unreachable; checked against an earlier download.json instead

    @property
    def total_bytes(self) -> int:
        return sum(int(entry["size"]) for entry in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo_id,
            "repo_type": "dataset",
            "revision": self.revision,
            "commit": self.commit,
            "allow_patterns": list(self.allow_patterns),
            "verify": self.verify,
            "time": self.time,
            "files": list(self.files),
        }


@dataclass(frozen=True)
class _Expected:
    path: str
    size: int
    sha256: str | None = None  # LFS files: the hub lists their content sha256
    git_sha1: str | None = None  # regular files: their git blob id, a sha1 of the content


def download_release(
    release: HubRelease,
    out_dir: str | Path,
    token_env: str = "HF_TOKEN",
    revision: str | None = None,
    verify: str = "size",
    endpoint: str | None = None,
    max_workers: int = 8,
) -> DownloadReport:
    """Download `release` (its `allow_patterns`, at `revision` or its pinned one) into `out_dir` and check it.

    The token is read from the environment variable `token_env` only (no stored login is used). `endpoint`
    defaults to $HF_ENDPOINT, else the public hub. Where the hub cannot be reached, an earlier complete
    download of the same release in `out_dir` (its download.json) is checked and reported instead.
    """
    if verify not in VERIFY_MODES:
        raise DownloadError(f"verify must be one of {', '.join(VERIFY_MODES)}, not {verify!r}")
    from huggingface_hub import constants

    out_dir = Path(out_dir)
    revision = revision or release.revision
    # Read at call time: huggingface_hub fixes HF_ENDPOINT when it is imported.
    endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
    token = os.environ.get(token_env) or None
    auth: str | bool = token or False  # False, not None: never fall back to a stored login
    try:
        commit, expected = _files_at(release, revision, endpoint, auth)
        _check_space(out_dir, expected, f"{release.repo_id}@{commit[:12]}")
        out_dir.mkdir(parents=True, exist_ok=True)
        _fetch(release, commit, out_dir, endpoint, auth, max_workers)
    except DownloadError:
        raise
    # Everything in this block is huggingface_hub's: no traceback of it reaches the user.
    except Exception as error:  # noqa: BLE001
        if _is_network(error):
            previous = _previous_download(out_dir, release, revision, verify)
            if previous is not None:
                return previous
        message = _explain(error, release, revision, endpoint, token_env, token is not None, out_dir)
        raise DownloadError(_scrub(message, token)) from None

    files = _check(out_dir, expected, verify, f"{release.repo_id}@{commit[:12]}")
    report = DownloadReport(
        repo_id=release.repo_id,
        revision=revision,
        commit=commit,
        out_dir=out_dir,
        files=tuple(files),
        verify=verify,
        time=datetime.now(UTC).isoformat(timespec="seconds"),
        allow_patterns=tuple(release.allow_patterns),
    )
    _write_record(out_dir, report)
    return report


def _files_at(release: HubRelease, revision: str, endpoint: str, auth: str | bool) -> tuple[str, list[_Expected]]:
    """The commit `revision` names on the hub, and the release's files there (its `allow_patterns`) with the size
    and hash the hub lists for each; DownloadError where the hub names no commit or no file matches."""
    from huggingface_hub import HfApi, constants
    from huggingface_hub.hf_api import RepoFile
    from huggingface_hub.utils import filter_repo_objects

    api = HfApi(endpoint=endpoint, token=auth)
    info = api.dataset_info(release.repo_id, revision=revision, token=auth, timeout=constants.HF_HUB_ETAG_TIMEOUT)
    commit = info.sha
    if not commit:
        raise DownloadError(f"{release.repo_id}@{revision}: {endpoint} did not say which commit that is")
    tree = api.list_repo_tree(release.repo_id, recursive=True, revision=commit, repo_type="dataset", token=auth)
    listing = [entry for entry in tree if isinstance(entry, RepoFile)]
    wanted = set(filter_repo_objects([entry.path for entry in listing], allow_patterns=list(release.allow_patterns) or None))
    expected = [
        _Expected(entry.path, entry.lfs.size, sha256=entry.lfs.sha256)
        if entry.lfs is not None
        else _Expected(entry.path, entry.size, git_sha1=entry.blob_id)
        for entry in listing
        if entry.path in wanted
    ]
    if not expected:
        raise DownloadError(f"{release.repo_id}@{commit[:12]}: no file matches allow_patterns {list(release.allow_patterns)}")
    return commit, expected


def _fetch(release: HubRelease, commit: str, out_dir: Path, endpoint: str, auth: str | bool, max_workers: int) -> None:
    """The release's files at `commit` into `out_dir`, those an earlier run finished kept."""
    from huggingface_hub import snapshot_download

    # Passing the commit sha (not the branch) lets huggingface_hub skip, without a request, every file
    # an earlier run finished: that is what makes a rerun resume.
    snapshot_download(
        release.repo_id,
        repo_type="dataset",
        revision=commit,
        local_dir=out_dir,
        allow_patterns=list(release.allow_patterns) or None,
        token=auth,
        endpoint=endpoint,
        max_workers=max_workers,
    )


def _check_space(out_dir: Path, expected: list[_Expected], label: str) -> None:
    """Before any byte is fetched: stop where `out_dir`'s disk cannot hold the files still to download (the hub's
    listed sizes; a file already there at its listed size is done) plus, for the archives among them, about their
    size again for prepare() to unpack them (videos do not compress)."""
    todo = [item for item in expected if not ((out_dir / item.path).is_file() and (out_dir / item.path).stat().st_size == item.size)]
    download = sum(item.size for item in todo)
    unpack = sum(item.size for item in todo if _ARCHIVE.search(Path(item.path).name))
    what = f"downloading {len(todo)} file(s) of {label} ({readable_bytes(download)}"
    what += f", then about {readable_bytes(unpack)} to unpack the archives among them)" if unpack else ")"
    try:
        check_free_space(out_dir, download + unpack, what)
    except ValueError as error:
        raise DownloadError(str(error)) from None


def _check(out_dir: Path, expected: list[_Expected], verify: str, label: str) -> list[dict[str, Any]]:
    missing = [item.path for item in expected if not (out_dir / item.path).is_file()]
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise DownloadError(f"{label}: {len(missing)} expected file(s) missing in {out_dir}: {shown}")
    files = []
    redo = "delete it and run again"
    for item in expected:
        path = out_dir / item.path
        size = path.stat().st_size
        if size != item.size:
            raise DownloadError(f"{path}: size mismatch, expected {item.size} bytes, found {size} ({redo})")
        entry: dict[str, Any] = {"path": item.path, "size": size}
        if verify == "sha256":
            sha256, git_sha1 = _hashes(path, size)
            if item.sha256 is not None and sha256 != item.sha256:
                raise DownloadError(f"{path}: sha256 mismatch, expected {item.sha256}, found {sha256} ({redo})")
            if item.git_sha1 is not None and git_sha1 != item.git_sha1:
                found = f"expected {item.git_sha1}, found {git_sha1}"
                raise DownloadError(f"{path}: git blob sha1 mismatch, {found} ({redo})")
            entry["sha256"] = sha256
        files.append(entry)
    return files


def _hashes(path: Path, size: int) -> tuple[str, str]:
    """(sha256, git blob sha1) of a file, in one pass."""
    sha256 = hashlib.sha256()
    git_sha1 = hashlib.sha1(f"blob {size}\0".encode())
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 24):
            sha256.update(chunk)
            git_sha1.update(chunk)
    return sha256.hexdigest(), git_sha1.hexdigest()


def _write_record(out_dir: Path, report: DownloadReport) -> None:
    record = out_dir / RECORD
    tmp = record.with_name(f".{RECORD}.tmp")
    tmp.write_text(json.dumps(report.to_json(), indent=1) + "\n")
    tmp.replace(record)  # a reader never sees a half-written record


def _previous_download(out_dir: Path, release: HubRelease, revision: str, verify: str) -> DownloadReport | None:
    """The earlier download of this same release in `out_dir`, re-checked on disk; None if there is none."""
    try:
        record = json.loads((out_dir / RECORD).read_text())
        same = (
            record["repo"] == release.repo_id
            and revision in (record["revision"], record["commit"])
            and record.get("allow_patterns", []) == list(release.allow_patterns)
        )
        expected = [_Expected(item["path"], int(item["size"]), sha256=item.get("sha256")) for item in record["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not same:
        return None
    files = _check(out_dir, expected, verify, f"{release.repo_id}@{record['commit'][:12]} (offline, from {RECORD})")
    return DownloadReport(
        repo_id=release.repo_id,
        revision=revision,
        commit=record["commit"],
        out_dir=out_dir,
        files=tuple(files),
        verify=verify,
        time=record.get("time", ""),
        allow_patterns=tuple(release.allow_patterns),
        offline=True,
    )


def _chain(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _is_network(error: BaseException) -> bool:
    import httpx2
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
    )

    chain = _chain(error)
    if any(isinstance(link, HfHubHTTPError) for link in chain):
        return False  # the hub answered
    # huggingface_hub reports an unreachable hub during a file download as LocalEntryNotFoundError.
    unreachable = (httpx2.TransportError, OfflineModeIsEnabled, LocalEntryNotFoundError)
    return any(isinstance(link, unreachable) for link in chain)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__


def _explain(
    error: BaseException,
    release: HubRelease,
    revision: str,
    endpoint: str,
    token_env: str,
    token_set: bool,
    out_dir: Path,
) -> str:
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    repo = release.repo_id
    token_state = f"{token_env} is set" if token_set else f"{token_env} is not set"
    use_token = f"put a token with access in {token_env}"
    chain = _chain(error)
    http = next((link for link in chain if isinstance(link, HfHubHTTPError)), None)
    if isinstance(http, GatedRepoError):
        return (
            f"{repo} is gated: accept its terms at {release.url} with your account and put a token with access "
            f"in {token_env} ({token_state})"
        )
    if isinstance(http, RepositoryNotFoundError):
        return f"{repo} not found on {endpoint} (or it is private: {use_token}; {token_state})"
    if isinstance(http, RevisionNotFoundError):
        pinned = " (the adapter's pinned one)" if revision == release.revision else ""
        return (
            f"{repo} has no revision {revision!r}{pinned} on {endpoint}: pick one the hub lists (its commits page) and "
            f"set it with `curation: {{revisions: {{<source>: <revision>}}}}` in the config, or "
            f"`python -m virtuebench.sources.download <source> --revision <revision>`"
        )
    if isinstance(http, EntryNotFoundError):
        return f"{repo}@{revision}: a listed file is missing on {endpoint} ({http.response.url})"
    if http is not None:
        status = http.response.status_code
        if status in (401, 403):
            return f"{repo}: {endpoint} refused access (HTTP {status}); {use_token} ({token_state})"
        return f"{repo}: HTTP {status} from {endpoint} ({_first_line(http)})"
    if _is_network(error):
        if any(isinstance(link, OfflineModeIsEnabled) for link in chain):
            reason = "HF_HUB_OFFLINE is set"
        else:
            import httpx2

            cause = next((link for link in chain if isinstance(link, httpx2.TransportError)), chain[-1])
            reason = f"{type(cause).__name__}: {_first_line(cause)}"
        return (
            f"cannot reach the hub at {endpoint} ({reason}); check the network, set HF_ENDPOINT to a reachable "
            f"mirror, or put a finished download of {repo} (with its {RECORD}) in {out_dir} to use it offline; "
            "run again to resume (finished files are kept)"
        )
    return f"{repo}: download failed ({type(error).__name__}: {_first_line(error)})"


def _scrub(text: str, token: str | None) -> str:
    text = " ".join(text.split())  # one line
    return text.replace(token, "***") if token else text
