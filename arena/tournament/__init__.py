"""Round-robin tournaments: schedule with duplicate seating, a results database that
survives kills, parallel or Ray backends, and standings with error bars.

Modules: :mod:`.schedule` (who plays whom, game keys and seeds), :mod:`.worker`
(playing one game), :mod:`.local` and :mod:`.ray_backend` (where games run),
:mod:`.db` (the SQLite results), :mod:`.standings` (the tables), :mod:`.runner`
(resume, progress, Ctrl-C; gauntlet plans); :mod:`.stats` (paired block statistics,
bounded intervals, sequential tests), :mod:`.separation` (which neighbours are
separated), :mod:`.adaptive` (``--until-separated`` rounds and gauntlets). The
commands ``arena tournament`` and ``arena standings`` are in :mod:`arena.cli`.
"""
