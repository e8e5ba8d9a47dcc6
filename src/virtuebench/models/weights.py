"""Which weights a backend loaded: the commit of the hub repository (or a fingerprint of a local folder),
written into every response record (`weights_commit`) and the job's summary, so that a number can be tied
to the weights that made it and a rerun against moved weights is visible.

The commit is worked out in one function, `resolve_commit`: every backend calls it once the weights are loaded, and
inference calls it before loading (what it can tell then decides which earlier answers are kept). A hub id resolves
through the local Hugging Face cache after loading (`refs/<revision>` -> `snapshots/<commit>`), so no network call is
made; a folder inside a cache's `snapshots/` is named by its commit; any other local folder gets `local:` and a hash
of its files' names and sizes and of its config.json.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

COMMIT = re.compile(r"^[0-9a-f]{40}$")


def snapshot_commit(folder: Path) -> str | None:
    """The commit a Hugging Face cache snapshot folder (`.../snapshots/<commit>`) holds, else None."""
    folder = Path(folder)
    for candidate in (folder, folder.resolve()):
        if candidate.parent.name == "snapshots" and COMMIT.match(candidate.name):
            return candidate.name
    return None


def folder_fingerprint(folder: Path) -> str:
    """`local:` and a hash of a folder's files (relative names and sizes) and its config.json's text."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder).as_posix()}\0{path.stat().st_size}\n".encode())
    config = folder / "config.json"
    if config.is_file():
        digest.update(config.read_bytes())
    return "local:" + digest.hexdigest()[:16]


def resolve_commit(source: str | None, revision: str | None = None, *, snapshot: str | Path | None = None) -> str | None:
    """The weights' commit for a model entry's hub id or local folder (`source`) at `revision`; None where it cannot
    be told (never raises), or where there is no source (a model without weights). `snapshot`: the folder the backend
    downloaded the weights into where it has one (LLaVA-NeXT loads from a snapshot_download folder): read instead of
    the cache, as it is what was loaded."""
    if not source:
        return None
    if revision and COMMIT.match(revision):
        return revision  # a pinned commit is what was loaded
    path = Path(snapshot if snapshot else source)
    if path.is_dir():
        return snapshot_commit(path) or folder_fingerprint(path)
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(source, "config.json", revision=revision)
    except Exception:  # an unusual cache layout or id: the record says "unknown" rather than failing the job
        return None
    return snapshot_commit(Path(cached).parent) if isinstance(cached, str) else None
