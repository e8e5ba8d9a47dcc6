"""Curating VirtueBench from the public long-video benchmarks (VirtueBench (arXiv:2603.07071), section 3.2): the
three filters, per-level reference answers for annotators, the annotation round trip and statistics.
Rules: rules/curation.smk; formats: docs/annotation.md."""
