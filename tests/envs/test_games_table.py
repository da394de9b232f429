"""The games table (``cubebench.envs.games``) is the one home of each game's facts: every row matches its env,
and the runner, teams and model seats read it instead of restating it."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from cubebench.envs.games import BUDGET_FIELDS, GAMES, GAMES_BY_ENV, Game, game_named

pytest.importorskip("pettingzoo")

from cubebench.agents.seats import role_text  # noqa: E402
from cubebench.agents.teams import TEAM_BUILDERS, perfect_team, silent_team  # noqa: E402
from cubebench.envs.multi import MULTI_ENVS, make_multi_env  # noqa: E402
from cubebench.runner.protocols.multi.suite import OPTIONS, env_kwargs
from cubebench.runner.specs import SEAT_NAMES  # noqa: E402

ROWS = list(GAMES.values())


def _env(row: Game, **kwargs: object):  # type: ignore[no-untyped-def]
    view = f"{row.tier or 'symbolic'}/text"
    return make_multi_env(row.env_id, **env_kwargs(row.name, view, 1, "quarter", dict(kwargs)))


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_row_is_its_envs(row: Game) -> None:
    module = MULTI_ENVS[row.env_id]
    env = _env(row)
    try:
        game = env.unwrapped
        assert game.GAME is row and module.NAME == row.env_id and tuple(module.SEATS) == row.seats
        assert tuple(game.possible_agents) == row.seats
        assert (getattr(game, "channel", None) is not None) == row.channel
        assert all(role_text(game, seat).startswith(row.roles[seat]) for seat in row.seats)
    finally:
        env.close()


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_the_envs_defaults_are_the_rows_budgets_and_a_suite_cell_builds_it(row: Game) -> None:
    init = inspect.signature(type(_env(row).unwrapped).__init__).parameters
    taken = {name for name in BUDGET_FIELDS if name in init}
    assert taken == set(row.budgets)
    assert {name: init[name].default for name in taken} == dict(row.budgets)
    assert row.depth_option in init and ("tier" in init) == (row.tier is None)
    assert set(OPTIONS) >= set(row.budgets)


def test_every_env_has_a_row_and_every_row_a_team() -> None:
    assert set(MULTI_ENVS) == set(GAMES_BY_ENV)
    assert set(TEAM_BUILDERS) == set(GAMES)
    assert set(SEAT_NAMES) == {seat for row in ROWS for seat in row.seats}


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_the_teams_give_each_seat_its_player_and_silence_needs_a_channel(row: Game) -> None:
    env = _env(row)
    try:
        assert tuple(perfect_team(env)) == row.seats
        if row.channel:
            assert tuple(silent_team(env)) == row.seats
        else:
            with pytest.raises(ValueError, match="no channel"):
                silent_team(env)
    finally:
        env.close()


def test_a_row_that_contradicts_itself_is_refused() -> None:
    with pytest.raises(ValueError, match="roles"):
        Game("g", "G-v0", seats=("a_0", "b_0"), roles={"a_0": "A"}, budgets={})
    with pytest.raises(ValueError, match="solo seats"):
        Game("g", "G-v0", seats=("a_0",), roles={"a_0": "A"}, budgets={}, solo_seats=("c_0",))
    with pytest.raises(ValueError, match="unknown game 'chess'; known: observer-actor"):
        game_named("chess")


def test_the_table_imports_without_pettingzoo() -> None:
    code = "import sys, cubebench.envs.games; print('pettingzoo' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
