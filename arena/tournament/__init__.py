"""Round-robin tournaments: schedule with duplicate seating, a results database that
survives kills, parallel or Ray backends, and standings with error bars.

Folders: :mod:`.plan` (who plays whom: :mod:`.plan.schedule`, game keys and seeds, and the
adaptive planner :mod:`.plan.adaptive` of ``--until-separated`` and gauntlets), :mod:`.backends`
(where games run: one game :mod:`.backends.games`, local workers :mod:`.backends.local`, Ray
tasks :mod:`.backends.ray_tasks`), :mod:`.db` (the SQLite results and their guards),
:mod:`.results` (the one result set, standings, paired statistics, separation, teams). The run
itself: :mod:`.runner` (entrants, resume, progress, Ctrl-C) and :mod:`.loop` (a planner says which
games to play, a backend plays them, one writer stores them); :mod:`.rerun` re-plays stored games.
The commands ``arena tournament`` and ``arena standings`` are in :mod:`arena.cli`.
"""
