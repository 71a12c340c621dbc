"""Python bots in the sandbox: the template (zygote) process, the bot's game loop, the referee's
end of the wire, the seat and its factory.
"""
