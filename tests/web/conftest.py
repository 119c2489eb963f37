"""The web tests run on the services of tests/api: ``api`` (in process) and ``live`` (a ``python -m service`` process),
and drive one Debian Chromium per test worker.

Chromium is started once per pytest worker (``chromium``) and each test connects to it over the DevTools protocol
(``browser``): a test's pages live in browser contexts of its own — their own storage, cookies and cache — which are
closed when it ends, so tests share nothing but the process. A Chromium that died is started again for the next test.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

import pytest

from service.web.screenshots import ARGS, CHROMIUM
from tests.api.conftest import api, live, live_kind, shared_live_services, store_kind  # noqa: F401  (fixtures)


class Chromium:
    """One headless Chromium, listening for DevTools connections on a port it chose (never a fixed one)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.proc: subprocess.Popen | None = None
        self.endpoint = ""

    def running(self) -> str:
        """The DevTools endpoint of a live Chromium: this one, or a new one if it has died."""
        if self.proc is not None and self.proc.poll() is None:
            return self.endpoint
        profile = self.directory / f"profile-{time.monotonic_ns()}"
        profile.mkdir(parents=True)
        self.proc = subprocess.Popen(
            [CHROMIUM, *ARGS, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
             f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port_file = profile / "DevToolsActivePort"
        for _ in range(600):  # Chromium writes the port it bound once it listens
            if port_file.exists() and (lines := port_file.read_text().splitlines()) and lines[0].isdigit():
                self.endpoint = f"http://127.0.0.1:{lines[0]}"
                return self.endpoint
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail("Chromium did not start listening for DevTools connections")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip("no /usr/bin/chromium")
    browser = Chromium(tmp_path_factory.mktemp("chromium"))
    yield browser
    browser.stop()


@pytest.fixture
async def browser(chromium):
    """The worker's Chromium, as a Playwright ``Browser`` of this test's own: every context it makes is closed after."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        connected = await pw.chromium.connect_over_cdp(chromium.running())
        try:
            yield connected
        finally:
            for context in connected.contexts[1:]:  # the first is Chromium's default one, never used by the tests
                with contextlib.suppress(Exception):
                    await context.close()
            await connected.close()
