"""Studies: scripts that answer one measured question each
(``python -m svmbench.benchmarks.studies.bench_X``); see benchmarks/README.md."""
