"""Other clients: ``openapi-python-client`` builds one from the running service's ``/openapi.json`` with no error and
no warning, and it imports; and this package installs alone, beside nothing of the project.

Both run in a venv of their own, ``.venv-openapi/`` (ignored by git, kept between runs: making it takes the index a
minute or two), holding the generator (it pins an older httpx than ours) and the client's four dependencies only. The
generated code is written under the test's temporary folder and not kept.
"""

from __future__ import annotations

import ast
import fcntl
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.client.test_client import url_of

pytestmark = pytest.mark.shared_live

ROOT = Path(__file__).parents[2]
CLIENT = ROOT / "client"
VENV = ROOT / ".venv-openapi"
GENERATOR = "openapi-python-client==0.29.1"
UNREACHABLE = ("Could not find a version", "No matching distribution", "NewConnectionError", "Max retries exceeded",
               "Temporary failure in name resolution", "Network is unreachable")
"""What pip says when it cannot reach the index: then the tests are skipped, naming it (and only then)."""


def dependencies() -> list[str]:
    return tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]["dependencies"]


def venv() -> Path:
    """``VENV`` with the generator and the client's dependencies, made once for each set of them (a lock keeps two
    test processes from making it at once)."""
    wanted = "\n".join([GENERATOR, *dependencies()])
    with open(ROOT / ".venv-openapi.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = VENV / "stamp"
        if stamp.exists() and stamp.read_text() == wanted:
            return VENV
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        made = subprocess.run([str(VENV / "bin/python"), "-m", "pip", "install", "--quiet", GENERATOR, *dependencies()],
                              capture_output=True, text=True, timeout=900)
        if made.returncode != 0:
            if any(words in made.stdout + made.stderr for words in UNREACHABLE):
                pytest.skip(f"pip cannot reach the index: {made.stderr.strip().splitlines()[-1]}")
            pytest.fail(made.stdout + made.stderr)
        stamp.write_text(wanted)
    return VENV


def run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}"}  # the generator's post hooks (ruff)
    env.pop("PYTHONPATH", None)
    return subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


@pytest.mark.parametrize("live_kind", ["embedded"])  # the document is the same on every store
async def test_openapi_python_client_generates_a_client_with_no_warning_and_it_imports(live, tmp_path):
    document = tmp_path / "openapi.json"
    document.write_bytes((await live.get("/openapi.json")).content)
    env = venv()
    generated = run(env, str(env / "bin/openapi-python-client"), "generate", "--path", str(document), "--meta", "none",
                    "--output-path", str(tmp_path / "fp_api"), "--config", str(CLIENT / "openapi-generator.yaml"),
                    cwd=tmp_path)
    said = generated.stdout + generated.stderr
    assert generated.returncode == 0, said
    assert not [w for w in ("Warning", "WARNING", "Error", "Unable", "Cannot", "not in PATH") if w in said], said
    modules = sorted(p.relative_to(tmp_path).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
                     for p in (tmp_path / "fp_api").rglob("*.py"))
    assert "fp_api.api.default.post_games_game_id_commands" in modules
    imported = run(env, str(env / "bin/python"), "-c", f"import importlib; [importlib.import_module(m) for m in {modules}]; "
                   "from fp_api import AuthenticatedClient; from fp_api.models import MonopolyView, FreeParkingOptions",
                   cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr


def test_the_client_imports_only_the_standard_library_and_its_four_dependencies():
    """Read off the source: nothing of the service (tests/test_layers.py too), nothing the package does not declare."""
    allowed = set(sys.stdlib_module_names) | {"httpx", "httpx_sse", "msgspec", "cryptography", "free_parking_client"}
    found = set()
    for path in (CLIENT / "free_parking_client").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
    assert {"httpx", "httpx_sse", "msgspec", "cryptography"} <= found and not found - allowed, found - allowed


def test_the_client_installs_alone_and_signs_there(tmp_path):
    """The package built as a wheel needs exactly its four dependencies (``pip check`` in a venv with nothing else of
    the project, and an older httpx than the project's) and signs the doc's first vector there."""
    source = tmp_path / "client"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            str(source), "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("free_parking_client-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith("METADATA"))).decode()
    requires = sorted(line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: "))
    assert requires == sorted(dependencies()) and len(requires) == 4
    env = venv()
    installed = run(env, str(env / "bin/python"), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                    "--force-reinstall", str(wheel), cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    checked = run(env, str(env / "bin/python"), "-m", "pip", "check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout
    signed = run(env, str(env / "bin/python"), "-c", "from free_parking_client import PlayerKey, command_body; "
                 "k = PlayerKey.from_seed(bytes(range(32))); "
                 "print(k.sign('g_0123456789abcdef', 41, 'c-1', command_body('free-parking', "
                 "{'type': 'time_expires', 'card': 'TE-1', 'target': 2})))", cwd=tmp_path)
    assert signed.stdout.strip() == ("0a23e13ab849c60f6d0255ea576b65339e82bc6ba1229c65c2bd7eb655754dbbb0b104dc664441d1e7"
                                     "2feb6dc601b84fdc3abe2151afca2fefe3e632ef08a206"), signed.stderr
