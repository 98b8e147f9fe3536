"""The SSRF guard: which URLs and addresses the page fetcher may contact.

Two checks, both on by default:

1. before a request (:meth:`UrlGuard.check_url`): only http and https
   (:meth:`UrlGuard.check_scheme`, no DNS), and every address the host
   resolves to must be allowed (:func:`address_refusal`). The fetcher checks
   the scheme, then its page cache, and only resolves on a cache miss;
2. when a socket connects (:class:`GuardedAdapter`): the address actually
   connected to must be allowed too. This closes the DNS-rebinding gap
   between check 1 and the connection (a host that resolves to a public
   address for the check and to 127.0.0.1 for the connection).

Redirects are followed by the fetcher one hop at a time, so every hop passes
both checks. Through an explicit proxy only check 1 applies (the socket's peer
is the proxy). See docs/fetching.md.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from requests.adapters import HTTPAdapter

from extraction.records import FetchStatus
from verirank.errors import FetchError

__all__ = ["UrlGuard", "GuardedAdapter", "address_refusal"]

_DEFAULT_PORTS = {"http": 80, "https": 443}

#: cloud metadata endpoints outside the link-local ranges; refused even when
#: private hosts are allowed (169.254.169.254 is refused as link-local)
_METADATA_ADDRESSES = frozenset({
    ipaddress.ip_address("fd00:ec2::254"),     # AWS IMDS over IPv6
    ipaddress.ip_address("100.100.100.200"),   # Alibaba Cloud metadata
})

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> Optional[ipaddress.IPv4Address]:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, Teredo, NAT64), if any."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_refusal(address: str, allow_private_hosts: bool = False) -> Optional[str]:
    """Why fetching from ``address`` is refused, or None when it is allowed.

    Always refused: unspecified, link-local (incl. 169.254.169.254), multicast,
    reserved and known cloud-metadata addresses. Loopback and private
    (incl. carrier-grade NAT and documentation ranges) are refused unless
    ``allow_private_hosts``. IPv6 addresses embedding an IPv4 address are
    judged by that IPv4 address.
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            reason = address_refusal(str(inner), allow_private_hosts)
            return f"{ip} embeds {reason}" if reason else None
    if ip in _METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if ip.is_unspecified:
        return f"{ip} is an unspecified address"
    if ip.is_link_local:
        return f"{ip} is a link-local address (cloud metadata services live there)"
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if ip.is_loopback:
        return None if allow_private_hosts else f"{ip} is a loopback address"
    if ip.is_reserved:
        return f"{ip} is a reserved address"
    if ip.is_global:
        return None
    return None if allow_private_hosts else f"{ip} is a private address"


Resolver = Callable[..., list]


@dataclass(frozen=True)
class UrlGuard:
    """Decides which URLs the fetcher may request (the SSRF guard).

    ``exempt_hosts`` holds exact ``host:port`` strings that skip the address
    check (never the scheme check). It exists for tests that need one local
    server to stand in for a public site; it is not a config setting.
    ``resolve`` is :func:`socket.getaddrinfo` (injectable for tests).
    """

    allow_private_hosts: bool = False
    exempt_hosts: frozenset[str] = frozenset()
    resolve: Resolver = field(default=socket.getaddrinfo, repr=False, compare=False)

    def check_url(self, url: str) -> None:
        """Raise FetchError(blocked|invalid_url|connection_error) unless ``url`` may be fetched.

        Checks the scheme, then every address the host resolves to.
        """
        host, port = self.check_scheme(url)
        if self._exempt(host, port):
            return
        for address in self._addresses(host, port):
            reason = address_refusal(address, self.allow_private_hosts)
            if reason:
                raise FetchError(FetchStatus.BLOCKED.value, f"host {host!r}: {reason}")

    def check_scheme(self, url: str) -> tuple[str, int]:
        """The URL's ``(host, port)`` when it is a well-formed http(s) URL; no name resolution.

        Raises FetchError(blocked|invalid_url) otherwise.
        """
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise FetchError(FetchStatus.INVALID_URL.value, f"cannot parse URL: {exc}") from None
        scheme = parts.scheme.lower()
        if not scheme:
            raise FetchError(FetchStatus.INVALID_URL.value, "the URL has no scheme (http:// or https://)")
        if scheme not in _DEFAULT_PORTS:
            raise FetchError(FetchStatus.BLOCKED.value,
                             f"scheme {scheme!r} is not allowed (only http and https)")
        host = parts.hostname
        if not host:
            raise FetchError(FetchStatus.INVALID_URL.value, "the URL has no host")
        return host, port or _DEFAULT_PORTS[scheme]

    def check_connected(self, host: str, port: int, peer_address: str) -> None:
        """Check the address a socket actually connected to (defeats DNS rebinding)."""
        if self._exempt(host, port):
            return
        reason = address_refusal(peer_address, self.allow_private_hosts)
        if reason:
            raise FetchError(FetchStatus.BLOCKED.value, f"host {host!r} connected to {reason}")

    def _exempt(self, host: str, port: int) -> bool:
        return f"{host.strip('[]').lower()}:{port}" in self.exempt_hosts

    def _addresses(self, host: str, port: int) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        try:
            infos = self.resolve(host, port, type=socket.SOCK_STREAM)
        except UnicodeError:
            raise FetchError(FetchStatus.INVALID_URL.value, f"invalid host name {host!r}") from None
        except OSError as exc:
            raise FetchError(FetchStatus.CONNECTION_ERROR.value,
                             f"cannot resolve host {host!r}: {exc}") from None
        addresses = sorted({info[4][0] for info in infos})
        if not addresses:
            raise FetchError(FetchStatus.CONNECTION_ERROR.value, f"host {host!r} has no address")
        return addresses


def _guarded_pool_classes(guard: UrlGuard) -> dict[str, type]:
    """urllib3 pool classes whose connections check the peer address after connecting."""
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    def checked(base: type) -> Callable:
        def _new_conn(self: Any) -> socket.socket:
            sock = base._new_conn(self)
            try:
                guard.check_connected(self.host, self.port, sock.getpeername()[0])
            except BaseException:
                sock.close()
                raise
            return sock
        return _new_conn

    http_conn = type("GuardedHTTPConnection", (HTTPConnection,), {"_new_conn": checked(HTTPConnection)})
    https_conn = type("GuardedHTTPSConnection", (HTTPSConnection,), {"_new_conn": checked(HTTPSConnection)})
    return {
        "http": type("GuardedHTTPConnectionPool", (HTTPConnectionPool,), {"ConnectionCls": http_conn}),
        "https": type("GuardedHTTPSConnectionPool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn}),
    }


class GuardedAdapter(HTTPAdapter):
    """A requests adapter whose every new connection passes :meth:`UrlGuard.check_connected`."""

    def __init__(self, guard: UrlGuard, **kwargs: Any):
        self._guard = guard  # set before super().__init__, which builds the pool manager
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _guarded_pool_classes(self._guard)
