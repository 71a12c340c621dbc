"""The pages people see: the viewer of game records (:mod:`.view`), the browser seat of ``arena play
--web`` (:mod:`.play`, :mod:`.serve`, :mod:`.seat`), and the templates and static files that the
report (:mod:`arena.report`) and the contest server (:mod:`arena.server.routes`) render, with
Jinja2's autoescape on (:mod:`.render`). No page reads a database: its callers hand it the data."""
