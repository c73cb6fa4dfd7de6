"""The ``svmbench`` command line (entry point :func:`svmbench.benchmarks.cli.main.main`)."""
