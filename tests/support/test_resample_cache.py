"""The bootstrap's weights kept on disk (virtuebench.support.resample_cache): a hit is the draw itself, and a file
that is not a whole draw for what is asked is never used."""

from __future__ import annotations

import numpy as np
import pytest

from virtuebench.support.bootstrap import Bootstrap
from virtuebench.support.resample_cache import cache_path, cached_weights

KEY = ("rules", "videos", "0123456789abcdef")


def _never() -> np.ndarray:
    raise AssertionError("drew again where the cache holds the draw")


def test_a_hit_gives_back_the_very_counts_of_a_fresh_draw(tmp_path):
    fresh = Bootstrap(300, 7).weights(80, KEY)
    cached = Bootstrap(300, 7, cache=str(tmp_path)).weights(80, KEY)  # drawn and kept
    assert np.array_equal(cached, fresh) and cached.dtype == fresh.dtype
    kept = cached_weights(tmp_path, 7, 300, 80, KEY, _never)  # read back, not drawn
    assert np.array_equal(kept, fresh) and kept.dtype == fresh.dtype
    assert [path.name for path in tmp_path.iterdir() if path.suffix == ".resamples"] == [cache_path(tmp_path, 7, 300, 80, KEY).name]


def test_other_settings_never_share_a_file(tmp_path):
    Bootstrap(300, 7, cache=str(tmp_path)).weights(80, KEY)
    for seed, resamples, n, key in ((8, 300, 80, KEY), (7, 301, 80, KEY), (7, 300, 81, KEY), (7, 300, 80, (*KEY[:2], "other"))):
        assert cache_path(tmp_path, seed, resamples, n, key) != cache_path(tmp_path, 7, 300, 80, KEY)
        assert np.array_equal(Bootstrap(resamples, seed, cache=str(tmp_path)).weights(n, key), Bootstrap(resamples, seed).weights(n, key))


@pytest.mark.parametrize(
    "spoil",
    [
        lambda data: data[: len(data) // 2],  # cut short (a copy interrupted; never by our writer, which renames)
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # one count changed
        lambda data: data.replace(b'"seed": 7', b'"seed": 9', 1),  # another draw's header
        lambda data: data.split(b"\n", 1)[1],  # no header
        lambda data: b"",
        lambda data: b"\xff\xfe not json\n" + data,
    ],
    ids=["cut", "count-changed", "other-header", "no-header", "empty", "garbage"],
)
def test_a_spoilt_file_is_drawn_again_and_replaced(tmp_path, spoil):
    fresh = Bootstrap(200, 7).weights(60, KEY)
    Bootstrap(200, 7, cache=str(tmp_path)).weights(60, KEY)
    path = cache_path(tmp_path, 7, 200, 60, KEY)
    path.write_bytes(spoil(path.read_bytes()))
    drawn = []

    def draw() -> np.ndarray:
        drawn.append(1)
        return Bootstrap(200, 7).weights(60, KEY)

    assert np.array_equal(cached_weights(tmp_path, 7, 200, 60, KEY, draw), fresh)
    assert drawn == [1]  # the spoilt file was not trusted
    assert np.array_equal(cached_weights(tmp_path, 7, 200, 60, KEY, _never), fresh)  # and is whole again


def test_an_unwritable_folder_draws_without_the_cache_with_one_warning(tmp_path, capsys):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    settings = Bootstrap(200, 7, cache=str(blocked / "resamples"))
    for n in (60, 61):
        assert np.array_equal(settings.weights(n, KEY), Bootstrap(200, 7).weights(n, KEY))
    warnings = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(warnings) == 1 and str(blocked / "resamples") in warnings[0] and "Traceback" not in warnings[0]


def test_the_cache_is_no_part_of_the_settings_compared():
    assert Bootstrap(200, 7, cache="somewhere") == Bootstrap(200, 7)


def test_two_jobs_asking_at_once_draw_once(tmp_path, monkeypatch):
    """While one holds a set's lock and draws, the other waits at the lock and then reads its file (threads stand in
    for the two report jobs: flock locks an open file, so two opens in one process exclude each other too)."""
    import threading

    from virtuebench.support import resample_cache

    drawing, go, second_at_lock = threading.Event(), threading.Event(), threading.Event()
    locked = resample_cache._locked

    def watched(path):
        if threading.current_thread().name == "second":
            second_at_lock.set()
        return locked(path)

    monkeypatch.setattr(resample_cache, "_locked", watched)

    def slow_draw() -> np.ndarray:
        drawing.set()
        assert go.wait(60), "never let go"
        return Bootstrap(200, 7).weights(60, KEY)

    found: dict[str, np.ndarray] = {}
    first = threading.Thread(target=lambda: found.update(first=cached_weights(tmp_path, 7, 200, 60, KEY, slow_draw)), name="first")
    second = threading.Thread(target=lambda: found.update(second=cached_weights(tmp_path, 7, 200, 60, KEY, _never)), name="second")
    first.start()
    assert drawing.wait(60)
    second.start()
    assert second_at_lock.wait(60)  # it found no file and now waits for the lock the first holds
    go.set()
    first.join(60)
    second.join(60)
    assert set(found) == {"first", "second"}  # the second did not draw (_never would have raised, leaving it out)
    assert np.array_equal(found["first"], found["second"])
