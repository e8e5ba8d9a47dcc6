"""The entry store (support/store.py): whole entries or none, damaged ones ignored, many writers at once."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from virtuebench.support.store import Store, store_key


def test_an_entry_is_read_back_and_a_missing_key_is_none(tmp_path):
    store = Store(tmp_path, "answers")
    key = store_key({"question": "What colour?", "frames": "abc"})
    assert store.get(key) is None
    store.put(key, {"response": "red"}, about={"model": "m"})
    assert store.get(key) == {"response": "red"} and store.hits == 1 and store.writes == 1
    assert store.path(key) == tmp_path / "answers" / key[:2] / f"{key}.json"
    assert store_key({"frames": "abc", "question": "What colour?"}) == key, "key order does not matter"


@pytest.mark.parametrize(
    "damage",
    ["cut short", "value edited", "another key's entry", "not JSON", "binary"],
)
def test_a_damaged_entry_is_ignored_counted_and_replaced(tmp_path, damage):
    store = Store(tmp_path, "answers")
    key, other = store_key("a"), store_key("b")
    store.put(key, {"response": "red"})
    path = store.path(key)
    text = path.read_text()
    if damage == "cut short":
        path.write_text(text[: len(text) // 2])
    elif damage == "value edited":
        path.write_text(text.replace('"red"', '"blue"'))
    elif damage == "another key's entry":
        store.put(other, {"response": "blue"})
        path.write_text(store.path(other).read_text())
    elif damage == "not JSON":
        path.write_text("[]")
    else:
        path.write_bytes(b"\xff\xfe" * 10)
    assert store.get(key) is None, "a damaged entry is never used"
    assert store.damaged == [path] and str(path) in store.damaged_line()
    store.put(key, {"response": "red"})  # asked again: the entry is replaced whole
    assert store.get(key) == {"response": "red"}


def test_keys_that_are_no_digest_are_refused(tmp_path):
    with pytest.raises(ValueError, match="not a lower-case hexadecimal digest"):
        Store(tmp_path, "answers").path("../../etc/passwd")


WRITER = textwrap.dedent(
    """
    import os, sys
    from virtuebench.support import store as module

    def held(source, target):  # the entry is written to its temporary file: say so, then wait to be killed
        sys.stdout.write(str(source) + "\\n"); sys.stdout.flush()
        sys.stdin.read()

    module.os.replace = held
    module.Store(sys.argv[1], "answers").put(sys.argv[2], {"response": "x" * 100000})
    """
)


def test_a_writer_killed_during_a_write_leaves_no_entry(tmp_path):
    """kill -9 between writing the temporary file and the rename (held there by an event, not a timer): the key has
    no entry, only a temporary file that is never read as one, and the next writer's entry is whole."""
    key = store_key("killed")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), key], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    tmp = writer.stdout.readline().strip()
    assert tmp.endswith(".tmp") and os.path.getsize(tmp) > 100000
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    store = Store(tmp_path, "answers")
    assert store.get(key) is None and store.damaged == []
    store.put(key, {"response": "whole"})
    assert store.get(key) == {"response": "whole"}
    assert json.loads(store.path(key).read_text())["about"] == {}


def test_two_stores_on_one_root_share_entries(tmp_path):
    """Two results folders naming one store root: what one writes the other reads."""
    key = store_key("shared")
    Store(tmp_path, "answers").put(key, {"response": "red"})
    assert Store(tmp_path, "answers").get(key) == {"response": "red"}
    assert Store(tmp_path, "verdicts").get(key) is None, "kinds are apart"
