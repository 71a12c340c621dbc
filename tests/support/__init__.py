"""What the tests share: running ``arena`` as users do (:mod:`.cli`), a contest server started
as users start it (:mod:`.server`). Fixtures built on them are in ``tests/conftest.py``."""
