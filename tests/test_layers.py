"""The house's rooms (DESIGN.md, "Layers"): imports only point down, and the bottom rooms are pure.

Read off the source, not run: a module that imports a store "only for a type", or a tool that reaches up into the
CLI, breaks the table as surely as a call does — and ``replays`` must run offline with neither Redis nor Sanic.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

ALLOWED = {
    "service/events": ("service.events",),
    "service/rules": ("service.rules", "service.events"),
    "service/bots": ("service.bots", "service.rules", "service.events"),
    "service/sim": ("service.sim", "service.bots", "service.rules", "service.events"),
    "service/league": ("service.league", "service.sim", "service.bots", "service.rules", "service.events"),
    "service/store": ("service.store", "service.events"),
    "service/projections": ("service.projections", "service.store", "service.events", "service.rules"),
    "replays": ("replays", "service.rules", "service.events", "service.bots"),
    "client/free_parking_client": ("free_parking_client",),  # a package of its own (issue 33): nothing of the service
    "examples": ("examples",),  # bots written against the view, with the client alone (issue 33)
}
"""Each room and what it may import of the project (itself included)."""

PURE = ("service/events", "service/rules", "service/bots")
IO_MODULES = {"redis", "fakeredis", "hiredis", "sanic", "sanic_ext", "httpx", "os", "pathlib", "socket", "asyncio",
              "threading", "subprocess", "secrets", "datetime", "uuid", "logging", "io_uring", "fsspec", "gzip"}  # fmt: skip
"""What no pure room imports: stores, servers, clients, the disk, the clock's calendar, fresh randomness."""


def imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute import of ``path``, type-only ones included: ``(line, module)``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def sources(room: str) -> list[Path]:
    return sorted((ROOT / room).rglob("*.py"))


def project(module: str) -> bool:
    return module.split(".")[0] in ("service", "replays", "bench", "tests")


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_a_room_imports_only_the_rooms_below_it(room):
    wrong = [f"{path.relative_to(ROOT)}:{line} imports {module}"
             for path in sources(room) for line, module in imports(path)
             if project(module) and not module.startswith(ALLOWED[room])]  # fmt: skip
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("room", PURE)
def test_a_pure_room_does_no_io(room):
    wrong = [f"{path.relative_to(ROOT)}:{line} imports {module}"
             for path in sources(room) for line, module in imports(path) if module.split(".")[0] in IO_MODULES]  # fmt: skip
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("room", PURE)
def test_a_pure_room_reads_no_clock_and_no_global_random(room):
    """``random.Random(seed)`` is a bot's own randomness, handed to it; ``random.choice`` is the process's. ``time``
    may turn a given instant into a date (``gmtime(t)``), never read the clock."""
    allowed = {"random": {"Random"}, "time": {"gmtime"}}
    wrong = []
    for path in sources(room):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in allowed:
                if node.attr not in allowed[node.value.id]:
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {node.value.id}.{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("gmtime",):
                if not node.args:
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} reads the clock (gmtime())")
    assert not wrong, "\n".join(wrong)


def test_the_store_lives_in_its_own_room():
    """``service/events`` is vocabulary: not one module of it talks to Redis or the disk (they are ``service/store``'s)."""
    assert not list((ROOT / "service/events").glob("*.lua"))
    assert (ROOT / "service/store/append.lua").exists()


def test_the_api_modules_import_no_circle():
    """No two modules of ``service/api`` import each other, even for types only: a circle is two modules that can only
    be understood, tested and changed together."""
    api = ROOT / "service/api"
    edges: dict[str, set[str]] = {}
    for path in api.glob("*.py"):
        name = path.stem
        edges[name] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    edges[name].add(node.module.split(".")[0])
                elif node.level == 1:
                    edges[name] |= {alias.name for alias in node.names}
                elif node.module and node.module.startswith("service.api."):
                    edges[name].add(node.module.split(".")[2])
    circles = []

    def visit(node: str, trail: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt in trail:
                circles.append(" -> ".join(trail[trail.index(nxt):] + [nxt]))
            elif nxt in edges and len(trail) < len(edges):
                visit(nxt, [*trail, nxt])

    for start in sorted(edges):
        visit(start, [start])
    assert not circles, "\n".join(sorted(set(circles))[:10])
