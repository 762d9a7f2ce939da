"""DiskSpd: parse its XML and text results, render its XML job profiles, drive it with PowerShell."""

from __future__ import annotations

from .options import check_workload
from .parse import DiskspdOutput, decode_output, parse_diskspd, sniff
from .render import DiskspdTarget, UnsupportedOptions, command, render_profile

__all__ = ["DiskspdOutput", "DiskspdTarget", "UnsupportedOptions", "check_workload", "command", "decode_output",
           "parse_diskspd", "render_profile", "sniff"]
