"""Bounded concurrency for I/O-bound stages (API backends, LLM judges): results in completion order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

Item = TypeVar("Item")
Prepared = TypeVar("Prepared")
Result = TypeVar("Result")


def imap_unordered(function: Callable[[Item], Result], items: Iterable[Item], workers: int) -> Iterator[tuple[Item, Result]]:
    """(item, function(item)) for each item, at most `workers` at a time; in order when workers <= 1."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        for item in items:
            yield item, function(item)
        return
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = {pool.submit(function, item): item for item in items}
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        # On an error (or an abandoned generator) queued items are not started: they may be paid requests.
        pool.shutdown(wait=True, cancel_futures=True)


def imap_prefetched(
    prepare: Callable[[Item], Prepared], finish: Callable[[Item, Prepared], Result], items: Iterable[Item]
) -> Iterator[tuple[Item, Result]]:
    """(item, finish(item, prepare(item))) in order, preparing the next item on a second thread while
    the current one finishes: CPU work (frames, processor) overlaps the accelerator's. At most one
    item is prepared ahead, so memory holds two items' inputs at most."""
    items = list(items)
    if not items:
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = pool.submit(prepare, items[0])
        for index, item in enumerate(items):
            prepared = ahead.result()
            if index + 1 < len(items):
                ahead = pool.submit(prepare, items[index + 1])
            yield item, finish(item, prepared)
