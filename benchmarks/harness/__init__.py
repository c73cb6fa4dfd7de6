"""The benchmark harness: cases and suites, running them, the results store, reports, checks."""
