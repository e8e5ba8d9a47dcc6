"""Support pieces every stage may use, and which use no stage: bounded concurrency, progress lines,
typed settings, the Chat Completions client, CSV/LaTeX writing and video access. The stage modules
(sources, frames, inference, judge, metrics, report, cvrr, curation) stand beside this package."""
