"""Bot programs in any language (a ``.js`` file, a ``bot.toml`` folder): runtimes, the process,
protocol v1 on the wire, builds, the seat, and searching ahead over the wire.
"""
