"""The building block of the HTTP benchmarks: a bare Sanic JSON endpoint, served like the service.

``python -m bench.bare --port P --workers N``: ``POST /games/<id>/commands`` decodes its body (msgspec) and answers a
fixed command answer; ``GET /games/<id>`` answers a fixed view. Both bodies are a real game's, of a real answer's
size (a four-seat game after a few turns), built once at start; nothing else happens per request.
"""

from __future__ import annotations

import argparse
import random
import sys
from functools import partial

import msgspec
from sanic import HTTPResponse, Request, Sanic
from sanic.worker.loader import AppLoader


def canned() -> tuple[bytes, bytes]:
    """A view and a command answer of a four-seat game in play, as the service would send them."""
    from service.api.schemas import CommandAnswer
    from service.events.envelope import redacted
    from service.sim.games import new_game, play

    bots = ["random"] * 4
    sim = new_game("free-parking", 4, bytes(32), "g_0123456789abcdef", bots)
    moves = play(sim, bots, random.Random(0))
    for _ in range(40):
        next(moves)
    game = sim.game
    seat = game.state.turn_seat
    view = game.view(seat)
    last = sim.envelopes[-3:]
    answer = CommandAnswer(last[-1].seq, last[-1].hash, [redacted(e) for e in last], view)
    return msgspec.json.encode(view), msgspec.json.encode(answer)


def create_app(name: str = "bare") -> Sanic:
    app = Sanic(name)
    app.config.FALLBACK_ERROR_FORMAT = "json"
    view, answer = canned()

    @app.get("/games/<game_id:str>")
    async def get_game(request: Request, game_id: str) -> HTTPResponse:
        return HTTPResponse(view, content_type="application/json")

    @app.post("/games/<game_id:str>/commands")
    async def command(request: Request, game_id: str) -> HTTPResponse:
        msgspec.json.decode(request.body or b"{}")
        return HTTPResponse(answer, content_type="application/json")

    @app.get("/healthz")
    async def health(request: Request) -> HTTPResponse:
        return HTTPResponse(b'{"ok":true,"store":"none"}', content_type="application/json")

    return app


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.bare", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--workers", type=int, default=1)
    args = p.parse_args(argv)
    loader = AppLoader(factory=partial(create_app))
    app = loader.load()
    app.prepare(host=args.host, port=args.port, workers=args.workers, access_log=False, motd=False)
    Sanic.serve(primary=app, app_loader=loader)
    return 0


if __name__ == "__main__":
    sys.exit(main())
