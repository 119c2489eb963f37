"""The per-address limit counts an IPv6 client as its /64, and home users are routinely given far more than one.

limits.py buckets an IPv6 address by its /64 ("a host is usually given a whole /64"). Residential and business IPv6
is delegated as a /56 or a /48 (RIPE-690 recommends a /56 at least for homes, a /48 for businesses; many ISPs hand a
/56 or /48 to every customer by DHCPv6-PD), so one ordinary subscriber owns 256 or 65,536 /64s, each a fresh bucket:
20 × 256 = 5,120 games at once from one home connection, 1.3 million from a /48, against "20 at once" for an IPv4 client.

Expected (one possible fix): a coarser bucket beside the /64 one (the /56, or the /48), charged too.
"""

from __future__ import annotations

import ipaddress
from types import SimpleNamespace

from service.api.limits import _buckets


def test_one_slash_56_is_not_256_clients():
    site = ipaddress.IPv6Network("2001:db8:ab00::/56")
    buckets = set()
    for subnet in list(site.subnets(new_prefix=64))[:256]:
        host = str(subnet.network_address + 1)
        request = SimpleNamespace(remote_addr="", ip=host)
        buckets |= {name for name, _ in _buckets("games", request, None)}
    assert len(buckets) < 256, f"one /56 (one home connection) is {len(buckets)} separate address buckets"


def _bucket(address: str) -> str:
    return _buckets("commands", SimpleNamespace(remote_addr="", ip=address), None)[0][0]


def test_one_ipv4_address_is_one_client_through_6to4_too():
    """A 6to4 address (2002::/16, RFC 3056) is 2002, the host's IPv4 address, then a 16-bit subnet: whoever holds one
    IPv4 address holds its whole 2002:<v4>::/48 — 256 /56s, each counted as a client of its own, so 256 budgets
    for the one address that is a single bucket over IPv4. Counted as that IPv4 address instead."""
    v4 = ipaddress.IPv4Address("198.51.100.7")
    site = ipaddress.IPv6Network(f"2002:{int(v4) >> 16:04x}:{int(v4) & 0xFFFF:04x}::/48")
    buckets = {_bucket(str(subnet.network_address + 1)) for subnet in list(site.subnets(new_prefix=56))}
    assert buckets == {_bucket(str(v4))}, f"one IPv4 address is {len(buckets)} clients through 6to4"
