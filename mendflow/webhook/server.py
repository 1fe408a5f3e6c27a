"""uvicorn's HTTP/1.1 protocol with a deadline on request headers, against a client trickling bytes.

uvicorn bounds an idle keep-alive connection but not the time a request's headers take to arrive: a client
sending one byte a second holds a connection (and a file descriptor) for as long as it likes. Each request —
the first one and every keep-alive one after it — gets ``header_timeout_sec`` to finish its headers; the
body has its own deadline in the app (``app.read_body``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


class HeaderDeadlineProtocol(H11Protocol):
    header_timeout_sec = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_header_deadline()

    def _arm_header_deadline(self) -> None:
        waiting_after = self.cycle  # a new request's headers make a new cycle

        def expire() -> None:
            if self.cycle is waiting_after and not self.transport.is_closing():
                self.transport.close()

        self.loop.call_later(self.header_timeout_sec, expire)


def with_header_timeout(seconds: float) -> type[HeaderDeadlineProtocol]:
    """The protocol class for ``uvicorn.run(http=…)`` with this deadline."""
    attributes: dict[str, Any] = {"header_timeout_sec": seconds}
    return type("HeaderDeadlineProtocol", (HeaderDeadlineProtocol,), attributes)
