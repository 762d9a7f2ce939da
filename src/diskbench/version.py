"""diskbench's version: a leaf, so modules that print it do not import the package's front door."""

__version__ = "0.1.0"
