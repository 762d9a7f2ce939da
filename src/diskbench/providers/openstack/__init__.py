"""OpenStack: connect, pre-flight, create a run's server (keypair, security group, volumes), tear down.

Everything a run creates carries its run id (in the name, the server's tag and metadata, the
volumes' metadata), so ``teardown`` and ``find_leftovers`` find it again after a crash. The
openstacksdk is imported inside the functions, and this package imports none of its modules
(each is imported where it is used: journal, preflight, provision, session, spec, teardown), so
loading the provider, as every `diskbench --help` does, costs nothing.
"""
