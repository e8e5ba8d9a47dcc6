"""The paper's tables (LaTeX) and figures (PNG), made from results/scores.csv and the instances table only; and the
few lines the Snakefile prints at the end of a run (summary.py)."""
