"""Platforms: what a host's operating system family does for a run (see ``base.Platform``)."""
