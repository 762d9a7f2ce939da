"""Benchmark engines: each one renders its jobs and parses its own output into diskbench's result model."""
