"""virtuebench.support.fingerprint: a video's sampled content fingerprint, kept by file stamp, so that a touched or
copied video is read once and found unchanged, and a changed one is not."""

from __future__ import annotations

import os
import shutil

from virtuebench.support import fingerprint
from virtuebench.support.fingerprint import Fingerprints, content_fingerprint


def test_the_fingerprint_follows_the_content_not_the_date_or_the_place(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(os.urandom(3 * fingerprint.SAMPLES * fingerprint.BLOCK + 17))  # sampled, not hashed whole
    first = content_fingerprint(video)
    assert first.startswith(f"{video.stat().st_size}-")
    os.utime(video, (1, 1))
    shutil.copyfile(video, tmp_path / "copy.mp4")
    assert content_fingerprint(video) == content_fingerprint(tmp_path / "copy.mp4") == first
    data = bytearray(video.read_bytes())
    data[-1] ^= 1  # the last block is always sampled
    video.write_bytes(bytes(data))
    assert content_fingerprint(video) != first
    video.write_bytes(b"small")  # a small file: hashed whole
    assert content_fingerprint(video).startswith("5-")


def test_kept_fingerprints_are_read_again_only_for_a_file_whose_stamp_changed(tmp_path, monkeypatch):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"frames" * 1000)
    cache = tmp_path / "state" / "fingerprints.json"
    reads = []
    monkeypatch.setattr(fingerprint, "content_fingerprint", lambda path: reads.append(path) or content_fingerprint(path))
    kept = Fingerprints(cache)
    first = kept.of(video)
    assert kept.of(video) == first and len(reads) == 1
    kept.save()
    assert Fingerprints(cache).of(video) == first and len(reads) == 1, "found in the file, not read again"
    os.utime(video, ns=(video.stat().st_atime_ns, video.stat().st_mtime_ns + 10**9))  # touched
    touched = Fingerprints(cache)
    assert touched.of(video) == first and len(reads) == 2
    touched.save()
    assert Fingerprints(cache).of(video) == first and len(reads) == 2
    assert Fingerprints(cache).of(tmp_path / "gone.mp4") == "missing"
    cache.write_text("not json")
    assert Fingerprints(cache).of(video) == first  # an unreadable file: made again


def test_a_link_is_kept_under_the_file_it_points_to(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x" * 100)
    (tmp_path / "link.mp4").symlink_to(video)
    kept = Fingerprints(tmp_path / "f.json")
    assert kept.of(tmp_path / "link.mp4") == kept.of(video)
    assert list(kept.entries) == [os.path.realpath(video)]
