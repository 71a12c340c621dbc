"""The contest online: a server where authors upload bots, a check queue and a live ladder."""
