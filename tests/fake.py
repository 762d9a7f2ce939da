"""A scripted Executor for code paths that need hardware this machine lacks (Azure, NVMe)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from diskbench.executors.base import Completed, Executor


class FakeExecutor(Executor):
    name = "fake"

    def __init__(self, answers: dict[str, tuple[int, str]]) -> None:
        self.answers = answers  # command line prefix -> (exit code, stdout)
        self.calls: list[str] = []

    def run(self, argv: list[str], *, timeout: float = 60.0, privileged: bool = False) -> Completed:
        line = " ".join(argv)
        self.calls.append(line)
        for prefix, (rc, out) in self.answers.items():
            if line.startswith(prefix):
                return Completed(argv, rc, out, "")
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("command -v "):
            return Completed(argv, 0, f"/usr/bin/{argv[2].split()[-1]}\n", "")  # every tool is there
        return Completed(argv, 1, "", f"{argv[0]}: not scripted")

    def stream(self, argv: list[str], *, on_output: Callable[[str], None], timeout: float,
               stdout_path: Path, stderr_path: Path, privileged: bool = False,
               workdir: str | None = None) -> int:
        raise NotImplementedError

    def write_text(self, path: str, text: str) -> None:
        raise NotImplementedError

    def fetch(self, path: str, dest: Path) -> bool:
        return False

    def workspace(self, local_dir: Path) -> str:
        return str(local_dir)
