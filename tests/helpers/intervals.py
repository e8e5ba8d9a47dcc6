"""Test helpers for the report's intervals (virtuebench.support.bootstrap)."""

from __future__ import annotations

from virtuebench.support import bootstrap
from virtuebench.support.bootstrap import Interval


def narrow_closed_forms(monkeypatch) -> None:
    """Give every closed-form interval (scores and paired comparisons) no width, so the bootstrap's (BCa) is chosen wherever the number has
    BCA_MIN_VIDEOS videos: the closed forms (Clopper-Pearson and Agresti-Coull-type on n*) were wider than BCa on
    every design tried, so a test of what BCa does (its seed, its resamples) needs them out of the way."""

    def share(sizes, sums, confidence=bootstrap.CONFIDENCE) -> Interval:
        at = float(sum(sums)) / float(sum(sizes))
        return Interval(at, at, "narrowed-for-a-test")

    def mean(values, bounds, sizes, sums, confidence=bootstrap.CONFIDENCE) -> Interval:
        at = float(sum(values)) / len(values)
        return Interval(at, at, "narrowed-for-a-test")

    def paired(a, b, sizes, sums, confidence=bootstrap.CONFIDENCE) -> Interval:
        at = (float(sum(a)) - float(sum(b))) / len(a)
        return Interval(at, at, "narrowed-for-a-test")

    monkeypatch.setattr(bootstrap, "fallback_interval", share)
    monkeypatch.setattr(bootstrap, "paired_fallback", paired)
    monkeypatch.setattr(bootstrap, "bounded_mean_fallback", mean)
