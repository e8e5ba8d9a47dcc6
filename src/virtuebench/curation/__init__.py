"""Curating VirtueBench from the public long-video benchmarks (shared/seeds/001, section 3.2): the
three filters, per-level reference answers for annotators, the annotation round trip and statistics.
Rules: rules/curation.smk; formats: docs/annotation.md."""
