"""Escaped: sends a real 8 MB reply (one say of 8 million characters), to make the referee
read and decode megabytes: it is refused from its length header, before its body is read.
expect: faults=crash retired
check: billed detail=a_reply_of_8000
"""
import os
import struct


class Bot:
    def move(self, turn):
        body = b'["done",[["s","' + b"x" * 8000000 + b'"]],null]'
        data = struct.pack(">I", len(body)) + body
        view = memoryview(data)
        while view:  # blocks once the pipe is full: the referee has stopped reading
            view = view[os.write(4, view):]
        os.read(3, 1)
