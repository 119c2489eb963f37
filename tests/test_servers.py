"""The tests' own ports (tests/servers.py): each pytest-xdist worker picks only from its share, so two workers
starting servers at once never pick the same free port (one test would then talk to the other's server)."""

from __future__ import annotations

import pytest

from tests.cluster import free_cluster_port
from tests.servers import free_port, free_port_in, xdist_share


def test_each_worker_picks_ports_of_its_own_share(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "3")
    picked = {}
    for index in range(3):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{index}")
        assert xdist_share() == (index, 3)
        picked[index] = {free_port() for _ in range(5)} | {free_port_in(range(18800, 18900)) for _ in range(5)}
        assert all(port % 3 == index for port in picked[index])
    assert not (picked[0] & picked[1] or picked[1] & picked[2] or picked[0] & picked[2])


def test_one_process_has_every_port(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    assert xdist_share() == (0, 1)
    picked = {free_port_in(range(29000, 29003)) for _ in range(60)}  # no test's range: below the ephemeral ports too
    assert picked <= {29000, 29001, 29002} and len(picked) >= 2  # not one residue class: every port may be picked


@pytest.mark.parametrize("count", [2, 4])
def test_every_worker_finds_ports_however_many_workers_share_them(monkeypatch, count):
    """The kernel hands out odd ports first for port 0: with an even number of workers, a share of even ports must
    still find free ones, for a server and for a cluster node (and its bus port)."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(count))
    for index in range(count):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{index}")
        assert {free_port() % count, free_cluster_port() % count} == {index}


def test_every_test_port_range_lies_below_the_ephemeral_ports_and_apart():
    """A port a client's outgoing connection can be handed (the kernel's ephemeral range) may be taken between a test's
    choice and its server's bind: under load one was ("Address already in use", a busy CI run). So every range the
    tests pick from lies below it, and no two ranges share a port."""
    from tests.attack.conftest import ATTACK_PORTS
    from tests.cluster import NODE_PORTS
    from tests.servers import SERVER_PORTS, first_ephemeral_port

    first_ephemeral = first_ephemeral_port()
    bus = range(NODE_PORTS.start + 10000, NODE_PORTS.stop + 10000)  # each cluster node's bus port
    ranges = [SERVER_PORTS, NODE_PORTS, bus, ATTACK_PORTS, range(18800, 18900)]
    assert all(r.stop <= first_ephemeral for r in ranges), [(r.start, r.stop) for r in ranges]
    ports = [p for r in ranges for p in r]
    assert len(ports) == len(set(ports))


def test_a_range_reaching_the_ephemeral_ports_is_refused():
    from tests.servers import first_ephemeral_port

    with pytest.raises(ValueError, match="ephemeral"):
        free_port_in(range(first_ephemeral_port() - 10, first_ephemeral_port() + 10))
