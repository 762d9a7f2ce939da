"""Windows VMs: the request bodies, and the first-boot script that sets up OpenSSH.

A Windows image runs no cloud-init, so diskbench's setup runs as a Custom Script Extension
(its command in ``protectedSettings``, encrypted at rest): it installs the OpenSSH server
where the image lacks it (built in on Server 2025, a capability on 2022), installs the host key
diskbench generated for this VM (so its fingerprint is pinned before the first connection,
never trusted on first use), authorizes the run's login key for administrators with the ACL
OpenSSH requires, and opens port 22 in the guest firewall (the NSG still admits only the
caller). The extension's PUT completes only when the script has finished.
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from ...executors.keys import KeyPair
from ...platforms.windows.powershell import encoded_command, ps_quote, windows_command_line
from .schema import Machine

EXTENSION = "diskbench-openssh"


def admin_password() -> str:
    """A throwaway password Azure requires for Windows VMs; never stored, never used to log in."""
    pools = (string.ascii_uppercase, string.ascii_lowercase, string.digits, "!@#%^*-_=+")
    chars = [secrets.choice(pool) for pool in pools for _ in range(6)]
    secrets.SystemRandom().shuffle(chars)
    return "".join(chars)


def setup_script(login: KeyPair, host_key: KeyPair) -> str:
    public_host = " ".join(host_key.public_openssh.split()[:2])
    private = host_key.private_openssh.replace("\r", "")
    return f"""$ErrorActionPreference = 'Stop'
if (-not (Get-Service sshd -ErrorAction SilentlyContinue)) {{
  Add-WindowsCapability -Online -Name OpenSSH.Server~~~~0.0.1.0 | Out-Null
}}
$ssh = Join-Path $env:ProgramData 'ssh'
New-Item -ItemType Directory -Force -Path $ssh | Out-Null
Remove-Item -Path (Join-Path $ssh 'ssh_host_*') -Force -ErrorAction SilentlyContinue
$key = Join-Path $ssh 'ssh_host_ed25519_key'
[IO.File]::WriteAllText($key, {ps_quote(private)})
[IO.File]::WriteAllText("$key.pub", {ps_quote(public_host + chr(10))})
icacls $key /inheritance:r /grant 'SYSTEM:F' /grant 'Administrators:F' | Out-Null
$auth = Join-Path $ssh 'administrators_authorized_keys'
[IO.File]::WriteAllText($auth, {ps_quote(login.public_openssh + chr(10))})
icacls $auth /inheritance:r /grant 'SYSTEM:F' /grant 'Administrators:F' | Out-Null
$config = Join-Path $ssh 'sshd_config'
if (Test-Path $config) {{
  (Get-Content $config) -replace '^#?HostKey .*', '' | Set-Content $config
}}
Add-Content -Path $config -Value 'HostKey __PROGRAMDATA__/ssh/ssh_host_ed25519_key'
Set-Service -Name sshd -StartupType Automatic
Restart-Service -Name sshd -Force
if (-not (Get-NetFirewallRule -Name diskbench-ssh -ErrorAction SilentlyContinue)) {{
  New-NetFirewallRule -Name diskbench-ssh -DisplayName 'OpenSSH (diskbench)' -Direction Inbound `
    -Protocol TCP -LocalPort 22 -Action Allow | Out-Null
}}
"""


def windows_os_profile(m: Machine, admin_user: str) -> dict[str, Any]:
    return {"computerName": m.name[:15],  # NetBIOS names stop at 15 characters
            "adminUsername": admin_user, "adminPassword": admin_password(),
            "windowsConfiguration": {"provisionVMAgent": True, "enableAutomaticUpdates": False,
                                     "patchSettings": {"patchMode": "Manual"}}}


def extension_body(m: Machine, *, tags: dict[str, str], login: KeyPair, host_key: KeyPair) -> dict[str, Any]:
    command = windows_command_line(encoded_command(setup_script(login, host_key)))
    return {"location": m.region, "tags": tags, "properties": {
        "publisher": "Microsoft.Compute", "type": "CustomScriptExtension", "typeHandlerVersion": "1.10",
        "autoUpgradeMinorVersion": True, "settings": {},
        "protectedSettings": {"commandToExecute": command}}}
