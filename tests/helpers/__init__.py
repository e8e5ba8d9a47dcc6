"""Helpers for the tests (not tests themselves): tests/ is on the path, so `from helpers.data import build_bench`."""
