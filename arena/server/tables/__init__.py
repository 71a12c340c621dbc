"""Tables over the network: people play the ladder's bots at the server."""
