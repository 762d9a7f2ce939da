"""Machine providers: where a benchmark runs, and what that place's published limits are."""
