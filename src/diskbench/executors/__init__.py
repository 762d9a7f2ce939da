"""Executors: where commands run (this machine, SSH); see ``base.Executor``."""
