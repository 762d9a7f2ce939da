"""YAML documents people write for diskbench (profiles, gate policies): read within bounds, with
the line of every problem.

A file a user names can be anything: /dev/zero, a 200 MB binary, UTF-16 from a Windows editor,
a kilobyte of aliases that expands to billions of values. Reading is bounded in size, nesting
and expanded size before anything walks the data; every error names the file and line and is
the caller's error class (exit 2), never an exception from the YAML library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError

MAX_BYTES = 1 << 20  # the largest bundled profile is 7 KB; a megabyte is no hand-written document
MAX_NODES = 100_000  # YAML nodes after aliases are expanded (an alias bomb expands to billions)
MAX_DEPTH = 64  # nesting of mappings and lists (the deepest real profile has 6 levels)
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def read_text(path: Path | str, what: str, error: type[UsageError] = UsageError) -> str:
    """A file's text: a regular file, bounded in size, UTF-8 (or UTF-16/32 with a byte-order
    mark, as Windows editors save it), never a binary file read whole or decoded into nonsense."""
    path = Path(path)
    try:
        if not path.is_file():
            raise error(f"{path}: not a regular file; {what} is a YAML file" if path.exists()
                        else f"{path}: no such file")
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_BYTES:
        raise error(f"{path}: larger than {MAX_BYTES >> 20} MiB; {what} is a short YAML file")
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    if encoding == "utf-8" and b"\0" in data:  # before decoding: a binary file is said to be one
        raise error(f"{path}: a binary file (it holds NUL bytes), not {what}")
    try:
        text = data.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not {encoding.upper()} text (byte 0x{data[exc.start]:02x})",
                    hint="save it as UTF-8") from None
    if "\0" in text:
        raise error(f"{path}: a binary file (it holds NUL bytes), not {what}")
    return text


def parse(text: str, filename: str, what: str, error: type[UsageError] = UsageError) -> tuple[yaml.Node | None, Any]:
    """The composed document (for line numbers) and its data; aliases, depth and duplicate keys
    checked on the node graph before the data is built."""
    if "\0" in text:
        raise error(f"{filename}: a binary file (it holds NUL bytes), not {what}")
    loader: yaml.SafeLoader | None = None
    try:
        loader = yaml.SafeLoader(text)  # its reader refuses some characters already here
        node = loader.get_single_node()
        check_graph(node, filename, what, error)
        reject_duplicate_keys(node, filename, error)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}" if mark else ""
        raise error(f"{filename}{line}: invalid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{filename}: invalid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise error(f"{filename}: nested too deeply to be {what}") from None
    finally:
        if loader is not None:
            loader.dispose()
    return node, data


def check_graph(root: yaml.Node | None, filename: str, what: str, error: type[UsageError] = UsageError) -> None:
    """Refuse documents whose aliases expand to a huge tree (billion laughs) or that nest deeper
    than any real one: each node is visited once, its expanded size counted from its children's."""
    if root is None:
        return
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if depth > MAX_DEPTH:
            raise error(f"{filename}:{node.start_mark.line + 1}: nested more than {MAX_DEPTH} levels deep; "
                        f"{what} is a few levels of mappings and lists")
        children = _children(node)
        if done:
            size[id(node)] = 1 + sum(size[id(c)] for c in children)
            if size[id(node)] > MAX_NODES:
                raise error(f"{filename}: its aliases expand to more than {MAX_NODES:,} values; "
                            f"that is an alias bomb, not {what}")
        elif id(node) not in size:
            stack.append((node, depth, True))
            stack.extend((c, depth + 1, False) for c in children if id(c) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def reject_duplicate_keys(root: yaml.Node | None, filename: str, error: type[UsageError] = UsageError) -> None:
    """A key written twice in one mapping (YAML keeps the last one silently). Each node is looked
    at once, however many aliases point at it."""
    seen_nodes: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, _ in node.value:
                text = key.value if isinstance(key, yaml.ScalarNode) else repr(key.value)
                if text in keys:
                    raise error(f"{filename}:{key.start_mark.line + 1}: key {text!r} appears twice")
                keys.add(text)
        stack.extend(_children(node))


def format_key_path(loc: list[Any] | tuple[Any, ...]) -> str:
    """``workloads[0].extra.bs`` from a location's parts."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def line_of(node: yaml.Node | None, loc: list[Any]) -> int | None:
    """Line of the deepest YAML node the error path reaches (1-based)."""
    best = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            match = next(((k, v) for k, v in node.value if k.value == part), None)
            if match is None:
                break
            node = match[1]
            best = match[0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            best = node.start_mark.line + 1
        else:
            break
    return best


