"""The bootstrap's resample weights kept on disk, so that the scores and the comparisons jobs draw each set of
videos' weights once between them (they draw the same sets with the same seed keys; docs/statistics.md, "Speed").

A file holds one draw: a header line naming what it was drawn for (seed, resamples, videos, the seed key, numpy's
version, whose generators make the draw) and the SHA-256 of the counts, then the counts. It is written to a
temporary sibling and renamed into place, so a reader sees a whole file or none; a file that does not match what is
asked, or whose counts do not hash to the header's digest (cut short, edited, another version's), is never used:
the weights are drawn again and the file replaced. Two jobs asking for the same set at once take a lock on it
(flock), so one draws and the other reads; a killed holder's lock goes with its process. Where the folder cannot be
written (read-only, full) the weights are drawn as without a cache, with one warning.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

FORMAT = "virtuebench-resamples/1"

_warned: set[str] = set()


def _describe(seed: int, resamples: int, n_clusters: int, key: Sequence[Hashable]) -> dict[str, object]:
    return {
        "format": FORMAT,
        "seed": seed,
        "resamples": resamples,
        "n_clusters": n_clusters,
        "key": repr(tuple(key)),
        "numpy": np.__version__,
    }


def cache_path(folder: str | Path, seed: int, resamples: int, n_clusters: int, key: Sequence[Hashable]) -> Path:
    name = hashlib.sha256(json.dumps(_describe(seed, resamples, n_clusters, key), sort_keys=True).encode()).hexdigest()[:32]
    return Path(folder) / f"{name}.resamples"


def _read(path: Path, wanted: dict[str, object]) -> np.ndarray | None:
    """The counts of `path` if it is a whole file drawn for `wanted`; else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, newline, body = data.partition(b"\n")
    try:
        header = json.loads(head)
        dtype = np.dtype(header["dtype"])
        shape = (int(wanted["resamples"]), int(wanted["n_clusters"]))  # type: ignore[call-overload]
        if not newline or {name: header.get(name) for name in wanted} != wanted or dtype.kind != "u":
            return None
        if len(body) != shape[0] * shape[1] * dtype.itemsize or hashlib.sha256(body).hexdigest() != header["sha256"]:
            return None
    except (ValueError, KeyError, TypeError):
        return None
    return np.frombuffer(body, dtype=dtype).reshape(shape)


def _write(path: Path, wanted: dict[str, object], counts: np.ndarray) -> None:
    compact = counts.astype(np.uint8 if counts.max(initial=0) < 256 else np.uint16 if counts.max() < 65536 else np.uint32)
    body = compact.tobytes()
    header = json.dumps({**wanted, "dtype": compact.dtype.str, "sha256": hashlib.sha256(body).hexdigest()}, sort_keys=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(header.encode() + b"\n" + body)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep the other report job of another user from reading it
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold `path`'s lock file (a sibling) while drawing, where the file system allows it."""
    try:
        handle = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            pass  # no locks here (some network file systems): both may draw; the rename keeps each file whole
        yield
    finally:
        os.close(handle)  # releases the lock


def cached_weights(
    folder: str | Path, seed: int, resamples: int, n_clusters: int, key: Sequence[Hashable], draw: Callable[[], np.ndarray]
) -> np.ndarray:
    """The (resamples, n_clusters) counts `draw` gives, read from `folder` where an earlier draw left them."""
    wanted = _describe(seed, resamples, n_clusters, key)
    path = cache_path(folder, seed, resamples, n_clusters, key)
    found = _read(path, wanted)
    if found is not None:
        return found.astype(np.int64)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return _uncached(folder, error, draw)
    with _locked(path):
        found = _read(path, wanted)  # drawn by another job while this one waited for the lock
        if found is not None:
            return found.astype(np.int64)
        counts = draw()
        try:
            _write(path, wanted, counts)
        except OSError as error:
            _warn(folder, error)
    return counts


def _uncached(folder: str | Path, error: OSError, draw: Callable[[], np.ndarray]) -> np.ndarray:
    _warn(folder, error)
    return draw()


def _warn(folder: str | Path, error: OSError) -> None:
    if str(folder) not in _warned:
        _warned.add(str(folder))
        reason = error.strerror or type(error).__name__
        print(f"WARNING: resample cache {folder} not written ({reason}); the weights are drawn without it", file=sys.stderr)
