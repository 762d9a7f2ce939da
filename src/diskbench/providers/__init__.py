"""Providers: where a run's machines come from (see ``base.Provider``): local, static hosts, clouds."""
