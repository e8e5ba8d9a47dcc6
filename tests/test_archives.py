"""Split archives (virtuebench.sources.base): parts streamed in numeric order into the unpacker, the extra disk
about the unpacked size (not the archive again), and a clear stop where the disk is too small."""

from __future__ import annotations

import io
import os
import tarfile
import threading
import time
from pathlib import Path

import pytest

from virtuebench.sources.base import extract_parts, part_order


def _split_tar(folder: Path, files: dict[str, bytes], parts: int, name: str = "videos_part_{}.tar.gz") -> list[Path]:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tarred:
        for member, data in files.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
    blob = buffer.getvalue()
    step = -(-len(blob) // parts)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(parts):
        path = folder / name.format(i + 1)  # part_1 ... part_12: unpadded, so name order would be wrong
        path.write_bytes(blob[i * step : (i + 1) * step])
        paths.append(path)
    return paths


def _used(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_parts_sort_by_their_number_not_their_name():
    names = [Path(f"videos_part_{i}.tar.gz") for i in (10, 2, 1, 12, 11, 3)]
    assert [p.name for p in sorted(names, key=part_order)] == [f"videos_part_{i}.tar.gz" for i in (1, 2, 3, 10, 11, 12)]
    letters = [Path(f"videos.tar.part.{s}") for s in ("ab", "aa", "ba")]
    assert [p.name for p in sorted(letters, key=part_order)] == ["videos.tar.part.aa", "videos.tar.part.ab", "videos.tar.part.ba"]


def test_a_twelve_part_archive_unpacks_with_about_one_archive_of_extra_disk(tmp_path):
    """Incompressible videos (random bytes), so the archive is about as large as what it holds; the peak extra disk
    (sampled while unpacking) is the unpacked files, not a joined archive besides them."""
    rng = os.urandom
    files = {f"videos/v{i:02d}.mp4": rng(1_500_000) for i in range(12)}
    parts = _split_tar(tmp_path / "raw", files, parts=12)
    archive_bytes = sum(p.stat().st_size for p in parts)
    dest = tmp_path / "out"
    peak, done = [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _used(dest) if dest.exists() else 0)
            time.sleep(0.005)

    watcher = threading.Thread(target=sample)
    watcher.start()
    try:
        extract_parts(parts, dest, "videos_merged.tar.gz")
    finally:
        done.set()
        watcher.join()
    peak[0] = max(peak[0], _used(dest))
    for member, data in files.items():
        assert (dest / member).read_bytes() == data, member
    ratio = peak[0] / archive_bytes
    print(f"\narchive {archive_bytes} bytes in 12 parts; peak extra disk {peak[0]} bytes = {ratio:.3f}x the archive")
    assert 0.95 < ratio < 1.05
    assert not [p for p in dest.glob("*.tar*") if not p.name.endswith(".extracted")], "no joined archive written"
    (parts[0]).write_bytes(b"changed")  # unpacked once: the marker keeps it from being read again
    assert extract_parts(parts, dest, "videos_merged.tar.gz") == dest


def test_a_part_missing_or_out_of_order_is_a_clear_error(tmp_path):
    parts = _split_tar(tmp_path / "raw", {"a.mp4": os.urandom(200_000)}, parts=3)
    parts[1].unlink()
    with pytest.raises(ValueError, match=r"videos_merged.tar.gz \(parts videos_part_1.tar.gz ... videos_part_3.tar.gz\)"):
        extract_parts([parts[0], parts[2]], tmp_path / "out", "videos_merged.tar.gz")


def test_too_little_free_space_stops_before_unpacking_and_names_the_bytes(tmp_path, monkeypatch):
    import shutil

    parts = _split_tar(tmp_path / "raw", {"a.mp4": os.urandom(100_000)}, parts=2)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**12, 10**12 - 1000, 1000))
    with pytest.raises(ValueError, match=r"needs 0.0 GB free in .*out, but only 0.0 GB are"):
        extract_parts(parts, tmp_path / "out", "videos_merged.tar.gz")
    assert not (tmp_path / "out" / "a.mp4").exists()
