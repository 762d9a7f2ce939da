"""Reading profiles: bundled names or files, ``--set`` overrides, and errors with file:line:key.

Overrides are applied to the parsed data, not to re-dumped text, so an error in the file still
names the file's own line, and an error in an override names the ``--set`` that caused it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .. import yamldoc
from ..errors import ProfileError
from ..resources import profiles_dir
from ..text import control_char, first_unsafe
from ..yamldoc import format_key_path
from .assembly import profile_model, validation_context
from .keys import did_you_mean, keys_of, schema_at, step, takes_mapping
from .knee import step_clash
from .schema import LoadedProfile, MergeError, Profile, user_loc
from .workload import KeyProblem

_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


def bundled_profiles() -> dict[str, Path]:
    return {p.stem: p for p in sorted(profiles_dir().glob("*.yaml"))}


def resolve_profile_path(name_or_path: str) -> Path:
    if (bad := control_char(name_or_path)) is not None:
        raise ProfileError(f"profile name {name_or_path!r} contains {bad}")
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.exists():
            raise ProfileError(f"{name_or_path}: no such profile file")
        return path
    bundled = bundled_profiles()
    if name_or_path in bundled:
        return bundled[name_or_path]
    raise ProfileError(
        f"no profile named {name_or_path!r}",
        hint=f"bundled profiles: {', '.join(bundled)}; or pass a path to a .yaml file",
    )


def load_profile(name_or_path: str, overrides: tuple[str, ...] | list[str] | dict[str, Any] = ()) -> LoadedProfile:
    """A profile, with ``key.path=value`` overrides applied (e.g. ``machines[0].size=...``).

    ``overrides`` is a list of ``KEY.PATH=VALUE`` strings (as ``--set`` gives them) or a
    mapping of key paths to values (as the library facade takes them).
    """
    path = resolve_profile_path(name_or_path)
    text = yamldoc.read_text(path, "a profile", ProfileError)
    specs = _override_specs(overrides)
    if not specs:
        return LoadedProfile(profile=parse_profile(text, str(path)), path=str(path), text=text)
    node, data = _read(text, str(path))
    for spec, parts, value in specs:
        _set(data, parts, value, spec, str(path))
    overridden = {tuple(parts): spec for spec, parts, _ in specs}
    _check_values(data, node, str(path), overridden)
    profile = _validate(data, node, str(path), overridden)
    header = f"# {path} with --set {' --set '.join(s for s, _, _ in specs)}\n"
    return LoadedProfile(profile=profile, path=str(path), text=header + yaml.safe_dump(data, sort_keys=False),
                         overrides=[s for s, _, _ in specs])


def _override_value(spec: str, raw: str) -> Any:
    """The YAML value of one ``--set``: plain data only (no tags that build objects)."""
    where = f"--set {spec!r}"
    try:
        return yamldoc.parse(raw, where, "a value", ProfileError)[1]
    except ProfileError as exc:  # one line: no line number
        raise ProfileError(exc.message.replace(f"{where}:1:", f"{where}:").replace("invalid YAML", "not a YAML value"),
                           hint="quote strings, e.g. --set 'name=\"my name\"'") from None


def _override_specs(overrides: tuple[str, ...] | list[str] | dict[str, Any]) -> list[tuple[str, list[Any], Any]]:
    """(as the user wrote it, key path parts, value) per override."""
    if isinstance(overrides, dict):
        pairs = [(f"{k}={v}", str(k), v) for k, v in overrides.items()]
    else:
        pairs = []
        for spec in overrides:
            if (bad := control_char(spec)) is not None:  # before YAML folds a newline into a space
                raise ProfileError(f"--set {spec!r}: contains {bad}; values must be plain text")
            key, sep, raw = spec.partition("=")
            pairs.append((spec, key if sep else "", _override_value(spec, raw) if sep else None))
    out = []
    for spec, key, value in pairs:
        parts = [m.group(1) or int(m.group(2)) for m in _PATH_PART.finditer(key.replace("].", "]"))]
        if not parts:
            raise ProfileError(f"--set {spec!r}: use KEY.PATH=VALUE, e.g. defaults.runtime=5s")
        out.append((spec, parts, value))
    return out


def _set(data: Any, parts: list[Any], value: Any, spec: str, filename: str) -> None:
    """Set one key path; a mapping on the way that the file leaves out (or leaves empty) is made when
    the schema has one there (``defaults.runtime`` in a profile without ``defaults:``)."""
    node = data
    key = spec.split("=", 1)[0]
    tp: Any = profile_model()
    for part in parts[:-1]:
        within, tp = tp, step(tp, part)
        if isinstance(node, dict) and node.get(part) is None and takes_mapping(tp):
            node[part] = {}
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            keys = keys_of(within)  # a key the schema has not there: the closest it has, if any
            hint = did_you_mean(part, keys) if isinstance(part, str) and part not in keys else ""
            raise ProfileError(f"--set {spec!r}: {filename} has no {key!r}{hint}") from None
    try:
        node[parts[-1]] = value
    except (IndexError, TypeError):
        raise ProfileError(f"--set {spec!r}: {filename} has no {key!r}") from None


def parse_profile(text: str, filename: str = "<profile>") -> Profile:
    node, data = _read(text, filename)
    _check_values(data, node, filename, {})
    return _validate(data, node, filename, {})


def _read(text: str, filename: str) -> tuple[yaml.Node | None, Any]:
    node, data = yamldoc.parse(text, filename, "a profile", ProfileError)
    if not isinstance(data, dict):
        raise ProfileError(f"{filename}:1: a profile must be a YAML mapping with name and workloads")
    return node, data


def _check_values(data: Any, node: yaml.Node | None, filename: str, overridden: dict[tuple[Any, ...], str]) -> None:
    """Every string one line of plain text (descriptions may span lines: they become comments)
    and every number finite: before any value can reach a job file or a command line."""
    found = first_unsafe(data)
    if found is None:
        return
    loc, problem = found
    spec = _override_at(loc, overridden)
    line = None if spec else yamldoc.line_of(node, loc)
    where = f"{filename}: --set {spec}" if spec else (f"{filename}:{line}" if line else filename)
    path = format_key_path(loc)
    raise ProfileError(f"{where}: {path}: {problem}" if path else f"{where}: {problem}")


def _override_at(loc: list[Any] | tuple[Any, ...], overridden: dict[tuple[Any, ...], str]) -> str | None:
    """The ``--set`` behind a problem at ``loc``: one that set this key or a key inside it, or (a
    machine's model check that reports at ``machines[0]``) a key under it; all of them for a
    problem of the whole profile."""
    if not loc and overridden:  # a check of the whole profile (a renamed workload still referenced)
        return " --set ".join(overridden.values())
    return next((s for parts, s in overridden.items()
                 if tuple(loc[:len(parts)]) == parts or (loc and tuple(parts[:len(loc)]) == tuple(loc))), None)


def _validate(data: Any, node: yaml.Node | None, filename: str, overridden: dict[tuple[Any, ...], str]) -> Profile:
    try:
        profile = profile_model().model_validate(data, context=validation_context())
    except ValidationError as exc:
        raise _profile_error(exc, node, filename, overridden) from None
    for workload in profile.workloads:  # what only the merge with the defaults shows: found here, with its line
        try:
            profile.resolved(workload)
        except MergeError as exc:
            raise ProfileError(_merge_problem(exc, node, filename, overridden)) from None
    clash = step_clash([(i, w.name, w.knee) for i, workload in enumerate(profile.workloads)
                        for w, _ in profile.expand(workload)])
    if clash is not None:  # a knee search's steps are jobs named after it: no other job may take their names
        index, problem = clash
        name = profile.workloads[index].name
        raise ProfileError(_merge_problem(MergeError(name, index, ("workloads", index, "name"), problem), node,
                                          filename, overridden))
    return profile


def _merge_problem(exc: MergeError, root: yaml.Node | None, filename: str,
                   overridden: dict[tuple[Any, ...], str]) -> str:
    """One line for a problem of a workload merged with the defaults: the file, the line and the key
    where the profile gives it, and when that is in ``defaults``, the workload it breaks."""
    loc = list(exc.loc)
    spec = _override_at(loc, overridden)
    line = None if spec else yamldoc.line_of(root, loc)
    where = f"{filename}: --set {spec}" if spec else (f"{filename}:{line}" if line else filename)
    text = f"{where}: {format_key_path(loc)}: {exc.problem}" if loc else f"{where}: {exc.problem}"
    if loc[:1] == ["defaults"]:
        at = yamldoc.line_of(root, ["workloads", exc.index]) if exc.index is not None else None
        text += f" (workload {exc.workload!r}{f', line {at}' if at else ''})"
    # the other side of the conflict may be a --set (stop.min in the file against a runtime set on the
    # command line): name the ones this workload takes, so the line does not blame the file alone
    others = [s for parts, s in overridden.items() if s != spec and (
        parts[:1] == ("defaults",) or (exc.index is not None and parts[:2] == ("workloads", exc.index)))]
    if others:
        text += f" (with --set {' --set '.join(others)})"
    return text


def _profile_error(exc: ValidationError, root: yaml.Node | None, filename: str,
                   overridden: dict[tuple[Any, ...], str]) -> ProfileError:
    """Every problem at once, each with its line and key path (one line when there is one)."""
    problems: list[str] = []
    seen: set[str] = set()
    for error in exc.errors():
        loc = user_loc(error["loc"])
        key = format_key_path(loc)
        if key in seen:  # a union reports each alternative; the first says it
            continue
        seen.add(key)
        problems.append(_problem(error, loc, root, filename, overridden))
    if len(problems) == 1:
        return ProfileError(problems[0])
    return ProfileError(f"{filename}: {len(problems)} problems:\n  " + "\n  ".join(problems))


def _problem(error: Any, loc: list[Any], root: yaml.Node | None, filename: str,
             overridden: dict[tuple[Any, ...], str]) -> str:
    if isinstance(problem := (error.get("ctx") or {}).get("error"), KeyProblem):
        loc = [*loc, *problem.key]  # a check of the whole workload about one key in it: that key's line
    path = format_key_path(loc)
    msg = error["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if error["type"] == "extra_forbidden" and loc:
        # the keys of the model that refused this one (pydantic's location names it, with its union tags)
        msg = f"unknown key {loc[-1]!r}" + did_you_mean(str(loc[-1]), keys_of(schema_at(error["loc"][:-1])))
        path = format_key_path(loc[:-1]) or "(top level)"
    elif error["type"] == "missing" and loc:
        msg = f"required key {loc[-1]!r} is missing"
        path = format_key_path(loc[:-1]) or "(top level)"
    elif error["type"] == "literal_error":
        allowed = re.findall(r"'([^']*)'", str((error.get("ctx") or {}).get("expected", "")))
        msg = f"{error.get('input')!r} is not allowed: {msg}" + did_you_mean(str(error.get("input")), set(allowed))
    spec = _override_at(loc, overridden)
    line = None if spec else yamldoc.line_of(root, loc)
    where = f"{filename}: --set {spec}" if spec else (f"{filename}:{line}" if line else filename)
    return f"{where}: {path}: {msg}" if path else f"{where}: {msg}"


def profile_json_schema() -> dict[str, Any]:
    schema = profile_model().model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "diskbench profile"
    return schema
