"""A delete that never completes must not hold the terminal (issue 24, item 17): the real openstacksdk,
the fake cloud, ``diskbench run`` as a child process, stopped while its server is still building.

After the Ctrl-C that stops the run, the teardown waits for the cloud: the next Ctrl-C says the
deleting goes on, the one after stops waiting at once and lists what is left, with ids, and the
command that removes it; that command then does.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...conftest import diskbench
from ...fake_openstack import FakeOpenStack
from ...interrupting import Watched, stop_waiting_for_teardown, until
from .test_run import PROFILE, _env


def test_second_ctrl_c_during_a_delete_that_never_completes_lists_what_is_left(
        fake: FakeOpenStack, os_config: Path, tmp_path: Path) -> None:
    fake.build_polls = 10**6  # the server never leaves BUILD: the run is stopped while provisioning
    fake.deletes_hang, fake.delete_polls = True, 0  # its delete never completes; once let be, it is done at once
    (tmp_path / "os.yaml").write_text(PROFILE)
    db = tmp_path / "db.sqlite"
    with Watched("run", "--profile", str(tmp_path / "os.yaml"), "--ssh-source", "127.0.0.1", db=db,
                 env=_env(os_config)) as run:
        until(lambda: bool(fake.servers))
        run.ctrl_c()  # stop the run: the teardown deletes the server and waits for it to go
        stop_waiting_for_teardown(run, lambda: bool(fake.calls("DELETE", r"/servers/[^/]+$")))
    found = re.search(r"^run (\S+): profile os", run.stderr, re.MULTILINE)
    assert found, run.stderr
    run_id = found.group(1)
    (server_id,) = fake.servers
    (group_id,) = fake.security_groups
    assert "warning: teardown in progress: diskbench is deleting what it created; press Ctrl-C again to stop " \
           "waiting (what is left is listed, with the command that deletes it)" in run.lines
    start = run.lines.index(f"openstack: stopped waiting; left in the cloud by run {run_id}:")
    assert run.lines[start + 1:start + 5] == [
        f"openstack:   server diskbench-{run_id}-db01 (id {server_id})",
        f"openstack:   keypair diskbench-{run_id}",
        f"openstack:   security group diskbench-{run_id} (id {group_id})",
        f"openstack: delete them with `diskbench cleanup --provider openstack --run {run_id}`"]
    assert run.lines[-1].startswith(f"error: interrupted: run {run_id}")
    assert len(fake.calls("DELETE", r"/servers/[^/]+$")) == 1  # it let go: no second teardown waited again

    fake.deletes_hang = False
    out = diskbench("cleanup", "--provider", "openstack", "--run", run_id, db=db, env=_env(os_config))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"openstack: deleted run {run_id} on fake (run {run_id}: server diskbench-{run_id}-db01, "
        f"security group diskbench-{run_id}, keypair diskbench-{run_id})"]
    assert fake.empty(), (fake.servers, fake.keypairs, fake.security_groups, fake.volumes)
