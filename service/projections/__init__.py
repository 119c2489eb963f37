"""Read models materialised in Redis from the events: scores, audit lines, players' results.

Nothing here is the truth: every key under ``<ns>:proj:`` can be dropped and rebuilt from the game streams
(``rebuild``). A projector (``Projector``) reads the partition logs through a consumer group and applies each
named game's own stream from the game's checkpoint, storing the checkpoint and the read models in one
compare-and-set write, so no game's events are ever applied twice or out of order, however many projectors run.

Key layout (``ns`` is the store's namespace, ``{pN}`` the game's partition tag):

- ``ns:proj:scores:{pN}:<game_id>`` — hash: ``applied`` (the checkpoint: the last seq applied) and ``model``
  (the game's ``Scores`` as JSON);
- ``ns:proj:audit:{pN}:<game_id>`` — list: one public audit line per applied event (its length is ``applied``);
- ``ns:proj:results:<player_id>`` — hash: ``g:<game_id>`` (a ``GameResult`` as JSON), ``c:<game_id>``
  (``"<version> <counter>=<delta> ..."``: what that game added), ``seq`` (writes so far), and the counters ``played:<kind>``,
  ``won:<kind>``, ``points:<kind>``;
- ``ns:proj:standings:{pN}:<tournament_id>`` — hash: ``g:<game_id>`` (a table's ``TableStanding`` as JSON) and
  ``c:<game_id>`` (the table's version it was folded to), upserted like the results (``standings.py``).
- ``ns:proj:solitaire:{<player_id>}:started:<bucket>`` / ``…:finished:<bucket>`` / ``…:times:<bucket>`` /
  ``…:wins:<bucket>`` — sorted sets of a player's solitaires from their deal (game id: its deal, its end, its time
  from first move to last), ``bucket`` ``dealt``, ``chosen_seed`` or ``redeal_undone``; ``…:latest`` (game id: its
  end or deal) and the hash ``…:versions`` (game id: the version upserted) (``solitaire_stats.py``). Keys
  ``…:played:<bucket>``, ``…:won:<bucket>`` and ``…:games`` are what the statistics kept before they counted started
  games: nothing reads them, and ``rebuild`` drops them;
- ``ns:proj:ratings:{rt}:<kind>`` — hash: ``g:<game_id>`` (a rated game's order of finish, ``RatedGame`` as JSON)
  and ``c:<game_id>`` (its version), upserted like the results; the ratings are folded from them in the order games
  finished when read (``ratings.py``);
- ``ns:proj:leaderboard:{lb}:<kind>`` / ``…:all`` — sorted sets of registered players by wins, then points, and
  ``…:seq``, copied from snapshots of the players' results (``leaderboard.py``).

Read them with ``read_scores``, ``read_audit`` and ``read_results``: each answers the read model and the version
it reflects (a projection may lag the game; the game view a player acts on never comes from here).
"""

from .audit import read_audit
from .leaderboard import read_leaderboard
from .projector import Projector, project_game
from .rebuild import rebuild
from .results import read_results, registered
from .scores import read_scores
from .solitaire_stats import read_stats
from .standings import read_standings

__all__ = ["Projector", "project_game", "read_audit", "read_leaderboard", "read_results", "read_scores", "read_standings", "read_stats", "rebuild", "registered"]
