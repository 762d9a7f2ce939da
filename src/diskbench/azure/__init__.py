"""The Azure side: credentials, size and quota checks, resource groups, cleanup."""
