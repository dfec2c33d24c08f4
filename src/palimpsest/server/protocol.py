"""Uvicorn's h11 protocol with a deadline for a request's headers.

Uvicorn times out idle keep-alive connections and the guard (`server/guard.py`) times out
a stalled body, but nothing limited how long a client may take to send its headers: a
connection that sent nothing, or trickled a header line every few seconds, was held open
indefinitely, and enough of them (`MAX_CONNECTIONS`) shut everyone else out. Here a new
connection, and a kept-alive one once a next request begins to arrive, must deliver the
complete headers within `header_timeout` seconds, or it is closed. Between requests the
keep-alive timeout applies as before.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("palimpsest.serve")
HEADER_TIMEOUT_S = 15.0  # (the default of the `header_timeout` setting)


def header_deadline_protocol(header_timeout: float) -> type[H11Protocol]:
    """The protocol class to give `uvicorn.Config(http=…)`, with this deadline (0 or less:
    none, uvicorn's own h11 protocol)."""
    if header_timeout <= 0:
        return H11Protocol

    class HeaderDeadline(_HeaderDeadline):
        timeout = header_timeout

    return HeaderDeadline


class _HeaderDeadline(H11Protocol):
    timeout = HEADER_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._headers_due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()  # a connection that sends nothing is held no longer than one that trickles

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE and not self.transport.is_closing():
            if self._headers_due is None:
                self._arm()  # a request has begun to arrive: its headers are now due
        else:
            self._disarm()  # the headers are in (or the connection is ending)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._headers_due = self.loop.call_later(self.timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _too_slow(self) -> None:
        self._headers_due = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            log.info("closed a connection whose request headers took over %g s", self.timeout)
            self.transport.close()
