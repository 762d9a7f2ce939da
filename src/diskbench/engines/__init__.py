"""Engines: the benchmark programs diskbench drives (see ``base.Engine``); fio is built in."""
