"""The CLI tests' fixtures: the fake OpenStack cloud of the OpenStack tests (cleanup looks in it)."""

from ..providers.openstack.conftest import fake  # noqa: F401
